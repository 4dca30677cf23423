/*
 * onesweep.cuh -- device-level onesweep radix sort of (key, 32-bit payload)
 * pairs already in device memory, for 32- and 64-bit unsigned keys.
 * Internal to kernels/ and the CUDA benchmark; src/ uses the job API of
 * gpusort_kernels.h.
 *
 * The pass plan follows the keys' real range: one histogram read counts
 * every 8-bit place and finds the minimum and maximum key; places where all
 * keys share a digit are skipped, and where the range (max - min) is
 * narrow enough that fewer, wider digits relative to the minimum are
 * cheaper (radix_config.cuh's cost model), those digits are sorted instead
 * (20 significant bits: two 10-bit passes, not three 8-bit).  Their counts
 * need no second read where the plan has at most two passes: the first
 * read counts the keys' lowest 10 bits (first_read_low_wide), which give
 * the first digit's counts, and the first pass counts the second digit's
 * as it sorts (onesweep_counts_follow); longer plans, and a first read that
 * left keys uncounted, read the keys again for them.
 */
#ifndef GPUSORT_ONESWEEP_CUH
#define GPUSORT_ONESWEEP_CUH

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>

#include "cuda_check.cuh"
#include "first_read.cuh"
#include "onesweep_kernels.cuh"

/* What a sort did, for EXPLAIN and the benchmark. */
struct onesweep_stats
{
	int			passes;			/* digit passes run */
	int			bits[RADIX_MAX_PASSES];	/* width of each */
	bool		from_min;		/* digits taken relative to the minimum key */
	bool		packed;			/* pairs packed in 64-bit words between passes */
	bool		records;		/* one 32-bit record a pair between passes (onesweep_records) */
};

/* Device scratch memory a sort of n keys of key_bytes needs. */
size_t		onesweep_temp_bytes(size_t n, int key_bytes);

/*
 * Sort n pairs: keys in keys[0], payloads in vals[0] (or, with
 * vals_are_positions, payload i is i and vals[0] is not read).  keys[1] and
 * vals[1] are scratch of the same size; *out says which of the two holds the
 * result.  n <= ONESWEEP_MAX_N.  Synchronises with the stream once (to read
 * the key range); otherwise asynchronous on the stream.
 */
gpusort_status onesweep_sort_pairs(void *keys[2], uint32_t *vals[2], size_t n,
								   int key_bytes, bool vals_are_positions,
								   void *temp, size_t temp_bytes, cudaStream_t stream,
								   int *out, onesweep_stats *stats);

/* ---- the driver, generic over the policies (the benchmark tunes with it) ---- */

/*
 * A pass's look-back region: its tile counter (16 bytes), then its tiles'
 * status words, rounded up to 16 bytes.  Up to ONESWEEP_ONE_CLEAR_MAX_N
 * keys each pass has a region of its own, all cleared by one memset before
 * the first pass (at these sizes a memset a pass cost more in launches than
 * in bytes); above, the passes share one, cleared before each.
 */
#define ONESWEEP_ONE_CLEAR_MAX_N	((size_t) 1 << 22)

template <typename P>
static inline size_t
onesweep_region_bytes(size_t n)
{
	return (16 + (n + P::TILE - 1) / P::TILE * P::BINS * sizeof(uint32_t) + 15) / 16 * 16;
}

/*
 * Records (onesweep_records) between the two passes of a plan over
 * key - min whose second digit is bits2 wide, on the wide policy W: the
 * first-pass tiles an epoch, and log2 of the table's entries a digit.
 */
template <typename W>
static inline void
onesweep_records_shape(size_t n, int bits2, uint32_t *epoch_tiles, int *e2_log)
{
	const size_t tiles = (n + W::TILE - 1) / W::TILE;
	const uint32_t per = (uint32_t) (((size_t) 1 << (32 - bits2)) / W::TILE);
	const size_t epochs = (tiles + per - 1) / per;
	int			lg = 0;

	while (((size_t) 1 << lg) < epochs)
		lg++;
	*epoch_tiles = per;
	*e2_log = lg;
}

/* The words of a records sort's tile ranges (2 a second-pass tile, and 16-byte alignment after). */
template <typename W>
static inline size_t
onesweep_records_ranges_words(size_t n)
{
	return ((n + W::TILE - 1) / W::TILE * 2 + 3) / 4 * 4;
}

/*
 * Scratch of the records of a sort of n keys: the table (widest second
 * digit), the tile ranges, and above ONESWEEP_ONE_CLEAR_MAX_N keys the
 * second pass's look-back region (which the first pass clears).
 */
