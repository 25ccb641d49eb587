/* clock.c - the monotonic clock every module times with. */
#include "base/clock.h"

#include <time.h>

double cfit__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
