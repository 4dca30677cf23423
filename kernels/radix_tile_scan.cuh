/*
 * radix_tile_scan.cuh -- a onesweep tile's shared memory and its digit
 * counts: the tile's counts and warp starts (a scan over the warps'
 * counters), their publication in the tile status words, and the decoupled
 * look-back over earlier tiles' counts for the tile's global offsets.
 */
#ifndef GPUSORT_RADIX_TILE_SCAN_CUH
#define GPUSORT_RADIX_TILE_SCAN_CUH

#include <stdint.h>
#include <cuda_runtime.h>

#include "block_scan.cuh"
#include "first_read_kernels.cuh"
#include "radix_config.cuh"
#include "radix_pass_types.cuh"
#include "warp_primitives.cuh"

/*
 * Shared memory of one onesweep block: digit starts and bases, misc words,
 * the per-warp 16-bit counters (later the keys), and the payloads (earlier,
 * with RANK_ATOMIC_OR, the per-warp digit match words).
 */
template <typename P>
__host__ __device__ constexpr size_t
onesweep_counter_bytes()
{
	return (size_t) P::WARPS * P::BINS * (P::WARP_STARTS_FIRST ? sizeof(uint32_t) : sizeof(uint16_t));
}

template <typename P>
__host__ __device__ constexpr size_t
onesweep_vals_bytes()
{
	return P::RANK == RANK_ATOMIC_OR &&
		(size_t) P::WARPS * P::BINS > (size_t) P::TILE
		? (size_t) P::WARPS * P::BINS * sizeof(uint32_t) : (size_t) P::TILE * sizeof(uint32_t);
}

/* PAIRS_ONLY: the counters, or what the packed pairs need beyond the payloads' region. */
template <typename P, typename K>
__host__ __device__ constexpr size_t
onesweep_keys_bytes()
{
	return P::PAIRS_ONLY
		? ((size_t) P::TILE * sizeof(uint64_t) > onesweep_counter_bytes<P>() + onesweep_vals_bytes<P>()
		   ? (size_t) P::TILE * sizeof(uint64_t) - onesweep_vals_bytes<P>() : onesweep_counter_bytes<P>())
		: (size_t) P::TILE * sizeof(K) > onesweep_counter_bytes<P>()
		? (size_t) P::TILE * sizeof(K) : onesweep_counter_bytes<P>();
}

template <typename P, typename K>
__host__ __device__ constexpr size_t
onesweep_smem_bytes()
{
	return (2 * P::BINS + 64) * sizeof(uint32_t) + onesweep_keys_bytes<P, K>() +
		onesweep_vals_bytes<P>() + (P::ASYNC_VALS ? (size_t) P::TILE * sizeof(uint32_t) : 0);
}

/* misc words of the records (onesweep_records) in a onesweep block, past the warps' sums */
#define ONESWEEP_MISC_RECORDS	48

/* The block's shared memory, carved as onesweep_smem_bytes() describes. */
template <typename P, typename K>
struct onesweep_shared
{
	uint32_t   *block_start;	/* BINS: the tile's digit counts (EARLY_COUNTS), else its next digits' */
	uint32_t   *digit_base;		/* BINS: global place of a digit's first key, less its start */
	uint32_t   *misc;			/* [0] tile, [1..WARPS] warp sums */
	uint16_t   *warp_count;		/* WARPS * BINS counters while ranking ... */
	uint32_t   *warp_place;		/* ... (32-bit with WARP_STARTS_FIRST) ... */
	K		   *tile_keys;		/* ... then the keys in digit order */
	uint32_t   *match_words;	/* WARPS * BINS lane masks while ranking (RANK_ATOMIC_OR) ... */
	uint32_t   *tile_vals;		/* ... then the payloads in digit order */
	uint32_t   *staged_vals;	/* ASYNC_VALS: the tile's payloads in input order */

	__device__ __forceinline__ onesweep_shared(unsigned char *smem)
	{
		block_start = reinterpret_cast<uint32_t *>(smem);
		digit_base = block_start + P::BINS;
		misc = digit_base + P::BINS;
		warp_count = reinterpret_cast<uint16_t *>(misc + 64);
		warp_place = misc + 64;
		tile_keys = reinterpret_cast<K *>(misc + 64);
		tile_vals = reinterpret_cast<uint32_t *>(
			(unsigned char *) (misc + 64) + onesweep_keys_bytes<P, K>());
		match_words = tile_vals;
		staged_vals = reinterpret_cast<uint32_t *>(
			(unsigned char *) tile_vals + onesweep_vals_bytes<P>());
	}
};

/* A tile's status word of a digit: its count, inclusive for the first tile. */
__device__ __forceinline__ void
tile_publish(uint32_t *status, uint32_t tile, int bins, int dg, uint32_t count)
{
	*(volatile uint32_t *) &status[(size_t) tile * bins + dg] =
		(tile == 0 ? TILE_STATUS_INCLUSIVE : TILE_STATUS_AGGREGATE) | count;
}

/*
 * The tile's count of each of this thread's digits (BPT: t * BPT + b),
 * summed over the warps' counters (T: 16- or 32-bit), into cnt, and
 * published where publish is set; returns their sum.
 */