template <typename POL, typename K>
static inline size_t
onesweep_records_bytes(size_t n)
{
	typedef typename POL::records R;
	uint32_t	per;
	int			lg;

	if constexpr (sizeof(K) != 4)
		return 0;
	onesweep_records_shape<R>(n, RADIX_WIDE_BITS, &per, &lg);
	return ((size_t) R::BINS << lg) * sizeof(uint32_t) +
		onesweep_records_ranges_words<R>(n) * sizeof(uint32_t) +
		(n > ONESWEEP_ONE_CLEAR_MAX_N ? onesweep_region_bytes<R>(n) : 0);
}

/*
 * Bytes of the look-back regions (at ONESWEEP_STATUS_OFFSET - 16) of a sort
 * of n keys on POL: a region for each pass of the longest plan (one a
 * byte) where they have one each, else one, each as large as the largest
 * policy's.
 */
template <typename POL, typename K>
size_t
onesweep_status_bytes_t(size_t n)
{
	const size_t narrow = onesweep_region_bytes<typename POL::narrow>(n),
				packed = onesweep_region_bytes<typename POL::packed>(n),
				wide = std::max(onesweep_region_bytes<typename POL::wide>(n),
								onesweep_region_bytes<typename POL::records>(n)),
				most = std::max(narrow, std::max(packed, wide));
	const size_t regions = n <= ONESWEEP_ONE_CLEAR_MAX_N ? sizeof(K) : 1;

	return regions * most;
}

template <typename POL, typename K>
size_t
onesweep_temp_bytes_t(size_t n)
{
	return ONESWEEP_STATUS_OFFSET - 16 + onesweep_status_bytes_t<POL, K>(n) +
		onesweep_records_bytes<POL, K>(n);
}

/*
 * One pass over the region at region_offset (bytes past the first) of the
 * look-back regions in temp: cleared here unless cleared (by the sort, for
 * all its passes at once).
 */
template <typename P, typename K, int IO = ONESWEEP_IO_APART>
gpusort_status
onesweep_pass(const K *kin, K *kout, const uint32_t *vin, uint32_t *vout, size_t n,
			  K kmin, int shift, int bits, const uint32_t *global_start,
			  unsigned char *temp, cudaStream_t stream, size_t region_offset = 0,
			  bool cleared = false, uint32_t *next_counts = NULL, int next_shift = 0,
			  int next_bits = 0, const onesweep_records &rec = onesweep_records())
{
	static bool smem_set = false;
	const size_t smem = onesweep_smem_bytes<P, K>();
	const size_t tiles = (n + P::TILE - 1) / P::TILE;
	uint32_t   *counter = reinterpret_cast<uint32_t *>(temp + ONESWEEP_STATUS_OFFSET - 16 +
														region_offset);
	uint32_t   *status = counter + 4;

	if (!smem_set)
	{
		CUDA_TRY(cudaFuncSetAttribute(onesweep_kernel<P, K, IO>,
									  cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem));
		/* as much shared memory as the SM has, so that MIN_BLOCKS blocks fit */
		CUDA_TRY(cudaFuncSetAttribute(onesweep_kernel<P, K, IO>,
									  cudaFuncAttributePreferredSharedMemoryCarveout, 100));
		smem_set = true;
	}
	if (!cleared)
		CUDA_TRY(cudaMemsetAsync(counter, 0, 16 + tiles * P::BINS * sizeof(uint32_t), stream));
	onesweep_kernel<P, K, IO><<<(unsigned) tiles, P::THREADS, smem, stream>>>(
		kin, kout, vin, vout, (uint32_t) n, kmin, shift, (1u << bits) - 1,
		global_start, status, counter, next_counts, next_shift, (1u << next_bits) - 1, rec);
	CUDA_TRY_LAUNCH("onesweep_kernel");
	return GPUSORT_OK;
}

