/*
 * block_scan.cuh -- prefix sums over a warp and over a thread block:
 * quicksort's (phase one's and phase two's step offsets, the split rounds'
 * pivots, offsets and scatter) and the radix sort's digit offsets (the
 * first read's summary, exclusive_scan_kernel, low_digit_offsets_kernel).
 * The radix pass keeps its own scan of a
 * tile's digit counts (tile_digit_scan in onesweep_kernels.cuh), whose
 * form this one was measured against.
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
 * Exclusive scan of x over a block of WARPS warps (wsum: WARPS words of
 * shared memory; barriers inside, so every thread calls it); *total gets
 * the block's sum.  The warps' sums are added predicated, all WARPS of
 * them unrolled.  One scan for this and the radix pass's tile_digit_scan
 * (a loop over the warps below this one, no total) was measured on the
 * H100 and dropped: quicksort 10-16% slower at 10^7 uniform, gaussian
 * and banded 32-bit keys, radix level within the run's drift
 * (bench/results/block_scan-h100.txt).
 */
template <int WARPS>
__device__ __forceinline__ uint32_t
block_exclusive_scan(uint32_t x, uint32_t *wsum, uint32_t *total)
{
	const int	lane = threadIdx.x & 31,
				warp = threadIdx.x >> 5;
	uint32_t	all,
				before = warp_exclusive_scan_lanes(x, lane, &all);

	if (lane == 0)
		wsum[warp] = all;
	__syncthreads();
	*total = 0;
	for (int w = 0; w < WARPS; w++)
	{
		before += w < warp ? wsum[w] : 0;
		*total += wsum[w];
	}
	return before;
}

#endif
