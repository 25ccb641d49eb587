# port_lib.bash - what every test that listens on a TCP port shares (sourced).
# port: a TCP port for a test to listen on: below the ephemeral range (32768-60999 on Linux), where the data listeners
# of this job's own ranks and of concurrent tests are handed out, and free when drawn (a port the
# kernel hands out for port 0 can be handed to another rank's listener before rank 0 binds it).
port() {
    python3 -c '
import random, socket
for _ in range(200):
    p = random.randrange(20000, 32000)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break'
}
