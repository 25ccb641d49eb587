/* grow.h - the one array-growth helper every module grows its arrays with (internal). */
#ifndef CFIT_BASE_GROW_H
#define CFIT_BASE_GROW_H

#include <stddef.h>

/* The capacity, in elements, an array of cap elements of elem bytes grows to so that it holds
 * need: cap itself when it already does, else cap doubled (8 when cap is 0) until it holds need.
 * 0 when need elements of elem bytes would not fit in a size_t. */
size_t cfit__grow_cap(size_t cap, size_t need, size_t elem);

/* Make room for need elements of elem bytes in the array *arrp (arrp is the address of the
 * array's pointer, a T **) of *cap elements: realloc'd to cfit__grow_cap()'s capacity, *arrp and
 * *cap updated.  0, or CFIT_ENOMEM on overflow or out of memory (*arrp and *cap unchanged). */
int cfit__grow(void *arrp, size_t *cap, size_t need, size_t elem);

#endif
