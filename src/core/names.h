/* names.h - catalog names as people type them: comparison that ignores case and separators, and
 * suggestions ranked by a distance that knows a vendor's product family (names.c). */
#ifndef CFIT_CORE_NAMES_H
#define CFIT_CORE_NAMES_H

#include <stddef.h>

/* 1 when a and b are the same name ignoring case, spaces, hyphens and underscores
 * ("H100 SXM" == "h100-sxm" == "h100sxm"); dots are kept ("qwen2.5" != "qwen25"). */
int cfit__name_same(const char *a, const char *b);

/* The candidate a user most likely meant by name, NULL when none is close.  A candidate of the
 * same family and generation (the leading letters and first number: "llama3" of "llama3-8b",
 * "h200" of "h200-sxm") comes first, then one of the same family ("llama", "h", "mi"), then, only
 * when no candidate shares the family, any; within a rank the least edit distance of the
 * normalised names, then the closer length.  "llama3-7b" -> "llama3-8b" (not "llama2-7b"); a
 * name of one vendor's family never suggests another family's ("h201" never gives "b200"). */
const char *cfit__name_suggest(const char *name, const char *const *candidates, size_t n);

/* A comma list of names from names[0 .. count-1] into a bit mask (bit i for names[i], exact
 * match): 0, else -1 with *bad_at the offset of the first name not among them (an empty item too). */
int cfit__name_list_mask(const char *list, const char *const *names, int count, unsigned *mask, size_t *bad_at);
/* The comma list of mask's names in names' order, in buf ("" for 0). */
char *cfit__name_list_str(unsigned mask, const char *const *names, int count, char *buf, size_t n);

#endif