/* onesweep_pass with the IO mode chosen at run time (32-bit keys may pack; 64-bit ones stay apart). */
template <typename P, typename K>
gpusort_status
onesweep_pass_io(int io, const K *kin, K *kout, const uint32_t *vin, uint32_t *vout, size_t n,
				 K kmin, int shift, int bits, const uint32_t *global_start,
				 unsigned char *temp, cudaStream_t stream, size_t region_offset, bool cleared,
				 uint32_t *next_counts = NULL, int next_shift = 0, int next_bits = 0)
{
	/* (the records' passes are launched on their own policy: onesweep_sort_counted_t) */
	if constexpr (sizeof(K) == 4)
	{
		if (io == ONESWEEP_IO_PACK)
			return onesweep_pass<P, K, ONESWEEP_IO_PACK>(kin, kout, vin, vout, n, kmin, shift, bits,
														 global_start, temp, stream, region_offset,
														 cleared, next_counts, next_shift,
														 next_bits);
		if (io == ONESWEEP_IO_PACKED)
			return onesweep_pass<P, K, ONESWEEP_IO_PACKED>(kin, kout, vin, vout, n, kmin, shift,
														   bits, global_start, temp, stream,
														   region_offset, cleared, next_counts,
														   next_shift, next_bits);
		if (io == ONESWEEP_IO_UNPACK)
			return onesweep_pass<P, K, ONESWEEP_IO_UNPACK>(kin, kout, vin, vout, n, kmin, shift,
														   bits, global_start, temp, stream,
														   region_offset, cleared, next_counts,
														   next_shift, next_bits);
	}
	return onesweep_pass<P, K>(kin, kout, vin, vout, n, kmin, shift, bits, global_start, temp,
							   stream, region_offset, cleared, next_counts, next_shift, next_bits);
}

/*
 * Which policy of POL a pass runs on: the wide one for digits wider than
 * 8 bits, else the packed one where the sort packs its pairs, else the
 * narrow one.  The sort sizes each pass's look-back region and launches
 * the pass by the same choice.
 */
enum onesweep_pass_policy
{
	ONESWEEP_POLICY_NARROW = 0,
	ONESWEEP_POLICY_PACKED = 1,
	ONESWEEP_POLICY_WIDE = 2
};

static inline int
onesweep_pass_policy_of(int bits, bool packed)
{
	return bits > RADIX_NARROW_BITS ? ONESWEEP_POLICY_WIDE
		: packed ? ONESWEEP_POLICY_PACKED : ONESWEEP_POLICY_NARROW;
}

template <typename POL>
static inline size_t
onesweep_pass_region_bytes(int policy, size_t n)
{
	return policy == ONESWEEP_POLICY_WIDE
		? std::max(onesweep_region_bytes<typename POL::wide>(n),
				   onesweep_region_bytes<typename POL::records>(n))
		: policy == ONESWEEP_POLICY_PACKED ? onesweep_region_bytes<typename POL::packed>(n)
		: onesweep_region_bytes<typename POL::narrow>(n);
}

/*
 * Whether a radix sort packs its pairs: ONESWEEP_PAIRS_BY_DATA (the
 * default), or always apart, or packed wherever the buffers allow whatever
 * the data (the tests and the benchmark's comparisons, through
 * gpusort_test_hooks.pairs).
 */
enum onesweep_pairs
{
	ONESWEEP_PAIRS_BY_DATA = 0,
	ONESWEEP_PAIRS_APART = 1,
	ONESWEEP_PAIRS_PACKED = 2
};

static inline int
onesweep_pairs(void)
{
	return gpusort_test_hooks.pairs == GPUSORT_TEST_PAIRS_APART ? ONESWEEP_PAIRS_APART
		: gpusort_test_hooks.pairs == GPUSORT_TEST_PAIRS_PACKED ? ONESWEEP_PAIRS_PACKED
		: ONESWEEP_PAIRS_BY_DATA;
}

/*
 * May a sort of n pairs in these buffers pack them between its passes
 * (plan, from the first read *look; from_min: a plan over key - min)?
 * 32-bit keys, two passes or more (10-bit ones where POL::WIDE_PACKS), and
 * each buffer's payloads right after its keys (vals[i] == keys[i] + n,
 * 8-byte aligned), so that keys[i] is room for n packed pairs -- the sort
 * job allocates them so.  By the
 * data, the pairs are packed unless most passes are of skewed places,
 * where one digit holds more than 1/RADIX_PACK_SKEW of the keys (the look
 * counted the 8-bit places; a plan over key - min is taken as not skewed):
 * packed passes are faster on spread digits, apart ones on skewed digits
 * (bench/results/radix_packed-h100.txt).
 */
