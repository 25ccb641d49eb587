/* check_megatron.c - findings for a Megatron-LM argument file: flags, divisibility, combinations, memory.
 *
 * The file holds pretrain_gpt.py arguments as shell words: one per line, or a launch line
 * (everything up to the last word ending in ".py" is the launcher and is skipped, except
 * that torchrun's --nnodes and --nproc-per-node give the world size when --gpus does not).
 * '#' starts a comment, quotes and backslashes work as in sh.  The rules are Megatron-LM's
 * validate_args (megatron/training/arguments.py) as listed in data/references/frameworks.md §5.
 */
#include "clusterfit/frameworks.h"
#include "clusterfit/offload.h"
#include "clusterfit/workload.h"
#include "core/check_internal.h"
#include "base/json.h"
#include "base/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MG_MAX_WORDS 8192

typedef struct word {
    char *s;
    int line, col;
} word;

typedef struct words {
    word *w;
    size_t n, cap;
} words;

static void words_free(words *ws)
{
    for (size_t i = 0; i < ws->n; i++)
        free(ws->w[i].s);
    free(ws->w);
}

/* ---- shell-word reader ---- */

typedef struct lexer {
    const char *t;
    size_t len, i;
    int line, col;
    char *buf;
    size_t blen, bcap;
} lexer;

static int lx_put(lexer *lx, char ch)
{
    if (cfit__grow(&lx->buf, &lx->bcap, lx->blen + 2, 1))
        return CFIT_ENOMEM;
    lx->buf[lx->blen++] = ch;
    return CFIT_EOK;
}

static char lx_next(lexer *lx)
{
    char ch = lx->t[lx->i++];
    if (ch == '\n')
        lx->line++, lx->col = 1;
    else
        lx->col++;
    return ch;
}

static int lx_quoted(lexer *lx, char q, const char *file, cfit_diag *d)
{
    int line = lx->line, col = lx->col - 1;
    while (lx->i < lx->len) {
        char ch = lx_next(lx);
        if (ch == q)
            return CFIT_EOK;
        if (ch == '\0')
            return cfit_diag_set(d, CFIT_EPARSE, file, lx->line, lx->col - 1, "NUL byte in an argument file");
        if (q == '"' && ch == '\\' && lx->i < lx->len && lx->t[lx->i] && strchr("\"\\$`", lx->t[lx->i]))
            ch = lx_next(lx);
        if (lx_put(lx, ch))
            return CFIT_ENOMEM;
    }
    return cfit_diag_set(d, CFIT_EPARSE, file, line, col, "unterminated %s quote", q == '"' ? "double" : "single");
}

static int lx_word(lexer *lx, const char *file, cfit_diag *d)
{
    while (lx->i < lx->len) {
        char ch = lx->t[lx->i];
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
            return CFIT_EOK;
        if (ch == '\0')
            return cfit_diag_set(d, CFIT_EPARSE, file, lx->line, lx->col, "NUL byte in an argument file");
        lx_next(lx);
        int rc = CFIT_EOK;
        if (ch == '\'' || ch == '"')
            rc = lx_quoted(lx, ch, file, d);
        else if (ch == '\\' && lx->i < lx->len) {
            char esc = lx_next(lx);
            if (esc != '\n')
                rc = lx_put(lx, esc);
        } else
            rc = lx_put(lx, ch);
        if (rc)
            return rc;
    }
    return CFIT_EOK;
}

static int push_word(words *ws, lexer *lx, int line, int col)
{
    if (cfit__grow(&ws->w, &ws->cap, ws->n + 1, sizeof *ws->w))
        return CFIT_ENOMEM;
    lx->buf[lx->blen] = '\0';
    char *s = strdup(lx->buf);
    if (!s)
        return CFIT_ENOMEM;
    ws->w[ws->n++] = (word){s, line, col};
    return CFIT_EOK;
}

static int lex(const char *text, size_t len, const char *file, words *ws, cfit_diag *d)
{
    lexer lx = {text, len, 0, 1, 1, NULL, 0, 0};
    int rc = lx_put(&lx, '\0');
    while (!rc && lx.i < len) {
        char ch = text[lx.i];
        if (ch == '\0') {
            rc = cfit_diag_set(d, CFIT_EPARSE, file, lx.line, lx.col, "NUL byte in an argument file");
        } else if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
            lx_next(&lx);
        } else if (ch == '\\' && lx.i + 1 < len && text[lx.i + 1] == '\n') {
            lx_next(&lx), lx_next(&lx);
        } else if (ch == '#') {
            while (lx.i < len && text[lx.i] != '\n')
                lx_next(&lx);
        } else if (ws->n == MG_MAX_WORDS) {
            rc = cfit_diag_set(d, CFIT_ERANGE, file, lx.line, lx.col, "more than %d arguments", MG_MAX_WORDS);
        } else {
            int line = lx.line, col = lx.col;
            lx.blen = 0;
            rc = lx_word(&lx, file, d);
            if (!rc)
                rc = push_word(ws, &lx, line, col);
        }
    }
    free(lx.buf);
    if (rc == CFIT_ENOMEM)
        cfit_diag_set(d, CFIT_ENOMEM, file, 0, 0, "out of memory");
    return rc;
}

/* ---- the flags clusterfit knows ---- */

enum {
    F_NONE, F_TP, F_PP, F_CP, F_VPL, F_VPS, F_VP_OLD, F_SP, F_MBS, F_GBS, F_LAYERS, F_HIDDEN, F_FFN,
    F_HEADS, F_GQA, F_GROUPS, F_SEQ, F_MAXPOS, F_BF16, F_FP16, F_FP8, F_DISTOPT, F_MFSDP, F_FSDP_STRAT,
    F_OGR, F_OPG, F_RGRAN, F_RMETHOD, F_RNUM, F_RACT, F_FIRST, F_LAST, F_NO_P2P, F_TORCH_FSDP2, F_CKPT,
    F_UNTIE, F_VPG, F_TPCO, F_DSA, F_REMOVED,
    /* MoE and MLA (Megatron-LM d98e8a6: _add_moe_args, _add_mla_args, TransformerConfig fields) */
    F_EXPERTS, F_TOPK, F_EP, F_ETP, F_MOE_FFN, F_SHARED_FFN, F_SHARED_GATE, F_LFREQ, F_DISPATCH, F_FLEX,
    F_DEEPEP, F_GGEMM, F_PAD_CAP, F_CAPF, F_PRE_SOFTMAX, F_SCORE, F_LB, F_NGROUPS, F_GTOPK, F_NOBIAS, F_XBIAS, F_XBIAS_RATE,
    F_TSCALE,
    F_MLA, F_QLORA, F_KVLORA, F_QKHD, F_QKPOS, F_VHD,
    /* CUDA graphs (arguments.py --cuda-graph-modules; TransformerConfig cuda_graph_impl) */
    F_CGIMPL, F_CGMODS, F_CGSCOPE, F_NONAN, F_RMODS,
    F_MTP,   /* TransformerConfig mtp_num_layers (the argument parser derives --mtp-num-layers from it) */
    F_LAYOUT,
    /* the hybrid device optimizer (arguments.py _add_training_args; OptimizerConfig) */
    F_OPT_OFFLOAD, F_OPT_OFFLOAD_FRAC, F_PRECISION_AWARE, F_FP8_PARAM_GATHER, F_FP8_RECIPE,
    /* fine-grained activation offloading (TransformerConfig offload_modules) and layer-level CPU offloading */
    F_FGAO, F_OFFMODS, F_ACT_OFF_FRAC, F_CPU_OFFLOADING,
    F_MOE_OVERLAP, F_SHARED_OVERLAP,   /* the expert all-to-all overlap (TransformerConfig) */
    F_COUNT
};

typedef enum { MG_INT, MG_FLAG, MG_STR, MG_LIST } mg_kind;   /* MG_LIST: nargs, one or more words */

typedef struct mg_flag {
    const char *name;    /* without the leading "--" */
    mg_kind kind;
    int id;
} mg_flag;

