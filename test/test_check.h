/*
 * test_check.h -- the CHECK macro of the standalone test programs: counts
 * checks and failures, prints each failure with its place.
 */
#ifndef GPUSORT_TEST_CHECK_H
#define GPUSORT_TEST_CHECK_H

#include <stdio.h>

static int	failures = 0;
static int	checks = 0;

#define CHECK(cond, ...) \
	do { \
		checks++; \
		if (!(cond)) { \
			failures++; \
			printf("FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__); \
			printf("\n"); \
		} \
	} while (0)

#endif