template <typename POL, typename K>
static inline bool
onesweep_can_pack(K *const keys[2], uint32_t *const vals[2], size_t n, const digit_plan &plan,
				  bool from_min, const first_read_summary *look)
{
	if constexpr (sizeof(K) != 4)
		return false;
	else
	{
		const int	mode = onesweep_pairs();
		int			skewed = 0;

		if (plan.passes < 2 || mode == ONESWEEP_PAIRS_APART)
			return false;
		for (int p = 0; p < plan.passes; p++)
		{
			if (plan.bits[p] > RADIX_NARROW_BITS && !POL::WIDE_PACKS)
				return false;	/* bench/results/radix_packed-h100.txt */
			if (!from_min && (size_t) look->top[plan.shift[p] / RADIX_NARROW_BITS] * RADIX_PACK_SKEW > n)
				skewed++;
		}
		for (int i = 0; i < 2; i++)
			if ((void *) vals[i] != (void *) (keys[i] + n) || ((uintptr_t) keys[i] & 7) != 0)
				return false;
		return mode == ONESWEEP_PAIRS_PACKED || 2 * skewed < plan.passes;
	}
}

/*
 * Bytes of the look-back regions (onesweep_status_bytes_t) of a radix sort
 * of n keys on the project's policies for this device: what a look zeroes
 * for the sort that goes on from it (onesweep_look_t: clear_bytes;
 * onesweep_sort_counted: precleared).
 */
size_t		onesweep_preclear_bytes(size_t n, int key_bytes);

/*
 * Sort n pairs (2 <= n <= ONESWEEP_MAX_N) whose first read (onesweep_count_t
 * into this temp) the host holds in *look, with the project's policies;
 * otherwise as onesweep_sort_pairs (K: uint32_t or uint64_t).
 */
template <typename K>
gpusort_status onesweep_sort_counted(K *keys[2], uint32_t *vals[2], size_t n,
									 bool vals_are_positions, void *temp, size_t temp_bytes,
									 cudaStream_t stream, const first_read_summary *look,
									 int *out, onesweep_stats *stats, bool precleared = false);

/*
 * The digit plan of a radix sort whose first read found *look, into *plan:
 * the varying 8-bit places (a place where every key has one digit is
 * skipped), or fewer, wider digits of key - min where the cost model finds
 * that cheaper (force_plan < 0), or that many passes (force_plan > 0; 0:
 * the 8-bit places).  True for a plan over key - min, whose digit counts
 * the first read did not take (but for its low bits':
 * onesweep_counts_follow).  A look that did not count every key
 * (look->complete 0) gives a plan over key - min always, as many 8-bit
 * digits as the range needs where no wider plan is cheaper.
 */
template <typename K>
static inline bool
onesweep_plan_from_look(const first_read_summary *look, int force_plan, digit_plan *plan)
{
	constexpr int PLACES = (int) sizeof(K) * 8 / RADIX_NARROW_BITS;
	const unsigned long long *range = look->range;
	const int	rbits = onesweep_bit_length((unsigned long long) ((K) range[1] - (K) range[0]));
	int			varying = 0,
				best_passes = 0;
	double		best = 0;

	if (look->complete)
	{
		for (int p = 0; p < PLACES; p++)
			if (look->used[p] > 1)
				plan->shift[varying] = p * RADIX_NARROW_BITS,
					plan->bits[varying] = RADIX_NARROW_BITS,
					varying++;
	}
	else
	{
		/* the range's 8-bit digits of key - min, counted again */
		varying = (rbits + RADIX_NARROW_BITS - 1) / RADIX_NARROW_BITS;
		best_passes = varying;
		if (force_plan > 0)
			force_plan = force_plan < varying ? force_plan : varying;
	}
	plan->passes = varying;
	best = varying + (look->complete ? 0 : RADIX_COST_EXTRA_HIST);
	if (force_plan < 0)
	{
		for (int np = (rbits + RADIX_WIDE_BITS - 1) / RADIX_WIDE_BITS; np > 0 && np < varying; np++)
		{
			int			bits = (rbits + np - 1) / np;
			double		cost = np * (bits > RADIX_NARROW_BITS ? RADIX_COST_WIDE_PASS : 1.0) +
				RADIX_COST_EXTRA_HIST;

			if (cost < best)
			{
				best = cost;
				best_passes = np;
			}
		}
	}
	else if (force_plan > 0 && rbits > 0)
	{
		best_passes = force_plan < PLACES ? force_plan : PLACES;	/* at most a pass a byte */
		if ((rbits + best_passes - 1) / best_passes > RADIX_WIDE_BITS)
			best_passes = (rbits + RADIX_WIDE_BITS - 1) / RADIX_WIDE_BITS;
	}
	if (best_passes == 0)
		return false;

	const int	bits = (rbits + best_passes - 1) / best_passes;

	plan->passes = best_passes;
	for (int p = 0; p < best_passes; p++)
	{
		plan->shift[p] = p * bits;
		plan->bits[p] = p * bits + bits <= rbits ? bits : rbits - p * bits;
	}
	return true;
}

