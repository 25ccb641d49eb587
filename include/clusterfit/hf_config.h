/* hf_config.h - a Hugging Face config.json as a clusterfit model (docs/catalog.md, "Hugging
 * Face config.json").
 *
 * The file is recognised by its "model_type" (or, without one, its "architectures"); each
 * supported family's own keys are mapped onto cfit_model (layers, widths, heads, experts, MLA
 * ranks, sliding windows).  Keys a family does not use are ignored.  seq_len is
 * min(max_position_embeddings, 4096): a config.json states the longest context the model
 * serves, not the sequence it was trained at; pass --seq to plan another.
 *
 * cfit_model_load_file() / _buffer() (catalog.h) call this reader for any object with a
 * "model_type" or "architectures" key, so `--model FILE` takes either format.
 */
#ifndef CLUSTERFIT_HF_CONFIG_H
#define CLUSTERFIT_HF_CONFIG_H

#include <stddef.h>
#include "clusterfit/catalog.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Training sequence length a config.json model gets when it states a longer context. */
#define CFIT_HF_DEFAULT_SEQ_LEN 4096

/* The model_type values understood, comma-separated ("llama, mistral, ..."). */
CFIT_API const char *cfit_hf_supported_types(void);

/* Parse a config.json held in text (name is used in diagnostics and to name the model: the
 * file's base name, or its directory's when the file is "config.json").  Errors: CFIT_EPARSE
 * (syntax, a missing required key, a wrong type, an unsupported model_type), CFIT_ERANGE,
 * CFIT_EINVALID (e.g. num_experts_per_tok above the experts), each with FILE:LINE:COL in d. */
CFIT_API int cfit_hf_model_load_buffer(const char *text, size_t len, const char *name, cfit_model *out, cfit_diag *d);

#ifdef __cplusplus
}
#endif
#endif
