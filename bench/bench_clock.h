/*
 * bench_clock.h -- the benchmarks' wall clock (C and C++).
 */
#ifndef GPUSORT_BENCH_CLOCK_H
#define GPUSORT_BENCH_CLOCK_H

#include <time.h>

/* Milliseconds on the monotonic clock. */
static inline double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#endif
