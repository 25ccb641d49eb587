/* fuzz_check.c - fuzz target for `clusterfit check` (src/core/check.c, ds_schema.c,
 * check_megatron.c) and, through the layout a config implies, the cost model.
 *
 * Each input is checked four times: as a DeepSpeed config and as a Megatron argument file,
 * each without a world size and with one and llama3-8b (batch, world-size and memory passes).  Oracles beyond "no crash":
 * the call either refuses the text as CFIT_EPARSE with a position and a message, or returns
 * findings whose counts agree with their severities, each with a message and a position
 * inside the text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfit/frameworks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

static cfit_catalog *catalog(void)
{
    static cfit_catalog *c;   /* built once: the embedded catalog is slow to parse per input */
    if (!c)
        c = cfit_catalog_new(NULL);
    check(c != NULL);
    return c;
}

static void run(const char *text, size_t size, long gpus, int megatron)
{
    cfit_check_request r;
    cfit_check_request_init(&r);
    r.catalog = catalog();
    r.gpus = gpus;
    r.model = gpus ? cfit_catalog_model(r.catalog, "llama3-8b", NULL) : NULL;
    r.tp = gpus % 3 == 0 ? 2 : 0;
    cfit_check_result res;
    cfit_diag d;
    cfit_diag_clear(&d);
    int rc = megatron ? cfit_check_megatron(text, size, "fuzz.txt", &r, &res, &d)
                      : cfit_check_deepspeed(text, size, "fuzz.json", &r, &res, &d);
    if (rc) {
        check(rc == CFIT_EPARSE || rc == CFIT_ENOMEM || (megatron && rc == CFIT_ERANGE));
        check(d.msg[0] != '\0' && d.line >= 1);
        return;
    }
    int e = 0, w = 0, i = 0;
    for (size_t k = 0; k < res.n; k++) {
        const cfit_finding *f = &res.findings[k];
        e += f->severity == CFIT_SEV_ERROR;
        w += f->severity == CFIT_SEV_WARNING;
        i += f->severity == CFIT_SEV_INFO;
        check(f->message[0] != '\0');
        check(f->line >= 1 && (size_t)f->line <= size + 1 && f->col >= 1);
    }
    check(e == res.errors && w == res.warnings && i == res.infos);
    cfit_check_result_fini(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    run(text, size, 0, 0);
    run(text, size, 1 + (long)(size % 96), 0);
    run(text, size, 0, 1);
    run(text, size, 1 + (long)(size % 96), 1);
    return 0;
}
