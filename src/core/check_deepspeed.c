/* check_deepspeed.c - findings for a DeepSpeed JSON config: schema, types, batch arithmetic,
 * world size, unsupported combinations and memory fit.
 *
 * The schema pass walks the file against the tables of ds_schema.c; the semantic passes
 * read the few values they need back from the tree and reason as DeepSpeed does
 * (runtime/config.py _set_batch_related_parameters and _batch_assertion, pipe/engine.py),
 * then cost the implied layout with cfit_plan_evaluate.  Every finding carries the
 * position of the key (or value) it is about; findings go through check.c's framework
 * (check_internal.h).  docs/check.md lists each check's source.
 */
#include "clusterfit/frameworks.h"
#include "clusterfit/workload.h"
#include "base/json.h"
#include "core/ds_schema.h"
#include "core/check_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ck {
    cfit_check_result *res;
    const cfit_check_request *r;
    const cfit_json *root;
    int oom;
    long dim[4];                       /* t p c d sizes written in keys DeepSpeed ignores */
    const cfit_json_member *dim_m[4];
    const cfit_json_member *first_par; /* first such key */
    char first_par_path[160];
    int batch_auto;                    /* a batch size is "auto" (the Hugging Face Trainer fills it) */
} ck;

enum { DIM_T, DIM_P, DIM_C, DIM_D };