/*
 * Can a plan over key - min take its digit counts without a read of its
 * own, where the first read kept the counts of the keys' low bits
 * (first_read_low_wide)?  The first digit's counts follow from those
 * (low_digit_offsets_kernel); a second digit's the first pass makes, where
 * that pass runs on a policy that can count them (the wide one, without
 * EARLY_COUNTS, whose tile-count words it counts them in).  Plans of more
 * passes read the keys as before.
 */
template <typename POL>
static inline bool
onesweep_counts_follow(const digit_plan &plan)
{
	typedef typename POL::wide W;

	return plan.passes == 1 ||
		(plan.passes == 2 && onesweep_pass_policy_of(plan.bits[0], false) == ONESWEEP_POLICY_WIDE &&
		 !W::EARLY_COUNTS && (1 << plan.bits[1]) <= W::BINS);
}

/*
 * Whether a sort carries one 32-bit record a pair between its passes
 * (onesweep_records): 32-bit keys whose payloads are the row positions, a
 * plan over key - min of two passes, the first wider than 8 bits (both
 * run on the wide policy), at least RADIX_RECORDS_MIN_N keys (the tests
 * may turn records off or take them at any n: gpusort_test_hooks.records).
 */
template <typename POL, typename K>
static inline bool
onesweep_takes_records(size_t n, const digit_plan &plan, bool from_min, bool positions)
{
	const gpusort_test_records mode = gpusort_test_hooks.records;

	return sizeof(K) == 4 && !POL::records::EARLY_COUNTS && mode != GPUSORT_TEST_RECORDS_OFF &&
		positions && from_min &&
		(n >= RADIX_RECORDS_MIN_N || mode == GPUSORT_TEST_RECORDS_ALWAYS) &&
		plan.passes == 2 && plan.shift[0] == 0 && plan.shift[1] == plan.bits[0] &&
		plan.bits[0] > RADIX_NARROW_BITS && plan.bits[0] <= RADIX_WIDE_BITS &&
		plan.bits[1] <= RADIX_WIDE_BITS;
}

/*
 * Pass p (0 or 1) of a sort that carries records (onesweep_records), on the
 * records' policy: keys in, records out, then records in, keys and row
 * positions out (into vout), the second pass on its own look-back region
 * where the first cleared it (rec.next_region), else at region_offset.
 */
template <typename POL, typename K>
static gpusort_status
onesweep_records_pass(int p, const K *kin, K *kout, uint32_t *vout, size_t n, K kmin,
					  const digit_plan &plan, const uint32_t *global_start, unsigned char *temp,
					  cudaStream_t stream, size_t region_offset, bool cleared,
					  uint32_t *next_counts, const onesweep_records &rec)
{
	typedef typename POL::records R;

	if constexpr (sizeof(K) == 4 && !R::EARLY_COUNTS)	/* onesweep_takes_records */
	{
		const bool	own = p == 1 && rec.next_region != NULL;
		const size_t at = own ? (size_t) ((unsigned char *) rec.next_region -
										  (temp + ONESWEEP_STATUS_OFFSET - 16)) : region_offset;

		if (p == 0)
			return onesweep_pass<R, K, ONESWEEP_IO_TO_RECORDS>(kin, kout, NULL, vout, n, kmin,
															   plan.shift[0], plan.bits[0],
															   global_start, temp, stream, at,
															   cleared, next_counts, plan.shift[1],
															   plan.bits[1], rec);
		return onesweep_pass<R, K, ONESWEEP_IO_FROM_RECORDS>(kin, kout, NULL, vout, n, kmin,
															 plan.shift[1], plan.bits[1],
															 global_start, temp, stream, at,
															 cleared || own, NULL, 0, 0, rec);
	}
	return GPUSORT_ERR_INVALID_ARGUMENT;	/* never: such sorts take no records */
}

/* What onesweep_sort_counted_t's plan step sets up for its passes. */
template <typename K>
struct onesweep_setup
{
	digit_plan	plan;
	K			kmin = 0;
	bool		low_known = false;	/* a plan over key - min whose counts follow (onesweep_counts_follow) */
	bool		records = false;	/* one 32-bit record a pair between the passes (onesweep_records) */
	onesweep_records rec = onesweep_records();
	uint32_t	rec_entries = 0;
};

/*
 * The plan of a sort whose first read found *look, and the digit counts
 * of its passes: none for keys in order already; else the varying 8-bit
 * places, or fewer wider digits over max - min (their counts from the
 * first read's low bits, or a histogram read), and the records' table
 * where the passes carry records.
 */
