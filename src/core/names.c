/* names.c - name comparison and vendor-aware suggestions for catalog lookups (names.h). */
#include "core/names.h"
#include "clusterfit/base.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_NORM_MAX 128

static int is_separator(char ch)
{
    return ch == ' ' || ch == '-' || ch == '_';
}

/* Lower case without separators, into out (at most NAME_NORM_MAX - 1 characters). */
static size_t normalise(const char *s, char *out)
{
    size_t n = 0;
    for (; *s && n + 1 < NAME_NORM_MAX; s++)
        if (!is_separator(*s))
            out[n++] = (char)tolower((unsigned char)*s);
    out[n] = '\0';
    return n;
}

int cfit__name_same(const char *a, const char *b)
{
    char x[NAME_NORM_MAX], y[NAME_NORM_MAX];
    normalise(a, x);
    normalise(b, y);
    return strcmp(x, y) == 0;
}

/* The leading letters (family) and, with digits, the first number (generation) of s, lower case:
 * "llama3-8b" -> family "llama", generation "llama3"; "GB200 NVL72" -> "gb", "gb200". */
static void family_of(const char *s, char *family, char *generation)
{
    size_t n = 0;
    while (*s && is_separator(*s))
        s++;
    while (s[n] && isalpha((unsigned char)s[n]) && n + 1 < NAME_NORM_MAX)
        n++;
    for (size_t i = 0; i < n; i++)
        family[i] = (char)tolower((unsigned char)s[i]);
    family[n] = '\0';
    size_t g = n;
    while (s[g] && (isdigit((unsigned char)s[g]) || (s[g] == '.' && isdigit((unsigned char)s[g + 1]))) &&
           g + 1 < NAME_NORM_MAX)
        g++;
    for (size_t i = 0; i < g; i++)
        generation[i] = (char)tolower((unsigned char)s[i]);
    generation[g] = '\0';
}

/* Rank of a candidate: 0 same generation, 1 same family, 2 neither. */
static int rank_of(const char *fam, const char *gen, const char *c)
{
    char cf[NAME_NORM_MAX], cg[NAME_NORM_MAX];
    family_of(c, cf, cg);
    if (gen[0] && strcmp(gen, cg) == 0 && strlen(gen) > strlen(fam))
        return 0;
    return fam[0] && strcmp(fam, cf) == 0 ? 1 : 2;
}

const char *cfit__name_suggest(const char *name, const char *const *candidates, size_t n)
{
    char fam[NAME_NORM_MAX], gen[NAME_NORM_MAX], want[NAME_NORM_MAX], have[NAME_NORM_MAX];
    if (!name || !candidates)
        return NULL;
    family_of(name, fam, gen);
    size_t wlen = normalise(name, want), limit = wlen / 3 > 2 ? wlen / 3 : 2;
    const char *best = NULL;
    int best_rank = 3;
    size_t best_d = 0, best_gap = 0;
    for (int pass = 0; pass < 2 && !best; pass++)    /* pass 1: another family, when none shares it */
        for (size_t i = 0; i < n; i++) {
            if (!candidates[i])
                continue;
            int r = rank_of(fam, gen, candidates[i]);
            size_t hlen = normalise(candidates[i], have);
            size_t d = strncmp(have, want, wlen) == 0 && wlen >= 2 ? 0 : cfit_edit_distance(want, have);
            size_t gap = hlen > wlen ? hlen - wlen : wlen - hlen;
            if ((r == 2) != (pass == 1) || (r > 0 && d > limit))
                continue;
            if (!best || r < best_rank || (r == best_rank && (d < best_d || (d == best_d && gap < best_gap))))
                best = candidates[i], best_rank = r, best_d = d, best_gap = gap;
        }
    return best;
}

int cfit__name_list_mask(const char *list, const char *const *names, int count, unsigned *mask, size_t *bad_at)
{
    unsigned m = 0;
    for (const char *p = list;;) {
        size_t n = strcspn(p, ",");
        int found = -1;
        for (int i = 0; i < count && found < 0; i++)
            if (n == strlen(names[i]) && strncmp(p, names[i], n) == 0)
                found = i;
        if (found < 0) {
            *bad_at = (size_t)(p - list);
            return -1;
        }
        m |= 1u << found;
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    *mask = m;
    return 0;
}

char *cfit__name_list_str(unsigned mask, const char *const *names, int count, char *buf, size_t n)
{
    size_t used = 0;
    if (n)
        buf[0] = '\0';
    for (int i = 0; i < count && n; i++)
        if (mask & (1u << i)) {
            int w = snprintf(buf + used, n - used, "%s%s", used ? "," : "", names[i]);
            if (w < 0 || (size_t)w >= n - used)
                break;
            used += (size_t)w;
        }
    return buf;
}