static void add(ck *c, cfit_severity s, const char *path, int line, int col, const char *fix,
                const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;

static void add(ck *c, cfit_severity s, const char *path, int line, int col, const char *fix,
                const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (cfit__finding_vadd(c->res, s, path, line, col, fix, fmt, ap))
        c->oom = 1;
    va_end(ap);
}

static void join(char *out, size_t n, const char *path, const char *key)
{
    snprintf(out, n, "%s%s%s", path, *path ? "." : "", key);
}

/* ---- values ---- */

static int is_int(const cfit_json *v)
{
    return v && v->type == CFIT_JSON_NUMBER && v->number == floor(v->number) && fabs(v->number) < 9.0e18;
}

/* Batch and parallel sizes above this are treated as unusable, so that every product of three
 * of them (and a world size up to 2^24) fits in a long. */
#define CHECK_MAX_SIZE (1L << 19)
#define CHECK_MAX_WORLD (1L << 24)

/* A positive integer member as DeepSpeed would read it; 0 when absent, not a usable number
 * or above CHECK_MAX_SIZE. */
static long get_long(const cfit_json *obj, const char *key)
{
    const cfit_json *v = cfit_json_get(obj, key);
    return is_int(v) && v->number > 0 && v->number <= CHECK_MAX_SIZE ? (long)v->number : 0;
}

/* True as DeepSpeed's pydantic models read it: true, 1, or a lax true string ("true", "yes", ...). */
static int get_bool(const cfit_json *obj, const char *key)
{
    const cfit_json *v = cfit_json_get(obj, key);
    if (v && v->type == CFIT_JSON_STRING)
        return cfit__pydantic_bool_text(v->string) == 1;
    return v && ((v->type == CFIT_JSON_BOOL && v->boolean) || (v->type == CFIT_JSON_NUMBER && v->number == 1));
}

static int is_auto(const cfit_json *v)
{
    return v && v->type == CFIT_JSON_STRING && strcmp(v->string, "auto") == 0;
}

/* "5e8" -> 500000000 when the text is a whole number in any JSON spelling. */
static int numeric_text(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

/* A plain integer string ("500000000", "500_000_000") that pydantic's lax mode accepts. */
static int lax_int_text(const char *s)
{
    int digits = 0;
    for (; *s; s++) {
        if (*s >= '0' && *s <= '9')
            digits++;
        else if (*s != '_' && *s != ' ')
            return 0;
    }
    return digits > 0;
}

/* ---- schema pass ---- */

static const char *type_word(cfit__ds_type t)
{
    static const char *const words[] = {"a non-negative integer", "a number", "true or false", "a string",
                                        "an object", "an object", "any value", "an object", "an integer"};
    return words[t];
}

static void string_for_number(ck *c, const cfit__ds_key *k, const cfit_json *v, const char *path, int strict)
{
    double num;
    char fix[160];
    if (strcmp(v->string, "auto") == 0) {
        add(c, strict ? CFIT_SEV_WARNING : CFIT_SEV_ERROR, path, v->line, v->col,
            strict ? "write the value, or remove the key to take the default" :
                     "write the value (\"auto\" works only through the Hugging Face Trainer, which fills it)",
            strict ? "\"auto\" is dropped by DeepSpeed before validation, so the default is used" :
                     "\"auto\" is not a number: plain DeepSpeed fails on it in its batch arithmetic");
        return;
    }
    int parsed = numeric_text(v->string, &num);
    if (parsed)
        snprintf(fix, sizeof fix, "write %.17g as a number, without quotes", num);
    else
        snprintf(fix, sizeof fix, "write %s", type_word(k->type));
    int int_field = k->type == CFIT__DS_INT || k->type == CFIT__DS_SINT;
    int lax_ok = int_field ? lax_int_text(v->string + (k->type == CFIT__DS_SINT && v->string[0] == '-')) : parsed;
    if (strict && lax_ok) {
        add(c, CFIT_SEV_WARNING, path, v->line, v->col, fix,
            "wrong type: the string \"%s\" where DeepSpeed expects %s (pydantic's lax mode converts it)",
            v->string, type_word(k->type));
        return;
    }
    add(c, CFIT_SEV_ERROR, path, v->line, v->col, fix, "wrong type: the string \"%s\" where DeepSpeed expects %s%s",
        v->string, type_word(k->type),
        !strict ? " (DeepSpeed reads it unconverted and fails with a TypeError)" :
        int_field ? " (pydantic rejects it: int_parsing)" : " (pydantic rejects it: float_parsing)");
}

/* A bool field given a string or a number: pydantic's lax mode converts "true"/"no"/1/0 ...;
 * a dict.get section hands the value on unconverted, to be tested for truth. */
static void lax_bool(ck *c, const cfit_json *v, const char *path, int strict)
{
    int b = v->type == CFIT_JSON_STRING ? cfit__pydantic_bool_text(v->string)
                                         : (v->number == 0 ? 0 : v->number == 1 ? 1 : -1);
    char shown[96];
    if (v->type == CFIT_JSON_STRING)
        snprintf(shown, sizeof shown, "the string \"%.80s\"", v->string);
    else
        snprintf(shown, sizeof shown, "the number %g", v->number);
    if (strict && b >= 0)
        add(c, CFIT_SEV_WARNING, path, v->line, v->col, b ? "write true, without quotes" : "write false, without quotes",
            "wrong type: %s where DeepSpeed expects true or false (pydantic's lax mode converts it to %s)", shown,
            b ? "true" : "false");
    else if (strict)
        add(c, CFIT_SEV_ERROR, path, v->line, v->col, "write true or false",
            "wrong type: %s where DeepSpeed expects true or false (pydantic rejects it: bool_parsing)", shown);
    else if (v->type == CFIT_JSON_STRING)
        add(c, CFIT_SEV_ERROR, path, v->line, v->col, "write true or false, without quotes",
            "wrong type: %s where DeepSpeed expects true or false: this section is read with dict.get, unconverted, "
            "and any non-empty string (\"false\" too) counts as true", shown);
    else
        add(c, CFIT_SEV_WARNING, path, v->line, v->col, "write true or false",
            "wrong type: %s where DeepSpeed expects true or false: read with dict.get, it counts as %s", shown,
            v->number != 0 ? "true" : "false");
}

static void check_int(ck *c, const cfit_json *v, const char *path, int may_be_negative)
{
    if (v->number != floor(v->number))
        add(c, CFIT_SEV_ERROR, path, v->line, v->col, "write a whole number",
            "%g has a fractional part where DeepSpeed expects an integer (pydantic int_from_float)", v->number);
    else if (v->number < 0 && !may_be_negative)
        add(c, CFIT_SEV_ERROR, path, v->line, v->col, "write a value >= 0",
            "%g is negative (pydantic greater_than_equal)", v->number);
    else if (fabs(v->number) >= 9.2e18)
        add(c, CFIT_SEV_ERROR, path, v->line, v->col, "write a value below 2^63",
            "%g does not fit in a 64-bit integer (pydantic int_parsing_size)", v->number);
}

static int type_ok(cfit__ds_type t, cfit_json_type j)
{
    switch (t) {
    case CFIT__DS_INT:
    case CFIT__DS_SINT:
    case CFIT__DS_NUM: return j == CFIT_JSON_NUMBER;
    case CFIT__DS_BOOL: return j == CFIT_JSON_BOOL;
    case CFIT__DS_STR: return j == CFIT_JSON_STRING;
    case CFIT__DS_OBJ:
    case CFIT__DS_DICT: return j == CFIT_JSON_OBJECT;
    case CFIT__DS_INT_OR_BOOL_OBJ: return j == CFIT_JSON_OBJECT || j == CFIT_JSON_BOOL;
    default: return 1;
    }
}

static void check_type(ck *c, const cfit__ds_key *k, const cfit_json *v, const char *path, int strict)
{
    if (type_ok(k->type, v->type)) {
        if (k->type == CFIT__DS_INT || k->type == CFIT__DS_SINT)
            check_int(c, v, path, k->type == CFIT__DS_SINT);
        if (k->type == CFIT__DS_INT_OR_BOOL_OBJ && v->type == CFIT_JSON_BOOL)
            add(c, CFIT_SEV_WARNING, path, v->line, v->col, "write {\"stage\": 1} (or 0)",
                "the legacy form %s is deprecated: DeepSpeed maps true to ZeRO stage 1 with a warning",
                v->boolean ? "true" : "false");
        return;
    }
    if (v->type == CFIT_JSON_STRING &&
        (k->type == CFIT__DS_INT || k->type == CFIT__DS_SINT || k->type == CFIT__DS_NUM)) {
        string_for_number(c, k, v, path, strict);
        return;
    }
    if (k->type == CFIT__DS_BOOL && (v->type == CFIT_JSON_STRING || v->type == CFIT_JSON_NUMBER)) {
        lax_bool(c, v, path, strict);
        return;
    }
    if (v->type == CFIT_JSON_NULL && strict)
        return;   /* Optional fields take None */
    add(c, CFIT_SEV_ERROR, path, v->line, v->col, NULL, "wrong type: %s where DeepSpeed expects %s",
        cfit_json_type_name(v->type), type_word(k->type));
    snprintf(c->res->findings[c->res->n - 1].fix, sizeof c->res->findings[0].fix, "write %s",
             type_word(k->type));
}

/* The size a foreign parallelism key states: its number, or the first size-like member. */
static long foreign_size(const cfit_json *v)
{
    if (is_int(v))
        return v->number > 0 && v->number <= CHECK_MAX_SIZE ? (long)v->number : 0;
    if (!v || v->type != CFIT_JSON_OBJECT)
        return 0;
    for (size_t i = 0; i < v->n; i++) {
        const cfit_json_member *m = &v->members[i];
        if (is_int(m->value) && (strstr(m->key, "size") || strstr(m->key, "degree") ||
                                 strstr(m->key, "stages") || strcmp(m->key, "tp") == 0 ||
                                 strcmp(m->key, "pp") == 0))
            return m->value->number > 0 && m->value->number <= CHECK_MAX_SIZE ? (long)m->value->number : 0;
    }
    return 0;
}

static void note_dim(ck *c, char dim, const cfit_json_member *m, const char *path)
{
    static const char dims[] = "tpcd";
    const char *at = dim ? strchr(dims, dim) : NULL;
    if (!at)
        return;
    int i = (int)(at - dims);
    long size = foreign_size(m->value);
    if (size > 0 && !c->dim[i]) {
        c->dim[i] = size;
        c->dim_m[i] = m;
    }
    if (!c->first_par) {
        c->first_par = m;
        snprintf(c->first_par_path, sizeof c->first_par_path, "%s", path);
    }
}

static void unknown_key(ck *c, const cfit__ds_section *s, const cfit_json_member *m, const char *path)
{
    const cfit__ds_hint *h = cfit__ds_hint_find(s->name, m->key);
    if (h) {
        add(c, h->error ? CFIT_SEV_ERROR : CFIT_SEV_WARNING, path, m->line, m->col, h->fix, "%s", h->message);
        note_dim(c, h->parallel_dim, m, path);
        return;
    }
    const char *names[128];
    size_t n = 0;
    for (size_t i = 0; i < s->n && n < 128; i++)
        names[n++] = s->keys[i].name;
    const char *near = cfit_suggest(m->key, names, n);
    char fix[256];
    if (near)
        snprintf(fix, sizeof fix, "did you mean \"%s\"?", near);
    else
        snprintf(fix, sizeof fix, "remove it; %s takes: %s%s%s%s", *s->name ? s->name : "the top level",
                 names[0], n > 1 ? ", " : "", n > 1 ? names[1] : "", n > 2 ? ", ..." : "");
    if (s->strict)
        add(c, CFIT_SEV_ERROR, path, m->line, m->col, fix,
            "unknown key: DeepSpeed rejects it (pydantic extra_forbidden)");
    else if (near)
        add(c, CFIT_SEV_ERROR, path, m->line, m->col, fix,
            "unknown key: DeepSpeed ignores it silently, so the setting is lost");
    else
        add(c, CFIT_SEV_WARNING, path, m->line, m->col, fix, "unknown key: DeepSpeed ignores it");
}

static void deprecated_key(ck *c, const cfit__ds_section *s, const cfit_json *obj, const cfit_json_member *m,
                           const char *path)
{
    const cfit__ds_deprecated *dep = cfit__ds_deprecated_find(s->name, m->key);
    if (!dep)
        return;
    if (dep->moves_value && cfit_json_get(obj, dep->replacement)) {
        add(c, CFIT_SEV_ERROR, path, m->line, m->col, dep->fix,
            "deprecated, and \"%s\" is given too: DeepSpeed asserts \"Cannot provide deprecated parameter '%s' and "
            "replacing parameter '%s' together\"", dep->replacement, m->key, dep->replacement);
        return;
    }
    add(c, CFIT_SEV_WARNING, path, m->line, m->col, dep->fix,
        "deprecated: DeepSpeed warns \"Config parameter %s is deprecated use %s instead\"%s", m->key,
        dep->replacement, dep->moves_value ? " and moves the value there" : " and ignores the value");
}

static void walk(ck *c, const cfit_json *obj, const cfit__ds_section *s, const char *path, int depth)
{
    for (size_t i = 0; i < obj->n && !c->oom; i++) {
        const cfit_json_member *m = &obj->members[i];
        char p[160];
        join(p, sizeof p, path, m->key);
        const cfit__ds_key *k = cfit__ds_find(s, m->key);
        if (!k) {
            unknown_key(c, s, m, p);
            continue;
        }
        if (is_auto(m->value) && cfit__ds_hf_auto(p))
            continue;   /* the Trainer fills it: hf_auto() reports it */
        deprecated_key(c, s, obj, m, p);
        if (k->alias_of && s->strict && cfit_json_get(obj, k->alias_of)) {
            char fix[200];
            snprintf(fix, sizeof fix, "keep one of \"%s\" and \"%s\"", m->key, k->alias_of);
            add(c, CFIT_SEV_ERROR, p, m->line, m->col, fix,
                "\"%s\" is an alias of \"%s\" and both are given: DeepSpeed rejects the pair (extra_forbidden)",
                m->key, k->alias_of);
        }
        check_type(c, k, m->value, p, s->strict);
        if (k->sub && m->value->type == CFIT_JSON_OBJECT && depth < 8)
            walk(c, m->value, k->sub, p, depth + 1);
    }
}

/* ---- "auto" values and fp16 ---- */

/* The value at a dotted path ("optimizer.params.lr"), or NULL. */
static const cfit_json *at_path(const cfit_json *root, const char *path)
{
    char key[64];
    const cfit_json *v = root;
    while (v && *path) {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof key, "%.*s", (int)(n < sizeof key ? n : sizeof key - 1), path);
        v = cfit_json_get(v, key);
        path += n + (path[n] == '.');
    }
    return v;
}

/* "auto" where the Hugging Face Trainer fills it (HfTrainerDeepSpeedConfig): accepted, with a note
 * naming the TrainingArguments value, and one closing note listing every value not verified. */
static void hf_auto(ck *c)
{
    static const char *const paths[] = {
        "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "gradient_clipping",
        "optimizer.params.lr", "optimizer.params.betas", "optimizer.params.eps", "optimizer.params.weight_decay",
        "scheduler.params.warmup_min_lr", "scheduler.params.warmup_max_lr", "scheduler.params.total_num_steps",
        "scheduler.params.warmup_num_steps", "fp16.enabled", "amp.enabled", "amp.opt_level", "bf16.enabled",
        "zero_optimization.reduce_bucket_size", "zero_optimization.stage3_prefetch_bucket_size",
        "zero_optimization.stage3_param_persistence_threshold",
    };
    int n_auto = 0;
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        const cfit_json *v = at_path(c->root, paths[i]);
        if (!is_auto(v))
            continue;
        add(c, CFIT_SEV_INFO, paths[i], v->line, v->col, NULL, "\"auto\": not verified; the Hugging Face Trainer "
            "(HfTrainerDeepSpeedConfig) replaces it before DeepSpeed reads it, with %s", cfit__ds_hf_auto(paths[i]));
        c->batch_auto |= i < 3;
        n_auto++;
    }
    if (n_auto)
        add(c, CFIT_SEV_INFO, "", c->root->line, c->root->col, "launch through the Hugging Face Trainer, or write the values",
            "%d value%s \"auto\" (noted at each key): accepted as the Hugging Face Trainer fills them, not verified%s",
            n_auto, n_auto == 1 ? " is" : "s are",
            c->batch_auto ? "; the batch arithmetic and the memory check need the batch sizes and were skipped" : "");
}

