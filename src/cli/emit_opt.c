/* emit_opt.c - `plan --emit`: parse KIND[:FILE] lists and write each configuration. */
#include "cli.h"
#include "emit_opt.h"

#include <stdlib.h>
#include <string.h>

/* One "KIND[:FILE]" of len bytes at tok (not NUL-terminated: it may be followed by ','). */
static int add_one(cli_emit *e, const char *tok, size_t len)
{
    const char *colon = memchr(tok, ':', len);
    char kind[32];
    snprintf(kind, sizeof kind, "%.*s", (int)(colon ? (size_t)(colon - tok) : len), tok);
    cfit_emit_kind k;
    cfit_diag d;
    cfit_diag_clear(&d);
    if (cfit_emit_kind_parse(kind, &k, &d))
        return cli_error("--emit: %s", d.msg);
    int file_len = colon ? (int)(len - (size_t)(colon + 1 - tok)) : 0;
    if (colon && file_len == 0)
        return cli_error("--emit: '%s:' names no file (write %s:FILE, or %s for stdout)", kind, kind, kind);
    if (file_len >= 4096)
        return cli_error("--emit: file name longer than 4095 bytes");
    if (e->n == CLI_EMIT_MAX)
        return cli_error("--emit: at most %d configurations", CLI_EMIT_MAX);
    e->item[e->n].kind = k;
    e->item[e->n].file = colon ? colon + 1 : NULL;
    e->item[e->n].file_len = file_len;
    e->n++;
    return 0;
}

int cli_emit_add(cli_emit *e, const char *value)
{
    const char *p = value;
    do {
        size_t len = strcspn(p, ",");
        if (len == 0)
            return cli_error("--emit: expected deepspeed, megatron or torchrun[:FILE], got '%s'", value);
        int rc = add_one(e, p, len);
        if (rc)
            return rc;
        p += len;
    } while (*p++ == ',');
    return 0;
}

static int bare_stdout(const cli_emit *e, int i)
{
    return e->item[i].file && e->item[i].file_len == 1 && e->item[i].file[0] == '-';
}

static int to_stdout(const cli_emit *e, int i)
{
    return !e->item[i].file || bare_stdout(e, i);
}

int cli_emit_stdout_bare(const cli_emit *e)
{
    for (int i = 0; i < e->n; i++)
        if (bare_stdout(e, i))
            return 1;
    return 0;
}

int cli_emit_validate(const cli_emit *e, int json)
{
    int on_stdout = 0;
    for (int i = 0; i < e->n; i++)
        on_stdout += to_stdout(e, i);
    if (cli_emit_stdout_bare(e) && on_stdout > 1)
        return cli_error("--emit KIND:- writes that configuration alone to stdout; give the others a FILE");
    for (int i = 0; json && i < e->n; i++)
        if (to_stdout(e, i))
            return cli_error("--emit %s: with --json the configuration needs a file (%s:FILE); stdout holds the JSON",
                             cfit_emit_kind_name(e->item[i].kind), cfit_emit_kind_name(e->item[i].kind));
    return 0;
}

static void header(cfit_emit_kind k, const cfit_plan_request *r, const cfit_plan *p)
{
    const cfit_layout *l = &p->layout;
    printf("\n# %s configuration for the best plan: %ld x %s, tp %d pp %d dp %d cp %d vp %d, micro-batch %d, "
           "ZeRO-%d\n", cfit_emit_kind_name(k), p->gpus, p->gpu->name, l->tp, l->pp, l->dp, l->cp, l->vp,
           l->mbs, l->zero);
    if (k != CFIT_EMIT_DEEPSPEED)
        return;
    if (l->tp > 1)
        printf("# tensor parallelism %d comes from the model code (Megatron mpu), not from this file\n", l->tp);
    if (r->precision == CFIT_PREC_FP8)
        printf("# fp8 GEMMs need Transformer Engine in the model code; DeepSpeed has no fp8 key\n");
    printf("# check it: clusterfit check FILE --gpus %ld --model %s --gpu %s", p->gpus, r->model->name,
           p->gpu->name);
    if (r->seq_len > 0)
        printf(" --seq %d", r->seq_len);
    if (l->tp > 1)
        printf(" --tp %d", l->tp);
    printf("\n");
}


int cli_emit_write(const cli_emit *e, const cfit_plan_request *r, const cfit_plan_result *res)
{
    int rc = 0;
    if (e->n && res->nplans == 0)
        rc = cli_error("--emit: no plan to write a configuration for");
    for (int i = 0; !rc && i < e->n; i++) {
        char *text = NULL;
        cfit_diag d;
        cfit_diag_clear(&d);
        int err = cfit_emit(e->item[i].kind, r, &res->plans[0], res->seq_len, &text, &d);
        if (err)
            rc = cli_error_diag(&d, err);
        else if (e->item[i].file) {
            char path[4096];
            snprintf(path, sizeof path, "%.*s", e->item[i].file_len, e->item[i].file);
            rc = cli_write_output("--emit", path, text, strlen(text));   /* "-": stdout, no header */
        }
        else {
            header(e->item[i].kind, r, &res->plans[0]);
            fputs(text, stdout);
        }
        free(text);
    }
    return rc;
}