static const mg_flag flags[] = {
    {"tensor-model-parallel-size", MG_INT, F_TP}, {"pipeline-model-parallel-size", MG_INT, F_PP},
    {"context-parallel-size", MG_INT, F_CP}, {"num-layers-per-virtual-pipeline-stage", MG_INT, F_VPL},
    {"num-virtual-stages-per-pipeline-rank", MG_INT, F_VPS},
    {"virtual-pipeline-model-parallel-size", MG_INT, F_VP_OLD}, {"sequence-parallel", MG_FLAG, F_SP},
    {"micro-batch-size", MG_INT, F_MBS}, {"global-batch-size", MG_INT, F_GBS}, {"num-layers", MG_INT, F_LAYERS},
    {"hidden-size", MG_INT, F_HIDDEN}, {"ffn-hidden-size", MG_INT, F_FFN},
    {"num-attention-heads", MG_INT, F_HEADS}, {"group-query-attention", MG_FLAG, F_GQA},
    {"num-query-groups", MG_INT, F_GROUPS}, {"seq-length", MG_INT, F_SEQ},
    {"max-position-embeddings", MG_INT, F_MAXPOS}, {"bf16", MG_FLAG, F_BF16}, {"fp16", MG_FLAG, F_FP16},
    {"fp8-format", MG_STR, F_FP8}, {"use-distributed-optimizer", MG_FLAG, F_DISTOPT},
    {"use-megatron-fsdp", MG_FLAG, F_MFSDP}, {"data-parallel-sharding-strategy", MG_STR, F_FSDP_STRAT},
    {"overlap-grad-reduce", MG_FLAG, F_OGR}, {"overlap-param-gather", MG_FLAG, F_OPG},
    {"recompute-granularity", MG_STR, F_RGRAN}, {"recompute-method", MG_STR, F_RMETHOD},
    {"recompute-num-layers", MG_INT, F_RNUM}, {"recompute-activations", MG_FLAG, F_RACT},
    {"decoder-first-pipeline-num-layers", MG_INT, F_FIRST}, {"decoder-last-pipeline-num-layers", MG_INT, F_LAST},
    {"no-overlap-p2p-communication", MG_FLAG, F_NO_P2P}, {"use-torch-fsdp2", MG_FLAG, F_TORCH_FSDP2},
    {"ckpt-format", MG_STR, F_CKPT}, {"microbatch-group-size-per-virtual-pipeline-stage", MG_INT, F_VPG},
    {"batch-size", MG_INT, F_REMOVED}, {"warmup", MG_INT, F_REMOVED},
    {"model-parallel-size", MG_INT, F_REMOVED}, {"checkpoint-activations", MG_FLAG, F_REMOVED},
    {"num-experts", MG_INT, F_EXPERTS}, {"moe-router-topk", MG_INT, F_TOPK},
    {"expert-model-parallel-size", MG_INT, F_EP}, {"expert-tensor-parallel-size", MG_INT, F_ETP},
    {"moe-ffn-hidden-size", MG_INT, F_MOE_FFN}, {"moe-shared-expert-intermediate-size", MG_INT, F_SHARED_FFN},
    {"moe-shared-expert-gate", MG_FLAG, F_SHARED_GATE}, {"moe-layer-freq", MG_STR, F_LFREQ},
    {"moe-token-dispatcher-type", MG_STR, F_DISPATCH}, {"moe-flex-dispatcher-backend", MG_STR, F_FLEX},
    {"moe-enable-deepep", MG_FLAG, F_DEEPEP}, {"moe-grouped-gemm", MG_FLAG, F_GGEMM},
    {"moe-pad-expert-input-to-capacity", MG_FLAG, F_PAD_CAP}, {"moe-expert-capacity-factor", MG_STR, F_CAPF},
    {"moe-router-pre-softmax", MG_FLAG, F_PRE_SOFTMAX}, {"moe-router-score-function", MG_STR, F_SCORE},
    {"moe-router-load-balancing-type", MG_LIST, F_LB}, {"moe-router-num-groups", MG_INT, F_NGROUPS},
    {"moe-router-group-topk", MG_INT, F_GTOPK}, {"multi-latent-attention", MG_FLAG, F_MLA},
    {"q-lora-rank", MG_INT, F_QLORA}, {"kv-lora-rank", MG_INT, F_KVLORA}, {"qk-head-dim", MG_INT, F_QKHD},
    {"qk-pos-emb-head-dim", MG_INT, F_QKPOS}, {"v-head-dim", MG_INT, F_VHD}, {"mtp-num-layers", MG_INT, F_MTP},
    {"pipeline-model-parallel-layout", MG_STR, F_LAYOUT},
    {"mtp-loss-scaling-factor", MG_STR, 0},
    {"cuda-graph-impl", MG_STR, F_CGIMPL}, {"cuda-graph-modules", MG_LIST, F_CGMODS},
    {"cuda-graph-scope", MG_LIST, F_CGSCOPE}, {"no-check-for-nan-in-loss-and-grad", MG_FLAG, F_NONAN},
    /* MoE flags known, not reasoned about */
    {"moe-aux-loss-coeff", MG_LIST, 0}, {"moe-z-loss-coeff", MG_STR, 0}, {"moe-permute-fusion", MG_FLAG, 0},
    {"moe-router-dtype", MG_STR, 0}, {"moe-router-enable-expert-bias", MG_FLAG, F_XBIAS},
    {"moe-router-topk-scaling-factor", MG_STR, F_TSCALE}, {"moe-router-bias-update-rate", MG_STR, F_XBIAS_RATE},
    {"moe-shared-expert-overlap", MG_FLAG, F_SHARED_OVERLAP}, {"moe-token-drop-policy", MG_STR, 0},
    {"overlap-moe-expert-parallel-comm", MG_FLAG, F_MOE_OVERLAP}, {"moe-router-fusion", MG_FLAG, 0},
    {"delay-wgrad-compute", MG_FLAG, 0},
    /* known, not reasoned about */
    {"swiglu", MG_FLAG, 0}, {"untie-embeddings-and-output-weights", MG_FLAG, F_UNTIE}, {"kv-channels", MG_INT, 0},
    {"position-embedding-type", MG_STR, 0}, {"normalization", MG_STR, 0}, {"fp8-recipe", MG_STR, F_FP8_RECIPE},
    {"fp8-param-gather", MG_FLAG, F_FP8_PARAM_GATHER}, {"cp-comm-type", MG_LIST, 0},
    {"optimizer-cpu-offload", MG_FLAG, F_OPT_OFFLOAD}, {"optimizer-offload-fraction", MG_STR, F_OPT_OFFLOAD_FRAC},
    {"use-precision-aware-optimizer", MG_FLAG, F_PRECISION_AWARE}, {"overlap-cpu-optimizer-d2h-h2d", MG_FLAG, 0},
    {"use-torch-optimizer-for-cpu-offload", MG_FLAG, 0},
    {"fine-grained-activation-offloading", MG_FLAG, F_FGAO}, {"offload-modules", MG_LIST, F_OFFMODS},
    {"activation-offload-fraction", MG_STR, F_ACT_OFF_FRAC}, {"min-offloaded-tensor-size", MG_INT, 0},
    {"delta-offload-bytes-across-pp-ranks", MG_INT, 0}, {"cpu-offloading", MG_FLAG, F_CPU_OFFLOADING},
    {"cpu-offloading-num-layers", MG_INT, 0},
    {"train-iters", MG_INT, 0}, {"train-samples", MG_INT, 0}, {"lr", MG_STR, 0}, {"min-lr", MG_STR, 0},
    {"lr-decay-style", MG_STR, 0}, {"lr-warmup-iters", MG_INT, 0}, {"lr-warmup-fraction", MG_STR, 0},
    {"lr-decay-iters", MG_INT, 0}, {"weight-decay", MG_STR, 0}, {"clip-grad", MG_STR, 0},
    {"adam-beta1", MG_STR, 0}, {"adam-beta2", MG_STR, 0}, {"adam-eps", MG_STR, 0},
    {"init-method-std", MG_STR, 0}, {"attention-dropout", MG_STR, 0}, {"hidden-dropout", MG_STR, 0},
    {"disable-bias-linear", MG_FLAG, F_NOBIAS}, {"transformer-impl", MG_STR, 0}, {"use-flash-attn", MG_FLAG, 0},
    {"rotary-base", MG_INT, 0}, {"data-path", MG_LIST, 0}, {"split", MG_STR, 0}, {"tokenizer-type", MG_STR, 0},
    {"tokenizer-model", MG_STR, 0}, {"vocab-file", MG_STR, 0}, {"merge-file", MG_STR, 0},
    {"save", MG_STR, 0}, {"load", MG_STR, 0}, {"save-interval", MG_INT, 0}, {"eval-interval", MG_INT, 0},
    {"eval-iters", MG_INT, 0}, {"log-interval", MG_INT, 0}, {"seed", MG_INT, 0},
    {"distributed-backend", MG_STR, 0}, {"tp-comm-overlap", MG_FLAG, F_TPCO}, {"use-mcore-models", MG_FLAG, 0},
    {"distribute-saved-activations", MG_FLAG, F_DSA}, {"recompute-modules", MG_LIST, F_RMODS},
    {"account-for-embedding-in-pipeline-split", MG_FLAG, 0}, {"account-for-loss-in-pipeline-split", MG_FLAG, 0},
    {"grad-reduce-in-bf16", MG_FLAG, 0}, {"accumulate-allreduce-grads-in-fp32", MG_FLAG, 0},
};

#define NFLAGS (sizeof flags / sizeof flags[0])

/* F_REMOVED: flags the parser still defines but validate_args refuses (deprecated arguments). */
static const struct {
    const char *name, *msg, *fix;
} removed[] = {
    {"batch-size", "--batch-size argument is no longer valid", "write --micro-batch-size N"},
    {"warmup", "--warmup argument is no longer valid", "write --lr-warmup-fraction F or --lr-warmup-iters N"},
    {"model-parallel-size", "--model-parallel-size is no longer valid", "write --tensor-model-parallel-size N"},
    {"checkpoint-activations", "--checkpoint-activations is no longer valid: Megatron-LM exits",
     "write --recompute-activations, or --recompute-granularity and --recompute-method"},
};

typedef struct mg {
    cfit_check_result *res;
    const cfit_check_request *r;
    int oom;
    long world;
    long v[F_COUNT];         /* integer values (0 = absent or not a number) */
    const char *s[F_COUNT];  /* string values */
    const word *at[F_COUNT]; /* the flag's word; NULL = absent */
    const word *first;       /* first argument, for whole-file findings */
    double opt_offload_fraction; /* of the optimizer state --optimizer-cpu-offload moves to the host (0: none) */
    unsigned offload_modules;    /* CFIT_OFFMOD_* bits of --offload-modules (last given) */
    int fgao_costed;             /* the memory check offloads those modules' inputs */
    unsigned graph_modules[2]; /* bit per graph_module_names entry: --cuda-graph-modules, -scope (last given) */
    unsigned recompute_modules; /* CFIT_RECMOD_* bits of --recompute-modules (last given) */
    int layout_vp;           /* virtual stages per rank of a valid --pipeline-model-parallel-layout; 0 = none */
} mg;

static void add(mg *c, cfit_severity sev, const word *w, const char *fix, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static void add(mg *c, cfit_severity sev, const word *w, const char *fix, const char *fmt, ...)
{
    char path[160] = "";
    if (w)
        snprintf(path, sizeof path, "%.*s", (int)strcspn(w->s, "="), w->s);
    va_list ap;
    va_start(ap, fmt);
    if (cfit__finding_vadd(c->res, sev, path, w ? w->line : 1, w ? w->col : 1, fix, fmt, ap))
        c->oom = 1;
    va_end(ap);
}

static const mg_flag *flag_find(const char *name, size_t len)
{
    for (size_t i = 0; i < NFLAGS; i++)
        if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0)
            return &flags[i];
    return NULL;
}

static int parse_long(const char *s, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < 0 || v > (1L << 20))
        return 0;
    *out = v;
    return 1;
}

/* What Python's int() accepts: optional blanks and sign, digits with single '_' between them. */
static int python_int(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '+' || *s == '-')
        s++;
    int digits = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        digits++;
        if (s[1] == '_' && s[2] >= '0' && s[2] <= '9')
            s++;
    }
    while (*s == ' ' || *s == '\t')
        s++;
    return digits > 0 && !*s;
}

/* s as a whole Python float (argparse type=float) into *v: 1, or 0 when it is not one. */
static int float_value(const char *s, double *v)
{
    char *end = NULL;
    *v = strtod(s, &end);
    return end != s && !*end;
}

static void unknown_flag(mg *c, const word *w, const char *name, size_t len)
{
    const char *names[NFLAGS];
    for (size_t i = 0; i < NFLAGS; i++)
        names[i] = flags[i].name;
    char key[128];
    snprintf(key, sizeof key, "%.*s", (int)(len < 127 ? len : 127), name);
    const char *near = cfit_closest(key, names, NFLAGS);
    if (near) {
        char fix[200];
        snprintf(fix, sizeof fix, "did you mean --%s?", near);
        add(c, CFIT_SEV_ERROR, w, fix, "unrecognized argument: Megatron-LM's parser rejects it");
    } else {
        add(c, CFIT_SEV_INFO, w, NULL, "not in clusterfit's table of Megatron-LM flags; not checked");
    }
}

/* CudaGraphModule (megatron/core/transformer/enums.py), and the deprecated spellings
 * _parse_cuda_graph_modules_arg still takes ("full" = the whole layer, the empty list). */
static const char *const graph_module_names[] = {"attn", "mlp", "moe", "moe_router", "moe_preprocess", "mamba",
                                                 "full", "full_iteration", "full_iteration_inference"};
enum { GM_ATTN = 1, GM_MLP = 2, GM_MOE = 4, GM_ROUTER = 8, GM_PRE = 16, GM_MAMBA = 32 };

static const char *graph_module_name(int i)
{
    return graph_module_names[i];
}

/* A list flag's module names: name_of(0 .. count-1) set bits; the uncosted ones (NULL-ended) are a
 * warning ("\"NAME\" " uncosted_what, the memory check leaves them out); any other an error whose
 * message is invalid "\"NAME\"" refusal. */
typedef struct module_names {
    const char *(*name_of)(int i);
    int count;
    const char *const *uncosted;
    const char *uncosted_what, *choices, *invalid, *refusal;
} module_names;

/* The n module words from w (one inline value after '=' when inl) of flag word f into *bits
 * (argparse: the last occurrence wins); a bad one is reported under the flag's name at the value's
 * position; shell variables are not checked. */
