/* yaml_out.c - see yaml_out.h.  libyaml's emitter checks each scalar is valid UTF-8 and
 * escapes what a double-quoted scalar cannot hold (control characters, line breaks, quotes). */
#include "yaml_out.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define YOUT_DEPTH 16

struct yaml_out {
    yaml_emitter_t em;
    int failed;
    const char *why;
    int depth;
    char open[YOUT_DEPTH];   /* 'm' or 's' per open collection */
};

static void push(yaml_out *y, char kind)
{
    if (y->depth == YOUT_DEPTH) {
        y->failed = 1;
        y->why = "nested too deep";
        return;
    }
    y->open[y->depth++] = kind;
}

static void emit(yaml_out *y, yaml_event_t *ev, int made)
{
    if (y->failed)
        return made ? yaml_event_delete(ev) : (void)0;
    if (!made) {
        y->failed = 1;
        y->why = "not valid UTF-8 (or out of memory)";
        return;
    }
    if (!yaml_emitter_emit(&y->em, ev)) {   /* the emitter deletes the event either way */
        y->failed = 1;
        y->why = y->em.problem ? y->em.problem : "the YAML emitter failed";
    }
}

static int write_file(void *data, unsigned char *buf, size_t n)
{
    return fwrite(buf, 1, n, data) == n;
}

yaml_out *yout_open(FILE *f)
{
    yaml_out *y = calloc(1, sizeof *y);
    if (!y || !yaml_emitter_initialize(&y->em))
        return free(y), NULL;
    yaml_emitter_set_output(&y->em, write_file, f);
    yaml_emitter_set_width(&y->em, -1);
    yaml_emitter_set_unicode(&y->em, 1);
    yaml_emitter_set_indent(&y->em, 2);
    yaml_event_t ev;
    emit(y, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
    emit(y, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
    return y;
}

void yout_map(yaml_out *y)
{
    yaml_event_t ev;
    push(y, 'm');
    emit(y, &ev, yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE));
}

void yout_seq(yaml_out *y)
{
    yaml_event_t ev;
    push(y, 's');
    emit(y, &ev, yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE));
}

void yout_end(yaml_out *y)
{
    yaml_event_t ev;
    char kind = y->depth > 0 ? y->open[--y->depth] : 'm';
    if (kind == 's')
        emit(y, &ev, yaml_sequence_end_event_initialize(&ev));
    else
        emit(y, &ev, yaml_mapping_end_event_initialize(&ev));
}

static void scalar(yaml_out *y, const char *s, yaml_scalar_style_t style)
{
    yaml_event_t ev;
    emit(y, &ev, yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1, style));
}

void yout_key(yaml_out *y, const char *key)
{
    scalar(y, key, YAML_PLAIN_SCALAR_STYLE);
}

void yout_str(yaml_out *y, const char *value)
{
    scalar(y, value, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
}

void yout_pair(yaml_out *y, const char *key, const char *value)
{
    yout_key(y, key);
    yout_str(y, value);
}

int yout_close(yaml_out *y, const char **why)
{
    yaml_event_t ev;
    emit(y, &ev, yaml_document_end_event_initialize(&ev, 1));
    emit(y, &ev, yaml_stream_end_event_initialize(&ev));
    if (!y->failed && !yaml_emitter_flush(&y->em)) {
        y->failed = 1;
        y->why = "cannot write the output";
    }
    int rc = y->failed ? -1 : 0;
    *why = y->why;
    yaml_emitter_delete(&y->em);
    free(y);
    return rc;
}