template <typename POL, typename K>
static gpusort_status
onesweep_plan_counts(K *keys[2], size_t n, bool positions, void *temp_v, cudaStream_t stream,
					 const first_read_summary *look, int force_plan, onesweep_stats *stats,
					 onesweep_setup<K> *setup)
{
	unsigned char *temp = (unsigned char *) temp_v;
	uint32_t   *d_hist = onesweep_temp_hist(temp_v);
	const unsigned long long *range = look->range;
	digit_plan &plan = setup->plan;
	K		   &kmin = setup->kmin;
	bool	   &low_known = setup->low_known;
	bool	   &records = setup->records;
	onesweep_records &rec = setup->rec;
	uint32_t   &rec_entries = setup->rec_entries;

	if (look->sorted)
		plan.passes = 0;
	else
	{
		const bool	from_min = onesweep_plan_from_look<K>(look, force_plan, &plan);

		if (from_min)
		{
			kmin = (K) range[0];
			stats->from_min = true;
			low_known = look->low_wide && onesweep_counts_follow<POL>(plan);
			records = onesweep_takes_records<POL, K>(n, plan, true, positions);
			if (records)
			{
				/* the table at the end of temp (after it the tile ranges, then the second pass's region) */
				typedef typename POL::records W;

				onesweep_records_shape<W>(n, plan.bits[1], &rec.epoch_tiles, &rec.e2_log);
				rec.table = reinterpret_cast<uint32_t *>(temp + onesweep_temp_bytes_t<POL, K>(n) -
														 onesweep_records_bytes<POL, K>(n));
				rec.tile_range = rec.table + ((size_t) W::BINS << rec.e2_log);
				rec.idx_bits = 32 - plan.bits[1];
				rec.low_bits = plan.bits[0];
				rec_entries = (uint32_t) W::BINS << rec.e2_log;
				if (n > ONESWEEP_ONE_CLEAR_MAX_N)
					rec.next_region = const_cast<uint32_t *>(rec.tile_range) +
						onesweep_records_ranges_words<W>(n);
			}
			if (low_known)
			{
				/*
				 * the first digit's offsets from the first read's counts of
				 * the low bits (and the records' table filled); the second
				 * digit's counts made by the first pass (below)
				 */
				low_digit_offsets_kernel<<<records ? (rec_entries + RADIX_HIST_STRIDE - 1) /
					RADIX_HIST_STRIDE : 1, RADIX_HIST_STRIDE, 0, stream>>>(
					d_hist + RADIX_LOW_WIDE_SLOT * RADIX_HIST_STRIDE, (uint32_t) kmin,
					(1u << plan.bits[0]) - 1, d_hist,
					plan.passes > 1 ? d_hist + RADIX_HIST_STRIDE : NULL,
					records ? rec.table : NULL, (uint32_t) POL::records::BINS, rec.e2_log,
					(uint32_t) n);
				CUDA_TRY_LAUNCH("low_digit_offsets_kernel");
			}
			else
			{
				int			hist_blocks = 1;
				gpusort_status hst;

				if ((hst = onesweep_hist_blocks<K>(n, &hist_blocks)) != GPUSORT_OK)
					return hst;
				CUDA_TRY(cudaMemsetAsync(d_hist, 0,
										 plan.passes * RADIX_HIST_STRIDE * sizeof(uint32_t),
										 stream));
				histogram_kernel<K><<<hist_blocks, RADIX_HIST_THREADS, 0, stream>>>(
					keys[0], n, kmin, plan, d_hist, NULL);
				CUDA_TRY_LAUNCH("histogram_kernel");
			}
		}
		else if (!look->scanned)
		{
			/* keep the varying places' counts in pass order */
			for (int p = 0; p < plan.passes; p++)
				if (plan.shift[p] != p * RADIX_NARROW_BITS)
					CUDA_TRY(cudaMemcpyAsync(d_hist + p * RADIX_HIST_STRIDE,
											 d_hist + (plan.shift[p] / RADIX_NARROW_BITS) * RADIX_HIST_STRIDE,
											 RADIX_HIST_STRIDE * sizeof(uint32_t),
											 cudaMemcpyDeviceToDevice, stream));
		}
	}

	return GPUSORT_OK;
}

/*
 * The passes of a sort set up by onesweep_plan_counts: one onesweep kernel
 * per pass, pairs packed between passes where they can be (or records);
 * up to ONESWEEP_ONE_CLEAR_MAX_N keys each pass on a look-back region of
 * its own, all cleared by one memset first.  *out: the buffer the result
 * is in.
 */