static void module_words(mg *c, const word *f, const word *w, size_t n, const char *inl, const module_names *mn,
                         unsigned *bits)
{
    *bits = 0;
    for (size_t k = 0; k < n; k++) {
        const char *s = inl ? inl : w[k].s;
        if (s[0] == '$')
            continue;
        int j = 0;
        while (j < mn->count && strcmp(s, mn->name_of(j)) != 0)
            j++;
        if (j < mn->count) {
            *bits |= 1u << j;
            continue;
        }
        word at = {f->s, w[k].line, w[k].col};
        const char *const *u = mn->uncosted;
        while (u && *u && strcmp(s, *u) != 0)
            u++;
        if (u && *u)
            add(c, CFIT_SEV_WARNING, &at, "the memory check leaves it out", "\"%s\" %s", s, mn->uncosted_what);
        else
            add(c, CFIT_SEV_ERROR, &at, mn->choices, "%s\"%s\"%s", mn->invalid, s, mn->refusal);
    }
}

/* --cuda-graph-modules / --cuda-graph-scope: CudaGraphModule names. */
static const module_names graph_modules = {graph_module_name, (int)(sizeof graph_module_names / sizeof graph_module_names[0]),
                                           NULL, NULL, "write attn, mlp, moe, moe_router, moe_preprocess or mamba",
                                           "invalid choice ", ""};

/* --recompute-modules: Megatron-Core's names (transformer_config.py recompute_modules); the
 * hybrid-model ones it also takes are not costed, anything else Megatron's __post_init__ raises on. */
static const char *const recompute_uncosted[] = {"gdn_norm_out", "gdp_in_proj", "gdp_qkv", "mhc", NULL};
static const module_names recompute_modules = {
    cfit_recompute_module_name, CFIT_RECMOD_COUNT, recompute_uncosted,
    "recomputes a hybrid (GatedDelta / hyper-connection) block the planner does not model",
    "write core_attn, moe_act, layernorm, mla_up_proj, mlp, moe or shared_experts", "invalid choice ",
    " (Megatron-Core's TransformerConfig refuses it)"};

/* --offload-modules: Megatron-Core's names (TransformerConfig offload_modules); gdp_qkv (a
 * GatedDeltaProduct block the planner does not model) is not costed, anything else __post_init__
 * asserts against. */
static const char *const offload_uncosted[] = {"gdp_qkv", NULL};
static const module_names offload_modules = {
    cfit_offload_module_name, CFIT_OFFMOD_COUNT, offload_uncosted,
    "offloads a GatedDeltaProduct block the planner does not model",
    "write attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm, expert_fc1, moe_act or fused_group_mlp",
    "Invalid choices for offload_modules: ", " (Megatron-Core's TransformerConfig refuses it)"};

/* Record flag f given at word i with value words from i+1 (or inline after '='). */
static size_t take_flag(mg *c, const words *ws, size_t i, const mg_flag *f, const char *inline_value)
{
    const word *w = &ws->w[i];
    const char *val = inline_value;
    if (!val && f->kind != MG_FLAG && i + 1 < ws->n && strncmp(ws->w[i + 1].s, "--", 2) != 0)
        val = ws->w[++i].s;
    size_t first = i;   /* a list's first value word */
    while (f->kind == MG_LIST && val && !inline_value && i + 1 < ws->n && strncmp(ws->w[i + 1].s, "--", 2) != 0)
        i++;   /* the list's further words */
    if (f->id == F_VP_OLD) {
        add(c, CFIT_SEV_ERROR, w, "write --num-layers-per-virtual-pipeline-stage N or "
            "--num-virtual-stages-per-pipeline-rank N",
            "Megatron-LM has no such flag: it was replaced in 2021 (the field exists but has no CLI argument)");
        return i;
    }
    for (size_t k = 0; f->id == F_REMOVED && k < sizeof removed / sizeof removed[0]; k++)
        if (strcmp(removed[k].name, f->name) == 0) {
            add(c, CFIT_SEV_ERROR, w, removed[k].fix, "%s (validate_args refuses it)", removed[k].msg);
            return i;
        }
    if (f->kind != MG_FLAG && !val) {
        add(c, CFIT_SEV_ERROR, w, "give it a value", "expects a value");
        return i;
    }
    if (f->kind == MG_FLAG && inline_value) {
        add(c, CFIT_SEV_ERROR, w, "write the flag alone", "is a switch and takes no value");
        return i;
    }
    if (f->id && c->at[f->id])
        add(c, CFIT_SEV_WARNING, w, "give it once", "given twice: the last value wins");
    if (f->id) {
        c->at[f->id] = w;
        c->s[f->id] = val;
    }
    const module_names *mn = f->id == F_RMODS ? &recompute_modules : f->id == F_OFFMODS ? &offload_modules
                             : f->id == F_CGMODS || f->id == F_CGSCOPE ? &graph_modules : NULL;
    if (mn)
        module_words(c, w, inline_value ? w : &ws->w[first], inline_value ? 1 : i + 1 - first, inline_value, mn,
                     f->id == F_RMODS ? &c->recompute_modules : f->id == F_OFFMODS ? &c->offload_modules
                                      : &c->graph_modules[f->id == F_CGSCOPE]);
    long v = 0;
    if (f->kind == MG_INT && val && !f->id && val[0] != '$' && !python_int(val))
        add(c, CFIT_SEV_ERROR, w, "write a whole number", "expects an integer (argparse type=int), got \"%s\"", val);
    else if (f->kind == MG_INT && val && !f->id) {
        /* a plain integer: not reasoned about */
    } else if (f->kind == MG_INT && val && !parse_long(val, &v)) {
        if (val[0] == '$')
            add(c, CFIT_SEV_INFO, w, NULL, "value \"%s\" is a shell variable; not checked", val);
        else if (val[0] == '-' && python_int(val))
            add(c, CFIT_SEV_ERROR, w, "give a whole number of at least 1",
                "is negative (%s): Megatron-LM's sizes and counts are >= 0, and its parallel and batch sizes >= 1", val);
        else
            add(c, CFIT_SEV_ERROR, w, "write a whole number from 0 to 1048576",
                "expects an integer, got \"%s\"", val);
    } else if (f->kind == MG_INT && f->id) {
        c->v[f->id] = v;
    }
    return i;
}

/* Skip a launcher (torchrun ... script.py), reading its world size. Returns the first argument. */
static size_t skip_launcher(mg *c, const words *ws)
{
    size_t start = 0;
    for (size_t i = 0; i < ws->n; i++) {
        size_t n = strlen(ws->w[i].s);
        if (n > 3 && strcmp(ws->w[i].s + n - 3, ".py") == 0)
            start = i + 1;
    }
    long nodes = 0, per = 0;
    for (size_t i = 0; i + 1 < start; i++) {
        const char *a = ws->w[i].s;
        if (strcmp(a, "--nnodes") == 0)
            parse_long(ws->w[i + 1].s, &nodes);
        else if (strcmp(a, "--nproc-per-node") == 0 || strcmp(a, "--nproc_per_node") == 0)
            parse_long(ws->w[i + 1].s, &per);
    }
    if (!c->world && nodes > 0 && per > 0 && nodes * per <= (1L << 24))
        c->world = nodes * per;
    return start;
}

static void read_args(mg *c, const words *ws)
{
    size_t i = skip_launcher(c, ws);
    c->first = i < ws->n ? &ws->w[i] : NULL;
    for (; i < ws->n && !c->oom; i++) {
        const word *w = &ws->w[i];
        if (strncmp(w->s, "--", 2) != 0 || !w->s[2]) {
            add(c, CFIT_SEV_ERROR, w, "remove it or give the flag it belongs to",
                "\"%s\" is not a flag and follows no flag that takes a value", w->s);
            continue;
        }
        const char *name = w->s + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const mg_flag *f = flag_find(name, len);
        if (f) {
            i = take_flag(c, ws, i, f, eq ? eq + 1 : NULL);
            continue;
        }
        unknown_flag(c, w, name, len);
        while (!eq && i + 1 < ws->n && strncmp(ws->w[i + 1].s, "--", 2) != 0)
            i++;   /* its values */
    }
}

/* ---- semantic passes ---- */

static long val(const mg *c, int id, long dflt)
{
    return c->v[id] > 0 ? c->v[id] : dflt;
}

static const word *where(const mg *c, int id)
{
    return c->at[id] ? c->at[id] : c->first;
}

/* Sizes Megatron-LM refuses at 0 (argparse takes any int; validate_args then divides by or asserts
 * on them: megatron/training/arguments.py, d98e8a6).  The later passes read 0 as "unset" (1);
 * the MoE sizes are check_moe's. */
static int given_zero(const mg *c, int id);

