/* ds_schema.h - DeepSpeed's config keys as tables (internal to libclusterfit).
 *
 * Adding a key: add a row to its section in ds_schema.c with its type (and the
 * sub-section for objects).  Adding a section: a table of rows plus a cfit__ds_section
 * naming whether DeepSpeed validates it strictly (pydantic extra="forbid": an unknown
 * key is an error) or reads it with dict.get (an unknown key is silently ignored).
 * Sources: data/references/frameworks.md §1 (DeepSpeed 0.19.6-dev, runtime/config.py,
 * runtime/zero/config.py, runtime/precision_config.py, runtime/tensor_parallel/config.py),
 * re-checked against deepspeedai/DeepSpeed master as listed in docs/check.md.
 */
#ifndef CFIT_DS_SCHEMA_H
#define CFIT_DS_SCHEMA_H

#include <stddef.h>

typedef enum cfit__ds_type {
    CFIT__DS_INT,    /* integer >= 0 */
    CFIT__DS_NUM,    /* any number */
    CFIT__DS_BOOL,
    CFIT__DS_STR,
    CFIT__DS_OBJ,    /* object with a known key table (sub) */
    CFIT__DS_DICT,   /* object whose keys are not checked */
    CFIT__DS_ANY,
    CFIT__DS_INT_OR_BOOL_OBJ,  /* zero_optimization: object, or legacy true/false */
    CFIT__DS_SINT    /* any integer (a pydantic int field without ge=0) */
} cfit__ds_type;

typedef struct cfit__ds_section cfit__ds_section;

typedef struct cfit__ds_key {
    const char *name;
    cfit__ds_type type;
    const cfit__ds_section *sub;   /* OBJ: the nested section */
    const char *alias_of;          /* pydantic alias: the field this key also sets */
} cfit__ds_key;

struct cfit__ds_section {
    const char *name;              /* "zero_optimization", "" for the top level */
    int strict;                    /* pydantic extra="forbid" */
    const cfit__ds_key *keys;
    size_t n;
};

/* A known mistake: a key in a section that DeepSpeed does not accept, with why and the fix.
 * parallel_dim: 't', 'p', 'c' or 'd' when the key means a parallel size DeepSpeed ignores. */
typedef struct cfit__ds_hint {
    const char *section;           /* "" top level */
    const char *key;
    int error;                     /* 1 error, 0 warning */
    char parallel_dim;
    const char *message;
    const char *fix;
} cfit__ds_hint;

/* A deprecated key DeepSpeed still takes with a warning (DeepSpeedConfigModel's deprecated fields,
 * runtime/config_utils.py): what replaces it, and whether DeepSpeed moves its value there. */
typedef struct cfit__ds_deprecated {
    const char *section;
    const char *key;
    const char *replacement;       /* the new field, in the same section */
    int moves_value;               /* 0: set_new_param=False, the value is dropped */
    const char *fix;
} cfit__ds_deprecated;

const cfit__ds_section *cfit__ds_top(void);
const cfit__ds_deprecated *cfit__ds_deprecated_find(const char *section, const char *key);

/* ds_lax.c: pydantic's lax bool from a string (1 true, 0 false, -1 not a bool), and the
 * TrainingArguments value the Hugging Face Trainer writes over "auto" at a dotted path (NULL:
 * the Trainer does not fill that key). */
int cfit__pydantic_bool_text(const char *s);
const char *cfit__ds_hf_auto(const char *path);
const cfit__ds_key *cfit__ds_find(const cfit__ds_section *s, const char *name);
const cfit__ds_hint *cfit__ds_hint_find(const char *section, const char *key);

#endif
