/*
 * onesweep_kernels.cuh -- the kernels of the onesweep LSD radix sort
 * (Merrill and Grimshaw's digit passes with Adinets and Merrill's single
 * sweep: one kernel per digit place, tile offsets by decoupled look-back).
 *
 *   histogram_kernel, exclusive_scan_kernel  (first_read_kernels.cuh) the
 *                     digit counts of every place and their start offsets;
 *   onesweep_kernel   one per digit place: a block takes the next tile,
 *                     ranks its keys by digit with warp-level multi-split
 *                     (match_any, 16-bit per-warp counters), publishes its
 *                     digit counts, looks back over earlier tiles' published
 *                     counts for its global offsets, and scatters keys, then
 *                     payloads, through shared memory so that runs of equal
 *                     digits are written contiguously.
 *
 * A digit is ((key - kmin) >> shift) & mask; kmin is 0 for the plain
 * 8-bit-place plan and the minimum key for a plan over the key range.
 * Stable: a warp ranks a contiguous slice of the tile, item by item and
 * lane by lane, and warps are combined in order.
 *
 * This file holds the pass (onesweep_tile, onesweep_kernel); its phases
 * are radix_tile_scan.cuh (counts, look-back), radix_tile_out.cuh
 * (scatter) and radix_records.cuh (records), on warp_primitives.cuh and
 * block_primitives.cuh.
 */
#ifndef GPUSORT_ONESWEEP_KERNELS_CUH
#define GPUSORT_ONESWEEP_KERNELS_CUH

#include <stdint.h>
#include <type_traits>
#include <cuda_runtime.h>

#include "block_primitives.cuh"
#include "first_read_kernels.cuh"
#include "radix_config.cuh"
#include "radix_pass_types.cuh"
#include "radix_records.cuh"
#include "radix_tile_out.cuh"
#include "radix_tile_scan.cuh"
#include "warp_primitives.cuh"

/*
 * A tile's keys into registers (k), warp-striped within the warp's slice;
 * where packed pairs come in and the payloads are held, those into pv.
 * Past a partial tile's end, 0.  The records' first pass (FOLD) holds
 * key - kmin.
 */
template <typename P, typename K, bool FULL, int IO>
static __device__ __forceinline__ void
onesweep_tile_load(K (&k)[P::ITEMS], uint32_t (&pv)[onesweep_held_payloads<P, IO>()],
				   const K *__restrict__ keys_in, size_t tile_base, uint32_t slice,
				   uint32_t valid, K kmin)
{
	constexpr int ITEMS = P::ITEMS;
	constexpr bool IN_PACKED = onesweep_io_packed_in(IO);
	constexpr bool FOLD = IO == ONESWEEP_IO_TO_RECORDS;

#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		if constexpr (onesweep_held_payloads<P, IO>() > 1)
		{
			const uint64_t it = FULL || slice + i * 32 < valid
				? reinterpret_cast<const uint64_t *>(keys_in)[tile_base + slice + i * 32] : 0;

			k[i] = (K) (it >> 32);
			pv[i] = (uint32_t) it;
		}
		else if constexpr (IN_PACKED)
			k[i] = FULL || slice + i * 32 < valid
				? (K) reinterpret_cast<const uint32_t *>(keys_in)[2 * (tile_base + slice + i * 32) + 1]
				: (K) 0;
		else if constexpr (FOLD)
			k[i] = FULL || slice + i * 32 < valid ? keys_in[tile_base + slice + i * 32] - kmin : (K) 0;
		else
			k[i] = FULL || slice + i * 32 < valid ? keys_in[tile_base + slice + i * 32] : (K) 0;
	}
}

/*
 * The digit of a tile's item i (key ki: onesweep_tile's k[i]); past the end
 * the last digit, so that they rank after every real key.
 */
template <typename P, typename K, bool FULL, int IO>
static __device__ __forceinline__ uint32_t
onesweep_item_digit(K ki, int i, uint32_t slice, uint32_t valid, K dbase, int shift,
					uint32_t mask, const onesweep_records &rec)
{
	constexpr bool FOLD = IO == ONESWEEP_IO_TO_RECORDS;

	return FULL || slice + i * 32 < valid
		? (IO == ONESWEEP_IO_FROM_RECORDS ? ((uint32_t) ki >> rec.idx_bits) & mask
		   : digit_of(FOLD ? (K) ((uint32_t) ki & RECORDS_REL_MASK) : ki, dbase, shift, mask))
		: (uint32_t) (P::BINS - 1);
}

