/* clock.h - the monotonic clock every module times with (internal). */
#ifndef CFIT_BASE_CLOCK_H
#define CFIT_BASE_CLOCK_H

/* Seconds on CLOCK_MONOTONIC: only differences mean anything. */
double cfit__now(void);

#endif
