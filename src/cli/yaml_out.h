/* yaml_out.h - YAML written through libyaml's emitter (rules): keys plain, every string value
 * double-quoted with libyaml's escapes, so any text (": ", " #", "\r", quotes) gives valid YAML. */
#ifndef CFIT_CLI_YAML_OUT_H
#define CFIT_CLI_YAML_OUT_H

#include <stdio.h>

typedef struct yaml_out yaml_out;

/* A stream and one document on f; NULL when out of memory.  Block style, no line width limit. */
yaml_out *yout_open(FILE *f);
void yout_map(yaml_out *y);         /* begin a block mapping */
void yout_seq(yaml_out *y);         /* begin a block sequence */
void yout_end(yaml_out *y);         /* end the innermost mapping or sequence */
void yout_key(yaml_out *y, const char *key);                    /* a plain mapping key */
void yout_str(yaml_out *y, const char *value);                  /* a double-quoted string */
void yout_pair(yaml_out *y, const char *key, const char *value);   /* key: "value" */
/* End the document and stream, flush, free.  0, or -1 when libyaml refused something (the
 * first error is kept: text not valid UTF-8, out of memory) with its message in *why. */
int yout_close(yaml_out *y, const char **why);

#endif
