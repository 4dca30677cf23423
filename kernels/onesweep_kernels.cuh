/*
 * onesweep_kernels.cuh -- the kernels of the onesweep LSD radix sort
 * (Merrill and Grimshaw's digit passes with Adinets and Merrill's single
 * sweep: one kernel per digit place, tile offsets by decoupled look-back).
 *
 *   histogram_kernel  one read of the keys counts the digits of every digit
 *                     place of a plan at once (and, on request, the minimum
 *                     and maximum key, from which the pass plan is made);
 *   exclusive_scan_kernel  turns each place's counts into start offsets;
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
 */
#ifndef GPUSORT_ONESWEEP_KERNELS_CUH
#define GPUSORT_ONESWEEP_KERNELS_CUH

#include <stdint.h>
#include <type_traits>
#include <cuda_runtime.h>

#include "block_scan.cuh"
#include "radix_config.cuh"

#define RADIX_MAX_PASSES	8		/* 64-bit keys, 8-bit digits */
#define RADIX_HIST_STRIDE	1024	/* counters per pass in the histogram */

/* Tile status words: two flag bits over a 30-bit count. */
#define TILE_STATUS_AGGREGATE	0x40000000u
#define TILE_STATUS_INCLUSIVE	0x80000000u
#define TILE_STATUS_VALUE		0x3fffffffu

/*
 * How a onesweep pass holds its pairs in memory: keys and payloads in
 * arrays apart, or (32-bit keys) each pair packed in one 64-bit word,
 * key << 32 | payload, so that a pass reads and writes one 8-byte stream
 * (one load, one shared store and one scatter a pair where there were two,
 * and digit runs twice as long in each store).  A packed sort's first pass
 * packs, its middle ones stay packed, its last one unpacks.
 */
enum onesweep_io
{
	ONESWEEP_IO_APART = 0,		/* keys and payloads apart, in and out */
	ONESWEEP_IO_PACK = 1,		/* apart in, packed out */
	ONESWEEP_IO_PACKED = 2,		/* packed in and out */
	ONESWEEP_IO_UNPACK = 3,		/* packed in, apart out */
	ONESWEEP_IO_TO_RECORDS = 4,	/* keys in (payloads the row positions), records out */
	ONESWEEP_IO_FROM_RECORDS = 5	/* records in, keys and row positions out */
};

/*
 * Records: the two passes of a plan over key - min whose payloads are the
 * row positions (32-bit keys, shift[1] == bits[0]) carry one 32-bit word
 * a pair between them instead of a packed 64-bit pair.  After the first
 * pass the pairs lie grouped by their low digit l (low_bits wide) and, within a
 * group, in row order, so a word need not hold l, nor the high bits of
 * the row: the first pass writes
 *     ((key - kmin) >> low_bits) << idx_bits | row - epoch * epoch_tiles * TILE
 * where epoch = tile / epoch_tiles (epoch_tiles tiles of TILE rows fit
 * idx_bits = 32 - the second digit's bits), and the tiles that begin an
 * epoch write where the epoch's rows of each group begin:
 * table[l << e2_log | epoch], nondecreasing in that order (the entries of
 * epochs past the last hold the group's end), so that the place p of a
 * word gives l and epoch as the last entry <= p.  tile_range holds, for
 * each tile of the second pass, the first and last entry its places need
 * (records_range_kernel); that pass copies them into shared memory (up to
 * BINS of them; more are searched where they lie) and writes each pair's
 * key and row position.  Where the passes would share one look-back region
 * (onesweep_region_bytes), the second has its own, next_region, which each
 * tile of the first clears its part of (its tile's status words; tile 0 the
 * tile counter too), so that no memset runs between the passes.
 */
struct onesweep_records
{
	uint32_t   *table;			/* BINS << e2_log entries */
	const uint32_t *tile_range;	/* 2 a tile of the second pass */
	uint32_t	epoch_tiles;	/* first-pass tiles an epoch */
	int			e2_log;			/* log2 of the table's entries a group */
	int			idx_bits;		/* low bits of a record holding the row in its epoch */
	int			low_bits;		/* the first digit's width */
	uint32_t   *next_region;	/* the second pass's look-back region, which the first clears (or NULL) */
};

/* Longest input the 30-bit status counts allow. */
#define ONESWEEP_MAX_N			((size_t) 1 << 30)

/* The digit passes of a sort, least significant first; bits[0] is the widest. */
struct digit_plan
{
	int			passes;
	int			shift[RADIX_MAX_PASSES];
	int			bits[RADIX_MAX_PASSES];
};

/*
 * The counters in use of a plan's places (plan_digits_log2: bits[0], the
 * widest): each place's 1 << bits digits at its STRIDE; the i-th of them.
 */
