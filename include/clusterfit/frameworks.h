/* frameworks.h - launch configurations for a plan (emit) and checks of existing ones (check).
 *
 * Emit turns a plan into what a framework reads: a DeepSpeed JSON config, a Megatron-LM
 * argument list, a torchrun/srun launch line.  Check reads a DeepSpeed JSON config and
 * reports, with FILE:LINE:COL and a fix, what DeepSpeed would reject or silently ignore,
 * batch arithmetic that cannot hold for the world size, unsupported combinations and a
 * layout that does not fit in memory.  docs/check.md gives the DeepSpeed source of each
 * check; data/references/frameworks.md the research behind them.
 */
#ifndef CLUSTERFIT_FRAMEWORKS_H
#define CLUSTERFIT_FRAMEWORKS_H

#include <stddef.h>
#include "clusterfit/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cfit_emit_kind {
    CFIT_EMIT_DEEPSPEED = 0,   /* DeepSpeed JSON config */
    CFIT_EMIT_MEGATRON = 1,    /* Megatron-LM pretrain_gpt.py arguments, one per line */
    CFIT_EMIT_TORCHRUN = 2,    /* torchrun and srun launch lines */
    CFIT_EMIT_COUNT
} cfit_emit_kind;

/* "deepspeed", "megatron", "torchrun"; never NULL. */
CFIT_API const char *cfit_emit_kind_name(cfit_emit_kind k);
/* Kind by name; CFIT_EUNKNOWN with d->msg naming the choices (and a did-you-mean). */
CFIT_API int cfit_emit_kind_parse(const char *name, cfit_emit_kind *out, cfit_diag *d);

/* Write the configuration of kind k for plan p of request r (seq_len: the sequence length
 * the plan used, 0 = the model's) into *out, a NUL-terminated string the caller frees.
 * Returns CFIT_EOK, CFIT_ENOMEM or CFIT_EINVALID (incomplete plan) with d set. */
CFIT_API int cfit_emit(cfit_emit_kind k, const cfit_plan_request *r, const cfit_plan *p, int seq_len,
              char **out, cfit_diag *d);

typedef enum cfit_severity { CFIT_SEV_ERROR = 0, CFIT_SEV_WARNING = 1, CFIT_SEV_INFO = 2 } cfit_severity;
CFIT_API const char *cfit_severity_name(cfit_severity s);   /* "error", "warning", "info" */

typedef struct cfit_finding {
    cfit_severity severity;
    char path[160];      /* JSON path, "zero_optimization.reduce_bucket_size"; "" = whole file */
    int line, col;       /* 1-based position of the key (or value); 0 when none */
    char message[512];   /* lowercase, no full stop */
    char fix[512];       /* what to write instead; may be "" */
} cfit_finding;

typedef struct cfit_check_request {
    const cfit_catalog *catalog;   /* required when model is set */
    const cfit_model *model;       /* NULL: no memory check */
    const cfit_gpu *gpu;           /* NULL: the catalog's h100-sxm */
    long gpus;                     /* world size; 0: no world-size arithmetic */
    int seq_len;                   /* 0 = the model's */
    int tp, pp, cp;                /* sizes the launch gives DeepSpeed through an mpu
                                      (Megatron-DeepSpeed, PipelineModule); 0 = from the config */
} cfit_check_request;

typedef struct cfit_check_result {
    cfit_finding *findings;        /* in file order of the checks that produced them */
    size_t n, cap;
    int errors, warnings, infos;
} cfit_check_result;

/* A request with nothing set (no model, no world size). */
CFIT_API void cfit_check_request_init(cfit_check_request *r);

/* Check len bytes of a DeepSpeed JSON config (file names it in diagnostics).  Returns
 * CFIT_EOK with out filled (findings may include errors), CFIT_EPARSE when the text is
 * not JSON or not an object (d gives FILE:LINE:COL), CFIT_ERANGE when it is larger than
 * CFIT_CHECK_MAX_BYTES, or CFIT_ENOMEM.  Free out with cfit_check_result_fini. */
#define CFIT_CHECK_MAX_BYTES (16u << 20)
CFIT_API int cfit_check_deepspeed(const char *text, size_t len, const char *file,
                         const cfit_check_request *r, cfit_check_result *out, cfit_diag *d);
/* Check a Megatron-LM argument file: pretrain_gpt.py arguments as shell words (one per
 * line, or a launch line: words up to the last one ending in ".py" are the launcher, whose
 * torchrun --nnodes x --nproc-per-node gives the world size when r->gpus is 0).  Returns
 * CFIT_EOK with out filled, CFIT_EPARSE (unterminated quote, NUL byte), CFIT_ERANGE (more than
 * 8192 words or CFIT_CHECK_MAX_BYTES) or CFIT_ENOMEM, d giving FILE:LINE:COL. */
CFIT_API int cfit_check_megatron(const char *text, size_t len, const char *file, const cfit_check_request *r,
                        cfit_check_result *out, cfit_diag *d);

/* Check a file: a DeepSpeed JSON config when its name ends in ".json", it is empty, or its
 * first non-blank character is '{', '[', '"' or a number; else a Megatron-LM argument file.  CFIT_EIO (d naming the path) when it cannot be
 * read; otherwise as the two calls above.  *kind_out (may be NULL) gets "deepspeed" or
 * "megatron". */
CFIT_API int cfit_check_file(const char *path, const cfit_check_request *r, cfit_check_result *out,
                    const char **kind_out, cfit_diag *d);
/* The same, always as a DeepSpeed JSON config. */
CFIT_API int cfit_check_deepspeed_file(const char *path, const cfit_check_request *r, cfit_check_result *out,
                              cfit_diag *d);
CFIT_API void cfit_check_result_fini(cfit_check_result *res);

#ifdef __cplusplus
}
#endif
#endif
