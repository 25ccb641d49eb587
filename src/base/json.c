/* json.c - the position-tracking JSON reader and the cfit_buf string builder.
 *
 * The reader is a recursive descent over RFC 8259 that never reads past len (the text
 * need not be NUL-terminated).  It tracks the current line and the offset where that
 * line starts, so any position on the current line turns into a 1-based line and
 * byte column; newlines can only occur between tokens (a raw newline inside a string
 * ends it as unterminated).  Nodes are attached to their parent as soon as they are
 * made, so on any error freeing the partial root frees everything.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/grow.h"

#define BUF_MIN 64
#define SHOW_MAX 64   /* bytes of a key echoed in a message */

/* ---- cfit_buf --------------------------------------------------------- */

void cfit_buf_init(cfit_buf *b)
{
    b->len = 0;
    b->oom = 0;
    b->cap = BUF_MIN;
    b->data = malloc(BUF_MIN);
    if (b->data)
        b->data[0] = '\0';
    else
        b->cap = 0, b->oom = 1;
}

void cfit_buf_fini(cfit_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}

int cfit_buf_ok(const cfit_buf *b)
{
    return !b->oom && b->data != NULL;
}

/* Make room for extra more bytes plus the NUL; 0 (and oom set) on failure. */
static int buf_reserve(cfit_buf *b, size_t extra)
{
    if (b->oom)
        return 0;
    if (extra > SIZE_MAX / 2 - b->len) {
        b->oom = 1;
        return 0;
    }
    if (cfit__grow(&b->data, &b->cap, b->len + extra + 1, 1)) {
        b->oom = 1;
        return 0;
    }
    return 1;
}

