/*
 * radix_tile_out.cuh -- a onesweep tile's scatter: the places its keys hold
 * while ranked, and writing keys and payloads (apart, packed or as records)
 * through shared memory so that runs of equal digits are written
 * contiguously.
 */
#ifndef GPUSORT_RADIX_TILE_OUT_CUH
#define GPUSORT_RADIX_TILE_OUT_CUH

#include <stdint.h>
#include <cuda_runtime.h>

#include "block_primitives.cuh"
#include "radix_records.cuh"
#include "radix_tile_scan.cuh"

/*
 * A thread's ITEMS places in its tile (each < 2^16, TILE < 65536), two to a
 * register where PACK (the records' passes, onesweep_io_packs_places: their
 * digit taken again from the key instead of kept beside the rank), so that
 * the larger records tile does not spill them; one a register otherwise.
 * (The records' first pass keeps its places in its keys' words instead:
 * records_place.)
 */
template <int ITEMS, bool PACK>
struct tile_places
{
	uint32_t	w[PACK ? (ITEMS + 1) / 2 : ITEMS];

	__device__ __forceinline__ uint32_t operator[](int i) const
	{
		return PACK ? (w[i >> 1] >> ((i & 1) * 16)) & 0xffffu : w[i];
	}

	__device__ __forceinline__ void set(int i, uint32_t v)
	{
		/* packed, the other half kept: the high half replaced (odd i) or the low one */
		if (!PACK)
			w[i] = v;
		else
			w[i >> 1] = (i & 1) ? __byte_perm(w[i >> 1], v, 0x5410)
				: __byte_perm(w[i >> 1], v, 0x3254);
	}
};

/* Does a pass (IO: onesweep_io) keep its places packed (tile_places)?  The records' passes. */
__host__ __device__ constexpr bool
onesweep_io_packs_places(int io)
{
	return io == ONESWEEP_IO_TO_RECORDS || io == ONESWEEP_IO_FROM_RECORDS;
}

/*
 * Does a pass with packed pairs coming in hold their payloads in registers
 * from the load to the tile's shared store?  Where the policy's register
 * budget (65,536 a SM over THREADS * MIN_BLOCKS) leaves room for keys,
 * ranks and payloads (3 * ITEMS and 32 more); otherwise it loads the keys'
 * halves first and the payloads' halves again later, from the cache (the
 * 10-bit passes' 1,024-thread tile: 64 registers).
 */
template <typename P>
__host__ __device__ constexpr bool
onesweep_holds_payloads()
{
	return 65536 / (P::THREADS * P::MIN_BLOCKS) >= 3 * P::ITEMS + 32;
}

/* Do a pass's pairs come in packed (IO: onesweep_io)?  Go out packed? */
__host__ __device__ constexpr bool
onesweep_io_packed_in(int io)
{
	return io == ONESWEEP_IO_PACKED || io == ONESWEEP_IO_UNPACK;
}

__host__ __device__ constexpr bool
onesweep_io_packed_out(int io)
{
	return io == ONESWEEP_IO_PACK || io == ONESWEEP_IO_PACKED;
}

/* The payloads a thread of a pass (policy P, IO) holds in registers: ITEMS or none (1). */
template <typename P, int IO>
__host__ __device__ constexpr int
onesweep_held_payloads()
{
	return onesweep_io_packed_in(IO) && onesweep_holds_payloads<P>() ? P::ITEMS : 1;
}

/*
 * The payload of a tile's slot idx (its keys' load order) where the pairs
 * come in apart: the row position (vals_in NULL), the staged copy, or
 * vals_in's (0 past a partial tile's end).
 */
template <typename P, typename K, bool FULL>
__device__ __forceinline__ uint32_t
tile_payload_in(const onesweep_shared<P, K> &sh, const uint32_t *__restrict__ vals_in,
				bool staged, size_t tile_base, uint32_t idx, uint32_t valid)
{
	if (vals_in == NULL)
		return (uint32_t) (tile_base + idx);
	if (staged)
		return sh.staged_vals[idx];
	return FULL || idx < valid ? vals_in[tile_base + idx] : 0;
}

/*
 * The end of a tile whose ranks r (its keys' places in the tile) and look-
 * back are done: the pairs into shared memory in digit order, then out to
 * their global places (digit_base), consecutive threads writing
 * consecutive places of a digit's run.  Apart: keys, then payloads
 * (payloads from vals_in, the staged copy, or the row positions where
 * vals_in is NULL).
 */