template <typename P, typename T>
__device__ __forceinline__ uint32_t
tile_digit_counts(const T *warp_count, uint32_t *status, uint32_t tile, bool publish,
				  uint32_t (&cnt)[P::BINS_PER_THREAD])
{
	uint32_t	tsum = 0;

#pragma unroll
	for (int b = 0; b < P::BINS_PER_THREAD; b++)
	{
		const int	dg = threadIdx.x * P::BINS_PER_THREAD + b;
		uint32_t	run = 0;

		if (dg < P::BINS)
		{
#pragma unroll
			for (int w = 0; w < P::WARPS; w++)
				run += warp_count[w * P::BINS + dg];
			if (publish)
				tile_publish(status, tile, P::BINS, dg, run);
		}
		cnt[b] = run;
		tsum += run;
	}
	return tsum;
}

/*
 * Block-wide exclusive scan of the digit counts: each of this thread's
 * digits' first place in the tile, into bstart (tsum: the sum of cnt;
 * misc[1 .. WARPS]: the warps' sums).  With warp_count (T: 16- or 32-bit
 * counters) each warp's count of the digit becomes its first place in the
 * tile (warp_digit_starts).  Has a barrier.
 */
template <typename P, typename T>
__device__ __forceinline__ void
tile_digit_scan(uint32_t *misc, T *warp_count, uint32_t tsum,
				const uint32_t (&cnt)[P::BINS_PER_THREAD], uint32_t (&bstart)[P::BINS_PER_THREAD])
{
	const int	lane = threadIdx.x & 31,
				warp = threadIdx.x >> 5;
	uint32_t	incl = tsum;

	for (int o = 1; o < 32; o <<= 1)
	{
		uint32_t	v = __shfl_up_sync(0xffffffffu, incl, o);

		if (lane >= o)
			incl += v;
	}
	if (lane == 31)
		misc[1 + warp] = incl;
	__syncthreads();
	uint32_t	run = incl - tsum;

	for (int w = 0; w < warp; w++)
		run += misc[1 + w];
#pragma unroll
	for (int b = 0; b < P::BINS_PER_THREAD; b++)
	{
		const int	dg = threadIdx.x * P::BINS_PER_THREAD + b;

		bstart[b] = run;
		if (dg < P::BINS)
			warp_digit_starts<P::WARPS, P::BINS>(warp_count, dg, run);
		run += cnt[b];
	}
}

/*
 * tile_digit_counts and tile_digit_scan at once for a block of one thread a
 * digit (THREADS == BINS) and 16-bit warp counters: the first BINS / 2
 * threads take a pair of digits each, one 32-bit word (two counters) a
 * warp, so that the counts are read, and the warps' starts read and
 * written, by half the shared-memory instructions; each digit's start and
 * count then go to its own thread through digit_base (before the
 * look-back writes it).  Has three barriers.
 */
template <typename P>
__device__ __forceinline__ void
tile_pair_scan(uint32_t *misc, uint16_t *warp_count, uint32_t *digit_base, uint32_t *status,
			   uint32_t tile, bool publish, uint32_t (&cnt)[1], uint32_t (&bstart)[1])
{
	constexpr int PAIRS = P::BINS / 2;
	uint32_t   *pw = reinterpret_cast<uint32_t *>(warp_count);	/* [WARPS][PAIRS] */
	const int	t = threadIdx.x,
				lane = t & 31,
				warp = t >> 5;
	uint32_t	lo = 0,
				hi = 0;

	static_assert(P::THREADS == P::BINS && P::BINS % 64 == 0, "a thread a digit, whole warps of pairs");
	if (t < PAIRS)
	{
#pragma unroll
		for (int w = 0; w < P::WARPS; w++)
		{
			const uint32_t v = pw[w * PAIRS + t];

			lo += v & 0xffffu;
			hi += v >> 16;
		}
		if (publish)
		{
			tile_publish(status, tile, P::BINS, 2 * t, lo);
			tile_publish(status, tile, P::BINS, 2 * t + 1, hi);
		}
	}

	/* exclusive scan of the pairs' sums (threads past the pairs add nothing) */
	const uint32_t tsum = lo + hi;
	uint32_t	incl = tsum;

	for (int o = 1; o < 32; o <<= 1)
	{
		const uint32_t v = __shfl_up_sync(0xffffffffu, incl, o);

		if (lane >= o)
			incl += v;
	}
	if (lane == 31)
		misc[1 + warp] = incl;
	__syncthreads();
	if (t < PAIRS)
	{
		uint32_t	run = incl - tsum;

		for (int w = 0; w < warp; w++)
			run += misc[1 + w];

		uint32_t	at0 = run,
					at1 = run + lo;

		digit_base[2 * t] = at0;
		digit_base[2 * t + 1] = at1;
#pragma unroll
		for (int w = 0; w < P::WARPS; w++)
		{
			const uint32_t v = pw[w * PAIRS + t];

			pw[w * PAIRS + t] = at0 | at1 << 16;
			at0 += v & 0xffffu;
			at1 += v >> 16;
		}
	}
	__syncthreads();
	/* every key of the tile is counted (past a partial tile's end as the last digit) */
	const uint32_t first = digit_base[t],
				end = t + 1 < P::BINS ? digit_base[t + 1] : (uint32_t) P::TILE;

	__syncthreads();			/* read before the look-back writes digit_base */
	bstart[0] = first;
	cnt[0] = end - first;
}