static void check_sizes_nonzero(mg *c)
{
    static const struct { int id; const char *why; } rows[] = {
        {F_TP, "validate_args divides the world size by TP x PP x CP (ZeroDivisionError)"},
        {F_PP, "validate_args divides the world size by TP x PP x CP (ZeroDivisionError)"},
        {F_CP, "validate_args divides the world size by TP x PP x CP (ZeroDivisionError)"},
        {F_MBS, "validate_args asserts args.micro_batch_size > 0"},
        {F_GBS, "validate_args asserts args.global_batch_size > 0"},
        {F_LAYERS, "a model needs at least one layer"},
        {F_HIDDEN, "validate_args divides it by the attention heads"},
        {F_HEADS, "validate_args divides the hidden size by it (ZeroDivisionError)"},
        {F_GROUPS, "the attention heads are split into these groups (ZeroDivisionError)"},
        {F_SEQ, "a sequence needs at least one token"},
        {F_VPL, "validate_args divides the layers per stage by it (ZeroDivisionError)"},
        {F_VPS, "validate_args divides the layers per stage by it (ZeroDivisionError)"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int id = rows[i].id;
        if (given_zero(c, id))
            add(c, CFIT_SEV_ERROR, c->at[id], "give a whole number of at least 1",
                "is 0; Megatron-LM needs at least 1: %s", rows[i].why);
    }
}

static void check_shape(mg *c)
{
    long tp = val(c, F_TP, 1), heads = c->v[F_HEADS], groups = c->v[F_GROUPS], L = c->v[F_LAYERS];
    long seq = c->v[F_SEQ], cp = val(c, F_CP, 1), pp = val(c, F_PP, 1);
    if (heads && heads % tp)
        add(c, CFIT_SEV_ERROR, where(c, F_TP), "choose a TP dividing the heads",
            "num_attention_heads %ld is not divisible by TP %ld", heads, tp);
    if (c->at[F_GQA] && groups && groups % tp && tp % groups)
        add(c, CFIT_SEV_ERROR, where(c, F_GROUPS), "choose a TP that is a multiple or divisor of the query groups",
            "num_query_groups %ld is neither a multiple nor a divisor of TP %ld", groups, tp);
    if (cp > 1 && seq && seq % (2 * cp))
        add(c, CFIT_SEV_ERROR, where(c, F_CP), "make the sequence length divisible by 2 x CP",
            "seq_length %ld is not divisible by 2 x CP = %ld", seq, 2 * cp);
    if (seq && c->v[F_MAXPOS] && c->v[F_MAXPOS] < seq)
        add(c, CFIT_SEV_ERROR, where(c, F_MAXPOS), "make --max-position-embeddings at least --seq-length",
            "max_position_embeddings %ld is below seq_length %ld", c->v[F_MAXPOS], seq);
    if (L && pp > 1 && L % pp && !c->at[F_FIRST] && !c->at[F_LAST] && !c->at[F_VPS] && !c->at[F_LAYOUT])
        add(c, CFIT_SEV_ERROR, where(c, F_PP), "give --decoder-first/last-pipeline-num-layers for uneven stages",
            "num_layers %ld is not divisible by the pipeline size %ld", L, pp);
    if (c->at[F_TPCO] && (!c->at[F_SP] || tp == 1))
        add(c, CFIT_SEV_ERROR, c->at[F_TPCO], "add --sequence-parallel (with TP > 1)",
            "Tensor parallel communication/GEMM overlap can happen only when sequence parallelism is enabled");
    if (c->at[F_DSA] && (tp == 1 || !c->s[F_RGRAN] || strcmp(c->s[F_RGRAN], "full") || !c->at[F_RMETHOD]))
        add(c, CFIT_SEV_ERROR, c->at[F_DSA], "use TP > 1 with --recompute-granularity full and --recompute-method",
            "distributed recompute activations need TP > 1, full recompute granularity and a recompute method");
    if (c->at[F_SP] && tp == 1)
        add(c, CFIT_SEV_WARNING, c->at[F_SP], "drop it, or use TP > 1",
            "sequence parallelism needs TP > 1: Megatron-LM disables it with a warning");
}

/* Uneven pipeline stages (--decoder-first/last-pipeline-num-layers), as Megatron-Core's
 * TransformerConfig.__post_init__ "Uneven PP" validates them (transformer_config.py, d98e8a6): the
 * given ends' layers divisible by the virtual stages per rank; the middle stages' layers divide
 * evenly among them, and each middle rank's again by the virtual stages; middle layers exactly when
 * there are middle stages. */
static void check_uneven(mg *c)
{
    long pp = val(c, F_PP, 1), L = c->v[F_LAYERS], vp = val(c, F_VPS, 1);
    if ((!c->at[F_FIRST] && !c->at[F_LAST]) || pp <= 1 || !L)
        return;
    static const int ends[2] = {F_FIRST, F_LAST};
    long middle = L, mid_stages = pp;
    for (int i = 0; i < 2; i++) {
        int id = ends[i];
        if (!c->at[id] || c->v[id] <= 0)
            continue;
        if (c->v[id] % vp)
            add(c, CFIT_SEV_ERROR, c->at[id], "give the end stage a multiple of the virtual stages per rank",
                "%s stage's %ld layers are not divisible by the %ld virtual stages per pipeline rank "
                "(TransformerConfig raises ValueError)", id == F_FIRST ? "the first" : "the last", c->v[id], vp);
        middle -= c->v[id];
        mid_stages--;
    }
    const word *w = c->at[F_FIRST] ? c->at[F_FIRST] : c->at[F_LAST];
    if ((middle != 0) != (mid_stages != 0))
        add(c, CFIT_SEV_ERROR, w, "make the end stages' layers and the middle stages agree",
            "%ld middle layers remain for %ld middle pipeline stages (TransformerConfig: \"Mismatch\")", middle,
            mid_stages);
    else if (mid_stages > 0 && middle % mid_stages)
        add(c, CFIT_SEV_ERROR, w, "choose end stages leaving a multiple of the middle stages",
            "the %ld middle layers do not divide among the %ld middle pipeline stages", middle, mid_stages);
    else if (mid_stages > 0 && (middle / mid_stages) % vp)
        add(c, CFIT_SEV_ERROR, w, "choose end stages leaving each middle rank a multiple of the virtual stages",
            "each middle pipeline rank's %ld layers are not divisible by the %ld virtual stages per rank",
            middle / mid_stages, vp);
}

static void check_vp(mg *c)
{
    long pp = val(c, F_PP, 1), L = c->v[F_LAYERS], lpv = c->v[F_VPL];
    if (!c->at[F_VPL] && !c->at[F_VPS])
        return;
    const word *w = c->at[F_VPL] ? c->at[F_VPL] : c->at[F_VPS];
    if (c->at[F_VPL] && c->at[F_VPS])
        add(c, CFIT_SEV_ERROR, w, "keep one", "give at most one of the virtual-pipeline flags");
    else if (c->at[F_VPL] && (c->at[F_FIRST] || c->at[F_LAST])) {
        add(c, CFIT_SEV_ERROR, w, "write --num-virtual-stages-per-pipeline-rank N instead",
            "uneven pipeline stages need --num-virtual-stages-per-pipeline-rank for the virtual pipeline");
        return;
    }
    if (pp <= 1 || (c->at[F_NO_P2P] && pp <= 2))
        add(c, CFIT_SEV_ERROR, w, "use more pipeline stages or drop the virtual pipeline",
            "the interleaved schedule needs PP > %d", c->at[F_NO_P2P] ? 2 : 1);
    else if (lpv && L && (L % pp || (L / pp) % lpv))
        add(c, CFIT_SEV_ERROR, w, "choose layers per virtual stage dividing the layers per stage",
            "number of layers per pipeline stage (%ld / %ld) must be divisible by the layers per virtual stage %ld",
            L, pp, lpv);
}

/* ---- --pipeline-model-parallel-layout ----
 * Megatron-LM d98e8a6: PipelineParallelLayerLayout (megatron/core/transformer/
 * pipeline_parallel_layer_layout.py: parse_str_to_list, __init__, validate_layer_layout),
 * validate_args (arguments.py) and TransformerConfig.__post_init__. */

#define LAYOUT_MAX (1 << 20)   /* characters a layout may unroll to (Megatron has no bound; a check must) */

/* A whole number at s (Python \d+), its end in *end; -1 when there is none; LAYOUT_MAX + 1 when larger. */
static long layout_count(const char *s, const char **end)
{
    long n = -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        n = (n < 0 ? 0 : n) * 10 + (*s - '0');
        if (n > LAYOUT_MAX)
            n = LAYOUT_MAX + 1;   /* stays a bound: (LAYOUT_MAX + 1) * 10 fits a long */
    }
    *end = s;
    return n;
}

/* Appends k copies of len bytes at p; 0 when the result would pass LAYOUT_MAX. */
static int layout_put(cfit_buf *b, const char *p, size_t len, long k)
{
    if ((double)len * (double)k + (double)b->len > LAYOUT_MAX)
        return 0;
    for (long i = 0; i < k; i++)
        cfit_buf_printf(b, "%.*s", (int)len, p);
    return 1;
}

/* One of parse_str_to_list's unrolling passes over in (commas already gone): groups "(X)*n"
 * (X without ")", the leftmost first, as re.sub scans) or single characters "x*n". */
static int layout_unroll(const char *in, int groups, cfit_buf *out)
{
    for (const char *p = in; *p;) {
        const char *close = groups && *p == '(' ? strchr(p + 1, ')') : NULL, *end;
        if (groups && close && close > p + 1 && close[1] == '*') {
            long k = layout_count(close + 2, &end);
            if (k >= 0) {
                if (!layout_put(out, p + 1, (size_t)(close - p - 1), k))
                    return 0;
                p = end;
                continue;
            }
        }
        if (!groups && p[1] == '*' && *p != '\n') {
            long k = layout_count(p + 2, &end);
            if (k >= 0) {
                if (!layout_put(out, p, 1, k))
                    return 0;
                p = end;
                continue;
            }
        }
        if (!layout_put(out, p, 1, 1))
            return 0;
        p++;
    }
    return 1;
}

/* The layout unrolled into *flat (stages split by '|'); 0 with a finding when it cannot be. */
static int layout_expand(mg *c, const char *text, cfit_buf *flat)
{
    cfit_buf bare, once;
    cfit_buf_init(&bare);
    cfit_buf_init(&once);
    for (const char *p = text; *p; p++)   /* "remove purely cosmetic commas" */
        if (*p != ',')
            cfit_buf_printf(&bare, "%c", *p);
    int ok = cfit_buf_ok(&bare) && layout_unroll(bare.data, 1, &once) && cfit_buf_ok(&once) &&
             layout_unroll(once.data, 0, flat) && cfit_buf_ok(flat);
    if (!cfit_buf_ok(&bare) || !cfit_buf_ok(&once) || !cfit_buf_ok(flat))
        c->oom = 1;
    else if (!ok)
        add(c, CFIT_SEV_ERROR, c->at[F_LAYOUT], "write the layout with fewer repetitions",
            "the layout unrolls to more than %d characters", LAYOUT_MAX);
    cfit_buf_fini(&bare);
    cfit_buf_fini(&once);
    return ok && !c->oom;
}

/* Counts of one layout: per layer type, where the first MTP layer is, and the chunks. */
typedef struct layout_counts {
    long stages, E, L, t, m;
    int first_E, last_L;        /* the first layer is the embedding, the last the loss */
    int t_after_m;              /* a decoder layer after an MTP layer */
    long m_not_last_chunk;      /* MTP layers in a chunk other than its rank's last (needs pp) */
    int m_split;                /* the MTP layers over more than one chunk */
    char bad;                   /* a character that is no layer type; 0 = none */
} layout_counts;

static void layout_count_types(const char *flat, long pp, layout_counts *k)
{
    memset(k, 0, sizeof *k);
    k->stages = 1;
    const char *last = NULL;
    for (const char *p = flat; *p; p++) {
        if (*p == '|') {
            k->stages++;
            continue;
        }
        if (!strchr("ELtm", *p)) {
            k->bad = k->bad ? k->bad : *p;
            continue;
        }
        if (!last)
            k->first_E = *p == 'E';
        last = p;
        k->E += *p == 'E';
        k->L += *p == 'L';
        k->t += *p == 't';
        k->t_after_m |= *p == 't' && k->m > 0;
        k->m += *p == 'm';
    }
    k->last_L = last && *last == 'L';
    if (pp <= 0 || k->stages % pp)
        return;
    long vp = k->stages / pp, stage = 0, here = 0;   /* chunk i runs as rank i % pp's virtual stage i / pp */
    for (const char *p = flat;; p++) {
        if (*p == '|' || !*p) {
            k->m_split |= here > 0 && here != k->m;
            here = 0;
            if (!*p)
                break;
            stage++;
        } else if (*p == 'm') {
            here++;
            k->m_not_last_chunk += stage / pp < vp - 1;
        }
    }
}

static void check_layout(mg *c)
{
    const word *w = c->at[F_LAYOUT];
    const char *text = c->s[F_LAYOUT];
    if (!w || !text || text[0] == '$')
        return;
    if (c->at[F_VPL] || c->at[F_VPS])
        add(c, CFIT_SEV_ERROR, w, "keep the layout and drop the other virtual-pipeline flag",
            "No more than one of the following arguments can be set at the same time: "
            "--num-layers-per-virtual-pipeline-stage, --num-virtual-stages-per-pipeline-rank, "
            "--pipeline-model-parallel-layout");
    if (c->at[F_FIRST] || c->at[F_LAST])
        add(c, CFIT_SEV_ERROR, w, "drop --decoder-first/last-pipeline-num-layers (the layout places every layer)",
            "pipeline_model_parallel_layout cannot be set with other pipeline layout arguments");
    cfit_buf flat;
    cfit_buf_init(&flat);
    if (!layout_expand(c, text, &flat)) {
        cfit_buf_fini(&flat);
        return;
    }
    long pp = val(c, F_PP, 1), L = c->v[F_LAYERS], mtp = c->v[F_MTP] > 0 ? c->v[F_MTP] : 0;
    layout_counts k;
    layout_count_types(flat.data, pp, &k);
    cfit_buf_fini(&flat);
    int errors = 1;
    if (k.bad)
        add(c, CFIT_SEV_ERROR, w, "use E (embedding), t (decoder layer), m (MTP layer), L (loss), | between stages",
            "Invalid layer character: %c, known layer characters: ['E', 'L', 't', 'm']", k.bad);
    else if (k.stages % pp)
        add(c, CFIT_SEV_ERROR, w, "give pp x vp stages",
            "The length of pipeline_model_parallel_layout must be divisible by pipeline_model_parallel_size "
            "(num_stages=%ld, pipeline_model_parallel_size=%ld)", k.stages, pp);
    else if (!k.first_E || !k.last_L || k.E != 1 || k.L != 1)
        add(c, CFIT_SEV_ERROR, w, "open the first stage with E and close the last with L, each once",
            "the first layer must be embedding and the last loss, each specified exactly once");
    else if (L && k.t != L)
        add(c, CFIT_SEV_ERROR, w, "give one t per layer", "Number of decoder layers %ld must match num_layers %ld",
            k.t, L);
    else if (k.m != mtp)
        add(c, CFIT_SEV_ERROR, w, mtp ? "give one m per MTP layer" : "drop the m, or add --mtp-num-layers",
            "Number of mtp layers in layout (%ld) must match mtp_num_layers (%ld)", k.m, mtp);
    else if (k.t_after_m)
        add(c, CFIT_SEV_ERROR, w, "put the MTP layers after every decoder layer", "decoder layers must be placed before MTP layers");
    else if (k.m_not_last_chunk)
        add(c, CFIT_SEV_ERROR, w, "put the MTP layers in a rank's last virtual stage",
            "Currently we restrict that the MTP should be always in the last virtual pipeline stage of that rank");
    else if (k.m_split)
        add(c, CFIT_SEV_ERROR, w, "put every m in one stage", "All of the MTP layers must be in the same one virtual pipeline stage");
    else
        errors = 0;
    if (!errors)
        c->layout_vp = (int)(k.stages / pp);
}