template <typename P, typename K, bool FULL>
__device__ __forceinline__ void
tile_out_apart(const onesweep_shared<P, K> &sh, const K (&k)[P::ITEMS],
			   const tile_places<P::ITEMS, false> &r, K *__restrict__ keys_out,
			   const uint32_t *__restrict__ vals_in, uint32_t *__restrict__ vals_out, bool staged,
			   size_t tile_base, uint32_t slice, uint32_t valid, K kmin, int shift, uint32_t mask)
{
	constexpr int ITEMS = P::ITEMS;
	constexpr int THREADS = P::THREADS;
	const int	t = threadIdx.x;

	/* keys, then payloads, into shared memory in digit order */
#pragma unroll
	for (int i = 0; i < ITEMS; i++)
		sh.tile_keys[r[i]] = k[i];
	{
		uint32_t	v[ITEMS];

#pragma unroll
		for (int i = 0; i < ITEMS; i++)
			v[i] = tile_payload_in<P, K, FULL>(sh, vals_in, staged, tile_base, slice + i * 32,
											   valid);
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
			sh.tile_vals[r[i]] = v[i];
	}
	__syncthreads();

	/*
	 * Keys out: consecutive threads, consecutive places of a digit's run;
	 * then the payloads to the same places (kept in registers for 32-bit
	 * keys; 64-bit keys leave no room and look them up again).
	 */
	constexpr bool KEEP_DEST = sizeof(K) == 4;
	uint32_t	dest[KEEP_DEST ? ITEMS : 1];

#pragma unroll
	for (int s = 0; s < ITEMS; s++)
	{
		uint32_t	j = s * THREADS + t;

		if (FULL || j < valid)
		{
			K			key = sh.tile_keys[j];
			uint32_t	to = sh.digit_base[digit_of(key, kmin, shift, mask)] + j;

			keys_out[to] = key;
			if (KEEP_DEST)
				dest[KEEP_DEST ? s : 0] = to;
		}
	}
#pragma unroll
	for (int s = 0; s < ITEMS; s++)
	{
		uint32_t	j = s * THREADS + t;

		if (FULL || j < valid)
			vals_out[KEEP_DEST ? dest[KEEP_DEST ? s : 0] :
					 sh.digit_base[digit_of(sh.tile_keys[j], kmin, shift, mask)] + j] =
				sh.tile_vals[j];
	}
}

/*
 * The records' last pass (tile_out_packed, ONESWEEP_IO_FROM_RECORDS): each
 * record's key and row position, from its place and the epochs' tables
 * (onesweep_records), as the halves of its pair in digit order.
 */
template <typename P, typename K, bool FULL>
static __device__ __forceinline__ void
tile_stage_from_records(const onesweep_shared<P, K> &sh, const K (&k)[P::ITEMS],
						const tile_places<P::ITEMS, true> &r, uint32_t *halves, size_t tile_base,
						uint32_t slice, uint32_t valid, K kmin, const onesweep_records &rec)
{
	constexpr int ITEMS = P::ITEMS;

	/* each record's key and row position, from its place (onesweep_records) */
	const uint32_t idx_mask = (1u << rec.idx_bits) - 1;
	const uint32_t epoch_rows = rec.epoch_tiles * (uint32_t) P::TILE;
	/* the tile's entries (onesweep_kernel): in block_start, or where they lie (more than BINS) */
	const uint32_t rtable_k0 = sh.misc[ONESWEEP_MISC_RECORDS];
	const uint32_t rtable_m = sh.misc[ONESWEEP_MISC_RECORDS + 1];
	const uint32_t *rtable = rtable_m <= (uint32_t) P::BINS ? sh.block_start
		: rec.table + rtable_k0;
	/* this lane's places rise with i: the first found, the rest walked to */
	uint32_t	at = records_find(rtable, rtable_m, (uint32_t) (tile_base + slice));

#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		const uint32_t idx = slice + i * 32;
		uint32_t	key = 0,
					row = 0;

		if (FULL || idx < valid)
		{
			const uint32_t p = (uint32_t) (tile_base + idx);

			while (at + 1 < rtable_m && rtable[at + 1] <= p)
				at++;

			const uint32_t e = rtable_k0 + at;

			key = (uint32_t) kmin +
				((((uint32_t) k[i] >> rec.idx_bits) << rec.low_bits) | (e >> rec.e2_log));
			row = (e & ((1u << rec.e2_log) - 1)) * epoch_rows + ((uint32_t) k[i] & idx_mask);
		}
		halves[2 * r[i] + 1] = key;
		halves[2 * r[i]] = row;
	}
}

/*
 * The records' first pass (tile_out_packed, ONESWEEP_IO_TO_RECORDS): each
 * key (key - kmin, its place in phi and its word) over its record, as one
 * 64-bit pair in digit order.
 */
template <typename P, typename K>
static __device__ __forceinline__ void
tile_stage_to_records(const onesweep_shared<P, K> &sh, const K (&k)[P::ITEMS],
					  const uint32_t (&phi)[records_place_words<P::ITEMS>()], uint64_t *items,
					  uint32_t slice, const onesweep_records &rec)
{
	constexpr int ITEMS = P::ITEMS;

	/*
	 * the key (its digit finds the place) over the record (onesweep_records:
	 * high digits over the row in its epoch), one 64-bit store a pair
	 */
	const uint32_t row0 = sh.misc[ONESWEEP_MISC_RECORDS] + slice;

#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		const uint32_t rel = (uint32_t) k[i] & RECORDS_REL_MASK;	/* key - kmin */

		reinterpret_cast<uint2 *>(items)[records_place<ITEMS>(k[i], phi, i)] =
			make_uint2(((rel >> rec.low_bits) << rec.idx_bits) | (row0 + i * 32), rel);
	}
}

