/* test_catalog.c - the embedded catalog, user catalog files and model files (src/core/catalog.c).
 *
 * Loading is all-or-nothing: after every failure the catalog must be byte-for-byte what it
 * was, and the diagnostic must name FILE:LINE:COL of the offending key or value.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clusterfit/catalog.h"
#include "clusterfit/nccl.h"
#include "clusterfit/workload.h"

static cfit_catalog *new_catalog(void)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_catalog *c = cfit_catalog_new(&d);
    if (!c)
        fail_msg("embedded catalog: %s:%d:%d: %s", d.file, d.line, d.col, d.msg);
    return c;
}

/* ---- snapshots: a flat copy of every entry, to prove a failed load changed nothing ---- */

typedef struct snapshot {
    size_t n[6];
    char *bytes;
    size_t len;
} snapshot;

static void snap_append(snapshot *s, const void *p, size_t n)
{
    char *b = realloc(s->bytes, s->len + n);
    assert_non_null(b);
    memcpy(b + s->len, p, n);
    s->bytes = b;
    s->len += n;
}

static snapshot snap(const cfit_catalog *c)
{
    snapshot s;
    memset(&s, 0, sizeof s);
    s.n[0] = cfit_catalog_gpu_count(c);
    s.n[1] = cfit_catalog_model_count(c);
    s.n[2] = cfit_catalog_fabric_count(c);
    s.n[3] = cfit_catalog_node_count(c);
    s.n[4] = cfit_catalog_framework_count(c);
    s.n[5] = cfit_catalog_price_count(c);
    for (size_t i = 0; i < s.n[0]; i++)
        snap_append(&s, cfit_catalog_gpu_at(c, i), sizeof(cfit_gpu));
    for (size_t i = 0; i < s.n[1]; i++)
        snap_append(&s, cfit_catalog_model_at(c, i), sizeof(cfit_model));
    for (size_t i = 0; i < s.n[2]; i++)
        snap_append(&s, cfit_catalog_fabric_at(c, i), sizeof(cfit_fabric));
    for (size_t i = 0; i < s.n[3]; i++)
        snap_append(&s, cfit_catalog_node_at(c, i), sizeof(cfit_node));
    for (size_t i = 0; i < s.n[4]; i++)
        snap_append(&s, cfit_catalog_framework_at(c, i), sizeof(cfit_framework));
    for (size_t i = 0; i < s.n[5]; i++)
        snap_append(&s, cfit_catalog_price_at(c, i), sizeof(cfit_price));
    return s;
}

static void snap_check_and_free(snapshot *a, const cfit_catalog *c)
{
    snapshot b = snap(c);
    assert_memory_equal(a->n, b.n, sizeof a->n);
    assert_int_equal(a->len, b.len);
    if (a->len)
        assert_memory_equal(a->bytes, b.bytes, a->len);
    free(b.bytes);
    free(a->bytes);
}

/* ---- the embedded catalog --------------------------------------------------------- */

static void test_embedded_loads(void **state)
{
    (void)state;
    cfit_catalog *c = new_catalog();
    assert_true(cfit_catalog_gpu_count(c) >= 16);
    assert_true(cfit_catalog_model_count(c) >= 7);
    assert_true(cfit_catalog_fabric_count(c) >= 11);
    assert_true(cfit_catalog_node_count(c) >= 1);
    assert_null(cfit_catalog_gpu_at(c, cfit_catalog_gpu_count(c)));
    assert_null(cfit_catalog_model_at(c, cfit_catalog_model_count(c)));
    assert_null(cfit_catalog_fabric_at(c, cfit_catalog_fabric_count(c)));
    assert_null(cfit_catalog_node_at(c, cfit_catalog_node_count(c)));
    cfit_catalog_free(c);
    cfit_catalog_free(NULL);
    c = cfit_catalog_new(NULL);   /* the diagnostic is optional */
    assert_non_null(c);
    cfit_catalog_free(c);
}

static void test_required_entries(void **state)
{
    (void)state;
    static const char *const gpus[] = {"a100-sxm-40g", "a100-sxm-80g", "h100-sxm", "h200-sxm", "h200-nvl",
                                       "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi350x",
                                       "mi355x", "rtx4090", "rtx5090", "l40s", "a100-pcie", "a800-sxm-80g",
                                       "h100-pcie", "h100-nvl", "h800", "h20", "v100-sxm2"};
    static const char *const models[] = {"gpt3-175b", "llama2-7b", "llama2-13b", "llama2-70b",
                                         "llama3-8b", "llama3-70b", "llama3-405b"};
    static const char *const fabrics[] = {"roce-25g", "roce-100g", "roce-200g", "roce-400g", "roce-800g",
                                          "ib-edr", "ib-hdr", "ib-ndr", "ib-xdr", "efa1-100g", "efa-100g",
                                          "efa-200g", "efa-400g", "nvlink2", "nvlink3", "nvlink4",
                                          "nvlink4-bridge", "nvlink5", "nvlink5-nvl72"};
    cfit_catalog *c = new_catalog();
    cfit_diag d;
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        cfit_diag_clear(&d);
        const cfit_gpu *g = cfit_catalog_gpu(c, gpus[i], &d);
        if (!g)
            fail_msg("gpu '%s' missing: %s", gpus[i], d.msg);
        assert_string_equal(g->name, gpus[i]);
    }
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        const cfit_model *m = cfit_catalog_model(c, models[i], NULL);
        if (!m)
            fail_msg("model '%s' missing", models[i]);
        assert_string_equal(m->name, models[i]);
    }
    for (size_t i = 0; i < sizeof fabrics / sizeof fabrics[0]; i++) {
        const cfit_fabric *f = cfit_catalog_fabric(c, fabrics[i], NULL);
        if (!f)
            fail_msg("fabric '%s' missing", fabrics[i]);
        assert_int_equal(f->kind, strncmp(fabrics[i], "nvlink", 6) == 0 ? CFIT_FABRIC_SCALEUP
                                                                          : CFIT_FABRIC_SCALEOUT);
    }
    cfit_catalog_free(c);
}

