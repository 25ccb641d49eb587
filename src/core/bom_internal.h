/* bom_internal.h - prices shared by the bill of materials (bom.c) and the network comparison
 * (netsize.c); internal to libclusterfit. */
#ifndef CFIT_BOM_INTERNAL_H
#define CFIT_BOM_INTERNAL_H

#include <stddef.h>
#include "clusterfit/bom.h"

/* The catalog price PREFIX NAME into *v; 1 when it exists, else 0 and the key is written to
 * missing (when missing is not NULL and still empty). */
int cfit__price_of(const cfit_catalog *c, const char *prefix, const char *name, double *v, char *missing, size_t n);
/* Switches, optics and cables of a tree into b's *_usd fields (b->missing names the first
 * absent price); 1 when every price exists. */
int cfit__price_fabric(const cfit_catalog *c, const cfit_fabric *f, const cfit_switch *sw, const cfit_fattree *t,
                       cfit_bom *b);

#endif
