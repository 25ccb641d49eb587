/* layer_pattern.c - Megatron-LM's per-layer pattern expressions ("([0]*3+[1]*58)").
 *
 * --moe-layer-freq (and its siblings) take either an integer or a Python list expression that
 * Megatron-LM evaluates with eval() after a character whitelist (megatron/training/arguments.py,
 * _eval_pattern at Megatron-LM d98e8a6: only ',', digits, '[', ']', '(', ')', '+' and '*').  This
 * is a small evaluator of exactly that language, with Python's meaning: list + list concatenates,
 * list * int and int * list repeat, int + int and int * int are arithmetic, "(a, b)" is a tuple
 * (not a list), decimal integers other than zero may not start with 0 (a SyntaxError).  Lists are
 * capped at CFIT__PATTERN_MAX elements (a clusterfit limit; no model has that many layers).
 */
#include "core/check_internal.h"

#include <stdlib.h>
#include <string.h>

#define NUM_MAX (1L << 20)

typedef struct pval {
    int is_list;
    long num;
    int *items;
    size_t n;
} pval;

typedef struct pparser {
    const char *s;
    size_t i;
    const char *err;   /* first error; the position is i */
    int depth;         /* open '(' and '[' */
} pparser;

#define DEPTH_MAX 200  /* CPython's parser refuses deeper nesting ("too many nested parentheses") */

static void pv_free(pval *v)
{
    free(v->items);
    v->items = NULL;
    v->n = 0;
}

static int fail(pparser *p, const char *msg)
{
    if (!p->err)
        p->err = msg;
    return -1;
}

static int list_reserve(pparser *p, pval *v, size_t n)
{
    if (n > CFIT__PATTERN_MAX)
        return fail(p, "the list is longer than clusterfit's limit of 65536 layers");
    int *items = realloc(v->items, (n ? n : 1) * sizeof *items);
    if (!items)
        return fail(p, "out of memory");
    v->items = items;
    return 0;
}

static int parse_expr(pparser *p, pval *out);

static int parse_number(pparser *p, pval *out)
{
    size_t start = p->i;
    long v = 0;
    while (p->s[p->i] >= '0' && p->s[p->i] <= '9') {
        v = v * 10 + (p->s[p->i++] - '0');
        if (v > NUM_MAX)
            return fail(p, "a number is larger than 1048576");
    }
    if (p->s[start] == '0' && v != 0)
        return p->i = start, fail(p, "leading zeros in a decimal integer are a Python syntax error");
    *out = (pval){0, v, NULL, 0};
    return 0;
}

/* '[' [expr (',' expr)* [',']] ']': every element an integer. */
static int parse_list(pparser *p, pval *out)
{
    *out = (pval){1, 0, NULL, 0};
    p->i++;
    while (p->s[p->i] != ']') {
        pval e = {0, 0, NULL, 0};
        if (parse_expr(p, &e)) {
            pv_free(&e);
            return -1;
        }
        if (e.is_list) {
            pv_free(&e);
            return fail(p, "a list inside the list: its elements must be 0 or 1");
        }
        if (list_reserve(p, out, out->n + 1))
            return -1;
        out->items[out->n++] = (int)e.num;
        if (p->s[p->i] == ',')
            p->i++;
        else if (p->s[p->i] != ']')
            return fail(p, p->s[p->i] ? "expected ',' or ']'" : "unclosed '['");
    }
    p->i++;
    return 0;
}

static int parse_group(pparser *p, pval *out)
{
    p->i++;
    if (parse_expr(p, out))
        return -1;
    if (p->s[p->i] == ',')
        return fail(p, "a tuple, not a list: Megatron-LM needs a list");
    if (p->s[p->i] != ')')
        return fail(p, p->s[p->i] ? "expected ')'" : "unclosed '('");
    p->i++;
    return 0;
}

static int parse_atom(pparser *p, pval *out)
{
    char ch = p->s[p->i];
    if (ch >= '0' && ch <= '9')
        return parse_number(p, out);
    if (ch != '[' && ch != '(')
        return fail(p, ch ? "expected a number, '[' or '('" : "the expression ends early");
    if (++p->depth > DEPTH_MAX)
        return fail(p, "brackets nested more than 200 deep (Python: too many nested parentheses)");
    int rc = ch == '[' ? parse_list(p, out) : parse_group(p, out);
    p->depth--;
    return rc;
}

/* a * b: repetition of a list by an integer, or a product of integers. */
static int times(pparser *p, pval *a, pval *b)
{
    if (a->is_list && b->is_list)
        return fail(p, "a list times a list (Python: TypeError)");
    if (!a->is_list && !b->is_list) {
        if (a->num && b->num > NUM_MAX / a->num)
            return fail(p, "a number is larger than 1048576");
        a->num *= b->num;
        return 0;
    }
    if (!a->is_list) {
        pval t = *a;
        *a = *b;
        *b = t;
    }
    size_t n = a->n, k = (size_t)b->num;
    if (k && n > CFIT__PATTERN_MAX / k)
        return fail(p, "the list is longer than clusterfit's limit of 65536 layers");
    if (list_reserve(p, a, n * k))
        return -1;
    for (size_t r = 1; r < k; r++)
        memcpy(a->items + r * n, a->items, n * sizeof *a->items);
    a->n = n * k;
    return 0;
}

static int plus(pparser *p, pval *a, pval *b)
{
    if (a->is_list != b->is_list)
        return fail(p, "a list plus a number (Python: TypeError)");
    if (!a->is_list) {
        a->num += b->num;
        return a->num > NUM_MAX ? fail(p, "a number is larger than 1048576") : 0;
    }
    if (list_reserve(p, a, a->n + b->n))
        return -1;
    if (b->n)
        memcpy(a->items + a->n, b->items, b->n * sizeof *b->items);
    a->n += b->n;
    return 0;
}

/* term ('+' term)*, term = atom ('*' atom)*. */
static int parse_binary(pparser *p, pval *out, char op)
{
    if (op == '*' ? parse_atom(p, out) : parse_binary(p, out, '*'))
        return -1;
    while (p->s[p->i] == op) {
        p->i++;
        pval rhs = {0, 0, NULL, 0};
        int rc = op == '*' ? parse_atom(p, &rhs) : parse_binary(p, &rhs, '*');
        if (!rc)
            rc = op == '*' ? times(p, out, &rhs) : plus(p, out, &rhs);
        pv_free(&rhs);
        if (rc)
            return -1;
    }
    return 0;
}

static int parse_expr(pparser *p, pval *out)
{
    return parse_binary(p, out, '+');
}

const char *cfit__layer_pattern_eval(const char *s, int **items, size_t *n, size_t *at)
{
    *items = NULL;
    *n = 0;
    *at = strspn(s, "0123456789,[]()+*");
    if (s[*at])
        return "invalid pattern: Megatron-LM allows only digits, ',', '[', ']', '(', ')', '+' and '*'";
    pparser p = {s, 0, NULL, 0};
    pval v = {0, 0, NULL, 0};
    if (!parse_expr(&p, &v) && s[p.i])
        fail(&p, "unexpected character");
    if (!p.err && !v.is_list)
        fail(&p, "a number, not a list");
    *at = p.i;
    if (p.err) {
        pv_free(&v);
        return p.err;
    }
    *items = v.items;
    *n = v.n;
    return NULL;
}