/* fp16.loss_scale (DeepSpeed config-json.md, "fp16"): 0 selects dynamic loss scaling, a positive value
 * is a static scale; a negative one multiplies the loss by a negative number, so every update climbs
 * the loss - DeepSpeed takes it without a word. */
static void check_loss_scale(ck *c)
{
    const cfit_json *v = at_path(c->root, "fp16.loss_scale");
    if (v && v->type == CFIT_JSON_NUMBER && v->number < 0)
        add(c, CFIT_SEV_ERROR, "fp16.loss_scale", v->line, v->col,
            "write 0 for dynamic loss scaling, or a positive static scale such as 128",
            "%g is negative: a negative static loss scale flips the sign of every gradient (0 = dynamic loss "
            "scaling, > 0 = a static scale)", v->number);
}

/* ---- semantic passes ---- */

typedef struct facts {
    long world;
    long tp, pp, cp, dp_given;      /* as DeepSpeed is told: mpu (request), pipeline.stages, ... */
    long tp_i, pp_i, cp_i;          /* as intended, including keys DeepSpeed ignores */
    long tb, mb, gas;
    int stage;
    const cfit_json_member *stage_m;
} facts;

static const cfit_json_member *member_at(const cfit_json *obj, const char *key)
{
    return cfit_json_member_get(obj, key);
}