/*
 * A tile's places where the policy counts before it ranks (WARP_STARTS_FIRST,
 * CUB's order): each warp's digit counts first (published as the tile's),
 * made each warp's first place of a digit in the tile, so that the
 * ranking's counter adds give every key its place (r); then the look-back.
 */
template <typename P, typename K, bool FULL, int IO>
static __device__ __forceinline__ void
onesweep_places_counted_first(const onesweep_shared<P, K> &sh, const K (&k)[P::ITEMS],
							  tile_places<P::ITEMS, onesweep_io_packs_places(IO)> &r,
							  const uint32_t *__restrict__ global_start, uint32_t *status,
							  uint32_t tile, uint32_t slice, uint32_t valid, K dbase, int shift,
							  uint32_t mask, const onesweep_records &rec, int warp)
{
	constexpr int BINS = P::BINS;
	constexpr int ITEMS = P::ITEMS;
	constexpr int BPT = P::BINS_PER_THREAD;
	uint32_t	cnt[BPT],		/* the tile's keys of this thread's digits */
				bstart[BPT];	/* their first places in the tile */
	uint32_t   *mw = sh.match_words + warp * BINS;
	const auto	item_digit = [&](int i) {
		return onesweep_item_digit<P, K, FULL, IO>(k[i], i, slice, valid, dbase, shift, mask, rec);
	};

	static_assert(IO != ONESWEEP_IO_TO_RECORDS && IO != ONESWEEP_IO_FROM_RECORDS,
				  "records: policies that rank before they count");
#pragma unroll
	for (int i = 0; i < ITEMS; i++)
		atomicAdd(&sh.warp_place[warp * BINS + item_digit(i)], 1u);
	__syncthreads();
	tile_digit_scan<P>(sh.misc, sh.warp_place,
					   tile_digit_counts<P>(sh.warp_place, status, tile, true, cnt), cnt, bstart);
	__syncthreads();
#pragma unroll
	for (int i = 0; i < ITEMS; i++)
		r.set(i, warp_digit_rank<P, false>(item_digit(i), mw, sh.warp_place + warp * BINS));
	tile_look_back<P>(sh.digit_base, global_start, status, tile, cnt, bstart);
}

/*
 * A tile's ranking where the policy ranks before it counts: the next
 * pass's digits counted (count_next) or the tile's digit counts published
 * first (EARLY_COUNTS), then each key's rank in its warp's digit by
 * warp-level multi-split with 16-bit counters packed in pairs (r, with
 * the digit << 16 unpacked; the records' first pass folds it into k).
 */
template <typename P, typename K, bool FULL, int IO>
static __device__ __forceinline__ void
onesweep_rank_tile(const onesweep_shared<P, K> &sh, K (&k)[P::ITEMS],
				   tile_places<P::ITEMS, onesweep_io_packs_places(IO)> &r, uint32_t *status,
				   uint32_t tile, bool count_next, int next_shift, uint32_t next_mask,
				   uint32_t slice, uint32_t valid, K dbase, int shift, uint32_t mask,
				   const onesweep_records &rec, int t, int warp)
{
	constexpr int BINS = P::BINS;
	constexpr int ITEMS = P::ITEMS;
	constexpr int BPT = P::BINS_PER_THREAD;
	constexpr bool FOLD = IO == ONESWEEP_IO_TO_RECORDS;
	const auto	item_digit = [&](int i) {
		return onesweep_item_digit<P, K, FULL, IO>(k[i], i, slice, valid, dbase, shift, mask, rec);
	};

	/* the next pass's digits counted (onesweep_kernel: next_counts) */
	if constexpr (!P::EARLY_COUNTS)
		if (count_next)
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
				if (FULL || slice + i * 32 < valid)
					atomicAdd(&sh.block_start[digit_of(k[i], dbase, next_shift, next_mask)], 1u);
	if (P::EARLY_COUNTS)
	{
		/* the tile's digit counts first, so that later tiles' look-back need not wait */
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
			atomicAdd(&sh.block_start[item_digit(i)], 1u);
		__syncthreads();
#pragma unroll
		for (int b = 0; b < BPT; b++)
		{
			const int	dg = t * BPT + b;

			if (dg < BINS)
				tile_publish(status, tile, BINS, dg, sh.block_start[dg]);
		}
	}

	/* rank: warp-level multi-split with 16-bit counters packed in pairs */
	uint32_t   *packed = reinterpret_cast<uint32_t *>(sh.warp_count + warp * BINS);
	uint32_t   *mw = sh.match_words + warp * BINS;

#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		const uint32_t d = item_digit(i);
		const uint32_t rank = warp_digit_rank<P>(d, mw, packed);

		if constexpr (FOLD)
		{
			k[i] |= rank << RECORDS_REL_BITS;
			/* folded now: the rank is not held apart through the ranking (nvcc would) */
			asm volatile("" : "+r"(k[i]));
		}
		else
			r.set(i, rank | (onesweep_io_packs_places(IO) ? 0 : d << 16));
	}
}