/* argparse choices of the string flags clusterfit reasons about (arguments.py). */
static void check_choices(mg *c)
{
    static const struct {
        int id;
        const char *choices[6];
    } t[] = {
        {F_RGRAN, {"full", "selective"}},
        {F_RMETHOD, {"uniform", "block"}},
        {F_FP8, {"e4m3", "hybrid"}},
        {F_FSDP_STRAT, {"no_shard", "optim", "optim_grads", "optim_grads_params"}},
        {F_CKPT, {"torch", "torch_dist", "zarr", "torch_dcp", "fsdp_dtensor"}},
        /* TransformerConfig Literal[...] fields */
        {F_DISPATCH, {"allgather", "alltoall", "flex"}},
        {F_FLEX, {"deepep", "hybridep", "ncclep"}},
        {F_SCORE, {"softmax", "sigmoid", "sqrtsoftplus"}},
        {F_LB, {"aux_loss", "seq_aux_loss", "global_aux_loss", "sinkhorn", "quantile_balancing", "none"}},
        {F_CGIMPL, {"none", "local", "transformer_engine", "full_iteration"}},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        const char *v = c->s[t[i].id];
        if (!v || v[0] == '$')
            continue;
        char list[160] = "";
        int ok = 0;
        for (int j = 0; j < 6 && t[i].choices[j]; j++) {
            ok |= strcmp(v, t[i].choices[j]) == 0;
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "", t[i].choices[j]);
        }
        if (!ok) {
            char fix[200];
            snprintf(fix, sizeof fix, "write one of %s", list);
            add(c, CFIT_SEV_ERROR, c->at[t[i].id], fix, "invalid choice \"%s\"", v);
        }
    }
}

static void check_recompute(mg *c)
{
    const char *g = c->s[F_RGRAN];
    if (g && strcmp(g, "full") == 0 && (!c->at[F_RMETHOD] || !c->at[F_RNUM]))
        add(c, CFIT_SEV_ERROR, c->at[F_RGRAN], "add --recompute-method uniform|block and --recompute-num-layers N",
            "full recomputation needs --recompute-method and --recompute-num-layers");
    if (g && strcmp(g, "selective") == 0 && (c->at[F_RMETHOD] || c->at[F_RNUM]))
        add(c, CFIT_SEV_ERROR, c->at[F_RGRAN], "drop --recompute-method and --recompute-num-layers",
            "selective recomputation takes no --recompute-method or --recompute-num-layers");
    if (c->at[F_FP16] && c->at[F_BF16])
        add(c, CFIT_SEV_ERROR, c->at[F_FP16], "keep one of --fp16 and --bf16", "--fp16 and --bf16 are exclusive");
    if (c->at[F_OPG] && (!(c->at[F_DISTOPT] || c->at[F_MFSDP]) || !c->at[F_OGR]))
        add(c, CFIT_SEV_ERROR, c->at[F_OPG], "add --use-distributed-optimizer and --overlap-grad-reduce",
            "--overlap-param-gather needs the distributed optimizer (or Megatron-FSDP) and --overlap-grad-reduce");
    if (c->at[F_MFSDP] && (!c->s[F_CKPT] || strcmp(c->s[F_CKPT], "fsdp_dtensor") != 0))
        add(c, CFIT_SEV_ERROR, c->at[F_CKPT] ? c->at[F_CKPT] : c->at[F_MFSDP], "add --ckpt-format fsdp_dtensor",
            "Megatron FSDP only supports fsdp_dtensor checkpoint format (the default is torch_dist)");
    if (c->at[F_TORCH_FSDP2] && (val(c, F_PP, 1) > 1 || c->at[F_DISTOPT]))
        add(c, CFIT_SEV_ERROR, c->at[F_TORCH_FSDP2], "drop pipeline parallelism and the distributed optimizer",
            "--use-torch-fsdp2 is incompatible with PP > 1 and --use-distributed-optimizer");
    if (c->at[F_TORCH_FSDP2] && !c->at[F_UNTIE])
        add(c, CFIT_SEV_ERROR, c->at[F_TORCH_FSDP2], "add --untie-embeddings-and-output-weights",
            "--use-torch-fsdp2 requires --untie-embeddings-and-output-weights");
    if (c->at[F_TORCH_FSDP2] && c->s[F_CKPT] && strcmp(c->s[F_CKPT], "torch_dist") && strcmp(c->s[F_CKPT], "torch_dcp"))
        add(c, CFIT_SEV_ERROR, c->at[F_CKPT], "write --ckpt-format torch_dist or torch_dcp",
            "--use-torch-fsdp2 requires --ckpt-format torch_dist or torch_dcp");
}

/* Returns the data-parallel size, 0 when the world size does not allow one. */
static long check_world_batch(mg *c)
{
    long tp = val(c, F_TP, 1), pp = val(c, F_PP, 1), cp = val(c, F_CP, 1);
    if (!c->at[F_MBS])
        add(c, CFIT_SEV_ERROR, c->first, "add --micro-batch-size N", "--micro-batch-size is required");
    if (!c->world)
        return 0;
    if (c->world % (tp * pp * cp)) {
        add(c, CFIT_SEV_ERROR, where(c, F_TP), "choose TP x PP x CP dividing the world size",
            "world size (%ld) is not divisible by TP %ld x PP %ld x CP %ld = %ld", c->world, tp, pp, cp, tp * pp * cp);
        return 0;
    }
    long dp = c->world / (tp * pp * cp), mbs = c->v[F_MBS], gbs = c->v[F_GBS];
    if (mbs && gbs && gbs % (mbs * dp)) {
        char fix[160];
        snprintf(fix, sizeof fix, "make --global-batch-size a multiple of %ld", mbs * dp);
        add(c, CFIT_SEV_ERROR, where(c, F_GBS), fix,
            "global batch size (%ld) is not divisible by micro batch size (%ld) times data parallel size (%ld)",
            gbs, mbs, dp);
        return 0;
    }
    long micro = mbs && gbs ? gbs / (mbs * dp) : 0;
    /* the interleaved schedule (pipeline_parallel/schedules.py): contiguous micro-batch groups of
     * G (default PP) with PP <= G <= M, and a last group of 0 or at least PP micro-batches */
    if ((c->at[F_VPL] || c->at[F_VPS]) && micro && pp > 1) {
        long g = val(c, F_VPG, pp);
        if (!c->at[F_VPG] && (micro < pp || micro % pp))
            add(c, CFIT_SEV_ERROR, where(c, F_GBS), "make the micro-batches per step a multiple of PP",
                "the interleaved schedule needs micro-batches per step (%ld) >= PP and divisible by PP %ld", micro, pp);
        else if (c->at[F_VPG] && (g < pp || g > micro))
            add(c, CFIT_SEV_ERROR, c->at[F_VPG], "choose a group size from PP to the micro-batches per step",
                "the micro-batch group size %ld must range in [PP=%ld, M=%ld]", g, pp, micro);
        else if (c->at[F_VPG] && micro % g && micro % g < pp)
            add(c, CFIT_SEV_ERROR, c->at[F_VPG], "make the micro-batches per step a multiple of the group size",
                "the last micro-batch group (%ld of M=%ld) is smaller than PP %ld", micro % g, micro, pp);
    }
    return dp;
}

/* The expert parallel sizes the arguments give an MoE model (ETP defaults to TP); 1 when dense. */
static int moe_ep(const mg *c)
{
    return c->v[F_EXPERTS] > 0 ? (int)val(c, F_EP, 1) : 1;
}

static int moe_etp(const mg *c)
{
    return c->v[F_EXPERTS] > 0 ? (int)(c->at[F_ETP] ? val(c, F_ETP, 1) : val(c, F_TP, 1)) : 1;
}

/* What the memory check offloads for --optimizer-cpu-offload: the planner's optimizer offload
 * (docs/model.md §10.1) when the whole state goes, ZeRO-1 (--use-distributed-optimizer) shards it
 * and the GPU's node has host figures; else none, said in a note (the check is then conservative). */
static int check_offload_costed(mg *c, const cfit_node *n, int zero)
{
    const char *why = c->opt_offload_fraction < 1.0 ? "a partial offload (--optimizer-offload-fraction below 1)"
                      : zero != 1 ? "an offload without --use-distributed-optimizer"
                      : !cfit_node_has_host(n) ? "an offload on a node entry without host memory figures" : NULL;
    if (!why)
        return CFIT_OFFLOAD_OPTIMIZER;
    add(c, CFIT_SEV_INFO, c->at[F_OPT_OFFLOAD], NULL,
        "the memory check costs %s as none: the optimizer states are counted on the GPU", why);
    return CFIT_OFFLOAD_NONE;
}

