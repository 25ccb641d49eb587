/* cmd_check.c - `clusterfit check FILE`: findings for a DeepSpeed JSON config, as lines or JSON. */
#include "cli.h"
#include "clusterfit/writer.h"
#include "clusterfit/frameworks.h"

#include <stdlib.h>
#include <string.h>

enum { O_GPUS = 1, O_MODEL, O_GPU, O_SEQ, O_TP, O_PP, O_CP, O_JSON, O_CATALOG };

static const cli_opt opts[] = {
    {"gpus", 0, "N", "world size: total GPUs the job runs on (enables the batch and world-size checks)", O_GPUS},
    {"model", 0, "NAME|FILE", "model from the catalog, a JSON model file or a config.json (enables the memory check, given a world size)", O_MODEL},
    {"gpu", 0, "NAME", "GPU type for the memory check (default h100-sxm)", O_GPU},
    {"seq", 0, "N", "sequence length in tokens (default: the model's)", O_SEQ},
    {"tp", 0, "N", "tensor parallel size the launch gives DeepSpeed through an mpu (Megatron-DeepSpeed)", O_TP},
    {"pp", 0, "N", "pipeline stages (PipelineModule num_stages; default: the config's pipeline.stages)", O_PP},
    {"cp", 0, "N", "context/sequence parallel size (default: the config's sequence_parallel_size)", O_CP},
    {"json", 0, NULL, "print one JSON object (docs/json.md) instead of lines", O_JSON},
    {"catalog", 0, "FILE", "add or override catalog entries from FILE (repeatable; - reads stdin)", O_CATALOG},
    {NULL, 0, NULL, NULL, 0},
};

typedef struct check_cli {
    cli_catalog cc;
    const char *file, *model, *gpu;
    long gpus, seq, tp, pp, cp;
    int json;
    cfit_model model_file;
} check_cli;

/* The options whose values are stored as given (cli_bind); on_opt has FILE and --catalog. */
static const cli_bind binds[] = {
    CLI_STRING(O_MODEL, check_cli, model),
    CLI_STRING(O_GPU, check_cli, gpu),
    CLI_FLAG(O_JSON, check_cli, json),
    CLI_INT(O_GPUS, check_cli, gpus, 1, 1L << 24),
    CLI_INT(O_SEQ, check_cli, seq, 1, 1 << 24),
    CLI_INT(O_TP, check_cli, tp, 1, 4096),
    CLI_INT(O_PP, check_cli, pp, 1, 4096),
    CLI_INT(O_CP, check_cli, cp, 1, 4096),
    {.id = 0},
};

static int on_opt(void *vc, int id, const char *name, const char *value)
{
    check_cli *c = vc;
    (void)name;
    switch (id) {
    case -1:
        if (c->file)
            return cli_error("check: one FILE only, got '%s' after '%s'", value, c->file);
        c->file = value;
        return 0;
    case O_CATALOG: return cli_catalog_add(&c->cc, value);
    }
    return 0;
}

static int resolve(check_cli *c, cfit_check_request *r)
{
    cfit_diag d;
    cfit_diag_clear(&d);
    r->catalog = c->cc.cat;
    if (c->model && (strstr(c->model, ".json") || strchr(c->model, '/'))) {
        int rc = cfit_model_load_file(c->model, &c->model_file, &d);
        if (rc)
            return cli_error_diag(&d, rc);
        r->model = &c->model_file;
    } else if (c->model && !(r->model = cfit_catalog_model(c->cc.cat, c->model, &d))) {
        return cli_error("--model: %s", d.msg);
    }
    if (r->model && cli_model_plannable(r->model, c->seq > 0 ? (int)c->seq : r->model->seq_len))
        return EXIT_USAGE;
    if (c->gpu && !(r->gpu = cfit_catalog_gpu(c->cc.cat, c->gpu, &d)))
        return cli_error("--gpu: %s", d.msg);
    r->gpus = c->gpus;
    r->seq_len = (int)c->seq;
    r->tp = (int)c->tp, r->pp = (int)c->pp, r->cp = (int)c->cp;
    return 0;
}