/*
 * A ranked tile's places (onesweep_rank_tile's ranks): per digit, counts
 * over the warps, published, their starts in the tile and each warp's
 * first place in the tile; the look-back; and each key's local place (r,
 * or the records' first pass's k and phi), so that a key's place takes one
 * shared read.  A tile that begins a records epoch notes where the epoch's
 * keys of each digit begin.
 */
template <typename P, typename K, bool FULL, int IO>
static __device__ __forceinline__ void
onesweep_tile_places(const onesweep_shared<P, K> &sh, K (&k)[P::ITEMS],
					 tile_places<P::ITEMS, onesweep_io_packs_places(IO)> &r,
					 uint32_t (&phi)[records_place_words<P::ITEMS>()],
					 const uint32_t *__restrict__ global_start, uint32_t *status, uint32_t tile,
					 uint32_t slice, uint32_t valid, K dbase, int shift, uint32_t mask,
					 const onesweep_records &rec, int t, int warp)
{
	constexpr int BINS = P::BINS;
	constexpr int ITEMS = P::ITEMS;
	constexpr int BPT = P::BINS_PER_THREAD;
	constexpr bool FOLD = IO == ONESWEEP_IO_TO_RECORDS;
	uint32_t	cnt[BPT],		/* the tile's keys of this thread's digits */
				bstart[BPT];	/* their first places in the tile */
	const auto	item_digit = [&](int i) {
		return onesweep_item_digit<P, K, FULL, IO>(k[i], i, slice, valid, dbase, shift, mask, rec);
	};

	if constexpr (P::PAIR_SCAN)
		tile_pair_scan<P>(sh.misc, sh.warp_count, sh.digit_base, status, tile,
						  !P::EARLY_COUNTS, cnt, bstart);
	else
		tile_digit_scan<P>(sh.misc, sh.warp_count,
						   tile_digit_counts<P>(sh.warp_count, status, tile, !P::EARLY_COUNTS,
												cnt),
						   cnt, bstart);
	tile_look_back<P>(sh.digit_base, global_start, status, tile, cnt, bstart);
	if constexpr (IO == ONESWEEP_IO_TO_RECORDS)
	{
		/* a tile that begins an epoch: where the epoch's keys of each digit begin */
		if (sh.misc[ONESWEEP_MISC_RECORDS] == 0)
#pragma unroll
			for (int b = 0; b < BPT; b++)
			{
				const int	dg = t * BPT + b;

				if (dg < BINS)
					rec.table[((uint32_t) dg << rec.e2_log) + sh.misc[ONESWEEP_MISC_RECORDS + 1]] =
						sh.digit_base[dg] + bstart[b];
			}
	}
	__syncthreads();

	/* local place of every key in the tile (the digit kept from the ranking, or taken again) */
#pragma unroll
	for (int i = 0; i < ITEMS; i++)
		if constexpr (FOLD)
			records_place_set<ITEMS>(k[i], phi, i,
									 ((uint32_t) k[i] >> RECORDS_REL_BITS) +
									 sh.warp_count[warp * BINS + item_digit(i)]);
		else if constexpr (onesweep_io_packs_places(IO))
			r.set(i, r[i] + sh.warp_count[warp * BINS + item_digit(i)]);
		else
			r.set(i, (r[i] & 0xffffu) + sh.warp_count[warp * BINS + (r[i] >> 16)]);
}

/*
 * Ranks, look-back and scatter of one tile.  FULL: the tile holds TILE keys
 * (no bounds checks); otherwise valid of them.
 */