/*
 * Decoupled look-back: keys of each of this thread's digits in all earlier
 * tiles, published as this tile's inclusive counts, and the digits' global
 * bases (digit_base[dg]: the global place of the digit's first key in the
 * tile, less its first place in the tile, bstart).  Each round reads a
 * window of earlier tiles at once (independent loads in flight together)
 * and adds them from the nearest back to the first one with an inclusive
 * count; an unpublished one ends the window and is read again.  A thread of
 * one digit walks alone; a thread of several (BPT > 1) walks them together,
 * so that their loads are in flight at once instead of one walk after
 * another (the one-digit form is kept apart: the shared form costs the
 * 8-bit policies registers).
 */
template <typename P>
__device__ __forceinline__ void
tile_look_back(uint32_t *digit_base, const uint32_t *__restrict__ global_start, uint32_t *status,
			   uint32_t tile, const uint32_t (&cnt)[P::BINS_PER_THREAD],
			   const uint32_t (&bstart)[P::BINS_PER_THREAD])
{
	constexpr int BINS = P::BINS;
	constexpr int BPT = P::BINS_PER_THREAD;
	const int	t = threadIdx.x;

	if constexpr (BPT == 1)
	{
		const int	dg = t;
		uint32_t	before = 0;

		if (dg < BINS)
		{
			if (tile > 0)
			{
				long		j = (long) tile - 1;
				bool		done = false;

				while (!done)
				{
					uint32_t	s[RADIX_LOOKBACK_WINDOW];
					int			used = 0;
					bool		stop = false;

#pragma unroll
					for (int w = 0; w < RADIX_LOOKBACK_WINDOW; w++)
						s[w] = j - w >= 0
							? *(volatile uint32_t *) &status[(size_t) (j - w) * BINS + dg]
							: TILE_STATUS_INCLUSIVE;
#pragma unroll
					for (int w = 0; w < RADIX_LOOKBACK_WINDOW; w++)
					{
						if (done || stop)
							continue;
						if (!(s[w] & (TILE_STATUS_AGGREGATE | TILE_STATUS_INCLUSIVE)))
						{
							stop = true;	/* not published yet */
							continue;
						}
						before += s[w] & TILE_STATUS_VALUE;
						used++;
						done = (s[w] & TILE_STATUS_INCLUSIVE) != 0;
					}
					j -= used;
				}
				*(volatile uint32_t *) &status[(size_t) tile * BINS + dg] =
					TILE_STATUS_INCLUSIVE | (before + cnt[0]);
			}
			digit_base[dg] = global_start[dg] + before - bstart[0];
		}
	}
	else
	{
		constexpr int WINDOW = RADIX_LOOKBACK_WINDOW / BPT > 2 ? RADIX_LOOKBACK_WINDOW / BPT : 2;
		uint32_t	before[BPT];
		long		j[BPT];
		bool		done[BPT],
					all_done = true;

#pragma unroll
		for (int b = 0; b < BPT; b++)
		{
			before[b] = 0;
			j[b] = (long) tile - 1;
			done[b] = tile == 0 || t * BPT + b >= BINS;
			all_done &= done[b];
		}
		while (!all_done)
		{
			uint32_t	s[BPT][WINDOW];

#pragma unroll
			for (int b = 0; b < BPT; b++)
#pragma unroll
				for (int w = 0; w < WINDOW; w++)
					s[b][w] = !done[b] && j[b] - w >= 0
						? *(volatile uint32_t *) &status[(size_t) (j[b] - w) * BINS + t * BPT + b]
						: TILE_STATUS_INCLUSIVE;
			all_done = true;
#pragma unroll
			for (int b = 0; b < BPT; b++)
			{
				int			used = 0;
				bool		stop = false;

#pragma unroll
				for (int w = 0; w < WINDOW; w++)
				{
					if (done[b] || stop)
						continue;
					if (!(s[b][w] & (TILE_STATUS_AGGREGATE | TILE_STATUS_INCLUSIVE)))
					{
						stop = true;	/* not published yet */
						continue;
					}
					before[b] += s[b][w] & TILE_STATUS_VALUE;
					used++;
					done[b] = (s[b][w] & TILE_STATUS_INCLUSIVE) != 0;
				}
				j[b] -= used;
				all_done &= done[b];
			}
		}
#pragma unroll
		for (int b = 0; b < BPT; b++)
		{
			const int	dg = t * BPT + b;

			if (dg >= BINS)
				continue;
			if (tile > 0)
				*(volatile uint32_t *) &status[(size_t) tile * BINS + dg] =
					TILE_STATUS_INCLUSIVE | (before[b] + cnt[b]);
			digit_base[dg] = global_start[dg] + before[b] - bstart[b];
		}
	}
}

#endif
