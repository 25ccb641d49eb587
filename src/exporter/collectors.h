/* collectors.h - the collectors' vtables and the small file helpers they share (internal). */
#ifndef CFIT_COLLECTORS_H
#define CFIT_COLLECTORS_H

#include <stdint.h>
#include <stdio.h>
#include "clusterfit/exporter.h"
#include "base/clock.h"

extern const cfit_collector_ops cfit__collector_gpu;
extern const cfit_collector_ops cfit__collector_netdev;
extern const cfit_collector_ops cfit__collector_infiniband;
extern const cfit_collector_ops cfit__collector_disk;
extern const cfit_collector_ops cfit__collector_job;

/* Read a small file into buf (NUL-terminated, trailing whitespace removed).  0, or -1 when
 * it cannot be opened or read. */
int cfit__read_text(const char *path, char *buf, size_t n);
/* Read a file holding one unsigned decimal number.  0, or -1 (missing, "N/A", junk). */
int cfit__read_u64(const char *path, uint64_t *out);
/* Declare the family (if new) and add one sample; the first error wins. */
int cfit__emit(cfit_expo *e, const char *name, cfit_metric_type type, const char *help,
               const char *const *labels, double value);
/* Names of the entries of dir (no "." / ".."), sorted, malloc'ed array of malloc'ed
 * strings; *n their count.  0, or -1 when dir cannot be read (then *names is NULL). */
int cfit__list_dir(const char *dir, char ***names, size_t *n);
void cfit__free_names(char **names, size_t n);

#endif