static void print_lines(const char *file, const cfit_check_result *res)
{
    for (size_t i = 0; i < res->n; i++) {
        const cfit_finding *f = &res->findings[i];
        printf("%s:%d:%d: %s: %s: %s", file, f->line, f->col, cfit_severity_name(f->severity),
               f->path[0] ? f->path : "(config)", f->message);
        if (f->fix[0])
            printf(" (fix: %s)", f->fix);
        printf("\n");
    }
    printf("check: %d error%s, %d warning%s, %d note%s in %s\n", res->errors, res->errors == 1 ? "" : "s",
           res->warnings, res->warnings == 1 ? "" : "s", res->infos, res->infos == 1 ? "" : "s", file);
}

static int print_json(const char *file, const cfit_check_result *res)
{
    cfit_buf b;
    cfit_buf_init(&b);
    cfit_buf_puts(&b, "{\"file\": ");
    cfit_buf_json_string(&b, file);
    cfit_buf_puts(&b, ", \"findings\": [");
    for (size_t i = 0; i < res->n; i++) {
        const cfit_finding *f = &res->findings[i];
        cfit_buf_puts(&b, i ? ", {\"severity\": " : "{\"severity\": ");
        cfit_buf_json_string(&b, cfit_severity_name(f->severity));
        cfit_buf_puts(&b, ", \"path\": ");
        cfit_buf_json_string(&b, f->path);
        cfit_buf_printf(&b, ", \"line\": %d, \"col\": %d, \"message\": ", f->line, f->col);
        cfit_buf_json_string(&b, f->message);
        cfit_buf_puts(&b, ", \"fix\": ");
        cfit_buf_json_string(&b, f->fix);
        cfit_buf_puts(&b, "}");
    }
    cfit_buf_printf(&b, "], \"errors\": %d, \"warnings\": %d, \"infos\": %d}\n", res->errors, res->warnings,
                     res->infos);
    return cli_emit_json(&b);
}

int cmd_check(int argc, char **argv)
{
    check_cli c;
    memset(&c, 0, sizeof c);
    int rc = cli_parse_bound(argc, argv, opts, binds, on_opt, &c, "clusterfit check FILE [options]",
                             "Check a DeepSpeed JSON config against DeepSpeed's schema (unknown or misspelt keys,\n"
                             "wrong value types, keys DeepSpeed ignores) and, with --gpus, the batch arithmetic\n"
                             "and world size; with --model also whether the implied layout fits in GPU memory.\n"
                             "FILE '-' reads standard input.  A FILE not named *.json and not starting with '{' is read as\n"
                             "Megatron-LM arguments "
                             "(shell words, one per line, or a torchrun line) and checked against Megatron-LM's\n"
                             "validate_args rules, MoE and MLA arguments included (EP dividing the experts,\n"
                             "ETP x EP x PP dividing the world, top-k, --moe-layer-freq patterns, dispatchers).\n"
                             "Each finding: FILE:LINE:COL, severity, JSON path, message and fix (docs/check.md).\n"
                             "Exit status: 0 no errors (warnings allowed), 2 errors found or FILE malformed\n"
                             "(not a JSON object, an unterminated quote), 1 FILE cannot be read.");
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    if (!c.file)
        return cli_error("check: FILE missing (usage: clusterfit check FILE [options])");
    if ((rc = cli_catalog_open(&c.cc)))
        return rc;
    cfit_check_request req;
    cfit_check_request_init(&req);
    rc = resolve(&c, &req);
    cfit_check_result res;
    cfit_diag d;
    cfit_diag_clear(&d);
    int err = rc ? 0 : cfit_check_file(c.file, &req, &res, NULL, &d);
    if (!rc && err)
        rc = cli_error_diag(&d, err);
    else if (!rc) {
        const char *shown = cfit_input_name(c.file);
        rc = c.json ? print_json(shown, &res) : (print_lines(shown, &res), 0);
        if (!rc && res.errors)
            rc = EXIT_USAGE;
        cfit_check_result_fini(&res);
    }
    cfit_catalog_free(c.cc.cat);
    return rc;
}
