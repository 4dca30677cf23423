/*
 * quicksort_config.cuh -- GPU-Quicksort's block shapes, round limits and
 * size thresholds, which its parts share (quicksort.cu: phase one, phase
 * two and the host's rounds; quicksort_multi.cuh, quicksort_split.cuh,
 * quicksort_leaf.cuh).  The constants of one part alone sit with its code.
 */
#ifndef GPUSORT_QUICKSORT_CONFIG_CUH
#define GPUSORT_QUICKSORT_CONFIG_CUH

#include "bitonic.cuh"			/* BITONIC_BLOCK_PAIRS */
#include "quicksort.cuh"		/* QS_PIVOTS_MAX */

#define QS_THREADS		256
#define QS_WARPS		(QS_THREADS / 32)
#define QS_ITEMS		4			/* phase two: QS_ITEMS * QS_WARPS == 32, one warp scans a step */
#define QS_STEP			(QS_THREADS * QS_ITEMS)
#define QS1_ITEMS		16			/* phase one: pairs a thread moves per step */
#define QS1_STEP		(QS_THREADS * QS1_ITEMS)
#define QS_MAXSEQ		1024		/* phase one stops at this many sequences ... */
#define QS_MAXSEQ_LIMIT	65536		/* ... or the tests' (gpusort_test_hooks), up to this */
#define QS_TASKS_PER_SM	8			/* phase-one sections per SM and round ... */
#define QS_TASKS_PER_SM_LIMIT 64	/* ... or the tests', up to this */
#define QS_EXTRA_TASKS	16384		/* tasks of a round: <= sequences + 64 * SMs (256 SMs) */
#define QS_STACK		64
#define QS_COPY_ENGINE_MIN (1 << 20)	/* one-value sequences copied by cudaMemcpyAsync */
#define QS_LEAF			BITONIC_BLOCK_PAIRS
#define QS_BUCKETS_MAX	(2 * QS_PIVOTS_MAX + 1)
#define QS_MULTI_ITEMS	8			/* multi-pivot round: pairs a thread moves per step */
#define QS_MULTI_STEP	(QS_THREADS * QS_MULTI_ITEMS)
#define QS_MULTI_BLOCKS_PER_SM 4
#define QS_MULTI_MIN_N	(4 * QS_LEAF)	/* smaller inputs: no multi-pivot round */
/*
 * More keys: a sample decides whether their range is read.  Fewer: the
 * first read (range and sample) as the auto choice takes it, whose time
 * the range read's saving would not repay there (measured on the H100: at
 * 2^20 and 10^7 keys of few values a forced quicksort that skipped it was
 * up to 11% faster than auto's first read and quicksort).
 */
#define QS_SAMPLE_FIRST_MIN_N (1 << 24)
#define QS_LEAF_BATCH	32768		/* leaves phase two gets a launch (fewer at the end) ... */
#define QS_LEAF_BATCH_LIMIT (1 << 20)	/* ... or the tests', up to this */

#endif
