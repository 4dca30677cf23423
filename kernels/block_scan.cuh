/*
 * block_scan.cuh -- prefix sums over a warp and over a thread block, shared
 * by the radix sort's digit passes (the scan of a tile's digit counts) and
 * quicksort (phase one's step offsets, the split rounds' pivots, offsets
 * and scatter).
 */
#ifndef GPUSORT_BLOCK_SCAN_CUH
#define GPUSORT_BLOCK_SCAN_CUH

#include <stdint.h>

/* Inclusive scan of the lanes' a over one warp (Kogge-Stone, shuffles). */
__device__ __forceinline__ uint32_t
warp_inclusive_scan(uint32_t a, int lane)
{
	uint32_t	incl = a;

	for (int o = 1; o < 32; o <<= 1)
	{
		uint32_t	y = __shfl_up_sync(0xffffffffu, incl, o);

		if (lane >= o)
			incl += y;
	}
	return incl;
}

/* Exclusive scan of the lanes' a over one warp; *total gets the sum. */
__device__ __forceinline__ uint32_t
warp_exclusive_scan_lanes(uint32_t a, int lane, uint32_t *total)
{
	const uint32_t incl = warp_inclusive_scan(a, lane);

	*total = __shfl_sync(0xffffffffu, incl, 31);
	return incl - a;
}

/* Exclusive scan of x[0 .. 31] over one warp, in place; returns the total. */
__device__ __forceinline__ uint32_t
warp_exclusive_scan(uint32_t *x, int lane)
{
	uint32_t	total;

	x[lane] = warp_exclusive_scan_lanes(x[lane], lane, &total);
	return total;
}

/*
 * Exclusive scan of x over a block of WARPS warps: wsum is WARPS words of
 * shared memory for the warps' sums.  Has a barrier, so every thread of the
 * block calls it; wsum may be reused only after another barrier.  Where
 * total is not NULL it gets the block's sum.
 */
template <int WARPS>
__device__ __forceinline__ uint32_t
block_exclusive_scan(uint32_t x, uint32_t *wsum, uint32_t *total = NULL)
{
	const int	lane = threadIdx.x & 31,
				warp = threadIdx.x >> 5;
	const uint32_t incl = warp_inclusive_scan(x, lane);

	if (lane == 31)
		wsum[warp] = incl;
	__syncthreads();

	uint32_t	before = incl - x;

	for (int w = 0; w < warp; w++)
		before += wsum[w];
	if (total != NULL)
	{
		uint32_t	all = 0;

#pragma unroll
		for (int w = 0; w < WARPS; w++)
			all += wsum[w];
		*total = all;
	}
	return before;
}

#endif