static void at_member(const ck *c, const cfit_json_member *m, int *line, int *col)
{
    *line = m ? m->line : c->root->line;
    *col = m ? m->col : c->root->col;
}

static void gather(const ck *c, facts *f)
{
    const cfit_check_request *r = c->r;
    const cfit_json *root = c->root;
    memset(f, 0, sizeof *f);
    f->world = r->gpus <= CHECK_MAX_WORLD ? r->gpus : 0;
    const cfit_json *zero = cfit_json_get(root, "zero_optimization");
    f->stage_m = member_at(zero, "stage");
    const cfit_json *st = cfit_json_get(zero, "stage");
    f->stage = is_int(st) ? (int)st->number : (zero && zero->type == CFIT_JSON_BOOL && zero->boolean);
    long stages = get_long(cfit_json_get(root, "pipeline"), "stages");
    const cfit_json *tpsec = cfit_json_get(root, "tensor_parallel");
    long autotp = get_long(tpsec, "autotp_size");
    f->tp = r->tp > 0 && r->tp <= CHECK_MAX_SIZE ? r->tp : 1;
    f->pp = r->pp > 0 && r->pp <= CHECK_MAX_SIZE ? r->pp : (stages > 0 ? stages : 1);
    f->cp = r->cp > 0 && r->cp <= CHECK_MAX_SIZE ? r->cp : (get_long(root, "sequence_parallel_size") ? get_long(root, "sequence_parallel_size") : 1);
    f->dp_given = get_long(root, "data_parallel_size");
    f->tp_i = f->tp > 1 ? f->tp : (autotp > 1 ? autotp : (c->dim[DIM_T] ? c->dim[DIM_T] : 1));
    f->pp_i = f->pp > 1 ? f->pp : (c->dim[DIM_P] ? c->dim[DIM_P] : 1);
    f->cp_i = f->cp > 1 ? f->cp : (c->dim[DIM_C] ? c->dim[DIM_C] : 1);
    f->tb = get_long(root, "train_batch_size");
    f->mb = get_long(root, "train_micro_batch_size_per_gpu");
    f->gas = get_long(root, "gradient_accumulation_steps");
}

/* ASCII case-insensitive equality: DeepSpeed lower-cases these strings before comparing. */
static int same_lower(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if ((*a >= 'A' && *a <= 'Z' ? *a + 32 : *a) != *b)
            return 0;
    return *a == *b;
}

/* A data type DeepSpeed's get_communication_data_type accepts (after lower-casing). */
static void check_comm_type(ck *c, const char *key)
{
    const cfit_json *v = cfit_json_get(c->root, key);
    if (v && v->type == CFIT_JSON_STRING && !same_lower(v->string, "fp32") && !same_lower(v->string, "fp16") &&
        !same_lower(v->string, "bf16"))
        add(c, CFIT_SEV_ERROR, key, v->line, v->col, "write \"fp32\", \"fp16\" or \"bf16\"",
            "\"%s\" is not a communication data type DeepSpeed supports (ValueError)", v->string);
}

