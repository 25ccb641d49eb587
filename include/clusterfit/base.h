/* base.h - errors, diagnostics and unit parsing shared by every part of libclusterfit.
 *
 * The library never prints and never exits: every fallible call returns a cfit_err
 * (0 on success, negative on failure) and, where a diagnostic pointer is given, fills
 * it with the file, line, column and a lowercase message without a full stop.  Only
 * the CLI turns a diagnostic into "clusterfit: error: FILE:LINE:COL: message".
 */
#ifndef CLUSTERFIT_BASE_H
#define CLUSTERFIT_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CFIT_VERSION "0.1.0"

/* CFIT_API marks what libclusterfit exports.  The library is built with -fvisibility=hidden, so
 * a function without it (every cfit__ helper) stays inside libclusterfit.so; the static library
 * keeps them all linkable, which is what the CLI and the unit tests link. */
#if defined(__GNUC__) || defined(__clang__)
#define CFIT_API __attribute__((visibility("default")))
#else
#define CFIT_API
#endif

/* One table: the enum, cfit_strerror() and cfit_err_name() are generated from it.
 * X(NAME, value, message) */
#define CFIT_ERRORS(X)                                                  \
    X(OK, 0, "success")                                                 \
    X(NOMEM, -1, "out of memory")                                       \
    X(IO, -2, "input/output error")                                     \
    X(PARSE, -3, "malformed input")                                     \
    X(RANGE, -4, "value out of range")                                  \
    X(UNKNOWN, -5, "unknown name")                                      \
    X(INVALID, -6, "invalid or contradictory values")                   \
    X(NOFIT, -7, "no layout fits")                                      \
    X(PEER, -8, "peer rank lost")                                       \
    X(TIMEOUT, -9, "timed out")                                         \
    X(SYS, -10, "system call failed")

typedef enum cfit_err {
#define CFIT__ERR_ENUM(name, value, msg) CFIT_E##name = value,
    CFIT_ERRORS(CFIT__ERR_ENUM)
#undef CFIT__ERR_ENUM
} cfit_err;

/* Human text for an error code ("out of memory"); never NULL. */
CFIT_API const char *cfit_strerror(int err);
/* Symbolic name ("CFIT_ENOMEM"); never NULL ("CFIT_E?" for unknown codes). */
CFIT_API const char *cfit_err_name(int err);

/* A diagnostic: where the problem is and what it is.  line/col are 1-based; 0 means
 * "not applicable" (e.g. a command-line value has no line).  file is "" when the
 * input did not come from a file. */
typedef struct cfit_diag {
    char file[256];  /* input file name, or "" */
    int line;        /* 1-based line, 0 if none */
    int col;         /* 1-based column, 0 if none */
    char msg[512];   /* lowercase, no full stop */
} cfit_diag;

/* The name diagnostics give an input file: "<stdin>" for "-", else path. */
CFIT_API const char *cfit_input_name(const char *path);

/* Clear a diagnostic. NULL is ignored. */
CFIT_API void cfit_diag_clear(cfit_diag *d);
/* Fill a diagnostic (printf-style message). NULL d is ignored; file may be NULL.
 * Returns err so callers can write `return cfit_diag_set(d, CFIT_EPARSE, ...)`. */
CFIT_API int cfit_diag_set(cfit_diag *d, int err, const char *file, int line, int col,
                  const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/* Unit parsing (DESIGN §4).  Each parses the whole string (no trailing junk),
 * range-checks, and on failure returns CFIT_EPARSE or CFIT_ERANGE with d->msg set
 * (d->file/line/col left 0/"": the caller knows where the text came from).
 *
 * count: a positive whole number with optional K M B T suffix (powers of 1000):
 *        "15T" = 15e12, "1.5K" = 1500; the result must be a whole number >= 1 and
 *        at most 2^63-1.
 * size:  bytes with optional K M G T P suffix (powers of 1024), optional trailing
 *        "B" or "iB": "64M" = "64MiB" = 67108864; >= 0, at most 2^63-1.
 * rate:  a link rate; "400G", "400Gbps", "400Gb/s" are bits per second (powers of
 *        1000, K M G T), "50GB/s" is bytes per second; returned in bytes per second;
 *        must be > 0 and finite.
 * time:  a duration with unit ns us ms s m h d ("1us", "5ms", "10m", "30d"), or a
 *        bare "0"; returned in seconds; >= 0 and finite.
 * real:  a plain finite decimal number (no unit).
 */
CFIT_API int cfit_parse_count(const char *text, uint64_t *out, cfit_diag *d);
CFIT_API int cfit_parse_size(const char *text, uint64_t *out_bytes, cfit_diag *d);
CFIT_API int cfit_parse_rate(const char *text, double *out_bytes_per_s, cfit_diag *d);
CFIT_API int cfit_parse_time(const char *text, double *out_s, cfit_diag *d);
CFIT_API int cfit_parse_real(const char *text, double *out, cfit_diag *d);

/* Seconds on a monotonic clock (CLOCK_MONOTONIC): only differences mean anything.  What the
 * library times with, for a caller timing its own work (the CLI's progress line). */
CFIT_API double cfit_now_s(void);

/* Levenshtein distance between a and b (NUL-terminated); SIZE_MAX when out of memory. */
CFIT_API size_t cfit_edit_distance(const char *a, const char *b);

/* Closest candidate to name by edit distance, or NULL if none is close enough
 * (distance > max(2, strlen(name)/3)).  Used for "did you mean" hints. */
CFIT_API const char *cfit_closest(const char *name, const char *const *candidates, size_t n);
/* The name a user most likely meant: the shortest candidate that starts with name (for
 * names of 2+ characters: "h100" -> "h100-sxm"), else cfit_closest(); NULL if neither. */
CFIT_API const char *cfit_suggest(const char *name, const char *const *candidates, size_t n);

#ifdef __cplusplus
}
#endif
#endif