__host__ __device__ __forceinline__ int
plan_digits_log2(const digit_plan &plan)
{
	return plan.passes > 0 ? plan.bits[0] : 0;
}

__device__ __forceinline__ int
plan_counter(int digits_log2, int i)
{
	return (i >> digits_log2) * RADIX_HIST_STRIDE + (i & ((1 << digits_log2) - 1));
}

/*
 * The histogram read's counters in use, place by place: the first place's
 * 1 << bits[0], then 1 << bits[1] for each later one (no later place of a
 * plan is wider: a plan over key - min narrows only its last digit, and a
 * first read widens only its lowest, first_read_low_wide); the i-th of them.
 */
__device__ __forceinline__ int
plan_hist_counters(const digit_plan &plan)
{
	return plan.passes == 0 ? 0
		: (1 << plan.bits[0]) + (plan.passes > 1 ? (plan.passes - 1) << plan.bits[1] : 0);
}

__device__ __forceinline__ int
plan_hist_counter(const digit_plan &plan, int i)
{
	const int	first = 1 << plan.bits[0];

	return i < first ? i : RADIX_HIST_STRIDE + plan_counter(plan.bits[1], i - first);
}

/*
 * The slot of the histogram (in RADIX_HIST_STRIDE counters, past the
 * places') where a first read's summary keeps the counts of the keys' low
 * RADIX_WIDE_BITS bits.
 */
#define RADIX_LOW_WIDE_SLOT		RADIX_MAX_PASSES

/*
 * Does a first read's plan count its lowest place RADIX_WIDE_BITS wide (the
 * 8-bit places above it as usual)?  Its summary then keeps those counts in
 * RADIX_LOW_WIDE_SLOT and makes the place's 8-bit counts of them, so that a
 * sort over key - min has the counts of its first digit without reading
 * the keys again: the low b <= RADIX_WIDE_BITS bits of key - min are those
 * of key less those of min, modulo 2^b (low_digit_offsets_kernel).
 */
__host__ __device__ __forceinline__ bool
first_read_low_wide(const digit_plan &plan)
{
	return plan.passes > 1 && plan.shift[0] == 0 && plan.bits[0] == RADIX_WIDE_BITS &&
		plan.shift[1] == RADIX_NARROW_BITS && plan.bits[1] == RADIX_NARROW_BITS;
}

/* Keys a first read samples for the auto choice (a block's worth). */
#define FIRST_READ_SAMPLE	256

/*
 * What a first read tells the host (first_read_summary_kernel): the key
 * range, how many digits of each place of its plan occur, and the distinct
 * keys of a sample of FIRST_READ_SAMPLE (0 where it was not asked for).
 * quicksort_sample_distinct, which takes that sample before any read,
 * reports through distinct too, and through order whether the sample is in
 * order (1 ascending, -1 descending, 0 neither); a first read leaves order
 * alone.
 */
struct first_read_summary
{
	unsigned long long range[2];	/* minimum and maximum key */
	int			used[RADIX_MAX_PASSES];
	int			top[RADIX_MAX_PASSES];	/* the count of each place's commonest digit */
	int			distinct;
	int			order;
	int			sorted;			/* every key <= the next (a first read's exact check) */
	int			complete;		/* every key's digits counted (see histogram_kernel) */
	int			scanned;		/* the counts made each place's exclusive offsets, in place */
	int			low_wide;		/* every key's low RADIX_WIDE_BITS bits counted (first_read_low_wide) */
	unsigned int seq;			/* written last: the read's number (onesweep_first_read_wait) */
};

/*
 * The head of a first read's scratch (32 bytes), zeroed by the caller with
 * one small memset; the counts after it need none (the first block to
 * start zeroes them).
 */