/* Precision options DeepSpeed's _do_error_check allows only with ZeRO (and offload limits). */
static void check_zero_only(ck *c, const facts *f)
{
    static const struct {
        const char *section, *key, *what;
    } opts[] = {
        {"fp16", "fp16_master_weights_and_grads", "Fp16_master_weights_and_grads"},
        {"bf16", "bf16_master_weights_and_grads", "Bf16_master_weights_and_grads"},
        {"bf16", "bf16_optimizer_states", "bf16_optimizer_states"},
    };
    const cfit_json *bf16 = cfit_json_get(c->root, "bf16") ? cfit_json_get(c->root, "bf16")
                                                             : cfit_json_get(c->root, "bfloat16");
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        const cfit_json *sec = opts[i].section[0] == 'f' ? cfit_json_get(c->root, "fp16") : bf16;
        const cfit_json_member *m = member_at(sec, opts[i].key);
        char path[64];
        snprintf(path, sizeof path, "%s.%s", opts[i].section, opts[i].key);
        if (m && get_bool(sec, opts[i].key) && (f->stage < 1 || f->stage > 3))
            add(c, CFIT_SEV_ERROR, path, m->line, m->col, "use ZeRO stage 1, 2 or 3, or drop it",
                "DeepSpeed asserts \"%s is only supported with ZeRO Stage 1, 2, or 3\"", opts[i].what);
        if (m && i == 2 && get_bool(sec, opts[i].key) && !get_bool(sec, "bf16_master_weights_and_grads"))
            add(c, CFIT_SEV_ERROR, path, m->line, m->col, "add \"bf16_master_weights_and_grads\": true",
                "DeepSpeed asserts \"bf16_optimizer_states requires bf16_master_weights_and_grads to be enabled\"");
    }
    const cfit_json *off = cfit_json_get(cfit_json_get(c->root, "zero_optimization"), "offload_optimizer");
    const cfit_json *ratio = cfit_json_get(off, "ratio");
    if (ratio && ratio->type == CFIT_JSON_NUMBER && ratio->number < 1.0 && f->stage != 3)
        add(c, CFIT_SEV_ERROR, "zero_optimization.offload_optimizer.ratio", ratio->line, ratio->col,
            "use ZeRO stage 3, or a ratio of 1", "DeepSpeed asserts \"Partial offloading only supported for ZeRO Stage 3.\"");
}

static void check_combinations(ck *c, const facts *f)
{
    const cfit_json *root = c->root;
    int line, col;
    if (f->stage > 3 && f->stage_m)
        add(c, CFIT_SEV_ERROR, "zero_optimization.stage", f->stage_m->value->line, f->stage_m->value->col,
            "write 0, 1, 2 or 3", "ZeRO stage %d does not exist (DeepSpeed's maximum is 3)", f->stage);
    if (f->stage >= 2 && f->pp_i > 1) {
        at_member(c, f->stage_m, &line, &col);
        add(c, CFIT_SEV_ERROR, "zero_optimization.stage", line, col,
            "use ZeRO stage 1 (or 0) with pipeline parallelism, or drop the pipeline for ZeRO-3",
            "ZeRO stage %d with pipeline parallelism (%ld stages): DeepSpeed's PipelineEngine asserts "
            "\"ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism\"", f->stage, f->pp_i);
    }
    const cfit_json *fp16 = cfit_json_get(root, "fp16");
    const cfit_json *bf16 = cfit_json_get(root, "bf16");
    if (!bf16)
        bf16 = cfit_json_get(root, "bfloat16");
    if (get_bool(fp16, "enabled") && get_bool(bf16, "enabled")) {
        at_member(c, member_at(fp16, "enabled"), &line, &col);
        add(c, CFIT_SEV_ERROR, "fp16.enabled", line, col, "enable one of fp16 and bf16",
            "fp16 and bf16 are both enabled: DeepSpeed asserts \"bfloat16 and fp16 modes cannot be "
            "simultaneously enabled\"");
    }
    if (!get_bool(fp16, "enabled") && !get_bool(bf16, "enabled") && !get_bool(cfit_json_get(root, "amp"), "enabled") &&
        !is_auto(cfit_json_get(fp16, "enabled")) && !is_auto(cfit_json_get(bf16, "enabled")))
        add(c, CFIT_SEV_WARNING, "", root->line, root->col, "add \"bf16\": {\"enabled\": true}",
            "neither bf16 nor fp16 is enabled: DeepSpeed trains in fp32, at about half the speed and twice the "
            "weight and activation memory of bf16 (the memory check assumes bf16)");
    check_comm_type(c, "communication_data_type");
    check_comm_type(c, "seq_parallel_communication_data_type");
    check_zero_only(c, f);
    const cfit_json *op = cfit_json_get(root, "gradient_allreduce_op");
    if (op && op->type == CFIT_JSON_STRING && !same_lower(op->string, "sum") && !same_lower(op->string, "mean"))
        add(c, CFIT_SEV_ERROR, "gradient_allreduce_op", op->line, op->col, "write \"mean\" or \"sum\"",
            "\"%s\" is not a gradient all-reduce operation DeepSpeed supports (ValueError)", op->string);
    if (op && op->type == CFIT_JSON_STRING && same_lower(op->string, "sum") && f->stage == 3)
        add(c, CFIT_SEV_ERROR, "gradient_allreduce_op", op->line, op->col, "write \"mean\" or use ZeRO stage 2",
            "gradient_allreduce_op \"sum\" is rejected with ZeRO stage 3 (ValueError)");
    if (cfit_json_get(root, "amp") && get_bool(cfit_json_get(root, "amp"), "enabled") && f->stage > 0) {
        at_member(c, member_at(root, "amp"), &line, &col);
        add(c, CFIT_SEV_ERROR, "amp", line, col, "use \"bf16\" or \"fp16\" instead of apex amp",
            "amp with ZeRO: DeepSpeed asserts \"Amp and ZeRO are not currently compatible\"");
    }
    long autotp = get_long(cfit_json_get(root, "tensor_parallel"), "autotp_size");
    if (autotp > 1 && f->stage == 3) {
        at_member(c, member_at(cfit_json_get(root, "tensor_parallel"), "autotp_size"), &line, &col);
        add(c, CFIT_SEV_WARNING, "tensor_parallel.autotp_size", line, col,
            "use DeepSpeed 0.19.4 or later, or ZeRO stage 0-2",
            "AutoTP with ZeRO stage 3 is refused by DeepSpeed 0.16.4 to 0.19.3 (allowed from 0.19.4)");
    }
}

