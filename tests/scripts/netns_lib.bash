# netns_lib.bash - shared by the network-namespace tests (bench_netns.sh, bench_coll_netns.sh):
# N "hosts", each a network namespace whose eth0 is cabled by a veth pair to a bridge in a hub
# namespace.  Sourced after the caller defines tmp (a scratch directory) and fail MESSAGE.
#
# netns_hosts TAG SUBNET N: creates them, host i at SUBNET.(i+1)/24 with lo up; sets the globals
# hub (the hub namespace) and ns[0..N-1] (the hosts); installs an EXIT trap that deletes the
# namespaces and tmp.  Exits 77 (skipped) with the reason only when namespaces cannot be created.

netns_cleanup() {
    local n
    for n in "${ns[@]}" "$hub"; do ip netns del "$n" 2>/dev/null; done
    rm -rf "$tmp"
}

netns_run() { "$@" || fail "command failed: $*"; }

netns_hosts() {
    local tag=$1 subnet=$2 n=$3 i err
    hub=${tag}hub$$
    ns=()
    for ((i = 0; i < n; i++)); do ns+=("${tag}$$h$i"); done
    trap netns_cleanup EXIT
    if ! err=$(ip netns add "$hub" 2>&1); then
        echo "skipped: cannot create network namespaces: $err"
        exit 77
    fi
    netns_run ip -n "$hub" link add br0 type bridge
    netns_run ip -n "$hub" link set br0 up
    for ((i = 0; i < n; i++)); do
        netns_run ip netns add "${ns[$i]}"
        # veth pair created inside the hub, one end moved to the host namespace as eth0
        netns_run ip -n "$hub" link add "v$i" type veth peer name eth0 netns "${ns[$i]}"
        netns_run ip -n "$hub" link set "v$i" master br0 up
        netns_run ip -n "${ns[$i]}" addr add "$subnet.$((i + 1))/24" dev eth0
        netns_run ip -n "${ns[$i]}" link set eth0 up
        netns_run ip -n "${ns[$i]}" link set lo up
    done
}