/* Every entry has a source, a unique name and references that resolve to the right kind. */
static void test_entries_consistent(void **state)
{
    (void)state;
    cfit_catalog *c = new_catalog();
    for (size_t i = 0; i < cfit_catalog_gpu_count(c); i++) {
        const cfit_gpu *g = cfit_catalog_gpu_at(c, i);
        if (!g->source[0])
            fail_msg("gpu '%s' has no source", g->name);
        assert_true(g->name[0] && g->vendor[0] && g->display_name[0]);
        assert_true(cfit_catalog_gpu(c, g->name, NULL) == g);
        assert_true(g->memory_bytes > 0 && g->memory_bw_bytes_per_s > 0);
        assert_true(g->peak_flops[CFIT_PREC_BF16] > 0);
        assert_true(g->peak_flops[CFIT_PREC_FP8] == 0 ||
                    g->peak_flops[CFIT_PREC_FP8] >= g->peak_flops[CFIT_PREC_BF16]);
        assert_true(g->scaleup_domain >= 1);
        const cfit_node *n = cfit_catalog_node(c, g->default_node, NULL);
        if (!n)
            fail_msg("gpu '%s': node '%s' missing", g->name, g->default_node);
        const cfit_fabric *up = cfit_catalog_fabric(c, g->scaleup_fabric, NULL);
        if (!up)
            fail_msg("gpu '%s': fabric '%s' missing", g->name, g->scaleup_fabric);
        assert_true(g->cal.gemm_efficiency[CFIT_PREC_BF16] > 0 && g->cal.gemm_efficiency[CFIT_PREC_BF16] <= 1);
        assert_true(g->cal.attention_efficiency > 0 && g->cal.attention_efficiency <= 1);
        assert_true(g->cal.memory_bw_efficiency > 0 && g->cal.memory_bw_efficiency <= 1);
    }
    for (size_t i = 0; i < cfit_catalog_model_count(c); i++) {
        const cfit_model *m = cfit_catalog_model_at(c, i);
        if (!m->source[0])
            fail_msg("model '%s' has no source", m->name);
        assert_true(cfit_catalog_model(c, m->name, NULL) == m);
        assert_int_equal(cfit_model_validate(m, NULL), CFIT_EOK);
    }
    for (size_t i = 0; i < cfit_catalog_fabric_count(c); i++) {
        const cfit_fabric *f = cfit_catalog_fabric_at(c, i);
        if (!f->source[0])
            fail_msg("fabric '%s' has no source", f->name);
        assert_true(cfit_catalog_fabric(c, f->name, NULL) == f);
        assert_true(f->efficiency > 0 && f->efficiency <= 1);
        assert_true(f->latency_s >= 0);
    }
    for (size_t i = 0; i < cfit_catalog_node_count(c); i++) {
        const cfit_node *n = cfit_catalog_node_at(c, i);
        if (!n->source[0])
            fail_msg("node '%s' has no source", n->name);
        assert_true(cfit_catalog_node(c, n->name, NULL) == n);
        assert_true(n->gpus_per_node >= 1 && n->nics_per_node >= 1);
        const cfit_fabric *f = cfit_catalog_fabric(c, n->fabric, NULL);
        if (!f)
            fail_msg("node '%s': fabric '%s' missing", n->name, n->fabric);
        assert_int_equal(f->kind, CFIT_FABRIC_SCALEOUT);
    }
    assert_non_null(cfit_catalog_framework(c, "megatron-core", NULL));   /* the default */
    for (size_t i = 0; i < cfit_catalog_framework_count(c); i++) {
        const cfit_framework *fw = cfit_catalog_framework_at(c, i);
        if (!fw->source[0])
            fail_msg("framework '%s' has no source", fw->name);
        assert_true(cfit_catalog_framework(c, fw->name, NULL) == fw);
        assert_true(fw->attention_efficiency_scale > 0 && fw->attention_efficiency_scale <= 1);
    }
    assert_null(cfit_catalog_framework_at(c, cfit_catalog_framework_count(c)));
    cfit_catalog_free(c);
}

/* ---- lookups ------------------------------------------------------------------------ */

/* d->msg has "did you mean 'X'?" and X is a real entry (found by lookup). */
static void expect_suggestion(const char *msg, char *out, size_t n)
{
    const char *p = strstr(msg, "did you mean '");
    if (!p)
        fail_msg("no suggestion in '%s'", msg);
    p += strlen("did you mean '");
    size_t len = strcspn(p, "'");
    assert_true(len > 0 && len < n);
    memcpy(out, p, len);
    out[len] = '\0';
}