/* DeepSpeed's derivation (config.py _set_batch_related_parameters) at data-parallel size dp. */
static void derive(const facts *f, long dp, long *tb, long *mb, long *gas)
{
    *tb = f->tb;
    *mb = f->mb;
    *gas = f->gas;
    if (*tb && *mb && !*gas)
        *gas = *tb / *mb / dp;
    else if (*tb && *gas && !*mb)
        *mb = *tb / dp / *gas;
    else if (*mb && *gas && !*tb)
        *tb = *mb * *gas * dp;
    else if (*tb && !*mb && !*gas) {
        *gas = 1;
        *mb = *tb / dp;
    } else if (*mb && !*tb && !*gas) {
        *gas = 1;
        *tb = *mb * dp;
    }
}

static const cfit_json_member *batch_member(const ck *c)
{
    const cfit_json_member *m = member_at(c->root, "train_batch_size");
    return m ? m : member_at(c->root, "train_micro_batch_size_per_gpu");
}

/* Returns the data-parallel size DeepSpeed will use, 0 when it cannot be known. */
static long check_world(ck *c, const facts *f)
{
    int line, col;
    long told = f->tp * f->pp * f->cp;
    long ds_dp = f->dp_given ? f->dp_given : (f->world % told ? 0 : f->world / told);
    long intended = f->tp_i * f->pp_i * f->cp_i;
    const cfit_json_member *where = c->first_par ? c->first_par : member_at(c->root, "data_parallel_size");
    at_member(c, where, &line, &col);
    const char *path = c->first_par ? c->first_par_path : where ? where->key : "";
    if (f->world % intended) {
        add(c, CFIT_SEV_ERROR, path, line, col, "choose TP x PP x CP dividing the GPU count",
            "world size %ld is not divisible by TP %ld x PP %ld x CP %ld = %ld", f->world, f->tp_i, f->pp_i,
            f->cp_i, intended);
        return ds_dp;
    }
    if (ds_dp && (double)intended * ds_dp != (double)f->world) {
        char fix[400];
        snprintf(fix, sizeof fix, "give TP and PP to DeepSpeed in code (Megatron mpu, PipelineModule(num_stages=%ld)) "
                 "so that DP = %ld, and check with --tp %ld --pp %ld", f->pp_i, f->world / intended, f->tp_i, f->pp_i);
        add(c, CFIT_SEV_ERROR, path, line, col, fix,
            "world size %ld != TP %ld x PP %ld x DP %ld x CP %ld = %.0f: DeepSpeed takes DP = %ld from the world "
            "size and the parallelism it is actually given, so the sizes in keys it ignores leave no GPUs for them",
            f->world, f->tp_i, f->pp_i, ds_dp, f->cp_i, (double)intended * ds_dp, ds_dp);
    }
    return ds_dp;
}

static void check_batch(ck *c, const facts *f, long ds_dp, long *mbs_out, long *gas_out)
{
    int line, col;
    const cfit_json_member *bm = batch_member(c);
    at_member(c, bm, &line, &col);
    const char *path = bm ? bm->key : "";
    if (!f->tb && !f->mb) {
        add(c, CFIT_SEV_ERROR, path, line, col, "write train_micro_batch_size_per_gpu (and train_batch_size)",
            "no usable train_batch_size or train_micro_batch_size_per_gpu (absent, misspelt or not a positive "
            "number): DeepSpeed asserts \"Either train_batch_size or train_micro_batch_size_per_gpu needs to be "
            "provided\"");
        return;
    }
    if (!ds_dp)
        return;
    long tb, mb, gas;
    derive(f, ds_dp, &tb, &mb, &gas);
    if (mb < 1 || gas < 1 || tb != mb * gas * ds_dp) {
        char fix[400];
        long mg = (f->mb ? f->mb : 1) * (f->gas ? f->gas : 1), implied = f->tb && f->tb % mg == 0 ? f->tb / mg : 0;
        int n = snprintf(fix, sizeof fix, "make train_batch_size = micro x accumulation x DP %ld, e.g. %ld x %ld x %ld = %ld",
                         ds_dp, mb > 0 ? mb : 1, gas > 0 ? gas : 1, ds_dp,
                         (mb > 0 ? mb : 1) * (gas > 0 ? gas : 1) * ds_dp);
        if (implied > 0 && implied < ds_dp && ds_dp % implied == 0 && n > 0 && (size_t)n < sizeof fix)
            snprintf(fix + n, sizeof fix - (size_t)n, "; or, if the model code gives DeepSpeed tensor/pipeline "
                     "parallelism of %ld through an mpu (DP %ld), check with --tp/--pp", ds_dp / implied, implied);
        add(c, CFIT_SEV_ERROR, path, line, col, fix,
            "batch arithmetic cannot hold: train_batch_size %ld != micro %ld x accumulation %ld x DP %ld "
            "(DeepSpeed's _batch_assertion)", tb, mb, gas, ds_dp);
        return;
    }
    *mbs_out = mb;
    *gas_out = gas;
    long dp_i = f->world / (f->tp_i * f->pp_i * f->cp_i);
    if (dp_i == ds_dp || !dp_i)
        return;
    long tb2, mb2, gas2;
    derive(f, dp_i, &tb2, &mb2, &gas2);
    char fix[300];
    snprintf(fix, sizeof fix, "set train_micro_batch_size_per_gpu explicitly and make train_batch_size = micro x "
             "%ld x %ld for the data-parallel size you launch with", gas, dp_i);
    add(c, CFIT_SEV_ERROR, path, line, col, fix,
        "batch arithmetic: train_batch_size %ld = micro x accumulation %ld x DP gives micro %ld with the DP %ld "
        "DeepSpeed sees, but micro %ld%s with the DP %ld that TP %ld x PP %ld x CP %ld leaves", tb, gas, mb, ds_dp,
        mb2, tb2 == mb2 * gas2 * dp_i && mb2 > 0 ? "" : " (not a whole number)", dp_i, f->tp_i, f->pp_i,
        f->cp_i);
    if (mb2 > 0 && tb2 == mb2 * gas2 * dp_i) {
        *mbs_out = mb2;
        *gas_out = gas2;
    }
}