template <typename POL, typename K>
static gpusort_status
onesweep_run_passes(K *keys[2], uint32_t *vals[2], size_t n, bool positions, void *temp_v,
					cudaStream_t stream, const first_read_summary *look, bool precleared,
					bool offsets_at_places, const onesweep_setup<K> &setup,
					onesweep_stats *stats, int *out)
{
	unsigned char *temp = (unsigned char *) temp_v;
	uint32_t   *d_hist = onesweep_temp_hist(temp_v);
	const digit_plan &plan = setup.plan;
	const K		kmin = setup.kmin;
	const bool	low_known = setup.low_known;
	const bool	records = setup.records;
	const onesweep_records &rec = setup.rec;
	const uint32_t rec_entries = setup.rec_entries;
	const bool	packed = !records &&
		onesweep_can_pack<POL, K>(keys, vals, n, plan, stats->from_min, look);
	const bool	one_clear = n <= ONESWEEP_ONE_CLEAR_MAX_N;
	size_t		region[RADIX_MAX_PASSES + 1] = {0};	/* each pass's offset, then the end */
	int			policy[RADIX_MAX_PASSES];	/* onesweep_pass_policy */
	int			cur = 0;
	uint32_t   *scan_after = NULL;	/* digit counts the next records_range_kernel scans */

	for (int p = 0; p < plan.passes; p++)
	{
		policy[p] = records ? ONESWEEP_POLICY_WIDE : onesweep_pass_policy_of(plan.bits[p], packed);
		region[p + 1] = region[p] + (one_clear ? onesweep_pass_region_bytes<POL>(policy[p], n) : 0);
	}
	if (one_clear && !precleared)
		CUDA_TRY(cudaMemsetAsync(temp + ONESWEEP_STATUS_OFFSET - 16, 0, region[plan.passes], stream));
	if (records && !low_known)
	{
		/* each entry its digit's end until the first pass writes it (else low_digit_offsets_kernel did) */
		records_fill_kernel<<<(rec_entries + 255) / 256, 256, 0, stream>>>(
			rec.table, d_hist, POL::records::BINS, rec.e2_log, (uint32_t) n);
		CUDA_TRY_LAUNCH("records_fill_kernel");
	}
	for (int p = 0; p < plan.passes; p++)
	{
		const uint32_t *vin = p == 0 && positions ? NULL : vals[cur];	/* (records: onesweep_records_pass) */
		const int	io = !packed ? ONESWEEP_IO_APART
			: p == 0 ? ONESWEEP_IO_PACK
			: p == plan.passes - 1 ? ONESWEEP_IO_UNPACK : ONESWEEP_IO_PACKED;
		const uint32_t *start = d_hist + (offsets_at_places ? plan.shift[p] / RADIX_NARROW_BITS : p) *
			RADIX_HIST_STRIDE;
		gpusort_status st;
		/* the pass's look-back region zero: cleared at once, or the first's before the sort */
		const bool	cleared = one_clear || (p == 0 && precleared);

		/* the first pass of a plan whose counts follow counts the second's digits */
		uint32_t   *next_counts = low_known && p == 0 && plan.passes > 1
			? d_hist + RADIX_HIST_STRIDE : NULL;

		if (records && p == 1)
		{
			/* the entries each tile of the second pass needs (and the scan of its digit counts) */
			typedef typename POL::records W;
			const uint32_t tiles = (uint32_t) ((n + W::TILE - 1) / W::TILE);

			records_range_kernel<<<(rec_entries + RADIX_HIST_STRIDE - 1) / RADIX_HIST_STRIDE,
				RADIX_HIST_STRIDE, 0, stream>>>(
				rec.table, rec_entries, const_cast<uint32_t *>(rec.tile_range), tiles,
				(uint32_t) W::TILE, (uint32_t) n, scan_after);
			CUDA_TRY_LAUNCH("records_range_kernel");
			scan_after = NULL;
		}
		if (records)
			st = onesweep_records_pass<POL, K>(p, keys[cur], keys[cur ^ 1], vals[cur ^ 1], n, kmin,
											   plan, start, temp, stream, region[p], cleared,
											   next_counts, rec);
		else if (policy[p] == ONESWEEP_POLICY_WIDE)
			st = onesweep_pass_io<typename POL::wide, K>(io, keys[cur], keys[cur ^ 1], vin,
														 vals[cur ^ 1], n, kmin, plan.shift[p],
														 plan.bits[p], start, temp, stream,
														 region[p], cleared, next_counts,
														 plan.shift[1], plan.bits[1]);
		else if (policy[p] == ONESWEEP_POLICY_PACKED)
			st = onesweep_pass_io<typename POL::packed, K>(io, keys[cur], keys[cur ^ 1], vin,
														   vals[cur ^ 1], n, kmin, plan.shift[p],
														   plan.bits[p], start, temp, stream,
														   region[p], cleared);
		else
			st = onesweep_pass<typename POL::narrow, K>(keys[cur], keys[cur ^ 1], vin, vals[cur ^ 1],
														n, kmin, plan.shift[p], plan.bits[p], start,
														temp, stream, region[p], cleared);
		if (st != GPUSORT_OK)
			return st;
		if (next_counts != NULL && records)
			scan_after = next_counts;	/* by records_range_kernel, before the second pass */
		else if (next_counts != NULL)
		{
			exclusive_scan_kernel<<<1, RADIX_HIST_STRIDE, 0, stream>>>(next_counts);
			CUDA_TRY_LAUNCH("exclusive_scan_kernel");
		}
		stats->bits[p] = plan.bits[p];
		cur ^= 1;
	}
	stats->passes = plan.passes;
	stats->packed = packed;
	stats->records = records;
	*out = cur;
	return GPUSORT_OK;
}