template <typename P, typename K, bool FULL, int IO>
__device__ __forceinline__ void
onesweep_tile(const onesweep_shared<P, K> &sh,
			  const K *__restrict__ keys_in, K *__restrict__ keys_out,
			  const uint32_t *__restrict__ vals_in, uint32_t *__restrict__ vals_out,
			  K kmin, int shift, uint32_t mask,
			  const uint32_t *__restrict__ global_start, uint32_t *status,
			  uint32_t tile, uint32_t valid_, bool count_next, int next_shift, uint32_t next_mask,
			  const onesweep_records &rec)
{
	constexpr int ITEMS = P::ITEMS;
	constexpr int THREADS = P::THREADS;
	constexpr bool IN_PACKED = onesweep_io_packed_in(IO);
	const uint32_t valid = FULL ? (uint32_t) P::TILE : valid_;
	const size_t tile_base = (size_t) tile * P::TILE;
	const int	t = threadIdx.x,
				lane = t & 31,
				warp = t >> 5;
	const uint32_t slice = warp * (ITEMS * 32) + lane;	/* warp's contiguous slice */
	K			k[ITEMS];
	/* rank in the warp's digit (and digit << 16 unpacked), later local place (WARP_STARTS_FIRST: the place) */
	tile_places<ITEMS, onesweep_io_packs_places(IO)> r;
	uint32_t	pv[onesweep_held_payloads<P, IO>()];	/* packed in: the payloads, where held */
	/*
	 * the records' first pass (FOLD): k holds key - kmin, with the rank in
	 * the warp's digit above it, later the place's low bits; phi the
	 * places' high bits (records_place).  Its digits are taken over a base
	 * of 0 (dbase), of the low RECORDS_REL_BITS once a rank is folded in.
	 */
	constexpr bool FOLD = IO == ONESWEEP_IO_TO_RECORDS;
	const K		dbase = FOLD ? (K) 0 : kmin;
	uint32_t	phi[records_place_words<ITEMS>()] = {};

	static_assert(!FOLD || (sizeof(K) == 4 && 32 * ITEMS <= (1 << RECORDS_PLACE_LO_BITS) &&
							P::TILE <= (1 << (RECORDS_PLACE_LO_BITS + RECORDS_PLACE_HI_BITS))),
				  "records' first pass: a warp's ranks and a tile's places fit their bits");
	/* payloads staged while the keys are ranked (16-byte copies need an aligned source) */
	const bool	staged = !IN_PACKED && P::ASYNC_VALS && FULL && vals_in != NULL &&
		((uintptr_t) vals_in & 15) == 0;

	/* load, warp-striped within the warp's slice */
	onesweep_tile_load<P, K, FULL, IO>(k, pv, keys_in, tile_base, slice, valid, kmin);
	if (staged)
		for (int c = t; c < P::TILE / 4; c += THREADS)
			copy_async<16>(&sh.staged_vals[4 * c], &vals_in[tile_base + 4 * c]);

	if constexpr (P::WARP_STARTS_FIRST)
		onesweep_places_counted_first<P, K, FULL, IO>(sh, k, r, global_start, status, tile, slice,
													  valid, dbase, shift, mask, rec, warp);
	else
	{
		onesweep_rank_tile<P, K, FULL, IO>(sh, k, r, status, tile, count_next, next_shift,
										   next_mask, slice, valid, dbase, shift, mask, rec, t,
										   warp);
		__syncthreads();
		onesweep_tile_places<P, K, FULL, IO>(sh, k, r, phi, global_start, status, tile, slice,
											 valid, dbase, shift, mask, rec, t, warp);
	}
	if (staged || IO == ONESWEEP_IO_FROM_RECORDS)
		copy_async_wait_all();
	__syncthreads();

	if constexpr (IO != ONESWEEP_IO_APART)
		tile_out_packed<P, K, FULL, IO>(sh, k, r, pv, phi, keys_in, keys_out, vals_in, vals_out, staged,
										tile_base, slice, valid, dbase, shift, mask, rec, tile);
	else
		tile_out_apart<P, K, FULL>(sh, k, r, keys_out, vals_in, vals_out, staged, tile_base, slice,
								   valid, kmin, shift, mask);
}

/*
 * One digit pass.  vals_in NULL: the payload of key i is i (the first pass
 * makes the row positions instead of reading them).  IO (onesweep_io):
 * where the pairs come in packed, keys_in holds them as 64-bit words and
 * vals_in is not read; where they go out packed, keys_out receives them and
 * vals_out is not written.  status holds
 * tiles * BINS words and tile_counter one, all zero at launch.
 * global_start: the place's exclusive digit offsets.  next_counts (not
 * NULL, policies without EARLY_COUNTS, next_mask < BINS): the keys'
 * digits ((key - kmin) >> next_shift) & next_mask of the next pass are
 * added there, so that the pass after needs no read of its own
 * (onesweep_sort_counted_t).  rec: the records' table and shape where IO
 * is ONESWEEP_IO_TO_RECORDS (keys_out receives the records, vals_in is
 * NULL and vals_out not written) or ONESWEEP_IO_FROM_RECORDS (keys_in
 * holds the records, shift is the first digit's width, vals_in is NULL).
 */