static const char *memory_fix(const cfit_plan *p)
{
    const cfit_memory *m = &p->mem;
    if (m->activations_bytes > m->weights_bytes + m->grads_bytes + m->optimizer_bytes)
        return "activations dominate: lower train_micro_batch_size_per_gpu, turn on activation checkpointing, "
               "or use more tensor/context parallelism";
    return "model states dominate: a higher ZeRO stage (where the pipeline allows it), more GPUs, or more "
           "tensor/pipeline parallelism";
}

/* The tier one offload block names (zero_optimization.offload_optimizer / offload_param "device":
 * "cpu" or "nvme"; DeepSpeed's OffloadDeviceEnum), as CFIT_OFFLOAD_* bits: host, or host and NVMe. */
static int offload_device_bits(const cfit_json *block, int host_bit, int nvme_bit)
{
    const cfit_json *dev = cfit_json_get(block, "device");
    if (!dev || dev->type != CFIT_JSON_STRING)
        return 0;
    if (strcmp(dev->string, "cpu") == 0)
        return host_bit;
    if (strcmp(dev->string, "nvme") == 0)
        return host_bit | nvme_bit;
    return 0;
}

/* What the config offloads, as the planner's offload mask: optimizer states and parameters (and
 * their deprecated spellings "cpu_offload" and "cpu_offload_param": true). */
static int ds_offload_mask(const cfit_json *root)
{
    const cfit_json *z = cfit_json_get(root, "zero_optimization");
    int mask = offload_device_bits(cfit_json_get(z, "offload_optimizer"), CFIT_OFFLOAD_OPTIMIZER,
                                   CFIT_OFFLOAD_OPTIMIZER_NVME) |
               offload_device_bits(cfit_json_get(z, "offload_param"), CFIT_OFFLOAD_PARAMS, CFIT_OFFLOAD_PARAMS_NVME);
    if (get_bool(z, "cpu_offload"))
        mask |= CFIT_OFFLOAD_OPTIMIZER;
    if (get_bool(z, "cpu_offload_param"))
        mask |= CFIT_OFFLOAD_PARAMS;
    return mask;
}

/* The finding for a layout that does not fit: the GPU's memory, or (with offload, the GPU fitting)
 * the node's host memory or NVMe array. */
static void memory_finding(ck *c, const cfit_plan_request *req, const cfit_plan *plan, const cfit_gpu *g, int capped)
{
    const cfit_check_request *r = c->r;
    const cfit_layout *l = &req->fixed;
    int line = c->root->line, col = c->root->col;
    const cfit_json_member *bm = batch_member(c);
    if (bm)
        line = bm->line, col = bm->col;
    char mode[64], off_what[96] = "";
    if (req->offload)
        snprintf(off_what, sizeof off_what, ", offload %s", cfit_offload_str(req->offload, mode, sizeof mode));
    if (plan->mem.total_bytes <= plan->mem.capacity_bytes) {   /* the GPU fits: the host or its NVMe array does not */
        int host_short = plan->mem.host_bytes > plan->mem.host_capacity_bytes;
        add(c, CFIT_SEV_ERROR, bm ? bm->key : "", line, col,
            host_short ? "offload to NVMe (\"device\": \"nvme\"), or shard the state over more GPUs"
                       : "shard the state over more GPUs, or offload less to NVMe",
            "memory: %s with TP %d x PP %d x DP %d x CP %d, ZeRO-%d%s on %s fits the GPU (%.1f of %.0f GB) but its "
            "offloaded state needs %.1f GB of %s per GPU, more than the %.1f GB per GPU the node has",
            r->model->name, l->tp, l->pp, l->dp, l->cp, l->zero, off_what, g->name, plan->mem.total_bytes / 1e9,
            plan->mem.capacity_bytes / 1e9, (host_short ? plan->mem.host_bytes : plan->mem.nvme_bytes) / 1e9,
            host_short ? "host memory" : "NVMe",
            (host_short ? plan->mem.host_capacity_bytes : plan->mem.nvme_capacity_bytes) / 1e9);
        return;
    }
    add(c, CFIT_SEV_ERROR, bm ? bm->key : "", line, col, memory_fix(plan),
        "memory: %s with TP %d x PP %d x DP %d x CP %d, micro-batch %d, ZeRO-%d%s, %s%s on %s needs %.1f GB per GPU "
        "(weights %.1f, gradients %.1f, optimizer %.1f, activations %.1f GB), more than the %.0f GB available",
        r->model->name, l->tp, l->pp, l->dp, l->cp, l->mbs, l->zero, capped ? " (the highest stage a pipeline allows)" : "",
        l->recompute ? "activation checkpointing" : "no activation checkpointing", off_what, g->name,
        plan->mem.total_bytes / 1e9, plan->mem.weights_bytes / 1e9, plan->mem.grads_bytes / 1e9, plan->mem.optimizer_bytes / 1e9,
        plan->mem.activations_bytes / 1e9, plan->mem.capacity_bytes / 1e9);
}