/*
 * Sort n >= 2 pairs whose first read (onesweep_count_t, into this temp) the
 * host already holds in *look; otherwise as onesweep_sort_pairs.
 */
template <typename POL, typename K>
gpusort_status
onesweep_sort_counted_t(K *keys[2], uint32_t *vals[2], size_t n, bool positions,
						void *temp_v, cudaStream_t stream, const first_read_summary *look,
						int *out, onesweep_stats *stats,
						int force_plan = -1,	/* -1 cheapest, 0 8-bit places, else passes from min */
						bool precleared = false)	/* the look zeroed the look-back regions (onesweep_look_t) */
{
	uint32_t   *d_hist = onesweep_temp_hist(temp_v);
	onesweep_setup<K> setup;
	const digit_plan &plan = setup.plan;
	gpusort_status st;

	memset(stats, 0, sizeof(*stats));
	*out = 0;
	if ((st = onesweep_plan_counts<POL, K>(keys, n, positions, temp_v, stream, look, force_plan,
										   stats, &setup)) != GPUSORT_OK)
		return st;
	/* the places' offsets made by the first read's summary, each where its counts were */
	const bool	offsets_at_places = !stats->from_min && look->scanned;

	if (plan.passes == 0)
	{
		/* every key equal, or in order: already in order (stable: equal keys keep their places) */
		if (positions)
		{
			onesweep_iota_kernel<<<(unsigned) ((n + 1023) / 1024 < 65535 ? (n + 1023) / 1024 : 65535),
				1024, 0, stream>>>(vals[0], n);
			CUDA_TRY_LAUNCH("onesweep_iota_kernel");
		}
		return GPUSORT_OK;
	}
	if (!offsets_at_places && !setup.low_known)
	{
		exclusive_scan_kernel<<<plan.passes, RADIX_HIST_STRIDE, 0, stream>>>(d_hist);
		CUDA_TRY_LAUNCH("exclusive_scan_kernel");
	}

	return onesweep_run_passes<POL, K>(keys, vals, n, positions, temp_v, stream, look, precleared,
									   offsets_at_places, setup, stats, out);
}

/*
 * The whole sort (see onesweep_sort_pairs) with the policies POL: the first
 * read, one wait for it, then the passes.
 */
template <typename POL, typename K>
gpusort_status
onesweep_sort_pairs_t(K *keys[2], uint32_t *vals[2], size_t n, bool positions,
					  void *temp, cudaStream_t stream, int *out, onesweep_stats *stats,
					  int force_plan = -1)
{
	const first_read_summary *look;
	gpusort_status st;

	memset(stats, 0, sizeof(*stats));
	*out = 0;
	if (n > ONESWEEP_MAX_N)
		return GPUSORT_ERR_INVALID_ARGUMENT;
	if (n <= 1)
	{
		if (n == 1 && positions)
			CUDA_TRY(cudaMemsetAsync(vals[0], 0, sizeof(uint32_t), stream));
		return GPUSORT_OK;
	}
	if ((st = onesweep_look_t<K>(keys[0], n, temp, stream, 0, &look,
								 onesweep_status_bytes_t<POL, K>(n))) != GPUSORT_OK)
		return st;
	return onesweep_sort_counted_t<POL, K>(keys, vals, n, positions, temp, stream, look, out,
										   stats, force_plan, true);
}

#endif