static void test_lookup_did_you_mean(void **state)
{
    (void)state;
    cfit_catalog *c = new_catalog();
    cfit_diag d;
    char near[CFIT_NAME_MAX];

    cfit_diag_clear(&d);
    assert_null(cfit_catalog_gpu(c, "h10", &d));
    assert_non_null(strstr(d.msg, "unknown gpu 'h10'"));
    expect_suggestion(d.msg, near, sizeof near);
    assert_non_null(cfit_catalog_gpu(c, near, NULL));
    assert_string_equal(near, "h100-sxm");
    assert_true(d.msg[strlen(d.msg) - 1] != '.');

    cfit_diag_clear(&d);
    assert_null(cfit_catalog_gpu(c, "h100-smx", &d));
    expect_suggestion(d.msg, near, sizeof near);
    assert_string_equal(near, "h100-sxm");

    cfit_diag_clear(&d);
    assert_null(cfit_catalog_model(c, "llama3-7b", &d));
    assert_non_null(strstr(d.msg, "unknown model 'llama3-7b'"));
    expect_suggestion(d.msg, near, sizeof near);
    assert_non_null(cfit_catalog_model(c, near, NULL));

    cfit_diag_clear(&d);
    assert_null(cfit_catalog_fabric(c, "ib-ndrr", &d));
    expect_suggestion(d.msg, near, sizeof near);
    assert_string_equal(near, "ib-ndr");

    cfit_diag_clear(&d);
    assert_null(cfit_catalog_node(c, "hgx-h100-9", &d));
    expect_suggestion(d.msg, near, sizeof near);
    assert_non_null(cfit_catalog_node(c, near, NULL));

    /* nothing close: no suggestion, but a pointer to the list */
    cfit_diag_clear(&d);
    assert_null(cfit_catalog_gpu(c, "zzzzzzzzzzzz", &d));
    assert_null(strstr(d.msg, "did you mean"));
    assert_non_null(strstr(d.msg, "catalog list gpus"));

    /* names as people type them (issue 15): case and separators ignored, aliases from the data */
    const cfit_gpu *h100 = cfit_catalog_gpu(c, "h100-sxm", NULL);
    assert_ptr_equal(cfit_catalog_gpu(c, "H100-SXM", NULL), h100);
    assert_ptr_equal(cfit_catalog_gpu(c, "h100sxm", NULL), h100);
    assert_ptr_equal(cfit_catalog_gpu(c, "H100 SXM", NULL), h100);
    assert_ptr_equal(cfit_catalog_gpu(c, "H100", NULL), h100);
    assert_string_equal(cfit_catalog_gpu(c, "MI300X", NULL)->name, "mi300x");
    assert_string_equal(cfit_catalog_gpu(c, "GB200 NVL72", NULL)->name, "gb200");
    assert_string_equal(cfit_catalog_gpu(c, "H200", NULL)->name, "h200-sxm");
    assert_string_equal(cfit_catalog_model(c, "Llama3-70B", NULL)->name, "llama3-70b");
    assert_null(cfit_catalog_gpu(c, "", NULL));
    /* suggestions know the family: llama3-7b -> llama3-8b, not llama2-7b; an h-typo never a b */
    cfit_diag_clear(&d);
    assert_null(cfit_catalog_model(c, "llama3-7b", &d));
    expect_suggestion(d.msg, near, sizeof near);
    assert_string_equal(near, "llama3-8b");
    cfit_diag_clear(&d);
    assert_null(cfit_catalog_gpu(c, "h201", &d));
    expect_suggestion(d.msg, near, sizeof near);
    assert_true(near[0] == 'h');
    cfit_catalog_free(c);
}

/* ---- user catalog files -------------------------------------------------------------- */

/* A fabric entry, one field per line (line numbers below count from the opening brace):
 *  1 {"fabrics": [
 *  2   {
 *  3     "name": ...,          6     "bw_bytes_per_s": ...,   9     "overlap_efficiency": ...,
 *  4     "kind": ...,          7     "latency_s": ...,       10     "source": ...
 *  5     "technology": ...,    8     "efficiency": ...,      11   }  12 ]} */
#define FABRIC_HEAD "{\"fabrics\": [\n  {\n"
#define FABRIC_TAIL "  }\n]}\n"
#define F_NAME(n) "    \"name\": \"" n "\",\n"
#define F_KIND "    \"kind\": \"scaleout\",\n"
#define F_TECH "    \"technology\": \"test fabric\",\n"
#define F_BW "    \"bw_bytes_per_s\": 5e10,\n"
#define F_LAT(v) "    \"latency_s\": " v ",\n"
#define F_EFF(v) "    \"efficiency\": " v ",\n"
#define F_OVL "    \"overlap_efficiency\": 0.5,\n"
#define F_SRC "    \"source\": \"unit test\"\n"
#define FABRIC(name, lat, eff) \
    FABRIC_HEAD F_NAME(name) F_KIND F_TECH F_BW F_LAT(lat) F_EFF(eff) F_OVL F_SRC FABRIC_TAIL

static int load(cfit_catalog *c, const char *text, cfit_diag *d)
{
    cfit_diag_clear(d);
    /* a heap copy without a terminating NUL, so ASan catches any over-read */
    size_t n = strlen(text);
    char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    memcpy(copy, text, n);
    int rc = cfit_catalog_load_buffer(c, copy, n, "user.json", d);
    free(copy);
    return rc;
}

static void test_load_override_and_add(void **state)
{
    (void)state;
    cfit_catalog *c = new_catalog();
    cfit_diag d;
    size_t nf = cfit_catalog_fabric_count(c);
    const cfit_fabric *f = cfit_catalog_fabric(c, "ib-ndr", NULL);
    assert_non_null(f);
    assert_true(f->latency_s != 7e-6);

    /* override by name: value changes, count does not */
    int rc = load(c, FABRIC("ib-ndr", "7e-6", "0.5"), &d);
    if (rc)
        fail_msg("override rejected: %s:%d:%d: %s", d.file, d.line, d.col, d.msg);
    assert_int_equal(cfit_catalog_fabric_count(c), nf);
    f = cfit_catalog_fabric(c, "ib-ndr", NULL);
    assert_true(f->latency_s == 7e-6);
    assert_true(f->efficiency == 0.5);
    assert_string_equal(f->technology, "test fabric");
    assert_string_equal(f->source, "unit test");

    /* a new entry: count + 1 */
    rc = load(c, FABRIC("test-fabric", "2e-6", "0.9"), &d);
    assert_int_equal(rc, CFIT_EOK);
    assert_int_equal(cfit_catalog_fabric_count(c), nf + 1);
    f = cfit_catalog_fabric(c, "test-fabric", NULL);
    assert_non_null(f);
    assert_true(f->latency_s == 2e-6);
    assert_int_equal(f->kind, CFIT_FABRIC_SCALEOUT);

    /* a new model, usable by name */
    size_t nm = cfit_catalog_model_count(c);
    rc = load(c,
              "{\"models\": [{\"name\": \"tiny\", \"layers\": 2, \"hidden_size\": 64, "
              "\"ffn_hidden_size\": 256, \"num_heads\": 4, \"num_kv_heads\": 2, \"vocab_size\": 1000, "
              "\"seq_len\": 128, \"mlp\": \"swiglu\", \"source\": \"unit test\"}]}",
              &d);
    assert_int_equal(rc, CFIT_EOK);
    assert_int_equal(cfit_catalog_model_count(c), nm + 1);
    const cfit_model *m = cfit_catalog_model(c, "tiny", NULL);
    assert_non_null(m);
    assert_int_equal(m->num_kv_heads, 2);
    assert_int_equal(m->mlp, CFIT_MLP_SWIGLU);
    assert_int_equal(m->tied_embeddings, 0);   /* optional, default false */

    /* an empty object and empty arrays are valid and change nothing */
    snapshot s = snap(c);
    assert_int_equal(load(c, "{}", &d), CFIT_EOK);
    assert_int_equal(load(c, "{\"gpus\": [], \"models\": [], \"fabrics\": [], \"nodes\": []}", &d),
                     CFIT_EOK);
    snap_check_and_free(&s, c);

    /* prices: embedded, overridden by name from a file, added */
    const cfit_price *pr = cfit_catalog_price(c, "energy.usd_per_kwh", NULL);
    assert_non_null(pr);
    assert_string_equal(pr->date, "2023-12");
    size_t np = cfit_catalog_price_count(c);
    rc = load(c, "{\"prices\": [{\"name\": \"energy.usd_per_kwh\", \"value\": 0.12, \"unit\": \"usd_per_kwh\", "
                 "\"date\": \"2026-01\", \"source\": \"unit test\"}, {\"name\": \"node.mi355x\", \"value\": 250000, "
                 "\"unit\": \"usd_per_node\", \"date\": \"2026-01\", \"source\": \"unit test\"}]}", &d);
    assert_int_equal(rc, CFIT_EOK);
    assert_int_equal(cfit_catalog_price_count(c), np + 1);
    pr = cfit_catalog_price(c, "energy.usd_per_kwh", NULL);
    assert_true(pr->value == 0.12);
    assert_string_equal(pr->date, "2026-01");
    assert_int_equal(cfit_catalog_price(c, "node.mi355x", NULL)->unit, CFIT_UNIT_USD_PER_NODE);
    assert_null(cfit_catalog_price(c, "energy.usd_per_kwh2", &d));
    assert_non_null(strstr(d.msg, "did you mean 'energy.usd_per_kwh'?"));
    cfit_catalog_free(c);
}

