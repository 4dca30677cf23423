/*
 * gpusort_test_hooks.h -- the test-only door into the kernel library.
 *
 * Test programs (test/kernel_test.c), benchmarks and test modules
 * (test/test_modules/) use it; the extension itself never includes this
 * header, so in a production backend every hook keeps its zero value and
 * the library behaves as if they did not exist.  A hook is read when the
 * path it steers runs; set the hooks before the first sort (some choices,
 * such as the bitonic grid and the first read's summary buffer, are made
 * once a process).  Plain C, like gpusort_kernels.h.
 */
#ifndef GPUSORT_TEST_HOOKS_H
#define GPUSORT_TEST_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "gpusort_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the radix sort holds key and row position between passes. */
typedef enum gpusort_test_pairs
{
	GPUSORT_TEST_PAIRS_BY_DATA = 0,	/* as the library chooses (production) */
	GPUSORT_TEST_PAIRS_APART,		/* keys and positions in separate arrays */
	GPUSORT_TEST_PAIRS_PACKED		/* packed into one 64-bit word where they fit */
} gpusort_test_pairs;

/* When the radix sort's two-pass plans carry records. */
typedef enum gpusort_test_records
{
	GPUSORT_TEST_RECORDS_BY_SIZE = 0,	/* from RADIX_RECORDS_MIN_N rows (production) */
	GPUSORT_TEST_RECORDS_OFF,			/* never */
	GPUSORT_TEST_RECORDS_ALWAYS			/* at every size */
} gpusort_test_records;

typedef struct gpusort_test_hooks_t
{
	/*
	 * Fault injection: called before each checked CUDA call of the library
	 * (device opening, allocation, copy, kernel launch check, stream wait)
	 * with the call's source text.  A nonzero return is the cudaError_t
	 * value the call then fails with, without being made.
	 */
	int			(*cuda_fault) (const char *call);

	/*
	 * Emulated devices: a block gets at most this many bytes of shared
	 * memory (0: what the device gives; at least 48 KB, the default every
	 * device gives).  The radix sort's policies then follow, as on a
	 * device that gives that much (48 KB: an sm_75-class device).
	 */
	size_t		block_smem_limit;

	gpusort_test_pairs pairs;
	gpusort_test_records records;

	/*
	 * Copies between the device and host ranges of at least this many
	 * bytes page-lock the range for the copy (0: 4 MB, as in production;
	 * 1: every copy, so that a test reaches the register and unregister
	 * calls with small inputs).
	 */
	size_t		lock_min_bytes;

	/* The first read's summary comes back by a copy, not mapped memory. */
	int			first_read_by_copy;

	/* Bitonic: one kernel per global stride instead of the one-grid kernel. */
	int			bitonic_stride_kernels;

	/* Quicksort: the paper's two-way phase one only, no split rounds. */
	int			quicksort_no_split;

	/*
	 * Quicksort tuning (0: the constant in quicksort_config.cuh): leaves
	 * sent to the device at a time, sequences a phase-one round splits,
	 * tasks per SM of a round.  Clamped to the constants' limits.
	 */
	long		quicksort_leaf_batch;
	long		quicksort_max_sequences;
	long		quicksort_tasks_per_sm;

	/*
	 * Quicksort stage timing: called after each stage with the stream
	 * synchronised (what = NULL once at the start of a sort), with the
	 * stage's name, its item count and the milliseconds since the last call.
	 */
	void		(*quicksort_stage) (const char *what, size_t count, double ms);
} gpusort_test_hooks_t;

extern gpusort_test_hooks_t gpusort_test_hooks;

/*
 * Sort n (key, payload) pairs held in host memory, stably by key, in place
 * (tests and benchmarks).
 */
gpusort_status gpusort_sort_pairs_u32(uint32_t *keys, uint32_t *payloads,
									  size_t n, gpusort_timing *timing);

#ifdef __cplusplus
}
#endif

#endif