static void check_memory(mg *c, long dp)
{
    const cfit_check_request *r = c->r;
    const cfit_gpu *g = r->gpu ? r->gpu : cfit_catalog_gpu(r->catalog, "h100-sxm", NULL);
    long mbs = c->v[F_MBS], gbs = c->v[F_GBS] ? c->v[F_GBS] : mbs * dp;
    if (!g || !mbs || !dp)
        return;
    cfit_plan_request req;
    cfit_plan_request_init(&req);
    req.catalog = r->catalog;
    /* the MTP modules the command line trains: --mtp-num-layers, none without it (its default) */
    cfit_model model = *r->model;
    long mtp = c->v[F_MTP] > 0 ? c->v[F_MTP] : 0;
    if (mtp > CFIT_MTP_LAYERS_MAX) {
        add(c, CFIT_SEV_WARNING, c->at[F_MTP], NULL, "the memory check models at most %d MTP layers: it costs %d of the %ld",
            CFIT_MTP_LAYERS_MAX, CFIT_MTP_LAYERS_MAX, mtp);
        mtp = CFIT_MTP_LAYERS_MAX;
    }
    model.mtp_layers = (int)mtp;
    req.model = &model;
    req.seq_len = r->seq_len ? r->seq_len : (int)c->v[F_SEQ];
    req.global_batch = gbs;
    req.gpus = &g;
    req.ngpus = 1;
    req.gpus_total = c->world;
    req.precision = c->at[F_FP8] && g->peak_flops[CFIT_PREC_FP8] > 0 ? CFIT_PREC_FP8 : CFIT_PREC_BF16;
    long pp = val(c, F_PP, 1), L = r->model->layers;
    int vp = c->layout_vp ? c->layout_vp : c->v[F_VPS] ? (int)c->v[F_VPS] :
             c->v[F_VPL] && L % (pp * c->v[F_VPL]) == 0 ? (int)(L / (pp * c->v[F_VPL])) : 1;
    const char *strat = c->s[F_FSDP_STRAT] ? c->s[F_FSDP_STRAT] : "optim_grads_params";
    int zero = c->at[F_DISTOPT] ? 1 : c->at[F_MFSDP] ? (strstr(strat, "params") ? 3 : strstr(strat, "grads") ? 2 : 1) : 0;
    const char *gran = c->s[F_RGRAN] ? c->s[F_RGRAN] : c->at[F_RACT] ? "selective" : "none";
    int rec = strcmp(gran, "selective") == 0 ? CFIT_RECOMPUTE_SELECTIVE :
              strcmp(gran, "full") == 0 ? (c->s[F_RMETHOD] && strcmp(c->s[F_RMETHOD], "block") == 0 ?
                                           CFIT_RECOMPUTE_BLOCK : CFIT_RECOMPUTE_FULL) : CFIT_RECOMPUTE_NONE;
    /* selective with --recompute-modules: those modules (Megatron's default list is core_attn) */
    unsigned mods = c->recompute_modules;
    if (rec == CFIT_RECOMPUTE_SELECTIVE && c->at[F_RMODS] && mods != CFIT_RECMOD_CORE_ATTN)
        rec = mods ? CFIT_RECOMPUTE_MODULES : CFIT_RECOMPUTE_NONE;
    cfit_layout l = {(int)val(c, F_TP, 1), (int)pp, (int)dp, (int)val(c, F_CP, 1), vp, (int)mbs, zero, rec,
                     c->at[F_SP] && val(c, F_TP, 1) > 1, moe_ep(c), moe_etp(c), 0,
                     rec == CFIT_RECOMPUTE_MODULES ? (int)mods : 0};
    req.fixed = l;
    req.offload = CFIT_OFFLOAD_NONE;
    const cfit_node *n = cfit_catalog_node(r->catalog, g->default_node, NULL);   /* the host offload goes to */
    if (c->opt_offload_fraction > 0)
        req.offload = check_offload_costed(c, n, zero);
    if (c->fgao_costed) {
        if (cfit_node_has_host(n))
            req.offload_modules = (int)c->offload_modules;
        else
            add(c, CFIT_SEV_INFO, c->at[F_OFFMODS], NULL, "the memory check costs the offload as none: node %s "
                "has no host memory figures", g->default_node);
    }
    cfit_diag d;
    cfit_diag_clear(&d);
    cfit_plan p;
    if (cfit_plan_validate(&req, &d) || cfit_plan_evaluate(&req, g, &l, &p, &d)) {
        add(c, CFIT_SEV_ERROR, c->first, NULL, "the layout does not suit %s: %s", r->model->name, d.msg);
        return;
    }
    if (!p.fits && (req.offload || req.offload_modules) && p.mem.total_bytes <= p.mem.capacity_bytes)
        add(c, CFIT_SEV_ERROR, req.offload ? c->at[F_OPT_OFFLOAD] : c->at[F_OFFMODS], "shard the state over more "
            "GPUs, or offload less", "memory: the offloaded state needs %.1f GB of host memory per GPU, more than "
            "the %.1f GB per GPU node %s has", p.mem.host_bytes / 1e9, p.mem.host_capacity_bytes / 1e9, p.node->name);
    else if (!p.fits)
        add(c, CFIT_SEV_ERROR, where(c, F_MBS), "more --recompute, a smaller --micro-batch-size, more TP/PP/CP, or "
            "the distributed optimizer",
            "memory: %s with TP %d x PP %d x DP %d x CP %d, micro-batch %d on %s needs %.1f GB per GPU "
            "(weights %.1f, gradients %.1f, optimizer %.1f, activations %.1f GB), more than the %.0f GB available",
            r->model->name, l.tp, l.pp, l.dp, l.cp, l.mbs, g->name, p.mem.total_bytes / 1e9,
            p.mem.weights_bytes / 1e9, p.mem.grads_bytes / 1e9, p.mem.optimizer_bytes / 1e9,
            p.mem.activations_bytes / 1e9, p.mem.capacity_bytes / 1e9);
}

/* ---- Mixture of experts and multi-head latent attention ----
 * Megatron-LM main at d98e8a6 (2026-08-22): validate_args in megatron/training/arguments.py,
 * TransformerConfig.__post_init__ (megatron/core/transformer/transformer_config.py),
 * initialize_model_parallel's expert grid (megatron/core/parallel_state.py) and the layer
 * pattern of get_gpt_decoder_block_spec (megatron/core/models/gpt/gpt_layer_specs.py). */

/* The flag was given with the literal value 0. */
static int given_zero(const mg *c, int id)
{
    long v;
    return c->at[id] && c->s[id] && parse_long(c->s[id], &v) && v == 0;
}

/* Whether value checks may use flag id: absent (the default applies) or a number we read. */
static int known(const mg *c, int id)
{
    return !c->at[id] || c->v[id] > 0 || given_zero(c, id);
}

static int is(const mg *c, int id, const char *value)
{
    return c->s[id] && strcmp(c->s[id], value) == 0;
}

/* Sizes that must be positive when given (0 reaches the model as a zero-width layer). */
static void check_positive(mg *c, const int *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (given_zero(c, ids[i]))
            add(c, CFIT_SEV_ERROR, c->at[ids[i]], "give a positive size", "must be positive, got 0");
}

/* --moe-layer-freq: an integer N (MoE on layers i % N == 0) or a list expression of 0 (dense)
 * and 1 (MoE) per layer.  Returns 1 when the pattern has dense layers, 0 when not, -1 unknown. */
static int check_layer_freq(mg *c)
{
    const word *w = c->at[F_LFREQ];
    const char *v = c->s[F_LFREQ];
    long n = 0, L = c->v[F_LAYERS];
    if (!w || !v || v[0] == '$')
        return w ? -1 : 0;
    if (!strchr(v, '[')) {
        if (!python_int(v))
            add(c, CFIT_SEV_ERROR, w, "write an integer N or a list expression such as '([0]*3+[1]*58)'",
                "expects an integer or a Python list expression, got \"%s\"", v);
        else if (parse_long(v, &n) && n == 0)
            add(c, CFIT_SEV_ERROR, w, "write 1 for MoE on every layer", "0 divides by zero (layer i is MoE when i %% N == 0)");
        return parse_long(v, &n) && n > 0 ? n > 1 : -1;
    }
    int *items;
    size_t count, at;
    const char *err = cfit__layer_pattern_eval(v, &items, &count, &at);
    if (err) {
        add(c, CFIT_SEV_ERROR, w, "write a list expression such as '([0]*3+[1]*58)' (quote it in a shell)",
            "pattern \"%s\": %s (at character %zu)", v, err, at + 1);
        return -1;
    }
    int dense = 0, bad = 0;
    for (size_t i = 0; i < count; i++)
        dense |= items[i] == 0, bad |= items[i] != 0 && items[i] != 1;
    free(items);
    if (bad)
        add(c, CFIT_SEV_ERROR, w, "use 1 for an MoE layer and 0 for a dense one",
            "Invalid layer pattern: elements other than 0 and 1");
    if (L && (long)count != L)
        add(c, CFIT_SEV_ERROR, w, "give one element per layer",
            "Invalid length of moe_layer_pattern: %zu, expected %ld (--num-layers)", count, L);
    return dense;
}

/* MoE flags without --num-experts (or with 0, which validate_args turns into None). */
static void check_moe_without_experts(mg *c, int mixed)
{
    static const int ids[] = {F_TOPK, F_ETP, F_SHARED_FFN, F_SHARED_GATE, F_LFREQ, F_DISPATCH, F_GGEMM,
                              F_CAPF, F_NGROUPS, F_GTOPK, F_TSCALE};
    if (val(c, F_EP, 1) > 1)
        add(c, CFIT_SEV_ERROR, c->at[F_EP], "add --num-experts N or drop --expert-model-parallel-size",
            "num_experts must be non None to use expert model parallelism");
    if (c->at[F_MOE_FFN] && mixed == 0)
        add(c, CFIT_SEV_ERROR, c->at[F_MOE_FFN], "add --num-experts N or drop --moe-ffn-hidden-size",
            "moe_ffn_hidden_size is set but num_moe_experts is None");
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (c->at[ids[i]])
            add(c, CFIT_SEV_WARNING, c->at[ids[i]], "add --num-experts N, or drop it",
                "has no effect without --num-experts (a dense model)");
}

/* --moe-router-topk-scaling-factor (argparse type=float; TransformerConfig
 * moe_router_topk_scaling_factor multiplies the top-k routing weights). */
static void check_moe_topk_scale(mg *c)
{
    const char *s = c->s[F_TSCALE];
    double v;
    if (!s || s[0] == '$')
        return;
    if (!float_value(s, &v))
        add(c, CFIT_SEV_ERROR, c->at[F_TSCALE], "write a number, e.g. 2.5",
            "expects a number (argparse type=float), got \"%s\"", s);
    else if (!(v > 0))
        add(c, CFIT_SEV_WARNING, c->at[F_TSCALE], "give a positive scale, or drop it",
            "scales the routed experts' weights by %s: their output is zeroed or negated", s);
}

/* Aux-loss-free expert bias (TransformerConfig.__post_init__): sigmoid or sqrtsoftplus scores only;
 * its update rate is read only with it. */
static void check_moe_expert_bias(mg *c)
{
    if (c->at[F_XBIAS] && (!c->s[F_SCORE] || is(c, F_SCORE, "softmax")))
        add(c, CFIT_SEV_ERROR, c->at[F_XBIAS], "add --moe-router-score-function sigmoid",
            "Expert bias for aux-loss-free routing only supports 'sigmoid' and 'sqrtsoftplus' score functions");
    if (c->at[F_XBIAS_RATE] && !c->at[F_XBIAS])
        add(c, CFIT_SEV_WARNING, c->at[F_XBIAS_RATE], "add --moe-router-enable-expert-bias, or drop it",
            "has no effect without --moe-router-enable-expert-bias");
}

static void check_moe_router(mg *c, long experts)
{
    long k = val(c, F_TOPK, 2), groups = c->v[F_NGROUPS], gk = c->v[F_GTOPK];
    if (given_zero(c, F_TOPK))
        add(c, CFIT_SEV_ERROR, c->at[F_TOPK], "route each token to at least one expert", "must be at least 1, got 0");
    else if (known(c, F_TOPK) && k > experts)
        add(c, CFIT_SEV_ERROR, where(c, F_TOPK), "choose --moe-router-topk at most --num-experts",
            "moe_router_topk %ld is larger than num_experts %ld: the router's top-k cannot pick more experts "
            "than there are", k, experts);
    if (c->v[F_TOPK] == 1 && !c->at[F_PRE_SOFTMAX] && (!c->s[F_SCORE] || is(c, F_SCORE, "softmax")) &&
        !is(c, F_LB, "sinkhorn"))
        add(c, CFIT_SEV_ERROR, c->at[F_TOPK], "add --moe-router-pre-softmax (or a sigmoid score function)",
            "Please use --moe-router-pre-softmax when topk is 1 (softmax over one score has zero gradient)");
    if (c->at[F_GTOPK] && !c->at[F_NGROUPS])
        add(c, CFIT_SEV_ERROR, c->at[F_GTOPK], "add --moe-router-num-groups G",
            "When using group limited routing, moe_router_num_groups must be specified");
    if (groups && experts % groups)
        add(c, CFIT_SEV_ERROR, c->at[F_NGROUPS], "choose a group count dividing the experts",
            "num_moe_experts (%ld) should be divisible by moe_router_num_groups (%ld)", experts, groups);
    if (groups && gk > groups)
        add(c, CFIT_SEV_ERROR, c->at[F_GTOPK], "choose --moe-router-group-topk at most --moe-router-num-groups",
            "moe_router_group_topk (%ld) should be smaller than moe_router_num_groups (%ld)", gk, groups);
    check_moe_expert_bias(c);
    check_moe_topk_scale(c);
}