template <typename P, typename K, int IO = ONESWEEP_IO_APART>
__global__ void __launch_bounds__(P::THREADS, P::MIN_BLOCKS)
onesweep_kernel(const K *__restrict__ keys_in, K *__restrict__ keys_out,
				const uint32_t *__restrict__ vals_in, uint32_t *__restrict__ vals_out,
				uint32_t n, K kmin, int shift, uint32_t mask,
				const uint32_t *__restrict__ global_start,
				uint32_t *status, uint32_t *tile_counter,
				uint32_t *next_counts, int next_shift, uint32_t next_mask,
				onesweep_records rec)
{
	extern __shared__ __align__(16) unsigned char smem[];
	const onesweep_shared<P, K> sh(smem);
	const int	t = threadIdx.x;

	if (t == 0)
	{
		const uint32_t tile = atomicAdd(tile_counter, 1u);

		sh.misc[0] = tile;
		/* records: out, the tile's first row in its epoch; in, the table entries its places need */
		if (IO == ONESWEEP_IO_TO_RECORDS)
		{
			sh.misc[ONESWEEP_MISC_RECORDS] = tile % rec.epoch_tiles * (uint32_t) P::TILE;
			sh.misc[ONESWEEP_MISC_RECORDS + 1] = tile / rec.epoch_tiles;
		}
		else if (IO == ONESWEEP_IO_FROM_RECORDS)
		{
			const uint32_t k0 = rec.tile_range[2 * tile];

			sh.misc[ONESWEEP_MISC_RECORDS] = k0;
			sh.misc[ONESWEEP_MISC_RECORDS + 1] = rec.tile_range[2 * tile + 1] - k0 + 1;
		}
	}
	for (int i = t; i < (int) (onesweep_counter_bytes<P>() / sizeof(uint32_t)); i += P::THREADS)
		sh.warp_place[i] = 0;
	if (P::RANK == RANK_ATOMIC_OR)
		for (int i = t; i < P::WARPS * P::BINS; i += P::THREADS)
			sh.match_words[i] = 0;
	const bool	count_next = !P::EARLY_COUNTS && next_counts != NULL;

	if ((P::EARLY_COUNTS && !P::WARP_STARTS_FIRST) || count_next)
		for (int i = t; i < P::BINS; i += P::THREADS)
			sh.block_start[i] = 0;
	__syncthreads();

	const uint32_t tile = sh.misc[0];
	const size_t tile_base = (size_t) tile * P::TILE;

	if constexpr (IO == ONESWEEP_IO_TO_RECORDS)
		if (rec.next_region != NULL)
		{
			/* the second pass's look-back region (onesweep_records): this tile's status, tile 0 the counter */
			for (int i = t; i < P::BINS; i += P::THREADS)
				rec.next_region[4 + (size_t) tile * P::BINS + i] = 0;
			if (tile == 0 && t < 4)
				rec.next_region[t] = 0;
		}

	if constexpr (IO == ONESWEEP_IO_FROM_RECORDS)
	{
		/* the table's entries this tile's places need, into block_start (unused by this pass) */
		static_assert(!P::EARLY_COUNTS, "records: block_start free in the second pass");
		const uint32_t k0 = sh.misc[ONESWEEP_MISC_RECORDS],
					m = sh.misc[ONESWEEP_MISC_RECORDS + 1];

		if (m <= (uint32_t) P::BINS)
			for (uint32_t c = t; c < m; c += P::THREADS)
				copy_async<4>(&sh.block_start[c], &rec.table[k0 + c]);
	}

	if ((size_t) n - tile_base >= (size_t) P::TILE)
		onesweep_tile<P, K, true, IO>(sh, keys_in, keys_out, vals_in, vals_out, kmin, shift, mask,
									  global_start, status, tile, P::TILE, count_next, next_shift,
									  next_mask, rec);
	else
		onesweep_tile<P, K, false, IO>(sh, keys_in, keys_out, vals_in, vals_out, kmin, shift, mask,
									   global_start, status, tile, (uint32_t) (n - tile_base),
									   count_next, next_shift, next_mask, rec);
	if (count_next)
	{
		__syncthreads();
		for (int i = t; i <= (int) next_mask; i += P::THREADS)
			if (sh.block_start[i] != 0)
				atomicAdd(&next_counts[i], sh.block_start[i]);
	}
}

#endif
