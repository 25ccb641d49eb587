/* report.h - the chart and HTML page writer (clusterfit/report.h) and the helpers its
 * unit tests check directly (internal to libclusterfit). */
#ifndef CFIT_REPORT_H
#define CFIT_REPORT_H

#include <stddef.h>
#include "clusterfit/report.h"

/* Okabe-Ito colour i (cycled), "#rrggbb". */
const char *cfit__palette(size_t i);
/* Tick-label style formatting of v into buf. */
const char *cfit__fmt_tick(char *buf, size_t n, double v, cfit_tick_fmt f);

#endif
