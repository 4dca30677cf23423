/*
 * warp_primitives.cuh -- warp-level building blocks shared by the radix
 * sort and quicksort: the range of a warp's keys, and warp-level
 * multi-split (the place of each lane's key among the keys of its digit),
 * on a rank policy with named fields RANK, LEADER_CLEARS and BITS.
 */
#ifndef GPUSORT_WARP_PRIMITIVES_CUH
#define GPUSORT_WARP_PRIMITIVES_CUH

#include <stdint.h>
#include <cuda_runtime.h>

/* How a warp finds the peers of a lane: the lanes whose digit equals its own. */
enum onesweep_rank
{
	RANK_MATCH_ANY = 0,			/* __match_any_sync */
	RANK_BALLOTS = 1,			/* one ballot per digit bit */
	RANK_ATOMIC_OR = 2			/* lane bits OR-ed into a shared word per digit */
};

/* A warp's range of keys: the lanes' lo/hi reduced across the warp (to every lane). */
template <typename K>
__device__ __forceinline__ void
warp_reduce_range(K *lo, K *hi)
{
	for (int o = 16; o > 0; o >>= 1)
	{
		*lo = min(*lo, (K) __shfl_xor_sync(0xffffffffu, *lo, o));
		*hi = max(*hi, (K) __shfl_xor_sync(0xffffffffu, *hi, o));
	}
}

/*
 * Merge a warp's range of keys into [*mn, *mx]: reduced across the warp,
 * applied by lane 0 with atomics (32- or 64-bit).
 */
template <typename K>
__device__ __forceinline__ void
warp_merge_range(K *mn, K *mx, K lo, K hi)
{
	warp_reduce_range(&lo, &hi);
	if ((threadIdx.x & 31) != 0)
		return;
	if constexpr (sizeof(K) == 8)
	{
		atomicMin((unsigned long long *) mn, (unsigned long long) lo);
		atomicMax((unsigned long long *) mx, (unsigned long long) hi);
	}
	else
	{
		atomicMin((unsigned int *) mn, (unsigned int) lo);
		atomicMax((unsigned int *) mx, (unsigned int) hi);
	}
}

/*
 * The lanes of the warp whose digit is d (d < BINS, one call per lane).
 * RANK_ATOMIC_OR: mw is the warp's row of match words, zero between calls;
 * every peer clears the word here (the same zero), or with LEADER_CLEARS
 * the caller's leader lane does (warp_digit_rank).
 */
template <typename P>
__device__ __forceinline__ uint32_t
warp_peers(uint32_t d, uint32_t *mw)
{
	const int	lane = threadIdx.x & 31;
	uint32_t	peers;

	if (P::RANK == RANK_ATOMIC_OR)
	{
		atomicOr(&mw[d], 1u << lane);
		__syncwarp();
		peers = mw[d];
		__syncwarp();
		if (!P::LEADER_CLEARS)
		{
			mw[d] = 0;
			__syncwarp();
		}
	}
	else if (P::RANK == RANK_BALLOTS)
	{
		/* lanes whose digit agrees with ours in every bit */
		peers = 0xffffffffu;
#pragma unroll
		for (int bit = 0; bit < P::BITS; bit++)
		{
			uint32_t	set = __ballot_sync(0xffffffffu, (d >> bit) & 1);

			peers &= ((d >> bit) & 1) ? set : ~set;
		}
	}
	else
		peers = __match_any_sync(0xffffffffu, d);
	return peers;
}

/*
 * Warp-level multi-split: the place of this lane's key (digit d < BINS)
 * among the keys of digit d that its warp has ranked so far, this call's
 * lower lanes first; packed: the warp's 16-bit counters, two a word (with
 * PACKED; otherwise a 32-bit counter a digit), which the digit's leader
 * lane advances by the call's count (mw as warp_peers).  The onesweep pass
 * and quicksort's split scatter rank with it.
 */
template <typename P, bool PACKED = true>
__device__ __forceinline__ uint32_t
warp_digit_rank(uint32_t d, uint32_t *mw, uint32_t *packed)
{
	constexpr bool leader_clears = P::RANK == RANK_ATOMIC_OR && P::LEADER_CLEARS;
	const int	lane = threadIdx.x & 31;
	const uint32_t peers = warp_peers<P>(d, mw);
	const int	leader = 31 - __clz(peers);
	uint32_t	before = 0;

	if (lane == leader)
	{
		if (leader_clears)
			mw[d] = 0;			/* every peer has read it */
		if (PACKED)
		{
			const uint32_t sh16 = (d & 1) * 16;

			before = (atomicAdd(&packed[d >> 1], __popc(peers) << sh16) >> sh16) & 0xffffu;
		}
		else
			before = atomicAdd(&packed[d], (uint32_t) __popc(peers));
	}
	if (leader_clears)
		__syncwarp();			/* cleared before the warp's next OR */
	before = __shfl_sync(0xffffffffu, before, leader);
	return before + __popc(peers & ((1u << lane) - 1));
}

/*
 * After the warps' counts: warp_count[w * BINS + dg] (warp w's keys of
 * digit dg; T: 16- or 32-bit counters) becomes warp w's first place for the
 * digit in the block's order, the digit starting at at (< 2^16).  One
 * thread a digit.
 */
template <int WARPS, int BINS, typename T>
__device__ __forceinline__ void
warp_digit_starts(T *warp_count, int dg, uint32_t at)
{
#pragma unroll
	for (int w = 0; w < WARPS; w++)
	{
		const uint32_t c = warp_count[w * BINS + dg];

		warp_count[w * BINS + dg] = (T) at;
		at += c;
	}
}

#endif