static void buf_append(cfit_buf *b, const char *s, size_t n)
{
    if (!buf_reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void cfit_buf_puts(cfit_buf *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

void cfit_buf_vprintf(cfit_buf *b, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0) {
        b->oom = 1;   /* an encoding error: the text is lost all the same */
        return;
    }
    if (!buf_reserve(b, (size_t)n))
        return;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void cfit_buf_printf(cfit_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cfit_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

size_t cfit__utf8_len(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0)
        return 0;
    if (u[0] < 0x80)
        return 1;
    size_t len = u[0] >= 0xc2 && u[0] <= 0xdf ? 2 : u[0] >= 0xe0 && u[0] <= 0xef ? 3 : u[0] >= 0xf0 && u[0] <= 0xf4 ? 4 : 0;
    if (len == 0 || n < len)
        return 0;
    unsigned lo = 0x80, hi = 0xbf;   /* the second byte's range (RFC 3629 section 4) */
    if (u[0] == 0xe0)
        lo = 0xa0;
    else if (u[0] == 0xed)
        hi = 0x9f;
    else if (u[0] == 0xf0)
        lo = 0x90;
    else if (u[0] == 0xf4)
        hi = 0x8f;
    if (u[1] < lo || u[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (u[i] < 0x80 || u[i] > 0xbf)
            return 0;
    return len;
}

size_t cfit__utf8_invalid_at(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t k = (unsigned char)text[i] < 0x80 ? 1 : cfit__utf8_len(text + i, len - i);
        if (k == 0)
            return i;
        i += k;
    }
    return len;
}

void cfit__text_line_col(const char *text, size_t off, int *line, int *col)
{
    size_t start = 0;
    int n = 1;
    for (size_t i = 0; i < off; i++)
        if (text[i] == '\n')
            n++, start = i + 1;
    *line = n;
    *col = off - start + 1 > INT_MAX ? INT_MAX : (int)(off - start + 1);
}

/* The escape for byte c inside a JSON string, or NULL if it goes out as is. */
static const char *json_escape(unsigned char c, char hex[7])
{
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\t': return "\\t";
    case '\r': return "\\r";
    case '\b': return "\\b";
    case '\f': return "\\f";
    default:
        if (c >= 0x20)
            return NULL;
        snprintf(hex, 7, "\\u%04x", c);
        return hex;
    }
}

/* Bytes at s (left of them before the NUL) that go out as they are: printable ASCII and whole
 * UTF-8 sequences. */
static size_t plain_run(const char *s, size_t left)
{
    char hex[7];
    size_t run = 0;
    while (run < left) {
        unsigned char c = (unsigned char)s[run];
        size_t k = c < 0x80 ? (json_escape(c, hex) ? 0 : 1) : cfit__utf8_len(s + run, left - run);
        if (k == 0)
            break;
        run += k;
    }
    return run;
}

void cfit_buf_json_string(cfit_buf *b, const char *s)
{
    if (!s) {
        cfit_buf_puts(b, "null");
        return;
    }
    char hex[7];
    size_t left = strlen(s);
    buf_append(b, "\"", 1);
    for (;;) {
        size_t run = plain_run(s, left);
        buf_append(b, s, run);
        if (run == left)
            break;
        const char *esc = json_escape((unsigned char)s[run], hex);
        cfit_buf_puts(b, esc ? esc : "\xef\xbf\xbd");   /* U+FFFD for a byte that is not UTF-8 */
        s += run + 1;
        left -= run + 1;
    }
    buf_append(b, "\"", 1);
}

void cfit_buf_json_number(cfit_buf *b, double v)
{
    if (!isfinite(v))
        cfit_buf_puts(b, "null");
    else if (v == floor(v) && fabs(v) < 9007199254740992.0)   /* 2^53 */
        cfit_buf_printf(b, "%.0f", v == 0.0 ? 0.0 : v);      /* no "-0" */
    else
        cfit_buf_printf(b, "%.10g", v);
}

/* ---- the reader: state and errors -------------------------------------- */

typedef struct parser {
    const char *text;
    size_t len, pos;
    size_t line_start;   /* offset of the current line's first byte */
    int line;            /* 1-based, of pos */
    const char *file;
    cfit_diag *d;
    int err;             /* CFIT_EOK until the first error */
    const cfit_json *open;   /* the innermost array or object being read, or NULL */
} parser;

static int clamp_int(size_t v)
{
    return v > INT_MAX ? INT_MAX : (int)v;
}

/* 1-based byte column of offset pos, which must lie on the current line. */
static int col_of(const parser *p, size_t pos)
{
    return clamp_int(pos - p->line_start + 1);
}

static int peek_at(const parser *p, size_t pos)
{
    return pos < p->len ? (unsigned char)p->text[pos] : -1;
}

static int peek(const parser *p)
{
    return peek_at(p, p->pos);
}

static void fail_lc(parser *p, int err, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Record the first error only. */
static void fail_lc(parser *p, int err, int line, int col, const char *fmt, ...)
{
    if (p->err)
        return;
    p->err = err;
    if (!p->d)
        return;
    char msg[sizeof p->d->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cfit_diag_set(p->d, err, p->file, line, col, "%s", msg);
}

#define FAIL_AT(p, pos, ...) fail_lc((p), CFIT_EPARSE, (p)->line, col_of((p), (pos)), __VA_ARGS__)
#define FAIL_HERE(p, ...) FAIL_AT((p), (p)->pos, __VA_ARGS__)

/* The input ended where `expected` was due: name the innermost unclosed container and
 * where it opened, as that is what a truncated file most needs. */
static void fail_eof(parser *p, const char *expected)
{
    if (p->open)
        FAIL_HERE(p, "unexpected end of input: unclosed %s opened at %d:%d (expected %s)",
                  p->open->type == CFIT_JSON_OBJECT ? "object" : "array", p->open->line, p->open->col,
                  expected);
    else
        FAIL_HERE(p, "unexpected end of input (expected %s)", expected);
}

static void fail_oom(parser *p)
{
    fail_lc(p, CFIT_ENOMEM, p->line, col_of(p, p->pos), "out of memory");
}

/* "'x'" for a printable byte, "byte 0xNN" otherwise, "end of input" at the end. */
static const char *describe(int c, char out[16])
{
    if (c < 0)
        return "end of input";
    if (c >= 0x20 && c < 0x7f)
        snprintf(out, 16, "'%c'", c);
    else
        snprintf(out, 16, "byte 0x%02x", c);
    return out;
}

static void skip_ws(parser *p)
{
    for (; p->pos < p->len; p->pos++) {
        char c = p->text[p->pos];
        if (c == '\n') {
            p->line = p->line < INT_MAX ? p->line + 1 : INT_MAX;
            p->line_start = p->pos + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            break;
        }
    }
}

static cfit_json *new_node(parser *p, cfit_json_type type)
{
    cfit_json *v = calloc(1, sizeof *v);
    if (!v) {
        fail_oom(p);
        return NULL;
    }
    v->type = type;
    v->line = p->line;
    v->col = col_of(p, p->pos);
    return v;
}

/* ---- strings ----------------------------------------------------------- */

static int hex4(const parser *p, size_t pos, unsigned *out)
{
    unsigned v = 0;
    for (size_t i = 0; i < 4; i++) {
        int c = peek_at(p, pos + i), h;
        if (c >= '0' && c <= '9')
            h = c - '0';
        else if (c >= 'a' && c <= 'f')
            h = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            h = c - 'A' + 10;
        else
            return 0;
        v = v * 16 + (unsigned)h;
    }
    *out = v;
    return 1;
}

static void put_utf8(cfit_buf *b, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
    } else {
        u[0] = (char)(0xf0 | cp >> 18), u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        u[2] = (char)(0x80 | (cp >> 6 & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
    }
    buf_append(b, u, n);
}

/* A \u escape at p->pos (the backslash), with its low surrogate if it needs one. */
static int parse_unicode(parser *p, cfit_buf *b)
{
    size_t at = p->pos;
    unsigned cp, lo;
    if (!hex4(p, at + 2, &cp)) {
        FAIL_AT(p, at, "invalid \\u escape (expected 4 hex digits)");
        return -1;
    }
    p->pos += 6;
    if (cp >= 0xdc00 && cp <= 0xdfff) {
        FAIL_AT(p, at, "unpaired surrogate \\u%04x in string", cp);
        return -1;
    }
    if (cp >= 0xd800 && cp <= 0xdbff) {
        if (peek(p) != '\\' || peek_at(p, p->pos + 1) != 'u' || !hex4(p, p->pos + 2, &lo) ||
            lo < 0xdc00 || lo > 0xdfff) {
            FAIL_AT(p, at, "unpaired surrogate \\u%04x in string", cp);
            return -1;
        }
        p->pos += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    if (cp == 0) {
        FAIL_AT(p, at, "\\u0000 is not allowed in strings");
        return -1;
    }
    put_utf8(b, cp);
    return 0;
}

/* An escape at p->pos (the backslash). */
static int parse_escape(parser *p, cfit_buf *b)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    int c = peek_at(p, p->pos + 1);
    if (c == 'u')
        return parse_unicode(p, b);
    const char *e = c > 0 ? strchr(from, c) : NULL;
    if (!e && c >= 0x20 && c < 0x7f) {
        FAIL_AT(p, p->pos, "invalid escape '\\%c' in string", c);
        return -1;
    }
    if (!e) {
        FAIL_AT(p, p->pos, "invalid escape: '\\' followed by byte 0x%02x in string", c);
        return -1;
    }
    buf_append(b, &to[e - from], 1);
    p->pos += 2;
    return 0;
}

/* A string at p->pos (the opening quote); returns it malloc'd, or NULL on error. */
static char *parse_string(parser *p)
{
    size_t open = p->pos++;
    cfit_buf b;
    cfit_buf_init(&b);
    for (;;) {
        size_t run = p->pos;
        int c;
        size_t k = 1;
        while ((c = peek(p)) >= 0x20 && c != '"' && c != '\\' &&
               (c < 0x80 || (k = cfit__utf8_len(p->text + p->pos, p->len - p->pos)) > 0))
            p->pos += c < 0x80 ? 1 : k;
        buf_append(&b, p->text + run, p->pos - run);
        if (c == '"') {
            p->pos++;
            if (cfit_buf_ok(&b))
                return b.data;
            fail_oom(p);
            break;
        }
        if (c == '\\' && peek_at(p, p->pos + 1) >= 0) {
            if (parse_escape(p, &b) < 0)
                break;
        } else if (c < 0 || c == '\n' || c == '\\') {
            FAIL_AT(p, open, "unterminated string");
            break;
        } else if (c >= 0x80) {
            FAIL_HERE(p, "invalid UTF-8 byte 0x%02x in string (JSON text must be UTF-8, RFC 8259 section 8.1)", c);
            break;
        } else {
            FAIL_HERE(p, "control character 0x%02x in string (write it as \\u%04x)", c, c);
            break;
        }
    }
    cfit_buf_fini(&b);
    return NULL;
}

/* ---- numbers and literals ---------------------------------------------- */

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static size_t skip_digits(const parser *p, size_t i)
{
    while (is_digit(peek_at(p, i)))
        i++;
    return i;
}

/* End offset of the number at p->pos per the JSON grammar, or 0 after an error. */
static size_t scan_number(parser *p)
{
    size_t i = p->pos + (peek(p) == '-');
    if (!is_digit(peek_at(p, i))) {
        FAIL_AT(p, i, "expected a digit after '-'");
        return 0;
    }
    if (peek_at(p, i) == '0' && is_digit(peek_at(p, i + 1))) {
        FAIL_AT(p, i, "leading zeros are not allowed in numbers");
        return 0;
    }
    i = skip_digits(p, i);
    if (peek_at(p, i) == '.') {
        if (!is_digit(peek_at(p, ++i))) {
            FAIL_AT(p, i, "expected a digit after '.'");
            return 0;
        }
        i = skip_digits(p, i);
    }
    if (peek_at(p, i) == 'e' || peek_at(p, i) == 'E') {
        i++;
        if (peek_at(p, i) == '+' || peek_at(p, i) == '-')
            i++;
        if (!is_digit(peek_at(p, i))) {
            FAIL_AT(p, i, "expected a digit in the exponent");
            return 0;
        }
        i = skip_digits(p, i);
    }
    return i;
}

/* strtod over text[pos, end), copied so strtod cannot run past len. */
static int convert_number(parser *p, size_t end, double *out)
{
    char small[64], *s = small;
    size_t n = end - p->pos;
    if (n >= sizeof small && !(s = malloc(n + 1))) {
        fail_oom(p);
        return -1;
    }
    memcpy(s, p->text + p->pos, n);
    s[n] = '\0';
    char *stop;
    *out = strtod(s, &stop);
    int ok = stop == s + n;
    if (s != small)
        free(s);
    if (!ok || !isfinite(*out)) {
        FAIL_HERE(p, ok ? "number out of range" : "malformed number");
        return -1;
    }
    return 0;
}

static cfit_json *parse_number(parser *p)
{
    size_t end = scan_number(p);
    double v;
    if (!end || convert_number(p, end, &v) < 0)
        return NULL;
    cfit_json *node = new_node(p, CFIT_JSON_NUMBER);
    if (node)
        node->number = v;
    p->pos = end;
    return node;
}

static cfit_json *parse_literal(parser *p)
{
    static const struct { const char *word; cfit_json_type type; int boolean; } lits[] = {
        {"true", CFIT_JSON_BOOL, 1}, {"false", CFIT_JSON_BOOL, 0}, {"null", CFIT_JSON_NULL, 0}
    };
    for (size_t i = 0; i < sizeof lits / sizeof lits[0]; i++) {
        size_t n = strlen(lits[i].word);
        if (p->len - p->pos >= n && !memcmp(p->text + p->pos, lits[i].word, n)) {
            cfit_json *v = new_node(p, lits[i].type);
            if (v)
                v->boolean = lits[i].boolean;
            p->pos += n;
            return v;
        }
    }
    FAIL_HERE(p, "invalid literal (expected true, false or null)");
    return NULL;
}

/* ---- containers -------------------------------------------------------- */

static cfit_json *parse_value(parser *p, int depth);

static cfit_json *parse_array_in(parser *p, int depth)
{
    cfit_json *arr = new_node(p, CFIT_JSON_ARRAY);
    size_t cap = 0;
    if (!arr)
        return NULL;
    p->open = arr;
    p->pos++;
    skip_ws(p);
    if (peek(p) == ']') {
        p->pos++;
        return arr;
    }
    for (;;) {
        cfit_json *item = parse_value(p, depth);
        if (!item)
            break;
        if (cfit__grow(&arr->items, &cap, arr->n + 1, sizeof *arr->items)) {
            cfit_json_free(item);
            fail_oom(p);
            break;
        }
        arr->items[arr->n++] = item;
        skip_ws(p);
        int c = peek(p);
        p->pos += (c == ',' || c == ']');
        if (c == ']')
            return arr;
        if (c < 0) {
            fail_eof(p, "',' or ']'");
            break;
        }
        if (c != ',') {
            FAIL_HERE(p, "expected ',' or ']' after array element");
            break;
        }
        skip_ws(p);
        if (peek(p) == ']') {
            FAIL_HERE(p, "trailing comma before ']'");
            break;
        }
    }
    cfit_json_free(arr);
    return NULL;
}

/* Open-addressing set of member indexes (stored plus one), for duplicate keys. */
typedef struct keyset {
    size_t *slots;
    size_t cap;   /* a power of two, or 0 */
} keyset;

static size_t hash_key(const char *s)
{
    uint64_t h = 14695981039346656037ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (size_t)h;
}

/* The slot holding key, or the empty slot where it would go. */
static size_t *keyset_slot(const keyset *ks, const cfit_json *obj, const char *key)
{
    size_t i = hash_key(key) & (ks->cap - 1);
    while (ks->slots[i] && strcmp(obj->members[ks->slots[i] - 1].key, key))
        i = (i + 1) & (ks->cap - 1);
    return &ks->slots[i];
}

/* Add member obj->n - 1, growing (and rehashing) at half load; 0 on failure. */
static int keyset_add(keyset *ks, const cfit_json *obj)
{
    if (obj->n * 2 > ks->cap) {
        size_t cap = ks->cap ? ks->cap * 2 : 16;
        size_t *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return 0;
        free(ks->slots);
        ks->slots = slots;
        ks->cap = cap;
        for (size_t i = 0; i + 1 < obj->n; i++)
            *keyset_slot(ks, obj, obj->members[i].key) = i + 1;
    }
    *keyset_slot(ks, obj, obj->members[obj->n - 1].key) = obj->n;
    return 1;
}

/* One "key": value at p->pos (the key's quote), appended to obj. */
static int parse_member(parser *p, cfit_json *obj, size_t *cap, keyset *ks, int depth)
{
    int line = p->line, col = col_of(p, p->pos);
    char *key = parse_string(p);
    if (!key)
        return -1;
    if (ks->cap && *keyset_slot(ks, obj, key)) {
        fail_lc(p, CFIT_EPARSE, line, col, "duplicate key '%.*s%s'", SHOW_MAX, key,
                strlen(key) > SHOW_MAX ? "..." : "");
        free(key);
        return -1;
    }
    skip_ws(p);
    if (peek(p) < 0) {
        fail_eof(p, "':'");
        free(key);
        return -1;
    }
    if (peek(p) != ':') {
        FAIL_HERE(p, "expected ':' after object key");
        free(key);
        return -1;
    }
    p->pos++;
    skip_ws(p);
    cfit_json *value = parse_value(p, depth);
    if (!value || cfit__grow(&obj->members, cap, obj->n + 1, sizeof *obj->members)) {
        if (value)
            fail_oom(p);
        cfit_json_free(value);
        free(key);
        return -1;
    }
    obj->members[obj->n++] = (cfit_json_member){key, line, col, value};
    if (!keyset_add(ks, obj)) {
        fail_oom(p);
        return -1;
    }
    return 0;
}

static cfit_json *parse_object_in(parser *p, int depth)
{
    cfit_json *obj = new_node(p, CFIT_JSON_OBJECT);
    keyset ks = {NULL, 0};
    size_t cap = 0;
    if (!obj)
        return NULL;
    p->open = obj;
    p->pos++;
    skip_ws(p);
    int c = peek(p);
    if (c == '}') {
        p->pos++;
        return obj;
    }
    for (;;) {
        if (c < 0) {
            fail_eof(p, obj->n ? "a string key" : "a string key or '}'");
            break;
        }
        if (c != '"') {
            FAIL_HERE(p, obj->n ? "expected a string key" : "expected a string key or '}'");
            break;
        }
        if (parse_member(p, obj, &cap, &ks, depth) < 0)
            break;
        skip_ws(p);
        c = peek(p);
        p->pos += (c == ',' || c == '}');
        if (c == '}') {
            free(ks.slots);
            return obj;
        }
        if (c < 0) {
            fail_eof(p, "',' or '}'");
            break;
        }
        if (c != ',') {
            FAIL_HERE(p, "expected ',' or '}' after object member");
            break;
        }
        skip_ws(p);
        if ((c = peek(p)) == '}') {
            FAIL_HERE(p, "trailing comma before '}'");
            break;
        }
    }
    free(ks.slots);
    cfit_json_free(obj);
    return NULL;
}

/* An array or object at p->pos, with p->open naming it while it is read. */
static cfit_json *parse_container(parser *p, int depth)
{
    const cfit_json *outer = p->open;
    cfit_json *v = peek(p) == '[' ? parse_array_in(p, depth) : parse_object_in(p, depth);
    p->open = outer;
    return v;
}

/* A value at p->pos (whitespace already skipped); depth counts enclosing containers. */
static cfit_json *parse_value(parser *p, int depth)
{
    int c = peek(p);
    char shown[16];
    if ((c == '[' || c == '{') && depth >= CFIT_JSON_MAX_DEPTH) {
        FAIL_HERE(p, "nesting deeper than %d levels", CFIT_JSON_MAX_DEPTH);
        return NULL;
    }
    if (c == '[' || c == '{')
        return parse_container(p, depth + 1);
    if (c == '-' || is_digit(c))
        return parse_number(p);
    if (c == 't' || c == 'f' || c == 'n')
        return parse_literal(p);
    if (c == '"') {
        cfit_json *v = new_node(p, CFIT_JSON_STRING);
        if (v && !(v->string = parse_string(p))) {
            free(v);
            v = NULL;
        }
        return v;
    }
    if (c < 0)
        fail_eof(p, "a value");
    else
        FAIL_HERE(p, "unexpected %s (expected a value)", describe(c, shown));
    return NULL;
}

/* ---- public ------------------------------------------------------------ */

cfit_json *cfit_json_parse(const char *text, size_t len, const char *file,
                             int *err, cfit_diag *d)
{
    parser p = {text ? text : "", text ? len : 0, 0, 0, 1, file, d, CFIT_EOK, NULL};
    if (p.len >= 3 && !memcmp(p.text, "\xef\xbb\xbf", 3))   /* a UTF-8 byte order mark */
        p.pos = 3;
    skip_ws(&p);
    cfit_json *root = parse_value(&p, 0);
    if (root) {
        skip_ws(&p);
        if (p.pos < p.len) {
            char shown[16];
            FAIL_HERE(&p, "unexpected %s after the JSON value",
                      describe(peek(&p), shown));
            cfit_json_free(root);
            root = NULL;
        }
    }
    if (err)
        *err = root ? CFIT_EOK : p.err;
    return root;
}

void cfit_json_free(cfit_json *v)
{
    if (!v)
        return;
    for (size_t i = 0; v->type == CFIT_JSON_ARRAY && i < v->n; i++)
        cfit_json_free(v->items[i]);
    for (size_t i = 0; v->type == CFIT_JSON_OBJECT && i < v->n; i++) {
        free(v->members[i].key);
        cfit_json_free(v->members[i].value);
    }
    free(v->items);
    free(v->members);
    free(v->string);
    free(v);
}

const cfit_json_member *cfit_json_member_get(const cfit_json *obj, const char *key)
{
    if (!obj || obj->type != CFIT_JSON_OBJECT || !key)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (!strcmp(obj->members[i].key, key))
            return &obj->members[i];
    return NULL;
}

const cfit_json *cfit_json_get(const cfit_json *obj, const char *key)
{
    const cfit_json_member *m = cfit_json_member_get(obj, key);
    return m ? m->value : NULL;
}

const char *cfit_json_type_name(cfit_json_type t)
{
    static const char *const names[] = {"null", "boolean", "number", "string", "array",
                                        "object"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

void cfit_buf_key_number(cfit_buf *b, const char *key, double v, int comma)
{
    cfit_buf_printf(b, "%s\"%s\": ", comma ? ", " : "", key);
    cfit_buf_json_number(b, v);
}

void cfit_buf_key_string(cfit_buf *b, const char *key, const char *v, int comma)
{
    cfit_buf_printf(b, "%s\"%s\": ", comma ? ", " : "", key);
    cfit_buf_json_string(b, v);
}

void cfit_buf_key_opt(cfit_buf *b, const char *key, int have, double v)
{
    if (have)
        cfit_buf_key_number(b, key, v, 1);
    else
        cfit_buf_printf(b, ", \"%s\": null", key);
}
