/*
 * first_read_kernels.cuh -- the first read of the keys, shared by the radix
 * sort, quicksort and the auto choice, and the radix sort's digit counts.
 *
 *   histogram_kernel  one read of the keys counts the digits of every digit
 *                     place of a plan at once (and, on request, the minimum
 *                     and maximum key, from which the pass plan is made);
 *   first_read_summary_kernel  turns a first read into its summary for the
 *                     host (key range, digits used, a sample's distinct keys);
 *   exclusive_scan_kernel, low_digit_offsets_kernel  turn each place's
 *                     counts into start offsets.
 *
 * A digit is ((key - kmin) >> shift) & mask; kmin is 0 for the plain
 * 8-bit-place plan and the minimum key for a plan over the key range.
 */
#ifndef GPUSORT_FIRST_READ_KERNELS_CUH
#define GPUSORT_FIRST_READ_KERNELS_CUH

#include <stdint.h>
#include <cuda_runtime.h>

#include "block_scan.cuh"
#include "radix_config.cuh"
#include "warp_primitives.cuh"

#define RADIX_MAX_PASSES	8		/* 64-bit keys, 8-bit digits */
#define RADIX_HIST_STRIDE	1024	/* counters per pass in the histogram */

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
 * A low place counted RADIX_WIDE_BITS wide (first_read_low_wide): its wide
 * counts kept in RADIX_LOW_WIDE_SLOT, its 8-bit counts made of them in its
 * own slot.
 */
__device__ __forceinline__ void
first_read_fold_low_wide(uint32_t *hist)
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

/*
 * Each place's counts of plan (every key counted, at most 8 digits a lane)
 * made its digits' exclusive offsets in place, a warp a place.
 */
__device__ __forceinline__ void
first_read_scan_places(uint32_t *hist, const digit_plan &plan)
{
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
		first_read_fold_low_wide(hist);
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
		first_read_scan_places(hist, plan);
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
 * A lazy histogram read's end: the keys a thread passed over (passed_rounds
 * rounds of UNROLL vectors from first, then passed_vecs single vectors from
 * vec_first) are counted where the block's keys descend (and the descent
 * announced by one thread), else noted in the head as uncounted.
 */
template <typename K, int UNROLL>
__device__ __forceinline__ void
histogram_count_passed(uint32_t *sh, const uint4 *vecs, size_t first, size_t stride,
					   size_t vec_first, unsigned passed_rounds, unsigned passed_vecs,
					   bool descends, K kmin, const digit_plan &plan, K *lo, K *hi,
					   first_read_head *head)
{
	if (__syncthreads_or(descends))
	{
		for (unsigned j = 0; j < passed_rounds; j++)
		{
			const size_t w = first + (size_t) j * UNROLL * stride;
			vec_keys<K>	u[UNROLL];

#pragma unroll
			for (int r = 0; r < UNROLL; r++)
				u[r].vec = __ldg(vecs + w + r * stride);
			histogram_count_vectors<K, UNROLL, false>(sh, u, kmin, plan, lo, hi);
		}
		for (unsigned j = 0; j < passed_vecs; j++)
		{
			vec_keys<K>	u;

			u.vec = __ldg(vecs + vec_first + (size_t) j * stride);
			histogram_count_vectors<K, 1, false>(sh, &u, kmin, plan, lo, hi);
		}
		if (threadIdx.x == 0)
			atomicOr(&head->descents, 1u);
	}
	else if (__syncthreads_or((passed_rounds | passed_vecs) != 0) && threadIdx.x == 0)
		atomicOr(&head->uncounted, 1u);
}

/*
 * A histogram block's counters zeroed before it counts: its shared ones in
 * use (words of them); with a head, the first block to start (zero_global)
 * zeroes the global ones in hist, then flags them zeroed.
 */
static __device__ __forceinline__ void
histogram_zero_counters(uint32_t *sh, int words, const digit_plan &plan, uint32_t *hist,
						first_read_head *head, const bool &zero_global)
{
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
}

/*
 * A histogram read's keys past its last whole vector, from i on a stride
 * apart: counted, their range (lo, hi) and, with a head, a descent.
 */
template <typename K>
static __device__ __forceinline__ void
histogram_count_rest(uint32_t *sh, const K *__restrict__ keys, size_t n, size_t i, size_t stride,
					 K kmin, const digit_plan &plan, const first_read_head *head, K *lo, K *hi,
					 bool *descends)
{
	for (; i < n; i += stride)
	{
		K			k = keys[i];

		*lo = min(*lo, k);
		*hi = max(*hi, k);
		if (head && i + 1 < n)
			*descends |= k > keys[i + 1];
		histogram_count(sh, k, kmin, plan, 1u);
	}
}

/*
 * A histogram block's end: with a head, a descent its threads saw (lazy
 * reads note theirs in histogram_count_passed) and the range of its keys
 * (lo, hi) into the head, once the first block has zeroed hist; then its
 * shared counts added to hist.
 */
template <typename K>
static __device__ __forceinline__ void
histogram_flush(const uint32_t *sh, int words, const digit_plan &plan, uint32_t *hist,
				first_read_head *head, bool lazy, bool descends, K *lo, K *hi)
{
	if (head)
	{
		if (!lazy && __any_sync(0xffffffffu, descends) && (threadIdx.x & 31) == 0)
			atomicOr(&head->descents, 1u);
		/* range[0] holds the complement of the minimum, so that zero presets both */
		warp_reduce_range(lo, hi);
		if ((threadIdx.x & 31) == 0)
		{
			atomicMax(&head->range[0], ~(unsigned long long) *lo);
			atomicMax(&head->range[1], (unsigned long long) *hi);
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
	histogram_zero_counters(sh, words, plan, hist, head, zero_global);

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
	histogram_count_rest<K>(sh, keys, n, nvec * PER_VEC + first, stride, kmin, plan, head, &lo, &hi,
							&descends);

	if (lazy)
		histogram_count_passed<K, UNROLL>(sh, vecs, first, stride, vec_first, passed_rounds,
										  passed_vecs, descends, kmin, plan, &lo, &hi, head);
	histogram_flush<K>(sh, words, plan, hist, head, lazy, descends, &lo, &hi);
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

#endif