/* A GPU entry that refers to node `node` (all required keys present). */
static void gpu_entry(char *buf, size_t n, const char *name, const char *node, const char *mem)
{
    snprintf(buf, n,
             "{\"gpus\": [{\"name\": \"%s\", \"vendor\": \"test\", \"display_name\": \"Test GPU\",\n"
             " \"memory_bytes\": %s, \"memory_bw_bytes_per_s\": 3e12,\n"
             " \"peak_flops\": {\"bf16\": 1e15, \"fp8\": 2e15}, \"tdp_w\": 700,\n"
             " \"scaleup\": {\"fabric\": \"nvlink4\", \"bw_bytes_per_s\": 4.5e11, \"domain\": 8},\n"
             " \"default_node\": \"%s\",\n"
             " \"calibration\": {\"gemm_efficiency\": {\"bf16\": 0.7, \"fp8\": 0.6}, \"gemm_half_dim\": 128,\n"
             "   \"attention_efficiency\": 0.4, \"memory_bw_efficiency\": 0.8, \"reserved_bytes\": 3e9,\n"
             "   \"fragmentation\": 0.05, \"layer_overhead_s\": 2e-5, \"source\": \"unit test\"},\n"
             " \"source\": \"unit test\"}]}\n",
             name, mem, node);
}

static void test_load_gpu_and_refs(void **state)
{
    (void)state;
    cfit_catalog *c = new_catalog();
    cfit_diag d;
    char buf[2048];
    size_t ng = cfit_catalog_gpu_count(c);
    gpu_entry(buf, sizeof buf, "test-gpu", "hgx-h100-8", "1e11");
    int rc = load(c, buf, &d);
    if (rc)
        fail_msg("gpu rejected: %s:%d:%d: %s", d.file, d.line, d.col, d.msg);
    assert_int_equal(cfit_catalog_gpu_count(c), ng + 1);
    const cfit_gpu *g = cfit_catalog_gpu(c, "test-gpu", NULL);
    assert_non_null(g);
    assert_true(g->memory_bytes == 1e11);
    assert_true(g->peak_flops[CFIT_PREC_FP8] == 2e15);
    assert_true(g->peak_fp4_flops == 0);                 /* optional */
    assert_true(g->cal.gemm_efficiency[CFIT_PREC_FP8] == 0.6);
    assert_int_equal(g->scaleup_domain, 8);

    /* a dangling default_node: refused, nothing merged */
    snapshot s = snap(c);
    gpu_entry(buf, sizeof buf, "test-gpu-2", "no-such-node", "1e11");
    rc = load(c, buf, &d);
    assert_int_equal(rc, CFIT_EUNKNOWN);
    assert_string_equal(d.file, "user.json");
    assert_non_null(strstr(d.msg, "test-gpu-2"));
    assert_non_null(strstr(d.msg, "default_node 'no-such-node'"));
    snap_check_and_free(&s, c);
    assert_null(cfit_catalog_gpu(c, "test-gpu-2", NULL));

    /* a node whose fabric does not exist */
    s = snap(c);
    rc = load(c, "{\"nodes\": [{\"name\": \"n1\", \"gpus_per_node\": 8, \"nics_per_node\": 8, "
                 "\"fabric\": \"no-such-fabric\", \"source\": \"unit test\"}]}", &d);
    assert_int_equal(rc, CFIT_EUNKNOWN);
    assert_non_null(strstr(d.msg, "no-such-fabric"));
    snap_check_and_free(&s, c);

    /* but a node and a gpu that refers to it may come in one file */
    rc = load(c, "{\"nodes\": [{\"name\": \"n2\", \"gpus_per_node\": 4, \"nics_per_node\": 4, "
                 "\"fabric\": \"ib-ndr\", \"source\": \"unit test\"}]}", &d);
    assert_int_equal(rc, CFIT_EOK);

    /* out-of-range memory_bytes: line 2 col 18 is the value */
    s = snap(c);
    gpu_entry(buf, sizeof buf, "test-gpu-3", "hgx-h100-8", "-80");
    rc = load(c, buf, &d);
    assert_int_equal(rc, CFIT_ERANGE);
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 18);
    assert_non_null(strstr(d.msg, "memory_bytes"));
    snap_check_and_free(&s, c);
    cfit_catalog_free(c);
}

typedef struct bad_case {
    const char *what;
    const char *text;
    int err, line, col;
    const char *needle, *needle2;
} bad_case;

