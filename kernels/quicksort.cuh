/*
 * quicksort.cuh -- GPU-Quicksort (Cederman and Tsigas) of (key, 32-bit
 * payload) pairs, 32- and 64-bit keys.  Not stable.
 *
 * First, where an even sample of 256 keys holds at most QS_PIVOTS_MAX
 * distinct keys, one multi-pivot round: those keys are the pivots, and one
 * count pass and one scatter pass (many blocks, each step's room in a
 * bucket taken with one atomic add) put every pair into one of the 2k + 1
 * buckets below, equal to and between the k pivots -- the equal ones are
 * finished, so keys of few distinct values are sorted in one pass, and
 * skewed keys lose their common values at once; the rest go on below.
 * Split rounds (phase one on today's hardware): every sequence longer than
 * 16,384 pairs is cut, many blocks per sequence, into up to 511 buckets
 * around up to 255 pivots -- quantiles of a sample of its keys, searched as
 * a level-order tree in shared memory -- by a count pass (which keeps each
 * pair's bucket), a scan of each block's counts (its first place in each
 * bucket, no atomics) and a scatter through shared memory in bucket order,
 * its tasks cut so that the scatter's resident blocks take them in whole
 * waves;
 * the equal buckets are finished, small neighbouring buckets are joined
 * into leaves of up to QS_LEAF pairs (sent to phase two at once), long
 * ones are split again.
 * Phase one (two-way, what the split rounds leave or all of it
 * without them): many blocks share each sequence longer than n / QS_MAXSEQ,
 * round after round until none is left (skewed keys take more rounds, not
 * longer leaves for a single block).  The pivot is the midpoint of the
 * sequence's minimum and maximum; a block walks its section a step at a
 * time and takes room for the step's smaller and larger-or-equal keys at
 * the two ends of the sequence with atomic adds (no host round trip per
 * block), writing each side coalesced; the blocks also gather each side's
 * minimum and maximum for the next pivots.  A sequence whose keys are all
 * equal is finished (one value costs one read, as do fewer than 2^24 keys
 * in order, which the first read finds; those left in the scratch
 * buffer are copied back, all of a round in one launch).
 * Phase two, a batch of leaves at a time (the leaf queue: each batch sent
 * and its sorts launched while the host builds the next): leaves of up to
 * QS_LEAF_MAX pairs are sorted by a bitonic network of 512 to QS_LEAF_MAX
 * places (the smallest that holds the leaf) that keeps 2 to 8 places a
 * thread in registers, every comparator putting the smaller pair lower so
 * that the warps holding only padding sit the network out; longer ones, in batches of their own, by one block per
 * sequence with an explicit stack, pushing the larger side first so that
 * the smaller is sorted next; median-of-three pivot; a count pass, then a
 * three-way scatter (smaller | equal | larger) into the other buffer, the
 * equal run being finished; pieces that fit in shared memory are finished
 * by a bitonic sort there (bitonic.cuh).
 */
#ifndef GPUSORT_QUICKSORT_CUH
#define GPUSORT_QUICKSORT_CUH

#include <stdint.h>
#include <cuda_runtime.h>

#include "gpusort_kernels.h"

/* Most pivots of the multi-pivot round (distinct keys of its sample). */
#define QS_PIVOTS_MAX	32

struct quicksort_stats
{
	int			phase_one_rounds;	/* partition rounds with many blocks per sequence */
	int			sequences;			/* handed to phase two */
};

/* Device scratch memory a sort of n pairs needs. */
size_t		quicksort_temp_bytes(size_t n, int key_bytes);

/*
 * Sort n pairs: keys[0]/vals[0] in (vals_are_positions: payload i is i and
 * vals[0] is overwritten with it); *out says which of the two buffers holds
 * the result (0 only when all keys are equal, or when fewer than 2^24 keys
 * are found in order by the first read, which compares every key with the
 * next: nothing moves), the other is scratch afterwards.  known_range,
 * when not NULL, is the
 * keys' [minimum, maximum] already read (the auto choice's look), which saves
 * the look at the keys; without it, from 2^24 keys on, a sample of 256
 * keys comes first, and the range is read only where the sample has at
 * most QS_PIVOTS_MAX distinct keys (one value or few: the cases that need
 * it).  Synchronises
 * with the stream once for that look and once per phase-one round (the
 * multi-pivot round counted as one).
 */
template <typename K>
gpusort_status quicksort_sort_pairs(K *keys[2], uint32_t *vals[2], size_t n,
									bool vals_are_positions, void *temp, size_t temp_bytes,
									cudaStream_t stream, quicksort_stats *stats, int *out,
									const unsigned long long *known_range = NULL);

/* Free the pinned host buffers quicksort keeps between sorts. */
void		quicksort_release_host_buffers(void);

/*
 * The distinct keys of an even sample of 256 of n >= 256 keys (the
 * multi-pivot round's), and whether the sample is in order (1 ascending,
 * -1 descending, 0 neither), for a choice made before any read of the
 * keys: one small kernel and a round trip.  temp: at least 1 KB of
 * scratch.
 */
template <typename K>
gpusort_status quicksort_sample_distinct(const K *keys, size_t n, void *temp,
										 cudaStream_t stream, int *distinct, int *order);

#endif