static void check_moe_sizes(mg *c)
{
    if (!c->at[F_MOE_FFN])
        add(c, CFIT_SEV_WARNING, c->at[F_EXPERTS], "add --moe-ffn-hidden-size (fine-grained experts are narrower)",
            "moe_ffn_hidden_size is not set, using ffn_hidden_size for MoE instead");
    if (c->at[F_SHARED_GATE] && !c->at[F_SHARED_FFN])
        add(c, CFIT_SEV_WARNING, c->at[F_SHARED_GATE], "add --moe-shared-expert-intermediate-size N, or drop it",
            "only effective when --moe-shared-expert-intermediate-size is set");
}

/* Expert parallelism: EP divides the experts; the expert grid ETP x EP x PP divides the world
 * (parallel folding: the dense grid is TP x CP x DP x PP over the same GPUs). */
static void check_moe_grid(mg *c, long experts)
{
    long ep = val(c, F_EP, 1), pp = val(c, F_PP, 1), tp = val(c, F_TP, 1);
    long etp = c->at[F_ETP] ? c->v[F_ETP] : tp;
    if (known(c, F_EP) && !given_zero(c, F_EP) && experts % ep)
        add(c, CFIT_SEV_ERROR, c->at[F_EP], "choose an EP dividing the experts",
            "Number of experts should be a multiple of expert model parallel_size (%ld experts, EP %ld)",
            experts, ep);
    if (etp > 1 && !c->at[F_NOBIAS])
        add(c, CFIT_SEV_ERROR, c->at[F_ETP] ? c->at[F_ETP] : where(c, F_TP),
            "add --disable-bias-linear, or --expert-tensor-parallel-size 1",
            "Bias in Moe is only supported when ETP==1 (ETP %ld%s; linear layers have biases by default)", etp,
            c->at[F_ETP] ? "" : ", TP's: ETP defaults to TP");
    if (ep > 1 && !c->at[F_DISPATCH])
        add(c, CFIT_SEV_WARNING, c->at[F_EP], "add --moe-token-dispatcher-type alltoall (or flex)",
            "expert parallelism with the default allgather dispatcher: Megatron-Core's MoE README "
            "(megatron/core/transformer/moe) lists allgather for TP-only setups, alltoall or flex for EP > 1");
    if (!c->world || etp < 1 || !known(c, F_EP) || !known(c, F_ETP) || c->world % (etp * ep * pp) == 0)
        return;
    add(c, CFIT_SEV_ERROR, where(c, c->at[F_EP] ? F_EP : F_ETP), "choose ETP x EP x PP dividing the world size",
        "world_size (%ld) is not divisible by expert_tensor_model_pipeline_parallel size (ETP %ld x EP %ld x "
        "PP %ld = %ld)", c->world, etp, ep, pp, etp * ep * pp);
}

static void check_moe_dispatch(mg *c)
{
    int flex = is(c, F_DISPATCH, "flex");
    if (c->at[F_DEEPEP] && !flex)
        add(c, CFIT_SEV_ERROR, c->at[F_DEEPEP], "add --moe-token-dispatcher-type flex",
            "DeepEP backend is only supported with flex token dispatcher");
    if (c->at[F_DEEPEP] && is(c, F_FLEX, "hybridep"))
        add(c, CFIT_SEV_ERROR, c->at[F_DEEPEP], "drop --moe-enable-deepep (deprecated)",
            "Only one backend is supported for flex token dispatcher");
    if (is(c, F_FLEX, "ncclep") && !flex)
        add(c, CFIT_SEV_ERROR, c->at[F_FLEX], "add --moe-token-dispatcher-type flex",
            "moe_flex_dispatcher_backend='ncclep' requires moe_token_dispatcher_type='flex'");
    if (flex && c->at[F_PAD_CAP] && (c->at[F_DEEPEP] || !c->s[F_FLEX] || is(c, F_FLEX, "deepep")))
        add(c, CFIT_SEV_ERROR, c->at[F_PAD_CAP], "drop it, or use another dispatcher",
            "Flex token dispatcher with deepep backend does not support moe_pad_expert_input_to_capacity");
    if (c->at[F_PAD_CAP] && !c->at[F_CAPF])
        add(c, CFIT_SEV_ERROR, c->at[F_PAD_CAP], "add --moe-expert-capacity-factor F",
            "moe_expert_capacity_factor must be set to use moe_pad_expert_input_to_capacity");
    if (c->at[F_CAPF] && (is(c, F_LB, "sinkhorn") || is(c, F_LB, "quantile_balancing")))
        add(c, CFIT_SEV_ERROR, c->at[F_CAPF], "use aux_loss, seq_aux_loss, global_aux_loss or none",
            "moe_expert_capacity_factor only works with aux_loss, seq_aux_loss, global_aux_loss or none load "
            "balancing");
}

static void check_mla(mg *c)
{
    static const int ids[] = {F_QLORA, F_KVLORA, F_QKHD, F_QKPOS, F_VHD};
    if (!c->at[F_MLA]) {
        for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
            if (c->at[ids[i]])
                add(c, CFIT_SEV_WARNING, c->at[ids[i]], "add --multi-latent-attention, or drop it",
                    "has no effect without --multi-latent-attention");
        return;
    }
    check_positive(c, ids, sizeof ids / sizeof ids[0]);
    if (c->at[F_GQA])
        add(c, CFIT_SEV_ERROR, c->at[F_GQA], "drop --group-query-attention and --num-query-groups",
            "Group query attention is mutually exclusive with multi latent attention");
    if (!c->at[F_KVLORA])
        add(c, CFIT_SEV_WARNING, c->at[F_MLA], "give --kv-lora-rank (DeepSeek-V3: 512)",
            "kv_lora_rank is not set: Megatron-LM's parser default is 32");
}

static void check_moe(mg *c)
{
    static const int sizes[] = {F_EP, F_ETP, F_MOE_FFN, F_SHARED_FFN, F_NGROUPS, F_GTOPK};
    int mixed = check_layer_freq(c);
    long experts = c->v[F_EXPERTS];
    check_mla(c);
    check_moe_dispatch(c);
    if (!c->at[F_EXPERTS] || given_zero(c, F_EXPERTS)) {
        check_moe_without_experts(c, mixed);
        return;
    }
    if (!experts)
        return;   /* a shell variable */
    check_positive(c, sizes, sizeof sizes / sizeof sizes[0]);
    check_moe_router(c, experts);
    check_moe_sizes(c);
    check_moe_grid(c, experts);
}

/* --optimizer-offload-fraction's value (argparse type=float, default 1.0); -1 when it is not a number
 * (reported) or a shell variable. */
static double offload_fraction(mg *c)
{
    const char *s = c->s[F_OPT_OFFLOAD_FRAC];
    double v;
    if (!c->at[F_OPT_OFFLOAD_FRAC])
        return 1.0;
    if (!s || s[0] == '$')
        return -1.0;
    if (!float_value(s, &v)) {
        add(c, CFIT_SEV_ERROR, c->at[F_OPT_OFFLOAD_FRAC], "write a number from 0 to 1, e.g. 1.0",
            "expects a number (argparse type=float), got \"%s\"", s);
        return -1.0;
    }
    return v;
}

/* The hybrid device optimizer (validate_args: "The optimizer cpu offload must be used in
 * conjunction with `--use-precision-aware-optimizer`"; with --fp8-param-gather only the delayed
 * FP8 recipe); c->opt_offload_fraction is what the memory check offloads. */
static void check_optimizer_offload(mg *c)
{
    c->opt_offload_fraction = 0.0;
    if (!c->at[F_OPT_OFFLOAD]) {
        if (c->at[F_OPT_OFFLOAD_FRAC])
            add(c, CFIT_SEV_WARNING, c->at[F_OPT_OFFLOAD_FRAC], "add --optimizer-cpu-offload, or drop it",
                "is read only with --optimizer-cpu-offload: nothing is offloaded");
        return;
    }
    if (!c->at[F_PRECISION_AWARE])
        add(c, CFIT_SEV_ERROR, c->at[F_OPT_OFFLOAD], "add --use-precision-aware-optimizer",
            "The optimizer cpu offload must be used in conjunction with `--use-precision-aware-optimizer`, "
            "as the hybrid device optimizer reuses the code path of this flag.");
    if (c->at[F_FP8_PARAM_GATHER] && !is(c, F_FP8_RECIPE, "delayed"))
        add(c, CFIT_SEV_ERROR, c->at[F_OPT_OFFLOAD], "add --fp8-recipe delayed, or drop --fp8-param-gather",
            "When `--fp8-param-gather` is enabled, the optimizer cpu offload must be used in conjunction with "
            "`--fp8-recipe delayed`.");
    double f = offload_fraction(c);
    if (f < 0)
        return;
    if (f > 1.0)
        add(c, CFIT_SEV_WARNING, c->at[F_OPT_OFFLOAD_FRAC], "give a fraction from 0 to 1",
            "a fraction above 1 offloads all of the optimizer state");
    c->opt_offload_fraction = f > 1.0 ? 1.0 : f;
}

/* Fine-grained activation offloading as TransformerConfig.__post_init__ and validate_args check it
 * (Megatron-LM d98e8a6); c->fgao_costed: the memory check offloads the modules' inputs
 * (plan --offload-modules, docs/model.md §10.1). */