static void test_load_errors(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {"unknown key", FABRIC_HEAD F_NAME("t1") F_KIND F_TECH F_BW "    \"latnecy_s\": 1e-6,\n" F_EFF("0.9")
             F_OVL F_SRC FABRIC_TAIL,
         CFIT_EPARSE, 7, 5, "unknown fabric key 'latnecy_s'", "did you mean 'latency_s'?"},
        {"wrong type", FABRIC("t1", "\"fast\"", "0.9"), CFIT_EPARSE, 7, 18, "'latency_s' must be a number",
         "got string"},
        {"out of range", FABRIC("t1", "1e-6", "1.5"), CFIT_ERANGE, 8, 19, "'efficiency' must be between",
         "1.5"},
        {"negative", FABRIC("t1", "-1e-6", "0.9"), CFIT_ERANGE, 7, 18, "'latency_s'", NULL},
        {"missing key", FABRIC_HEAD F_NAME("t1") F_KIND F_TECH F_BW F_LAT("1e-6") F_EFF("0.9")
             "    \"overlap_efficiency\": 0.5\n" FABRIC_TAIL,
         CFIT_EPARSE, 2, 3, "missing required key 'source'", NULL},
        {"syntax", FABRIC_HEAD F_NAME("t1") F_KIND F_TECH "    \"bw_bytes_per_s\": 5e10\n" F_LAT("1e-6")
             F_EFF("0.9") F_OVL F_SRC FABRIC_TAIL,
         CFIT_EPARSE, 7, 5, "expected", NULL},
        {"bad enum", "{\"fabrics\": [{\"kind\": \"scale-out\"}]}", CFIT_EPARSE, 1, 23, "'kind' must be one of",
         "scaleout"},
        {"not whole", "{\"nodes\": [{\"gpus_per_node\": 8.5}]}", CFIT_EPARSE, 1, 30, "whole number", NULL},
        {"top-level typo", "{\n  \"fabric\": []\n}", CFIT_EPARSE, 2, 3, "unknown catalog key 'fabric'",
         "did you mean 'fabrics'?"},
        {"not an array", "{\"gpus\": {}}", CFIT_EPARSE, 1, 10, "'gpus' must be an array", NULL},
        {"not an object", "[]", CFIT_EPARSE, 1, 1, "must be an object", NULL},
        {"entry not an object", "{\"nodes\": [1]}", CFIT_EPARSE, 1, 12, "node entry must be an object", NULL},
        {"empty name", "{\"nodes\": [{\"name\": \"\"}]}", CFIT_ERANGE, 1, 21, "'name'", NULL},
        {"duplicate", "{\"fabrics\": [\n" "{\"name\": \"d\", \"kind\": \"scaleout\", \"technology\": \"t\", "
             "\"bw_bytes_per_s\": 1e10, \"latency_s\": 0, \"efficiency\": 0.5, \"overlap_efficiency\": 0, "
             "\"source\": \"s\"},\n"
             "{\"name\": \"d\", \"kind\": \"scaleout\", \"technology\": \"t\", "
             "\"bw_bytes_per_s\": 1e10, \"latency_s\": 0, \"efficiency\": 0.5, \"overlap_efficiency\": 0, "
             "\"source\": \"s\"}]}",
         CFIT_EPARSE, 3, 1, "duplicate fabric entry 'd'", NULL},
        {"invalid model", "{\"models\": [\n  {\"name\": \"bad\", \"layers\": 2, \"hidden_size\": 64, "
             "\"ffn_hidden_size\": 256, \"num_heads\": 5, \"num_kv_heads\": 5, \"vocab_size\": 1000, "
             "\"seq_len\": 128, \"mlp\": \"gelu\", \"source\": \"s\"}]}",
         CFIT_EINVALID, 2, 3, "num_heads 5 does not divide hidden_size 64", NULL},
        {"empty", "", CFIT_EPARSE, 1, 1, NULL, NULL},
        {"price without source", "{\"prices\": [\n  {\"name\": \"node.x\", \"value\": 1, \"unit\": "
             "\"usd_per_node\", \"date\": \"2025-01\"}]}",
         CFIT_EPARSE, 2, 3, "price entry 'node.x' is missing required key 'source'", NULL},
        {"price without date", "{\"prices\": [\n  {\"name\": \"node.x\", \"value\": 1, \"unit\": "
             "\"usd_per_node\", \"source\": \"s\"}]}",
         CFIT_EPARSE, 2, 3, "price entry 'node.x' is missing required key 'date'", NULL},
        {"price of zero", "{\"prices\": [\n  {\"name\": \"node.x\", \"value\": 0, \"unit\": "
             "\"usd_per_node\", \"date\": \"2025-01\", \"source\": \"s\"}]}",
         CFIT_ERANGE, 2, 31, "price entry 'node.x': value must be greater than 0", NULL},
        {"pue below 1", "{\"prices\": [\n  {\"name\": \"facility.pue\", \"value\": 0.9, \"unit\": "
             "\"ratio\", \"date\": \"2025-01\", \"source\": \"s\"}]}",
         CFIT_ERANGE, 2, 37, "'facility.pue': value must be at least 1", NULL},
        {"price bad date", "{\"prices\": [\n  {\"name\": \"node.x\", \"value\": 1, \"unit\": "
             "\"usd_per_node\", \"date\": \"2025-13\", \"source\": \"s\"}]}",
         CFIT_EPARSE, 2, 3, "date must be YYYY-MM", "2025-13"},
        {"price bad unit", "{\"prices\": [{\"unit\": \"usd\"}]}", CFIT_EPARSE, 1, 22,
         "'unit' must be one of usd_per_node, usd_per_gpu_hour", "or usd_per_unit"},
        {"price negative", "{\"prices\": [{\"value\": -1}]}", CFIT_ERANGE, 1, 23, "'value' must be between",
         NULL},
        {"node on a scale-up link", "{\"nodes\": [{\"name\": \"n\", \"gpus_per_node\": 8, "
             "\"nics_per_node\": 8, \"fabric\": \"nvlink4\", \"source\": \"s\"}]}",
         CFIT_EINVALID, 1, 12, "is a scale-up link, not a scale-out fabric", NULL},
        {"framework scale out of range", "{\"frameworks\": [{\"name\": \"f\", \"display_name\": \"F\", "
             "\"attention\": \"fused\", \"attention_efficiency_scale\": 0, \"dp_overlap\": true, "
             "\"flat_param_gather\": false, \"zero3_max_live_params\": 0, \"source\": \"s\"}]}",
         CFIT_ERANGE, 1, 104, "'attention_efficiency_scale' must be between", NULL},
        {"bad arch", "{\"gpus\": [{\"arch\": \"pascal\"}]}", CFIT_EPARSE, 1, 20,
         "'arch' must be one of other, volta, turing, ampere, ada, hopper, blackwell, cdna2, cdna3 or cdna4",
         "'pascal'"},
        {"bad family", "{\"fabrics\": [{\"family\": \"infiniband\"}]}", CFIT_EPARSE, 1, 25,
         "'family' must be one of other, ib, roce, efa, nvlink, pcie, xgmi, slingshot or tcpxo", "'infiniband'"},
        {"bad p2p", "{\"nodes\": [{\"p2p\": \"off\"}]}", CFIT_EPARSE, 1, 20, "'p2p' must be one of yes or no",
         "'off'"},
        {"sharp out of range", "{\"fabrics\": [{\"sharp_efficiency\": 1.5}]}", CFIT_ERANGE, 1, 35,
         "'sharp_efficiency' must be between 0 and 1", NULL},
        {"node gpu dangling", "{\"nodes\": [{\"name\": \"n\", \"gpu\": \"h1000\", \"gpus_per_node\": 8, "
             "\"nics_per_node\": 8, \"fabric\": \"ib-ndr\", \"source\": \"s\"}]}",
         CFIT_EUNKNOWN, 1, 12, "node 'n': gpu 'h1000' is not a gpu entry", NULL},
        {"framework host time negative", "{\"frameworks\": [{\"host_layer_s\": -1e-3}]}", CFIT_ERANGE, 1, 34,
         "'host_layer_s' must be between", NULL},
    };
    cfit_catalog *c = new_catalog();
    /* fail after a successful override, so "unchanged" covers merged user entries too */
    cfit_diag d;
    assert_int_equal(load(c, FABRIC("ib-ndr", "7e-6", "0.5"), &d), CFIT_EOK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bad_case *k = &cases[i];
        snapshot s = snap(c);
        int rc = load(c, k->text, &d);
        if (rc != k->err)
            fail_msg("%s: got %s, want %s (%d:%d: %s)", k->what, cfit_err_name(rc), cfit_err_name(k->err),
                     d.line, d.col, d.msg);
        if (d.line != k->line || d.col != k->col)
            fail_msg("%s: at %d:%d, want %d:%d (%s)", k->what, d.line, d.col, k->line, k->col, d.msg);
        assert_string_equal(d.file, "user.json");
        assert_true(d.msg[0] != '\0');
        assert_true(d.msg[strlen(d.msg) - 1] != '.');
        if (k->needle && !strstr(d.msg, k->needle))
            fail_msg("%s: message '%s' lacks '%s'", k->what, d.msg, k->needle);
        if (k->needle2 && !strstr(d.msg, k->needle2))
            fail_msg("%s: message '%s' lacks '%s'", k->what, d.msg, k->needle2);
        snap_check_and_free(&s, c);
    }
    assert_true(cfit_catalog_fabric(c, "ib-ndr", NULL)->latency_s == 7e-6);
    /* a source longer than the catalog keeps is refused, not cut short */
    char big[CFIT_TEXT_MAX + 128];
    int n = snprintf(big, sizeof big, "{\"frameworks\": [{\"source\": \"");
    memset(big + n, 'x', CFIT_TEXT_MAX);
    snprintf(big + n + CFIT_TEXT_MAX, sizeof big - (size_t)n - CFIT_TEXT_MAX, "\"}]}");
    assert_int_equal(load(c, big, &d), CFIT_ERANGE);
    assert_non_null(strstr(d.msg, "'source' is 512 bytes long; at most 511"));
    cfit_catalog_free(c);
}

