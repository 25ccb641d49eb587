/* clock.c - the clocks every module times with (clock.h; cfit_now_s of base.h). */
#include "base/clock.h"
#include "clusterfit/base.h"

#include <time.h>

static double seconds_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double cfit__now(void)
{
    return seconds_of(CLOCK_MONOTONIC);
}

double cfit_now_s(void)
{
    return cfit__now();
}

double cfit__unix_s(void)
{
    return seconds_of(CLOCK_REALTIME);
}

void cfit__monotonic_after_ms(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    long ns = ts->tv_nsec + (long)(ms % 1000) * 1000000L;
    ts->tv_sec += ms / 1000 + ns / 1000000000L;
    ts->tv_nsec = ns % 1000000000L;
}
