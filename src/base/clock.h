/* clock.h - the clocks every module times with (internal; the CLI has cfit_now_s in base.h). */
#ifndef CFIT_BASE_CLOCK_H
#define CFIT_BASE_CLOCK_H

struct timespec;

/* Seconds on CLOCK_MONOTONIC: only differences mean anything. */
double cfit__now(void);

/* Seconds since the Unix epoch (CLOCK_REALTIME): a timestamp to report, never to time with. */
double cfit__unix_s(void);

/* *ts = CLOCK_MONOTONIC now plus ms milliseconds: the absolute deadline pthread_cond_timedwait
 * takes on a condition variable set to CLOCK_MONOTONIC (pthread_condattr_setclock). */
void cfit__monotonic_after_ms(struct timespec *ts, int ms);

#endif