/* The NCCL-model keys on the embedded entries: arch, family, sharp_efficiency, node gpu and p2p. */
static void test_new_keys_and_entries(void **state)
{
    (void)state;
    cfit_catalog *c = new_catalog();
    const cfit_node *n = cfit_catalog_node(c, "aws-p5", NULL);
    assert_non_null(n);
    assert_int_equal(n->gpus_per_node, 8);
    assert_int_equal(n->nics_per_node, 32);
    assert_string_equal(n->fabric, "efa-100g");
    assert_string_equal(n->gpu, "h100-sxm");
    assert_int_equal(n->p2p_off, 0);
    const cfit_fabric *f = cfit_catalog_fabric(c, n->fabric, NULL);
    assert_non_null(f);
    assert_int_equal(f->family, CFIT_FAMILY_EFA);
    assert_true(f->bw_bytes_per_s == 12.5e9);
    assert_true(f->sharp_efficiency == 0);
    /* p4d/p4de carry the first EFA generation: same line rate, four times p5's step latency */
    const cfit_fabric *f1 = cfit_catalog_fabric(c, cfit_catalog_node(c, "aws-p4de", NULL)->fabric, NULL);
    assert_non_null(f1);
    assert_string_equal(f1->name, "efa1-100g");
    assert_true(f1->bw_bytes_per_s == f->bw_bytes_per_s && f1->latency_s == 4 * f->latency_s);
    assert_int_equal(cfit_catalog_node(c, "pcie-rtx4090-8", NULL)->p2p_off, 1);
    assert_string_equal(cfit_catalog_node(c, "hgx-a100-8", NULL)->gpu, "");    /* any A100 */
    /* NVLS only where an NVSwitch reduces: nvlink4/5, not NVLink bridges or A100's NVLink3 */
    assert_true(cfit_catalog_fabric(c, "nvlink4", NULL)->sharp_efficiency == 0.61);
    assert_true(cfit_catalog_fabric(c, "nvlink5", NULL)->sharp_efficiency > 0);
    assert_true(cfit_catalog_fabric(c, "nvlink4-bridge", NULL)->sharp_efficiency == 0);
    assert_true(cfit_catalog_fabric(c, "nvlink3", NULL)->sharp_efficiency == 0);
    const cfit_gpu *g = cfit_catalog_gpu(c, "h800", NULL);
    assert_non_null(g);
    assert_int_equal(g->arch, CFIT_ARCH_HOPPER);
    assert_string_equal(g->scaleup_fabric, "nvlink4");
    assert_true(g->scaleup_bw_bytes_per_s == 200e9);
    assert_int_equal(cfit_catalog_gpu(c, "v100-sxm2", NULL)->arch, CFIT_ARCH_VOLTA);
    assert_string_equal(cfit_catalog_gpu(c, "h200-nvl", NULL)->scaleup_fabric, "nvlink4-bridge");
    assert_string_equal(cfit_gpu_arch_name(CFIT_ARCH_CDNA4), "cdna4");
    assert_string_equal(cfit_fabric_family_name(CFIT_FAMILY_XGMI), "xgmi");
    /* every embedded GPU and fabric says what it is; every node's gpu resolves */
    for (size_t i = 0; i < cfit_catalog_gpu_count(c); i++)
        if (cfit_catalog_gpu_at(c, i)->arch == CFIT_ARCH_OTHER)
            fail_msg("gpu '%s' has no arch", cfit_catalog_gpu_at(c, i)->name);
    for (size_t i = 0; i < cfit_catalog_fabric_count(c); i++)
        if (cfit_catalog_fabric_at(c, i)->family == CFIT_FAMILY_OTHER)
            fail_msg("fabric '%s' has no family", cfit_catalog_fabric_at(c, i)->name);
    for (size_t i = 0; i < cfit_catalog_node_count(c); i++) {
        const cfit_node *m = cfit_catalog_node_at(c, i);
        if (m->gpu[0] && !cfit_catalog_gpu(c, m->gpu, NULL))
            fail_msg("node '%s': gpu '%s' missing", m->name, m->gpu);
    }
    cfit_catalog_free(c);
}

