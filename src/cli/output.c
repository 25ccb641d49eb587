/* output.c - checked output (issue 17 part 5): a file or "-" written whole, and standard
 * output/error flushed and closed before the command's exit status stands. */
#include "cli.h"

#include <errno.h>
#include <string.h>

int cli_write_output(const char *what, const char *path, const char *data, size_t len)
{
    int to_stdout = strcmp(path, "-") == 0;
    errno = 0;
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    int bad = !f;
    if (f) {
        bad |= fwrite(data, 1, len, f) != len;
        bad |= to_stdout ? fflush(f) != 0 : fclose(f) != 0;
    }
    if (!bad)
        return 0;
    cli_error("%s: cannot write '%s': %s", what, to_stdout ? "<stdout>" : path,
              errno ? strerror(errno) : "write failed");
    return EXIT_RUNTIME;
}

/* Flush and close stream: -1 when every write reached it, else the errno of the failed flush or
 * close (0 when only an earlier write failed and its reason is gone). */
static int close_stream(FILE *stream)
{
    int bad = ferror(stream) != 0;
    errno = 0;
    bad |= fflush(stream) != 0;
    bad |= fclose(stream) != 0;
    return bad ? errno : -1;
}

int cli_finish(int rc)
{
    int out_err = close_stream(stdout);
    if (out_err >= 0) {
        fprintf(stderr, "clusterfit: error: cannot write standard output%s%s\n", out_err ? ": " : "",
                out_err ? strerror(out_err) : "");
        rc = EXIT_RUNTIME;
    }
    if (close_stream(stderr) >= 0)   /* nothing left to say it on */
        rc = EXIT_RUNTIME;
    return rc;
}