struct first_read_head
{
	unsigned long long range[2];	/* the minimum's complement, the maximum */
	unsigned int started;		/* blocks begun: the first zeroes the counts */
	unsigned int zeroed;		/* set once it has */
	unsigned int descents;		/* nonzero once a key > the next was seen */
	unsigned int uncounted;		/* nonzero where a lazy read left keys uncounted */
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

template <typename K>
__device__ __forceinline__ uint32_t
digit_of(K key, K kmin, int shift, uint32_t mask)
{
	return (uint32_t) ((key - kmin) >> shift) & mask;
}

/*
 * The most places a plan over K has: one a byte (a plan over key - min has
 * fewer, wider digits), so that a 32-bit key's count tests no more.
 */
template <typename K>
constexpr int hist_places = (int) sizeof(K);

template <typename K>
__device__ __forceinline__ void
histogram_count_place(uint32_t *sh, K key, K kmin, const digit_plan &plan, int p, uint32_t count)
{
	atomicAdd(&sh[p * RADIX_HIST_STRIDE + digit_of(key, kmin, plan.shift[p], (1u << plan.bits[p]) - 1)],
			  count);
}

template <typename K>
__device__ __forceinline__ void
histogram_count(uint32_t *sh, K key, K kmin, const digit_plan &plan, uint32_t count)
{
#pragma unroll
	for (int p = 0; p < hist_places<K>; p++)
		if (p < plan.passes)
			histogram_count_place(sh, key, kmin, plan, p, count);
}

/*
 * Thread t of a block of FIRST_READ_SAMPLE: sample key t of an even sample
 * of n keys into s[t] (shared, FIRST_READ_SAMPLE keys); true for one thread
 * of each distinct key, so that the threads returning true count the
 * sample's distinct keys.  The lanes of a warp that hold one key agree on
 * its lowest (match.any); that lane claims the key in a shared hash table
 * of twice the sample's slots (open addressing), where the first claim
 * wins.  Has a barrier.
 */
template <typename K>
__device__ __forceinline__ bool
sample_key_is_first(const K *__restrict__ keys, size_t n, K *s)
{
	constexpr int SLOTS = 2 * FIRST_READ_SAMPLE;
	__shared__ int slot[SLOTS];	/* the claiming thread, -1 free */
	const int	t = threadIdx.x;
	const K		key = keys[(size_t) t * n / FIRST_READ_SAMPLE];

	s[t] = key;
	for (int i = t; i < SLOTS; i += FIRST_READ_SAMPLE)
		slot[i] = -1;
	__syncthreads();
	if (__ffs(__match_any_sync(0xffffffffu, key)) - 1 != (t & 31))
		return false;

	unsigned long long h = (unsigned long long) key;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	for (int i = (int) (h & (SLOTS - 1));; i = (i + 1) & (SLOTS - 1))
	{
		const int	old = atomicCAS(&slot[i], -1, t);

		if (old < 0)
			return true;
		if (s[old] == key)
			return false;
	}
}

/*
 * The summary of a first read (one block of FIRST_READ_SAMPLE threads, after
 * the histogram kernel; on devices that have programmatic dependent launch
 * it is launched while that kernel runs and waits for its end, which hides
 * the second launch's latency): the range, each place's digits that occur, and,
 * where no place has more than sample_limit digits and the keys are not
 * all equal, the distinct keys of an even sample -- so that the host needs
 * one small result and the auto choice no second round trip.  summary is
 * device-accessible (mapped host memory, or device memory the host copies).
 */
template <typename K>
__global__ void __launch_bounds__(FIRST_READ_SAMPLE)
first_read_summary_kernel(const K *__restrict__ keys, size_t n, digit_plan plan,
						  uint32_t *__restrict__ hist, const first_read_head *head,
						  int sample_limit, first_read_summary *summary, unsigned int seq)
{
	__shared__ K s[FIRST_READ_SAMPLE];
	__shared__ int used[RADIX_MAX_PASSES],
				top[RADIX_MAX_PASSES],
				distinct;
	const bool	low_wide = first_read_low_wide(plan);

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	/* launched early (programmatic dependent launch): wait for the read's results */
	cudaGridDependencySynchronize();
#endif

	const unsigned long long lo = ~head->range[0],
				hi = head->range[1];

	/*
	 * keys all equal: one digit in every place, no counts to read; keys in
	 * order (nothing to sort, and a lazy read's counts are partial): none
	 */
	const bool	sorted = head->descents == 0;

	if (threadIdx.x < RADIX_MAX_PASSES)
	{
		used[threadIdx.x] = lo == hi ? 1 : 0;
		top[threadIdx.x] = lo == hi ? (int) n : 0;
	}
	if (threadIdx.x == 0)
		distinct = 0;
	/*
	 * a low place counted wide: its counts kept in RADIX_LOW_WIDE_SLOT, its
	 * 8-bit counts made of them in its own slot; from here on the plan is
	 * the 8-bit places'
	 */
	const bool	keep_low = low_wide && lo != hi && !sorted;

	if (keep_low)
	{
		/*
		 * thread d moves the wide counts d + 256 j and writes their sum, the
		 * 8-bit count d, over the first of them (no other thread reads it)
		 */
		constexpr int FOLD = 1 << (RADIX_WIDE_BITS - RADIX_NARROW_BITS);
		uint32_t   *wide = hist + RADIX_LOW_WIDE_SLOT * RADIX_HIST_STRIDE;

		for (int d = threadIdx.x; d < (1 << RADIX_NARROW_BITS); d += blockDim.x)
		{
			uint32_t	c[FOLD],
						sum = 0;

#pragma unroll
			for (int j = 0; j < FOLD; j++)
				c[j] = hist[d + (j << RADIX_NARROW_BITS)];
#pragma unroll
			for (int j = 0; j < FOLD; j++)
			{
				wide[d + (j << RADIX_NARROW_BITS)] = c[j];
				sum += c[j];
			}
			hist[d] = sum;
		}
	}
	if (low_wide)
		plan.bits[0] = RADIX_NARROW_BITS;

	const int	digits_log2 = plan_digits_log2(plan),
				words = plan.passes << digits_log2;

	__syncthreads();
	if (lo != hi && !sorted)
		for (int i = threadIdx.x; i < words; i += blockDim.x)
		{
			const uint32_t c = hist[plan_counter(digits_log2, i)];

			if (c)
			{
				atomicAdd(&used[i >> digits_log2], 1);
				atomicMax(&top[i >> digits_log2], (int) c);
			}
		}
	__syncthreads();

	int			most = 0;

	for (int p = 0; p < plan.passes; p++)
		most = max(most, used[p]);
	if (sample_limit > 0 && most <= sample_limit && lo != hi && !sorted)
	{
		if (sample_key_is_first(keys, n, s))
			atomicAdd(&distinct, 1);
		__syncthreads();
	}

	/*
	 * Every key counted, places of at most 8 digits a lane: each place's
	 * counts made its digits' exclusive offsets in place (read above), a
	 * warp a place, so that a radix sort on these places needs no scan of
	 * its own (onesweep_sort_counted_t: one launch fewer after the wait)
	 */
	const bool	scan = lo != hi && !sorted && head->uncounted == 0 && plan.passes > 0 &&
		(1 << digits_log2) <= 8 * 32;

	if (scan)
		for (int p = threadIdx.x >> 5; p < plan.passes; p += FIRST_READ_SAMPLE / 32)
		{
			const int	lane = threadIdx.x & 31,
						per = ((1 << plan.bits[p]) + 31) / 32;	/* digits a lane, <= 8 */
			uint32_t   *h = hist + p * RADIX_HIST_STRIDE + lane * per;
			uint32_t	c[8],
						sum = 0,
						total;

#pragma unroll
			for (int j = 0; j < 8; j++)
			{
				c[j] = j < per ? h[j] : 0;
				sum += c[j];
			}

			uint32_t	before = warp_exclusive_scan_lanes(sum, lane, &total);

#pragma unroll
			for (int j = 0; j < 8; j++)
				if (j < per)
				{
					h[j] = before;
					before += c[j];
				}
		}
	if (threadIdx.x == 0)
	{
		summary->range[0] = lo;
		summary->range[1] = hi;
		for (int p = 0; p < RADIX_MAX_PASSES; p++)
		{
			summary->used[p] = p < plan.passes ? used[p] : 0;
			summary->top[p] = p < plan.passes ? top[p] : 0;
		}
		summary->distinct = distinct;
		summary->sorted = sorted;
		summary->complete = head->uncounted == 0;
		summary->scanned = scan;
		summary->low_wide = keep_low && head->uncounted == 0;
		/* the fields before the number, so that a host that sees it may read them (mapped memory) */
		__threadfence_system();
		*(volatile unsigned int *) &summary->seq = seq;
	}
}

/* 16-byte vectors of K a thread of the histogram read loads at once */
template <typename K>
constexpr int radix_hist_unroll = sizeof(K) == 8 ? RADIX_HIST_UNROLL_64 : RADIX_HIST_UNROLL_32;

/* the one-value vote of K's histogram read (RADIX_HIST_VOTE_*) */
template <typename K>
constexpr int radix_hist_vote = sizeof(K) == 8 ? RADIX_HIST_VOTE_64 : RADIX_HIST_VOTE_32;

/* A 16-byte vector of keys as loaded. */
template <typename K>
union vec_keys
{
	uint4		vec;
	K			k[16 / sizeof(K)];
};

/*
 * Does a key of vector v (loaded in u) exceed the key after it -- the next
 * in the vector, or for the last, the first key of vector v + 1 (or of the
 * keys after the last vector) where there is one?
 */
template <typename K>
__device__ __forceinline__ bool
vector_descends(const vec_keys<K> &u, const K *__restrict__ keys, size_t v, size_t n)
{
	constexpr int PER_VEC = 16 / sizeof(K);
	const size_t next = (v + 1) * PER_VEC;
	bool		d = false;

#pragma unroll
	for (int j = 0; j + 1 < PER_VEC; j++)
		d |= u.k[j] > u.k[j + 1];
	if (next < n)
		d |= u.k[PER_VEC - 1] > __ldg(keys + next);
	return d;
}

/* Widen [*lo, *hi] to the keys of N vectors. */
template <typename K, int N>
__device__ __forceinline__ void
vectors_range(const vec_keys<K> *u, K *lo, K *hi)
{
#pragma unroll
	for (int r = 0; r < N; r++)
#pragma unroll
		for (int j = 0; j < 16 / (int) sizeof(K); j++)
		{
			*lo = min(*lo, u[r].k[j]);
			*hi = max(*hi, u[r].k[j]);
		}
}

/*
 * Count N vectors of keys a thread loaded into sh and its range.  With
 * VOTE (the one-value vote) a warp whose vectors all hold one value counts
 * them with one add per place by its first lane, and true is returned (to
 * the whole warp) when it did.
 */
template <typename K, int N, bool VOTE>
__device__ __forceinline__ bool
histogram_count_vectors(uint32_t *sh, const vec_keys<K> *u, K kmin, const digit_plan &plan,
						K *lo, K *hi)
{
	constexpr int PER_VEC = 16 / sizeof(K);

	if (VOTE)
	{
		const unsigned lanes = __activemask();
		const int	leader = __ffs(lanes) - 1;
		const K		k0 = __shfl_sync(lanes, u[0].k[0], leader);
		bool		same = true;

#pragma unroll
		for (int r = 0; r < N; r++)
#pragma unroll
			for (int j = 0; j < PER_VEC; j++)
				same &= u[r].k[j] == k0;
		if (__all_sync(lanes, same))
		{
			*lo = min(*lo, k0);
			*hi = max(*hi, k0);
			if ((int) (threadIdx.x & 31) == leader)
				histogram_count(sh, k0, kmin, plan, (uint32_t) __popc(lanes) * N * PER_VEC);
			return true;
		}
	}
	vectors_range<K, N>(u, lo, hi);
	/* a place at a time over all the keys in flight (32-bit keys at 100M 7-15% faster than key by key) */
#pragma unroll
	for (int p = 0; p < hist_places<K>; p++)
		if (p < plan.passes)
#pragma unroll
			for (int r = 0; r < N; r++)
#pragma unroll
				for (int j = 0; j < PER_VEC; j++)
					histogram_count_place(sh, u[r].k[j], kmin, plan, p, 1u);
	return false;
}

/*
 * Digit counts of every place of the plan into hist (passes * STRIDE).  A
 * plain read's hist is zeroed by the caller.  A first read (head not NULL)
 * zeroes it itself -- the first block to start does, and the others wait
 * for that before they add their counts, which is safe because that block
 * is running -- and also finds the minimum and maximum key (the minimum's
 * complement into range[0], so that the head's one memset presets both);
 * first_read_summary_kernel then sums it up for the host.  A first read
 * also compares every key with the next (each vector's keys, and its last
 * key with the next vector's first) and notes any descent in the head, so
 * that keys already in order are known exactly.
 *
 * A key adds the constant 1 to each place's counter, which the compiler
 * makes the warp-aggregated shared increment.  With the vote (VOTE), a
 * warp whose UNROLL vectors of keys in flight (and, for a small input of
 * 64-bit keys, its one vector) all hold one value (keys of one value, long
 * runs) counts them with one add per place by its first lane: one vote
 * per round instead of an increment per key and place.  Adaptive (64-bit
 * keys'), a warp stops voting after a vote that did not find one value
 * and tries again every RADIX_HIST_VOTE_RETRY-th round, so that keys of
 * many values pay for few votes (radix_config.cuh).
 *
 * LAZY (a first read of a plan with places, of fewer than
 * RADIX_LAZY_COUNT_MAX_N keys; its own instance, which costs registers):
 * a thread counts nothing until its own keys
 * show a descent, since keys in order need no counts.  At the end, a block
 * whose keys show a descent counts what its threads passed over (read
 * again, from the cache at these sizes); a block whose keys show none
 * notes in the head that it left keys uncounted.  Such keys are in order
 * -- the summary says so -- or, where another block found a descent, the
 * summary says that not every key was counted, and the sort plans from
 * the key range and counts again (onesweep_plan_from_look).  A block does not wait
 * to learn what the others found: keys of many values descend in every
 * block, and keys in order but for a few descents pay one more read.
 */
template <typename K, int UNROLL = radix_hist_unroll<K>,
		  int VOTE = radix_hist_vote<K>, bool LAZY = false>
__global__ void __launch_bounds__(RADIX_HIST_THREADS)
histogram_kernel(const K *__restrict__ keys, size_t n, K kmin, digit_plan plan,
				 uint32_t *__restrict__ hist, first_read_head *head)
{
	__shared__ uint32_t sh[RADIX_MAX_PASSES * RADIX_HIST_STRIDE];
	const int	words = plan_hist_counters(plan);	/* the counters in use */
	const size_t stride = (size_t) gridDim.x * blockDim.x;
	const size_t first = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
	constexpr int PER_VEC = 16 / sizeof(K);
	const size_t nvec = n / PER_VEC;
	const uint4 *vecs = reinterpret_cast<const uint4 *>(keys);
	K			lo = ~(K) 0,
				hi = 0;
	size_t		v = first;

	__shared__ bool zero_global;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	/* a first read's summary kernel may start now, to wait for this one's end */
	if (head)
		cudaTriggerProgrammaticLaunchCompletion();
#endif
	if (head && threadIdx.x == 0)
		zero_global = atomicAdd(&head->started, 1u) == 0;
	for (int i = threadIdx.x; i < words; i += blockDim.x)
		sh[plan_hist_counter(plan, i)] = 0;
	__syncthreads();
	if (head && zero_global)
	{
		/*
		 * the first block: the counters in use, then the flag (a place's
		 * counters past its digits are never read for its digits' offsets)
		 */
		for (int i = threadIdx.x; i < words; i += blockDim.x)
			hist[plan_hist_counter(plan, i)] = 0;
		__threadfence();
		__syncthreads();
		if (threadIdx.x == 0)
			atomicExch(&head->zeroed, 1u);
	}

	bool		descends = false;	/* a first read's: a key > the next seen */

	/*
	 * a warp votes while its votes find one value, and every
	 * RADIX_HIST_VOTE_RETRY-th round; never where the plan counts no place
	 * (a range read: quicksort's)
	 */
	const bool	may_vote = VOTE != RADIX_HIST_VOTE_NEVER && plan.passes > 0;
	bool		voting = may_vote;
	unsigned	round = 0;

	/* lazy: this thread counts once its keys descend; the rounds and vectors it passed over */
	const bool	lazy = LAZY && head != NULL && plan.passes > 0;
	bool		counting = !lazy;
	unsigned	passed_rounds = 0,
				passed_vecs = 0;

	/* UNROLL vectors of keys in flight per thread, then their counts */
	for (; v + (UNROLL - 1) * stride < nvec; v += UNROLL * stride, round++)
	{
		vec_keys<K>	u[UNROLL];

#pragma unroll
		for (int r = 0; r < UNROLL; r++)
			u[r].vec = __ldg(vecs + v + r * stride);
		/* a thread that has seen a descent need not look for more (one is all the head notes) */
		if (head && !descends)
#pragma unroll
			for (int r = 0; r < UNROLL; r++)
				descends |= vector_descends(u[r], keys, v + r * stride, n);
		if (!counting && !(counting = descends))
		{
			vectors_range<K, UNROLL>(u, &lo, &hi);
			passed_rounds++;
			continue;
		}
		if (may_vote && (VOTE == RADIX_HIST_VOTE_ALWAYS ||
						 (voting || round % RADIX_HIST_VOTE_RETRY == 0)))
			voting = histogram_count_vectors<K, UNROLL, true>(sh, u, kmin, plan, &lo, &hi);
		else
			histogram_count_vectors<K, UNROLL, false>(sh, u, kmin, plan, &lo, &hi);
	}
	/*
	 * The rest a vector at a time, with the one-value vote per vector where
	 * the input is small: 64-bit keys (eight places a key) of at most a
	 * vector a thread, 32-bit keys of at most one round of UNROLL (a grid
	 * sized for one round leaves up to half the input to this loop; one
	 * value at 4M keys 1.12-1.16 -> 1.06-1.11 of quicksort's time, the
	 * rest level, bench/results/auto_look-h100.txt); on large inputs it
	 * costs more than it saves.
	 */
	const bool	vote = may_vote &&
		(sizeof(K) == 8 ? nvec <= stride : nvec <= (size_t) UNROLL * stride);
	const size_t vec_first = v;

	for (; v < nvec; v += stride)
	{
		vec_keys<K>	u;

		u.vec = __ldg(vecs + v);
		if (head && !descends)
			descends |= vector_descends(u, keys, v, n);
		if (!counting && !(counting = descends))
		{
			vectors_range<K, 1>(&u, &lo, &hi);
			passed_vecs++;
			continue;
		}
		if (vote)
			histogram_count_vectors<K, 1, true>(sh, &u, kmin, plan, &lo, &hi);
		else
			histogram_count_vectors<K, 1, false>(sh, &u, kmin, plan, &lo, &hi);
	}
	for (size_t i = nvec * PER_VEC + first; i < n; i += stride)
	{
		K			k = keys[i];

		lo = min(lo, k);
		hi = max(hi, k);
		if (head && i + 1 < n)
			descends |= k > keys[i + 1];
		histogram_count(sh, k, kmin, plan, 1u);
	}

	if (lazy)
	{
		/*
		 * the keys passed over: counted where the block's keys descend (and
		 * the descent announced by one thread), else noted in the head
		 */
		if (__syncthreads_or(descends))
		{
			for (unsigned j = 0; j < passed_rounds; j++)
			{
				const size_t w = first + (size_t) j * UNROLL * stride;
				vec_keys<K>	u[UNROLL];

#pragma unroll
				for (int r = 0; r < UNROLL; r++)
					u[r].vec = __ldg(vecs + w + r * stride);
				histogram_count_vectors<K, UNROLL, false>(sh, u, kmin, plan, &lo, &hi);
			}
			for (unsigned j = 0; j < passed_vecs; j++)
			{
				vec_keys<K>	u;

				u.vec = __ldg(vecs + vec_first + (size_t) j * stride);
				histogram_count_vectors<K, 1, false>(sh, &u, kmin, plan, &lo, &hi);
			}
			if (threadIdx.x == 0)
				atomicOr(&head->descents, 1u);
		}
		else if (__syncthreads_or((passed_rounds | passed_vecs) != 0) && threadIdx.x == 0)
			atomicOr(&head->uncounted, 1u);
	}
	if (head)
	{
		if (!lazy && __any_sync(0xffffffffu, descends) && (threadIdx.x & 31) == 0)
			atomicOr(&head->descents, 1u);
		/* range[0] holds the complement of the minimum, so that zero presets both */
		warp_reduce_range(&lo, &hi);
		if ((threadIdx.x & 31) == 0)
		{
			atomicMax(&head->range[0], ~(unsigned long long) lo);
			atomicMax(&head->range[1], (unsigned long long) hi);
		}
		/* the counters zeroed by the first block before adding to them */
		if (threadIdx.x == 0)
			while (atomicAdd(&head->zeroed, 0u) == 0)
				;
	}
	__syncthreads();
	for (int i = threadIdx.x; i < words; i += blockDim.x)
	{
		const int	w = plan_hist_counter(plan, i);

		if (sh[w])
			atomicAdd(&hist[w], sh[w]);
	}
}

/*
 * The exclusive offsets of c, thread t's count (a block of RADIX_HIST_STRIDE
 * threads, one counter each), into h[t].
 */
__device__ __forceinline__ void
block_counts_to_offsets(uint32_t c, uint32_t *h)
{
	__shared__ uint32_t warp_sums[RADIX_HIST_STRIDE / 32];
	uint32_t	total;

	h[threadIdx.x] = block_exclusive_scan<RADIX_HIST_STRIDE / 32>(c, warp_sums, &total);
}

/* Block b turns counts[b * STRIDE ...] into exclusive offsets, in place. */
static __global__ void __launch_bounds__(RADIX_HIST_STRIDE)
exclusive_scan_kernel(uint32_t *hist)
{
	uint32_t   *h = hist + (size_t) blockIdx.x * RADIX_HIST_STRIDE;

	block_counts_to_offsets(h[threadIdx.x], h);
}

/*
 * The first digit's offsets of a sort over key - min (its low bits, mask
 * < 2^RADIX_WIDE_BITS) from a first read's counts of the keys' low
 * RADIX_WIDE_BITS bits (first_read_low_wide), into offsets; and the
 * counts of the next digit, which the first pass makes, zeroed (next_counts
 * not NULL).  Blocks of RADIX_HIST_STRIDE threads: block 0 writes those;
 * with table (records), every block makes the offsets and fills its share
 * of the table (records_fill_kernel's work), so that no launch more is
 * needed for it.
 */
static __global__ void __launch_bounds__(RADIX_HIST_STRIDE)
low_digit_offsets_kernel(const uint32_t *__restrict__ low_counts, uint32_t kmin_low, uint32_t mask,
						 uint32_t *offsets, uint32_t *next_counts, uint32_t *table = NULL,
						 uint32_t bins = 0, int e2_log = 0, uint32_t n = 0)
{
	__shared__ uint32_t c[RADIX_HIST_STRIDE],
				o[RADIX_HIST_STRIDE];
	const uint32_t t = threadIdx.x;

	static_assert((1 << RADIX_WIDE_BITS) <= RADIX_HIST_STRIDE, "a thread a low value");
	c[t] = 0;
	if (next_counts != NULL && blockIdx.x == 0)
		next_counts[t] = 0;
	__syncthreads();
	if (t < (1u << RADIX_WIDE_BITS) && low_counts[t] != 0)
		atomicAdd(&c[(t - kmin_low) & mask], low_counts[t]);
	__syncthreads();
	block_counts_to_offsets(c[t], o);
	if (blockIdx.x == 0)
		offsets[t] = o[t];
	if (table != NULL)
	{
		/* records: every entry of a digit its group's end (n past the last), written in order */
		__syncthreads();
		for (uint32_t i = blockIdx.x * RADIX_HIST_STRIDE + t; i < bins << e2_log;
			 i += gridDim.x * RADIX_HIST_STRIDE)
		{
			const uint32_t l = i >> e2_log;

			table[i] = l + 1 < bins ? o[l + 1] : n;
		}
	}
}

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

/*
 * BYTES (4 or 16) from global to shared memory without passing through
 * registers (sm_80+; 16-byte copies skip L1, which only that size may).
 */
template <int BYTES>
__device__ __forceinline__ void
copy_async(void *shared_dst, const void *global_src)
{
	static_assert(BYTES == 4 || BYTES == 16, "the sizes used");
#if __CUDA_ARCH__ >= 800
	unsigned	dst = (unsigned) __cvta_generic_to_shared(shared_dst);

	if constexpr (BYTES == 16)
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n"::"r"(dst), "l"(global_src));
	else
		asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n"::"r"(dst), "l"(global_src));
#else
	typedef typename std::conditional<BYTES == 16, uint4, uint32_t>::type word;

	*(word *) shared_dst = *(const word *) global_src;
#endif
}

/* Wait for this thread's copy_async copies (others': __syncthreads after). */
__device__ __forceinline__ void
copy_async_wait_all()
{
#if __CUDA_ARCH__ >= 800
	asm volatile("cp.async.commit_group;\ncp.async.wait_all;\n":::"memory");
#endif
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
	constexpr int THREADS = P::THREADS;
	constexpr bool IN_PACKED = onesweep_io_packed_in(IO);
	constexpr bool HOLD = onesweep_held_payloads<P, IO>() > 1;
	const int	t = threadIdx.x;

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
		{
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
		else if constexpr (IO == ONESWEEP_IO_TO_RECORDS)
		{
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
	constexpr int BINS = P::BINS;
	constexpr int ITEMS = P::ITEMS;
	constexpr int THREADS = P::THREADS;
	constexpr int BPT = P::BINS_PER_THREAD;
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
	if (staged)
		for (int c = t; c < P::TILE / 4; c += THREADS)
			copy_async<16>(&sh.staged_vals[4 * c], &vals_in[tile_base + 4 * c]);

	/* digit of item i; past the end the last digit, so they rank after every real key */
#define ITEM_DIGIT(i) \
	(FULL || slice + (i) * 32 < valid \
	 ? (IO == ONESWEEP_IO_FROM_RECORDS ? ((uint32_t) k[i] >> rec.idx_bits) & mask \
		: digit_of(FOLD ? (K) ((uint32_t) k[i] & RECORDS_REL_MASK) : k[i], dbase, shift, mask)) \
	 : (uint32_t) (BINS - 1))

	uint32_t	cnt[BPT],		/* the tile's keys of this thread's digits */
				bstart[BPT];	/* their first places in the tile */

	if constexpr (P::WARP_STARTS_FIRST)
	{
		/*
		 * CUB's order: each warp's digit counts first (published as the
		 * tile's), made each warp's first place of a digit in the tile, so
		 * that the ranking's counter adds give every key its place
		 */
		uint32_t   *mw = sh.match_words + warp * BINS;

		static_assert(IO != ONESWEEP_IO_TO_RECORDS && IO != ONESWEEP_IO_FROM_RECORDS,
					  "records: policies that rank before they count");
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
			atomicAdd(&sh.warp_place[warp * BINS + ITEM_DIGIT(i)], 1u);
		__syncthreads();
		tile_digit_scan<P>(sh.misc, sh.warp_place,
						   tile_digit_counts<P>(sh.warp_place, status, tile, true, cnt), cnt, bstart);
		__syncthreads();
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
			r.set(i, warp_digit_rank<P, false>(ITEM_DIGIT(i), mw, sh.warp_place + warp * BINS));
		tile_look_back<P>(sh.digit_base, global_start, status, tile, cnt, bstart);
	}
	else
	{
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
				atomicAdd(&sh.block_start[ITEM_DIGIT(i)], 1u);
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
		{
			uint32_t   *packed = reinterpret_cast<uint32_t *>(sh.warp_count + warp * BINS);
			uint32_t   *mw = sh.match_words + warp * BINS;

#pragma unroll
			for (int i = 0; i < ITEMS; i++)
			{
				const uint32_t d = ITEM_DIGIT(i);
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
		__syncthreads();

		/*
		 * per digit: counts over the warps, published, their starts in the
		 * tile, and each warp's first place in the tile, so that a key's
		 * place takes one shared read
		 */
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
										 sh.warp_count[warp * BINS + ITEM_DIGIT(i)]);
			else if constexpr (onesweep_io_packs_places(IO))
				r.set(i, r[i] + sh.warp_count[warp * BINS + ITEM_DIGIT(i)]);
			else
				r.set(i, (r[i] & 0xffffu) + sh.warp_count[warp * BINS + (r[i] >> 16)]);
	}
#undef ITEM_DIGIT
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