/* ---- files -------------------------------------------------------------------------- */

static void temp_file(char *path, size_t n, const char *text)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, n, "%s/cfit-test-XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len = strlen(text);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
}

static void test_load_file(void **state)
{
    (void)state;
    cfit_catalog *c = new_catalog();
    cfit_diag d;
    char path[512];
    temp_file(path, sizeof path, FABRIC("file-fabric", "3e-6", "0.8"));
    cfit_diag_clear(&d);
    assert_int_equal(cfit_catalog_load_file(c, path, &d), CFIT_EOK);
    assert_non_null(cfit_catalog_fabric(c, "file-fabric", NULL));
    unlink(path);

    temp_file(path, sizeof path, FABRIC("file-fabric-2", "3e-6", "2"));
    snapshot s = snap(c);
    cfit_diag_clear(&d);
    assert_int_equal(cfit_catalog_load_file(c, path, &d), CFIT_ERANGE);
    assert_string_equal(d.file, path);
    assert_int_equal(d.line, 8);
    assert_int_equal(d.col, 19);
    snap_check_and_free(&s, c);
    unlink(path);

    s = snap(c);
    cfit_diag_clear(&d);
    assert_int_equal(cfit_catalog_load_file(c, "/nonexistent/dir/catalog.json", &d), CFIT_EIO);
    assert_string_equal(d.file, "/nonexistent/dir/catalog.json");
    assert_non_null(strstr(d.msg, "cannot open"));
    snap_check_and_free(&s, c);
    cfit_catalog_free(c);
}

static void test_model_file(void **state)
{
    (void)state;
    cfit_diag d;
    cfit_model m;
    char path[512];
    temp_file(path, sizeof path,
              "{\n"
              "  \"name\": \"my-model\",\n"
              "  \"layers\": 24,\n"
              "  \"hidden_size\": 2048,\n"
              "  \"ffn_hidden_size\": 5632,\n"
              "  \"num_heads\": 16,\n"
              "  \"num_kv_heads\": 4,\n"
              "  \"vocab_size\": 32000,\n"
              "  \"seq_len\": 4096,\n"
              "  \"mlp\": \"swiglu\",\n"
              "  \"tied_embeddings\": true,\n"
              "  \"source\": \"unit test\"\n"
              "}\n");
    cfit_diag_clear(&d);
    int rc = cfit_model_load_file(path, &m, &d);
    if (rc)
        fail_msg("model file rejected: %s:%d:%d: %s", d.file, d.line, d.col, d.msg);
    assert_string_equal(m.name, "my-model");
    assert_int_equal(m.layers, 24);
    assert_int_equal(m.hidden_size, 2048);
    assert_int_equal(m.ffn_hidden_size, 5632);
    assert_int_equal(m.num_heads, 16);
    assert_int_equal(m.num_kv_heads, 4);
    assert_int_equal(m.vocab_size, 32000);
    assert_int_equal(m.seq_len, 4096);
    assert_int_equal(m.mlp, CFIT_MLP_SWIGLU);
    assert_int_equal(m.tied_embeddings, 1);
    assert_string_equal(m.source, "unit test");
    unlink(path);

    /* a typo: the key's own line and column, with a suggestion */
    temp_file(path, sizeof path,
              "{\n  \"name\": \"x\",\n  \"layers\": 2,\n  \"hiden_size\": 64\n}\n");
    cfit_diag_clear(&d);
    assert_int_equal(cfit_model_load_file(path, &m, &d), CFIT_EPARSE);
    assert_string_equal(d.file, path);
    assert_int_equal(d.line, 4);
    assert_int_equal(d.col, 3);
    assert_non_null(strstr(d.msg, "unknown model key 'hiden_size'"));
    assert_non_null(strstr(d.msg, "did you mean 'hidden_size'?"));
    unlink(path);

    /* syntax error */
    temp_file(path, sizeof path, "{\n  \"name\": \"x\",\n    layers: 2\n}\n");
    cfit_diag_clear(&d);
    assert_int_equal(cfit_model_load_file(path, &m, &d), CFIT_EPARSE);
    assert_int_equal(d.line, 3);
    assert_int_equal(d.col, 5);
    unlink(path);

    /* missing keys, reported at the object */
    temp_file(path, sizeof path, "\n {\"name\": \"x\", \"layers\": 2}\n");
    cfit_diag_clear(&d);
    assert_int_equal(cfit_model_load_file(path, &m, &d), CFIT_EPARSE);
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 2);
    assert_non_null(strstr(d.msg, "missing required key 'hidden_size'"));
    unlink(path);

    /* a whole catalog is not a model */
    temp_file(path, sizeof path, "[1, 2]");
    cfit_diag_clear(&d);
    assert_int_equal(cfit_model_load_file(path, &m, &d), CFIT_EPARSE);
    assert_non_null(strstr(d.msg, "one object"));
    unlink(path);

    /* well-formed but inconsistent */
    temp_file(path, sizeof path,
              "{\"name\": \"x\", \"layers\": 2, \"hidden_size\": 64, \"ffn_hidden_size\": 256, "
              "\"num_heads\": 4, \"num_kv_heads\": 3, \"vocab_size\": 100, \"seq_len\": 16, "
              "\"mlp\": \"gelu\", \"source\": \"s\"}");
    cfit_diag_clear(&d);
    assert_int_equal(cfit_model_load_file(path, &m, &d), CFIT_EINVALID);
    assert_string_equal(d.file, path);
    assert_non_null(strstr(d.msg, "num_kv_heads 3 does not divide num_heads 4"));
    unlink(path);

    cfit_diag_clear(&d);
    assert_int_equal(cfit_model_load_file("/nonexistent/model.json", &m, &d), CFIT_EIO);
    assert_string_equal(d.file, "/nonexistent/model.json");
}

