/* hf_json.h - the Hugging Face config.json reader on an already parsed document (internal:
 * cfit_model_load_buffer() dispatches to it by content). */
#ifndef CFIT_HF_JSON_H
#define CFIT_HF_JSON_H

#include "base/json.h"
#include "clusterfit/catalog.h"

/* Whether root looks like a config.json: an object with "model_type" or "architectures". */
int cfit__hf_is_config(const cfit_json *root);
/* Map it onto *out (validated); errors as for cfit_hf_model_load_buffer(). */
int cfit__hf_model_from_json(const cfit_json *root, const char *name, cfit_model *out, cfit_diag *d);

#endif