/*
 * A packed tile's pairs (items, in digit order) out to their global places
 * (digit_base), consecutive threads writing consecutive places of a
 * digit's run: as records' words, packed pairs, or keys and payloads apart.
 */
template <typename P, typename K, bool FULL, int IO>
static __device__ __forceinline__ void
tile_write_packed(const onesweep_shared<P, K> &sh, const uint64_t *items, K *__restrict__ keys_out,
				  uint32_t *__restrict__ vals_out, uint32_t valid, K kmin, int shift, uint32_t mask)
{
	constexpr int ITEMS = P::ITEMS;
	constexpr int THREADS = P::THREADS;
	const int	t = threadIdx.x;

#pragma unroll
	for (int s = 0; s < ITEMS; s++)
	{
		const uint32_t j = s * THREADS + t;

		if (FULL || j < valid)
		{
			const uint64_t it = items[j];
			/* (the records' first pass staged key - kmin, its kmin here 0) */
			const uint32_t to = sh.digit_base[digit_of((K) (it >> 32), kmin, shift, mask)] + j;

			if constexpr (IO == ONESWEEP_IO_TO_RECORDS)
				reinterpret_cast<uint32_t *>(keys_out)[to] = (uint32_t) it;
			else if constexpr (onesweep_io_packed_out(IO))
				reinterpret_cast<uint64_t *>(keys_out)[to] = it;
			else
			{
				keys_out[to] = (K) (it >> 32);
				vals_out[to] = (uint32_t) it;
			}
		}
	}
}

/*
 * The same for packed pairs (IO, onesweep_io: 32-bit keys): each pair as
 * one 64-bit word over the tile's keys' and payloads' regions; where they
 * come in packed, pv holds the payloads (onesweep_holds_payloads) or they
 * are read again from keys_in; where they go out apart, keys and payloads
 * are written from the same word.  kmin: the digits' base (0 for the
 * records' first pass, whose keys are key - kmin already: onesweep_tile).
 */
template <typename P, typename K, bool FULL, int IO>
__device__ __forceinline__ void
tile_out_packed(const onesweep_shared<P, K> &sh, const K (&k)[P::ITEMS],
				const tile_places<P::ITEMS, onesweep_io_packs_places(IO)> &r,
				const uint32_t (&pv)[onesweep_held_payloads<P, IO>()],
				const uint32_t (&phi)[records_place_words<P::ITEMS>()],
				const K *__restrict__ keys_in, K *__restrict__ keys_out,
				const uint32_t *__restrict__ vals_in, uint32_t *__restrict__ vals_out, bool staged,
				size_t tile_base, uint32_t slice, uint32_t valid, K kmin, int shift, uint32_t mask,
				const onesweep_records &rec, uint32_t tile)
{
	constexpr int ITEMS = P::ITEMS;
	constexpr bool IN_PACKED = onesweep_io_packed_in(IO);
	constexpr bool HOLD = onesweep_held_payloads<P, IO>() > 1;

	static_assert(sizeof(K) == 4, "packed pairs: 32-bit keys");
	static_assert(onesweep_keys_bytes<P, K>() + onesweep_vals_bytes<P>() >=
				  (size_t) P::TILE * sizeof(uint64_t),
				  "packed pairs: the tile's keys and payloads regions, one after the other, hold its pairs");

	/* packed pairs into shared memory in digit order (over the keys' and payloads' regions), then out */
	uint64_t   *items = reinterpret_cast<uint64_t *>(sh.tile_keys);

	if constexpr (HOLD)
	{
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
			items[r[i]] = (uint64_t) k[i] << 32 | pv[i];
	}
	else
	{
		/*
		 * the keys' halves first, then the payloads', as the pairs apart
		 * do: the keys' registers are free before the payloads are loaded
		 * (packed in: their halves of the pairs, read again)
		 */
		uint32_t   *halves = reinterpret_cast<uint32_t *>(items);
		const uint32_t *halves_in = reinterpret_cast<const uint32_t *>(keys_in);

		if constexpr (IO == ONESWEEP_IO_FROM_RECORDS)
			tile_stage_from_records<P, K, FULL>(sh, k, r, halves, tile_base, slice, valid, kmin,
												rec);
		else if constexpr (IO == ONESWEEP_IO_TO_RECORDS)
			tile_stage_to_records<P, K>(sh, k, phi, items, slice, rec);
		else
		{
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
				halves[2 * r[i] + 1] = (uint32_t) k[i];
#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				const uint32_t idx = slice + i * 32;
				uint32_t	v;

				if constexpr (IN_PACKED)
					v = FULL || idx < valid ? halves_in[2 * (tile_base + idx)] : 0;
				else
					v = tile_payload_in<P, K, FULL>(sh, vals_in, staged, tile_base, idx, valid);
				halves[2 * r[i]] = v;
			}
		}
	}
	__syncthreads();
	tile_write_packed<P, K, FULL, IO>(sh, items, keys_out, vals_out, valid, kmin, shift, mask);
}

#endif