/* Issue 12 hardware of bench/data/collectives.csv: Turing (T4, RTX 2080 Ti on PCIe 3.0), one MI250X
 * GCD on CDNA2 Infinity Fabric, Slingshot-11 and GPUDirect-TCPXO, and their node types. */
static void test_issue12_hardware(void **state)
{
    (void)state;
    cfit_catalog *c = new_catalog();
    const cfit_gpu *t4 = cfit_catalog_gpu(c, "t4", NULL), *ti = cfit_catalog_gpu(c, "rtx2080ti", NULL);
    const cfit_gpu *gcd = cfit_catalog_gpu(c, "mi250x-gcd", NULL);
    assert_true(t4 && ti && gcd);
    assert_int_equal(t4->arch, CFIT_ARCH_TURING);
    assert_int_equal(ti->arch, CFIT_ARCH_TURING);
    assert_int_equal(gcd->arch, CFIT_ARCH_CDNA2);
    assert_string_equal(cfit_gpu_arch_name(CFIT_ARCH_TURING), "turing");
    assert_string_equal(cfit_gpu_arch_name(CFIT_ARCH_CDNA2), "cdna2");
    assert_string_equal(t4->scaleup_fabric, "pcie3");
    assert_int_equal(cfit_catalog_fabric(c, "pcie3", NULL)->family, CFIT_FAMILY_PCIE);
    assert_int_equal(cfit_catalog_fabric(c, "infinity-fabric2", NULL)->family, CFIT_FAMILY_XGMI);
    const cfit_fabric *ss = cfit_catalog_fabric(c, "slingshot-200g", NULL);
    const cfit_fabric *tx = cfit_catalog_fabric(c, "tcpxo-200g", NULL);
    assert_true(ss && tx && ss->kind == CFIT_FABRIC_SCALEOUT && tx->kind == CFIT_FABRIC_SCALEOUT);
    assert_int_equal(ss->family, CFIT_FAMILY_SLINGSHOT);
    assert_int_equal(tx->family, CFIT_FAMILY_TCPXO);
    assert_string_equal(cfit_fabric_family_name(CFIT_FAMILY_TCPXO), "tcpxo");
    assert_true(ss->bw_bytes_per_s == 25e9 && tx->bw_bytes_per_s == 25e9);
    const cfit_node *ex = cfit_catalog_node(c, gcd->default_node, NULL);
    const cfit_node *a3 = cfit_catalog_node(c, "gcp-a3-mega", NULL);
    assert_true(ex && a3);
    assert_string_equal(ex->name, "hpe-cray-ex235a");
    assert_true(ex->gpus_per_node == 8 && ex->nics_per_node == 4 && strcmp(ex->fabric, "slingshot-200g") == 0);
    assert_true(a3->gpus_per_node == 8 && a3->nics_per_node == 8 && strcmp(a3->gpu, "h100-sxm") == 0);
    assert_int_equal(cfit_catalog_node(c, ti->default_node, NULL)->p2p_off, 1);
    assert_string_equal(cfit_catalog_node(c, t4->default_node, NULL)->name, "aws-g4dn-metal");
    cfit_catalog_free(c);
}

/* NCCL's LL bandwidth ceiling is a table by GPU generation: every embedded GPU's arch must have a
 * row, or a one-node LL all-reduce would take forever. */
static void test_every_arch_has_an_ll_ceiling(void **state)
{
    (void)state;
    cfit_catalog *c = new_catalog();
    for (size_t i = 0; i < cfit_catalog_gpu_count(c); i++) {
        const cfit_gpu *g = cfit_catalog_gpu_at(c, i);
        const cfit_fabric *up = cfit_catalog_fabric(c, g->scaleup_fabric, NULL);
        cfit_nccl_system s;
        cfit_nccl_estimate e;
        cfit_diag d;
        cfit_diag_clear(&d);
        assert_int_equal(cfit_nccl_system_from_catalog(g, up, NULL, NULL, 1, 2, 0, &s, &d), CFIT_EOK);
        assert_int_equal(cfit_nccl_time(&s, CFIT_COLL_ALLREDUCE, CFIT_NCCL_RING, CFIT_NCCL_LL, 1 << 20, &e, &d),
                         CFIT_EOK);
        if (!(e.time_s > 0 && e.time_s < 1))
            fail_msg("gpu '%s' (arch %s): 1 MiB LL all-reduce takes %g s", g->name, cfit_gpu_arch_name(g->arch),
                     e.time_s);
    }
    cfit_catalog_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embedded_loads),
        cmocka_unit_test(test_required_entries),
        cmocka_unit_test(test_entries_consistent),
        cmocka_unit_test(test_lookup_did_you_mean),
        cmocka_unit_test(test_load_override_and_add),
        cmocka_unit_test(test_load_gpu_and_refs),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_new_keys_and_entries),
        cmocka_unit_test(test_issue12_hardware),
        cmocka_unit_test(test_every_arch_has_an_ll_ceiling),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_model_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
