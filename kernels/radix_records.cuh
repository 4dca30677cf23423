/*
 * radix_records.cuh -- the records between the two passes of a plan over
 * key - min (onesweep_records, radix_pass_types.cuh): the table of the
 * groups' epochs and each second-pass tile's range of it, and the packing
 * of a key and its place into one word in the first pass.
 */
#ifndef GPUSORT_RADIX_RECORDS_CUH
#define GPUSORT_RADIX_RECORDS_CUH

#include <stdint.h>
#include <cuda_runtime.h>

#include "first_read_kernels.cuh"
#include "radix_config.cuh"
#include "radix_pass_types.cuh"

/*
 * Records (onesweep_records): every entry of the table its group's end
 * (start: the first pass's exclusive digit offsets, bins of them, n past
 * the last), before the first pass writes the real epochs' entries.
 */
static __global__ void
records_fill_kernel(uint32_t *table, const uint32_t *__restrict__ start, int bins, int e2_log,
					uint32_t n)
{
	const uint32_t entries = (uint32_t) bins << e2_log;

	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < entries;
		 i += gridDim.x * blockDim.x)
	{
		const uint32_t l = i >> e2_log;

		table[i] = l + 1 < (uint32_t) bins ? start[l + 1] : n;
	}
}

/* The last entry <= p of a nondecreasing table[0 .. m) whose first is <= p. */
__device__ __forceinline__ uint32_t
records_find(const uint32_t *table, uint32_t m, uint32_t p)
{
	uint32_t	lo = 0,
				hi = m;

	while (hi - lo > 1)
	{
		const uint32_t mid = (lo + hi) >> 1;

		if (table[mid] <= p)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * After the first pass of records: for each of the second pass's tiles
 * (tile rows), the entries of the table that its first and last place
 * fall under (the last entry <= the place).  A thread an entry i: the
 * places from table[i] up to the next entry (n after the last) fall under
 * it, and it writes the tiles whose first or last place lies there.  With
 * scan_counts (a block of RADIX_HIST_STRIDE threads), block 0 first turns
 * those counts into exclusive offsets (the second pass's, counted by the
 * first: exclusive_scan_kernel), so that one launch does both.
 */
static __global__ void __launch_bounds__(RADIX_HIST_STRIDE)
records_range_kernel(const uint32_t *__restrict__ table, uint32_t entries, uint32_t *tile_range,
					 uint32_t tiles, uint32_t tile_rows, uint32_t n, uint32_t *scan_counts)
{
	if (scan_counts != NULL && blockIdx.x == 0)
		block_counts_to_offsets(scan_counts[threadIdx.x], scan_counts);
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < entries; i += gridDim.x * blockDim.x)
	{
		const uint32_t lo = table[i],
					hi = i + 1 < entries ? table[i + 1] : n;

		if (lo >= hi)
			continue;			/* no place: a later entry holds the same value */
		for (uint32_t t = lo / tile_rows; t < tiles && t * tile_rows < hi; t++)
		{
			const uint32_t first = t * tile_rows;
			const uint32_t last = (n - first > tile_rows ? first + tile_rows : n) - 1;

			if (first >= lo)
				tile_range[2 * t] = i;
			if (last >= lo && last < hi)
				tile_range[2 * t + 1] = i;
		}
	}
}

/*
 * The records' first pass (onesweep_records) keeps a key and its place in
 * a word and a bit more, so that its 1,024 x 24 tile holds them in
 * registers: key - kmin (under 2^RECORDS_REL_BITS: a records plan's two
 * digits are at most RADIX_WIDE_BITS each) in the low bits, above it the
 * key's rank in its warp's digit while ranking (under 32 * ITEMS), then the
 * low bits of its place in the tile; the places' high bits
 * (RECORDS_PLACE_HI_BITS) go eight a word, records_place_words of them.
 */
#define RECORDS_REL_BITS		20
#define RECORDS_REL_MASK		((1u << RECORDS_REL_BITS) - 1)
#define RECORDS_PLACE_LO_BITS	(32 - RECORDS_REL_BITS)
#define RECORDS_PLACE_HI_BITS	3

static_assert(2 * RADIX_WIDE_BITS <= RECORDS_REL_BITS, "key - kmin of a records plan fits");

template <int ITEMS>
__host__ __device__ constexpr int
records_place_words()
{
	return (ITEMS + 7) / 8;
}

/* Item i's place (w: its word, phi: the high bits) */
template <int ITEMS>
__device__ __forceinline__ uint32_t
records_place(uint32_t w, const uint32_t (&phi)[records_place_words<ITEMS>()], int i)
{
	return (w >> RECORDS_REL_BITS) |
		((phi[i / 8] >> (RECORDS_PLACE_HI_BITS * (i % 8))) & ((1u << RECORDS_PLACE_HI_BITS) - 1))
		<< RECORDS_PLACE_LO_BITS;
}

/* Item i's word keeps key - kmin and takes place's low bits; phi (zero before) its high bits. */
template <int ITEMS>
__device__ __forceinline__ void
records_place_set(uint32_t &w, uint32_t (&phi)[records_place_words<ITEMS>()], int i,
				  uint32_t place)
{
	w = (w & RECORDS_REL_MASK) | place << RECORDS_REL_BITS;
	phi[i / 8] |= (place >> RECORDS_PLACE_LO_BITS) << (RECORDS_PLACE_HI_BITS * (i % 8));
}

#endif
