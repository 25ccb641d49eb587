/* fuzz_hf_config.c - fuzz target for the Hugging Face config.json reader (src/core/hf_config.c).
 *
 * Oracles beyond "no crash": a refused input names a message, and a position whenever the
 * text was valid JSON; an accepted one is a valid model (cfit_model_validate), its counts are
 * finite and positive with active <= total parameters, and the generic entry
 * cfit_model_load_buffer() reads it to the same model.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfit/hf_config.h"
#include "clusterfit/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_model m, again;
    if (cfit_hf_model_load_buffer(text, size, "dir/config.json", &m, &d)) {
        check(d.msg[0] != '\0');
        check(strcmp(d.file, "dir/config.json") == 0);
        return 0;
    }
    check(cfit_model_validate(&m, NULL) == CFIT_EOK);
    check(strcmp(m.name, "dir") == 0);
    double total = cfit_model_params(&m), active = cfit_model_active_params(&m);
    check(isfinite(total) && total > 0 && active > 0 && active <= total);
    double f = cfit_model_flops_per_token(&m, m.seq_len);
    check(isfinite(f) && f > 0);
    check(m.seq_len >= 1 && m.seq_len <= CFIT_HF_DEFAULT_SEQ_LEN);
    cfit_diag_clear(&d);
    check(cfit_model_load_buffer(text, size, "dir/config.json", &again, &d) == CFIT_EOK);
    check(memcmp(&m, &again, sizeof m) == 0);
    return 0;
}