static void check_activation_offload(mg *c)
{
    unsigned o = c->offload_modules;
    c->fgao_costed = 0;
    if (!c->at[F_FGAO]) {
        if (c->at[F_OFFMODS] || c->at[F_ACT_OFF_FRAC])
            add(c, CFIT_SEV_WARNING, c->at[F_OFFMODS] ? c->at[F_OFFMODS] : c->at[F_ACT_OFF_FRAC],
                "add --fine-grained-activation-offloading, or drop it",
                "is read only with --fine-grained-activation-offloading: nothing is offloaded");
        return;
    }
    const word *at = c->at[F_FGAO];
    if (c->at[F_CPU_OFFLOADING])
        add(c, CFIT_SEV_ERROR, at, "keep one of the two", "fine_grained_activation_offloading cannot be enabled "
            "with cpu_offloading.");
    if (!c->at[F_OFFMODS] || !o) {
        if (!c->at[F_OFFMODS])
            add(c, CFIT_SEV_ERROR, at, "add --offload-modules LIST (e.g. core_attn attn_proj expert_fc1)",
                "needs at least one --offload-modules entry (TransformerConfig asserts offload_modules is not empty)");
        return;
    }
    const word *mw = c->at[F_OFFMODS];
    int bad = 0;
    if ((o & CFIT_OFFMOD_ATTN_PROJ) && !(o & CFIT_OFFMOD_CORE_ATTN))
        bad = 1, add(c, CFIT_SEV_ERROR, mw, "add core_attn", "attn_proj cannot be set to offload_modules alone "
                     "without core_attn because the input of attn_proj is the output of core_attn, which is needed "
                     "in core_attn.backward().");
    if ((o & CFIT_OFFMOD_FUSED_GROUP_MLP) && (o & (CFIT_OFFMOD_EXPERT_FC1 | CFIT_OFFMOD_MOE_ACT)))
        bad = 1, add(c, CFIT_SEV_ERROR, mw, "keep fused_group_mlp, or expert_fc1 and moe_act",
                     "fused_group_mlp offloads the whole fused grouped MLP and cannot be combined with expert_fc1 "
                     "or moe_act.");
    if ((o & CFIT_OFFMOD_EXPERTS) && is(c, F_RGRAN, "selective") && (c->recompute_modules & CFIT_RECMOD_MOE))
        bad = 1, add(c, CFIT_SEV_ERROR, mw, "remove moe from --recompute-modules, or the MoE modules from --offload-modules",
                     "Cannot offload the experts' activations while recomputing the entire MoE layer.");
    if ((o & CFIT_OFFMOD_EXPERTS) && (!c->at[F_EXPERTS] || given_zero(c, F_EXPERTS) || c->v[F_EXPERTS] == 1))
        bad = 1, add(c, CFIT_SEV_ERROR, mw, "drop expert_fc1, moe_act and fused_group_mlp",
                     "expert_fc1, moe_act and fused_group_mlp offload an MoE layer's experts: there are none");
    double frac = 1.0;
    if (c->at[F_ACT_OFF_FRAC]) {
        const char *s = c->s[F_ACT_OFF_FRAC];
        int known = s && s[0] != '$';
        if (!known)
            frac = -1.0;
        else if (!float_value(s, &frac) || frac < 0 || frac > 1)
            bad = 1, add(c, CFIT_SEV_ERROR, c->at[F_ACT_OFF_FRAC], "give a fraction from 0 to 1",
                         "activation_offload_fraction must be in range [0, 1].");
    }
    if (is(c, F_RGRAN, "full"))
        add(c, CFIT_SEV_INFO, at, NULL, "with --recompute-granularity full a layer keeps only its input: the memory "
            "check offloads nothing");
    else if (!bad && frac < 1.0)
        add(c, CFIT_SEV_INFO, c->at[F_ACT_OFF_FRAC], NULL, "the memory check costs a partial offload "
            "(--activation-offload-fraction below 1) as none: the activations are counted on the GPU");
    else if (!bad)
        c->fgao_costed = 1;
}

/* --overlap-moe-expert-parallel-comm as TransformerConfig.__post_init__ asserts it (Megatron-LM
 * d98e8a6): expert parallelism, a virtual pipeline when pp > 1, the alltoall or flex dispatcher,
 * no full recomputation (nor its method and layer count), no moe recompute module, no shared
 * expert overlap, at most one MTP layer. */
static void check_moe_overlap(mg *c)
{
    const word *at = c->at[F_MOE_OVERLAP];
    if (!at)
        return;
    struct { int bad; const char *fix, *msg; } rules[] = {
        {val(c, F_EP, 1) <= 1, "add --expert-model-parallel-size N (N > 1), or drop it",
         "overlap_moe_expert_parallel_comm is only supported with expert model parallelism"},
        {val(c, F_PP, 1) > 1 && !c->at[F_VPL] && !c->at[F_VPS] && !c->layout_vp,
         "add --num-virtual-stages-per-pipeline-rank N, or drop it",
         "If enabling EP A2A overlap, virtual_pipeline_model_parallel_size must be specified when "
         "pipeline_model_parallel_size > 1"},
        {c->s[F_DISPATCH] && !is(c, F_DISPATCH, "alltoall") && !is(c, F_DISPATCH, "flex"),
         "use --moe-token-dispatcher-type alltoall or flex",
         "overlap_moe_expert_parallel_comm is supported with alltoall/flex token dispatcher"},
        {is(c, F_RGRAN, "full"), "use --recompute-granularity selective",
         "disable full recomputation when enabling overlap_moe_expert_parallel_comm"},
        {c->at[F_RMETHOD] != NULL, "drop --recompute-method",
         "disable recomputation method when enabling overlap_moe_expert_parallel_comm"},
        {c->at[F_RNUM] != NULL, "drop --recompute-num-layers",
         "recompute_num_layers must be None when enabling overlap_moe_expert_parallel_comm"},
        {c->at[F_RMODS] && (c->recompute_modules & CFIT_RECMOD_MOE), "drop moe from --recompute-modules",
         "disable moe in recompute_modules when enabling overlap_moe_expert_parallel_comm"},
        {c->at[F_SHARED_OVERLAP] != NULL, "drop --moe-shared-expert-overlap",
         "disable moe_shared_expert_overlap when enabling overlap_moe_expert_parallel_comm"},
        {c->v[F_MTP] > 1, "use --mtp-num-layers 1 or none",
         "MTP supports at most one layer when enabling overlap_moe_expert_parallel_comm."},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rules[i].bad)
            add(c, CFIT_SEV_ERROR, at, rules[i].fix, "%s", rules[i].msg);
}

/* CUDA graphs (Megatron-LM d98e8a6: validate_args in megatron/training/arguments.py and
 * TransformerConfig.__post_init__'s cuda_graph checks). */
static void check_cuda_graphs(mg *c)
{
    const word *mods = c->at[F_CGMODS] ? c->at[F_CGMODS] : c->at[F_CGSCOPE];
    int full = is(c, F_CGIMPL, "full_iteration"), layer = is(c, F_CGIMPL, "local") || is(c, F_CGIMPL, "transformer_engine");
    unsigned m = c->graph_modules[c->at[F_CGMODS] ? 0 : 1];   /* validate_args keeps the modules when both */
    if (c->at[F_CGMODS] && c->at[F_CGSCOPE])
        add(c, CFIT_SEV_ERROR, c->at[F_CGSCOPE], "keep --cuda-graph-modules",
            "--cuda-graph-scope and --cuda-graph-modules cannot be used together.");
    else if (c->at[F_CGSCOPE])
        add(c, CFIT_SEV_WARNING, c->at[F_CGSCOPE], "write --cuda-graph-modules",
            "--cuda-graph-scope is deprecated, use --cuda-graph-modules instead.");
    if (full && !c->at[F_NONAN])
        add(c, CFIT_SEV_ERROR, c->at[F_CGIMPL], "add --no-check-for-nan-in-loss-and-grad",
            "--no-check-for-nan-in-loss-and-grad should be set with --cuda-graph-impl=full_iteration for training.");
    if (full && mods && (m & (GM_ATTN | GM_MLP | GM_MOE | GM_ROUTER | GM_PRE | GM_MAMBA)))
        add(c, CFIT_SEV_ERROR, mods, "drop the module list",
            "--cuda-graph-modules must be empty when --cuda-graph-impl=full_iteration.");
    if (mods && !full && !layer)
        add(c, CFIT_SEV_WARNING, mods, "add --cuda-graph-impl transformer_engine (or local)",
            "the modules select coverage within per-layer CUDA graphs; without --cuda-graph-impl local or "
            "transformer_engine none are built");
    if (!layer)
        return;
    if ((m & GM_MOE) && (m & GM_ROUTER))
        add(c, CFIT_SEV_ERROR, mods, "keep moe or moe_router", "cuda_graph_modules must not contain both moe and moe_router.");
    if ((m & GM_PRE) && !(m & GM_ROUTER) && !is(c, F_CGIMPL, "local"))
        add(c, CFIT_SEV_ERROR, mods, "add moe_router", "moe_preprocess cuda graph is only supported with moe_router cuda graph.");
    if ((m & (GM_MOE | GM_ROUTER)) && (!c->at[F_EXPERTS] || given_zero(c, F_EXPERTS) || c->v[F_EXPERTS] == 1))
        add(c, CFIT_SEV_ERROR, mods, "drop moe and moe_router", "moe cuda graph is only supported for MoE.");
    if ((m & GM_MLP) && c->v[F_EXPERTS] > 1 && (!c->at[F_LFREQ] || is(c, F_LFREQ, "1")))
        add(c, CFIT_SEV_ERROR, mods, "drop mlp (every layer is MoE: use moe or moe_router)",
            "mlp cuda graph is only supported for dense layers, but not found in the model.");
    if (is(c, F_RGRAN, "full"))
        add(c, CFIT_SEV_ERROR, c->at[F_RGRAN], "use --recompute-granularity selective, or --cuda-graph-impl full_iteration",
            "full recompute is only supported with full iteration CUDA graph.");
}

/* The arguments' model shape against --model. */
static void check_model_shape(mg *c)
{
    const cfit_model *m = c->r->model;
    struct { int id; long want; const char *what; } rows[] = {
        {F_LAYERS, m->layers, "layers"}, {F_HIDDEN, m->hidden_size, "hidden_size"},
        {F_FFN, m->ffn_hidden_size, "ffn_hidden_size"}, {F_HEADS, m->num_heads, "num_heads"},
        {F_EXPERTS, m->num_experts, "num_experts"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (c->v[rows[i].id] && c->v[rows[i].id] != rows[i].want)
            add(c, CFIT_SEV_WARNING, c->at[rows[i].id], NULL, "%s has %s %ld, not %ld: the memory check uses %s's",
                m->name, rows[i].what, rows[i].want, c->v[rows[i].id], m->name);
}

int cfit_check_megatron(const char *text, size_t len, const char *file, const cfit_check_request *r,
                        cfit_check_result *out, cfit_diag *d)
{
    memset(out, 0, sizeof *out);
    if (len > CFIT_CHECK_MAX_BYTES)
        return cfit_diag_set(d, CFIT_ERANGE, file, 0, 0, "file is larger than %u MiB", CFIT_CHECK_MAX_BYTES >> 20);
    size_t bad = cfit__utf8_invalid_at(text, len);
    if (bad < len) {
        int line, col;
        cfit__text_line_col(text, bad, &line, &col);
        return cfit_diag_set(d, CFIT_EPARSE, file, line, col, "invalid UTF-8 byte 0x%02x (an argument file must be UTF-8)",
                             (unsigned char)text[bad]);
    }
    words ws = {NULL, 0, 0};
    int rc = lex(text, len, file, &ws, d);
    if (rc) {
        words_free(&ws);
        return rc;
    }
    mg c;
    memset(&c, 0, sizeof c);
    c.res = out;
    c.r = r;
    c.world = r->gpus <= (1L << 24) ? r->gpus : 0;
    read_args(&c, &ws);
    check_sizes_nonzero(&c);
    check_shape(&c);
    check_vp(&c);
    check_uneven(&c);
    check_layout(&c);
    check_choices(&c);
    check_recompute(&c);
    check_moe(&c);
    check_cuda_graphs(&c);
    check_optimizer_offload(&c);
    check_activation_offload(&c);
    check_moe_overlap(&c);
    long dp = check_world_batch(&c);
    if (r->model && r->catalog && dp) {
        check_model_shape(&c);
        check_memory(&c, dp);
    }
    words_free(&ws);
    if (c.oom) {
        cfit_check_result_fini(out);
        return cfit_diag_set(d, CFIT_ENOMEM, file, 0, 0, "out of memory");
    }
    cfit__findings_sort(out);
    return CFIT_EOK;
}