static void check_memory(ck *c, const facts *f, long mbs, long gas)
{
    const cfit_check_request *r = c->r;
    const cfit_gpu *g = r->gpu ? r->gpu : cfit_catalog_gpu(r->catalog, "h100-sxm", NULL);
    if (!g)
        return;
    long dp = f->world / (f->tp_i * f->pp_i * f->cp_i);
    cfit_plan_request req;
    cfit_plan_request_init(&req);
    req.catalog = r->catalog;
    req.model = r->model;
    req.seq_len = r->seq_len;
    req.global_batch = mbs * gas * dp;
    req.gpus = &g;
    req.ngpus = 1;
    req.gpus_total = f->world;
    cfit_layout *l = &req.fixed;
    l->tp = (int)f->tp_i, l->pp = (int)f->pp_i, l->cp = (int)f->cp_i, l->dp = (int)dp, l->vp = 1;
    l->mbs = (int)mbs;
    l->zero = f->stage < 0 ? 0 : f->stage > 3 ? 3 : f->stage;
    int capped = l->zero >= 2 && l->pp > 1;
    if (capped)
        l->zero = 1;   /* the highest stage a pipeline allows (reported above) */
    l->recompute = cfit_json_get(c->root, "activation_checkpointing") ? CFIT_RECOMPUTE_FULL : CFIT_RECOMPUTE_NONE;
    l->sp = l->tp > 1;
    req.offload = ds_offload_mask(c->root);   /* costed on the GPU's default node's host memory */
    const cfit_node *node = cfit_catalog_node(r->catalog, g->default_node, NULL);
    if (req.offload && (!node || !cfit_node_has_host(node) ||
                        ((req.offload & CFIT_OFFLOAD_NVME) && !cfit_node_nvme(r->catalog, node)))) {
        add(c, CFIT_SEV_INFO, "zero_optimization", c->root->line, c->root->col,
            "give the node's host memory (and local_nvme) in a catalog node entry (docs/catalog.md)",
            "memory not checked: the config offloads to %s, and the catalog's node for %s (%s) has no %s figures",
            req.offload & CFIT_OFFLOAD_NVME ? "NVMe" : "host memory", g->name, node ? node->name : "none",
            req.offload & CFIT_OFFLOAD_NVME ? "host memory or NVMe" : "host memory");
        return;
    }
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_plan p;
    int line = c->root->line, col = c->root->col;
    if (cfit_plan_validate(&req, &d) || cfit_plan_evaluate(&req, g, l, &p, &d)) {
        add(c, CFIT_SEV_ERROR, "", line, col, "choose parallel sizes the model divides into",
            "layout TP %d x PP %d x DP %d x CP %d does not suit %s: %s", l->tp, l->pp, l->dp, l->cp,
            r->model->name, d.msg);
        return;
    }
    if (p.fits)
        return;
    memory_finding(c, &req, &p, g, capped);
}

int cfit_check_deepspeed(const char *text, size_t len, const char *file,
                         const cfit_check_request *r, cfit_check_result *out, cfit_diag *d)
{
    memset(out, 0, sizeof *out);
    if (len > CFIT_CHECK_MAX_BYTES)
        return cfit_diag_set(d, CFIT_ERANGE, file, 0, 0, "file is larger than %u MiB; a DeepSpeed config is far smaller",
                             CFIT_CHECK_MAX_BYTES >> 20);
    int err;
    cfit_json *root = cfit_json_parse(text, len, file, &err, d);
    if (!root)
        return err;
    if (root->type != CFIT_JSON_OBJECT) {
        cfit_diag_set(d, CFIT_EPARSE, file, root->line, root->col, "a DeepSpeed config is a JSON object, got %s",
                      cfit_json_type_name(root->type));
        cfit_json_free(root);
        return CFIT_EPARSE;
    }
    ck c;
    memset(&c, 0, sizeof c);
    c.res = out;
    c.r = r;
    c.root = root;
    walk(&c, root, cfit__ds_top(), "", 0);
    hf_auto(&c);
    check_loss_scale(&c);
    facts f;
    gather(&c, &f);
    check_combinations(&c, &f);
    long mbs = 0, gas = 0;
    if (f.world > 0) {
        long ds_dp = check_world(&c, &f);
        if (!c.batch_auto)
            check_batch(&c, &f, ds_dp, &mbs, &gas);
    }
    if (f.world > 0 && r->model && r->catalog && mbs > 0 && gas > 0 && f.world % (f.tp_i * f.pp_i * f.cp_i) == 0)
        check_memory(&c, &f, mbs, gas);
    cfit_json_free(root);
    if (c.oom) {
        cfit_check_result_fini(out);
        return cfit_diag_set(d, CFIT_ENOMEM, file, 0, 0, "out of memory");
    }
    cfit__findings_sort(out);
    return CFIT_EOK;
}
