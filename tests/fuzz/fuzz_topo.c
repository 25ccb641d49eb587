/* fuzz_topo.c - fuzz target for topology specs, routing and failure specs (src/sim/topo*.c).
 *
 * The first line of the input is a topology spec, the optional second line a failure spec.
 * The host limit is lowered to 4096 so no input can allocate much.  Oracles beyond "no
 * crash": a rejected spec says why with CFIT_EPARSE or CFIT_ERANGE; an accepted one has
 * consistent counts, and every route returned is a chain of working links from the source
 * host to the destination host that passes through switches only.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfit/topo.h"
#include "sim/topo_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXP 16
#define MAXL 64

static void check(int ok)
{
    if (!ok)
        abort();
}

static void check_route(const cfit_topo *t, int src, int dst, int flow)
{
    static int paths[MAXP * MAXL], lens[MAXP];
    int n = cfit_topo_paths(t, src, dst, flow, paths, lens, MAXP, MAXL);
    check(n >= 0 || n == CFIT_ERANGE);
    check(flow < 0 || n <= 1);
    for (int i = 0; i < n; i++) {
        int v = cfit_topo_host_vertex(t, src);
        check(lens[i] >= 1 && lens[i] <= MAXL);
        for (int j = 0; j < lens[i]; j++) {
            const cfit_link *l = cfit_topo_link(t, paths[i * MAXL + j]);
            check(l && l->from == v && !l->failed);
            v = l->to;
            check(j + 1 == lens[i] || cfit_topo_vertex_kind(t, v) == CFIT_VERTEX_SWITCH);
        }
        check(v == cfit_topo_host_vertex(t, dst));
    }
}

static void exercise(cfit_topo *t, const char *fail, uint64_t seed)
{
    cfit_topo_info info;
    cfit_diag d;
    check(cfit_topo_describe(t, &info) == CFIT_EOK);
    check(info.hosts >= 2 && info.hosts <= cfit__topo_max_hosts);
    check(info.hosts + info.switches == cfit_topo_vertices(t) && 2 * info.links == cfit_topo_links(t));
    check(info.bisection_bytes_per_s > 0 && info.diameter >= 2);
    if (fail) {
        cfit_diag_clear(&d);
        int rc = cfit_topo_fail_spec(t, fail, &d);
        check(rc == CFIT_EOK || ((rc == CFIT_EPARSE || rc == CFIT_ERANGE) && d.msg[0]));
    } else if (seed % 4 == 0) {
        int rc = cfit_topo_fail_random(t, (int)(seed >> 8) % 8, (unsigned)seed, &d);
        check(rc == CFIT_EOK || rc == CFIT_ERANGE);
    }
    int h = info.hosts;
    for (int i = 0; i < 4; i++) {
        seed = cfit__topo_mix(seed);
        int a = (int)(seed % (uint64_t)h), b = (int)((seed >> 32) % (uint64_t)h);
        if (a != b) {
            check_route(t, a, b, -1);
            check_route(t, a, b, (int)(seed >> 48));
        }
    }
    check_route(t, 0, h - 1, -1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cfit__topo_max_hosts = 4096;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    char *nl = strchr(s, '\n'), *fail = NULL;
    if (nl) {
        *nl = '\0';
        fail = nl + 1;
        char *nl2 = strchr(fail, '\n');
        if (nl2)
            *nl2 = '\0';
    }
    cfit_topo_params p;
    cfit_topo_params_init(&p);
    p.gpus_per_node = (int)(size % 9);   /* 0 and 1 mean no scale-up switch */
    cfit_topo *t = NULL;
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = cfit_topo_new(s, &p, &t, &d);
    if (rc) {
        check(t == NULL && (rc == CFIT_EPARSE || rc == CFIT_ERANGE) && d.msg[0]);
        check(d.msg[strlen(d.msg) - 1] != '.');
    } else {
        exercise(t, fail, cfit__topo_mix(size));
        cfit_topo_free(t);
    }
    free(s);
    return 0;
}
