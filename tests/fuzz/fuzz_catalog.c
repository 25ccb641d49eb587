/* fuzz_catalog.c - fuzz target for the catalog and model loaders (src/core/catalog.c) and,
 * through a loaded model, the cost model (src/core/perf.c).
 *
 * The input is loaded twice: as a catalog file on top of the embedded catalog, and as a
 * model file.  Oracles beyond "no crash": a refused catalog file leaves the catalog
 * exactly as it was and names a position or at least a message; an accepted model
 * passes validation and costs to finite, positive figures on one h100-sxm-based layout.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfit/catalog.h"
#include "clusterfit/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

static size_t entries(const cfit_catalog *c)
{
    return cfit_catalog_gpu_count(c) + cfit_catalog_model_count(c) + cfit_catalog_fabric_count(c) +
           cfit_catalog_node_count(c) + cfit_catalog_framework_count(c) +
           cfit_catalog_price_count(c);
}

static void fuzz_catalog_file(const char *text, size_t size)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_catalog *c = cfit_catalog_new(&d);
    check(c != NULL);
    size_t before = entries(c);
    const cfit_gpu *h100 = cfit_catalog_gpu(c, "h100-sxm", NULL);
    double mem = h100->memory_bytes;
    int rc = cfit_catalog_load_buffer(c, text, size, "fuzz.json", &d);
    if (rc) {
        check(d.msg[0] != '\0');
        check(entries(c) == before);
        check(cfit_catalog_gpu(c, "h100-sxm", NULL)->memory_bytes == mem);
    } else {
        check(entries(c) >= before);
        for (size_t i = 0; i < cfit_catalog_gpu_count(c); i++) {
            const cfit_gpu *g = cfit_catalog_gpu_at(c, i);
            check(g->source[0] != '\0' && g->peak_flops[CFIT_PREC_BF16] > 0);
            check(cfit_catalog_node(c, g->default_node, NULL) != NULL);
        }
    }
    cfit_catalog_free(c);
}

static void fuzz_model_file(const char *text, size_t size)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_model m;
    if (cfit_model_load_buffer(text, size, "model.json", &m, &d)) {
        check(d.msg[0] != '\0');
        return;
    }
    check(cfit_model_validate(&m, NULL) == CFIT_EOK);
    cfit_catalog *c = cfit_catalog_new(&d);
    check(c != NULL);
    const cfit_gpu *g = cfit_catalog_gpu(c, "h100-sxm", NULL);
    cfit_plan_request r;
    cfit_plan_request_init(&r);
    r.catalog = c;
    r.model = &m;
    r.gpus = &g;
    r.ngpus = 1;
    r.gpus_total = 8;
    r.tokens = 1e12;
    r.global_batch = 8;
    r.seq_len = m.seq_len > 65536 ? 65536 : m.seq_len;
    int tp = m.num_kv_heads % 2 == 0 && m.ffn_hidden_size % 2 == 0 ? 2 : 1;
    cfit_layout l = {tp, 1, 8 / tp, 1, 1, 1, 1, CFIT_RECOMPUTE_BLOCK, tp > 1, 1, 1, 0, 0};
    cfit_plan p;
    if (cfit_plan_evaluate(&r, g, &l, &p, &d) == CFIT_EOK) {
        check(p.step_time_s > 0 && !isnan(p.step_time_s));
        check(p.mem.total_bytes > 0 && !isnan(p.mem.total_bytes));
        check(p.recompute_layers >= 0 && p.recompute_layers <= m.layers);
    }
    cfit_catalog_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    fuzz_catalog_file(text, size);
    fuzz_model_file(text, size);
    return 0;
}
