/* grow.c - geometric array growth with an overflow check (grow.h). */
#include "base/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfit/base.h"

#define GROW_FIRST 8   /* elements an empty array starts with */

size_t cfit__grow_cap(size_t cap, size_t need, size_t elem)
{
    if (elem == 0 || need > SIZE_MAX / elem)
        return 0;
    if (need <= cap)
        return cap;
    size_t c = cap ? cap : GROW_FIRST;
    while (c < need)
        c = c > SIZE_MAX / elem / 2 ? need : 2 * c;
    return c;
}

int cfit__grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
    void *arr;
    memcpy(&arr, arrp, sizeof arr);   /* *arrp is a T *: read it without a cast to void ** */
    if (arr && need <= *cap)
        return CFIT_EOK;
    size_t c = cfit__grow_cap(*cap, need ? need : 1, elem);
    void *q = c ? realloc(arr, c * elem) : NULL;
    if (!q)
        return CFIT_ENOMEM;
    memcpy(arrp, &q, sizeof q);
    *cap = c;
    return CFIT_EOK;
}
