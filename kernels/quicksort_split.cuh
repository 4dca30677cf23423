/*
 * quicksort_split.cuh -- GPU-Quicksort's split rounds: the pivot sample,
 * count, offsets and scatter kernels, and the scatter's block shapes and
 * launch (quicksort.cu plans the rounds: qs_split_rounds).
 */
#ifndef GPUSORT_QUICKSORT_SPLIT_CUH
#define GPUSORT_QUICKSORT_SPLIT_CUH

#include <stdint.h>
#include "block_scan.cuh"
#include "cuda_check.cuh"
#include "device_smem.cuh"
#include "block_primitives.cuh"
#include "warp_primitives.cuh"
#include "quicksort_config.cuh"

/*
 * The split rounds (phase one on today's hardware): each sequence longer
 * than QS_SPLIT_MIN is cut into up to 2k + 1 buckets around k <=
 * QS_SPLIT_PIVOTS pivots, the quantiles of a sample of its keys, in one
 * count pass and one scatter pass over it, many blocks per sequence (as
 * the paper's phase one shares a sequence among blocks).  A two-way split
 * moves every pair once per halving, log2(n / leaf) times in all, which on
 * an H100 takes longer than a radix sort by itself; a split into hundreds
 * of buckets moves it twice for 10^8 pairs.  Bucket 2j is the keys
 * strictly between pivots j - 1 and j, bucket 2j + 1 those equal to pivot j
 * (finished), as in the multi-pivot round, so repeated keys cannot keep a
 * bucket from shrinking.  Each task (a scatter block's section of one
 * sequence) has its pairs of each bucket counted (by several count
 * blocks: the count needs little shared memory, so more of its blocks fit
 * a SM); a scan per sequence turns the counts into each task's first
 * place in each bucket, so the scatter needs no atomics and the result
 * does not depend on the blocks' pace.
 */
#define QS_SPLIT_PIVOTS	255
#define QS_SPLIT_BUCKETS (2 * QS_SPLIT_PIVOTS + 1)
#define QS_SPLIT_BITS	9			/* bucket numbers and the sentinel QS_SPLIT_BUCKETS */
static_assert(QS_SPLIT_BUCKETS == (1 << QS_SPLIT_BITS) - 1, "the sentinel is all ones");
#define QS_SPLIT_SAMPLE	4096		/* keys sampled per sequence (16 per pivot at most pivots) */
#define QS_SPLIT_TARGET	(QS_LEAF / 2)	/* pairs a bucket is meant to get */
#define QS_SPLIT_MIN	(8 * QS_LEAF)	/* longer sequences are split; shorter ones are leaves */
#define QS_SPLIT_OFFSET_THREADS 512	/* >= QS_SPLIT_BUCKETS: a thread a bucket */

/*
 * A split scatter's block: THREADS threads moving ITEMS pairs each a step,
 * and its dynamic shared memory: the warps' 16-bit counters, then the
 * step's keys; the warps' match words, then its payloads; its buckets; its
 * payloads as read.
 */
#define QS_SPLIT_BINS	(1 << QS_SPLIT_BITS)	/* bucket numbers and the sentinel */

template <typename K, int THREADS_, int ITEMS_>
struct qs_scatter_shape
{
	static constexpr int THREADS = THREADS_;
	static constexpr int ITEMS = ITEMS_;
	static constexpr int WARPS = THREADS_ / 32;
	static constexpr int STEP = THREADS_ * ITEMS_;
	static constexpr int BINS = QS_SPLIT_BINS;	/* as a onesweep policy names them */
	static constexpr int BINS_PER_THREAD = (BINS + THREADS_ - 1) / THREADS_;
	static constexpr size_t COUNTER_BYTES = (size_t) WARPS * QS_SPLIT_BINS * sizeof(uint16_t);
	static constexpr size_t MATCH_BYTES = (size_t) WARPS * QS_SPLIT_BINS * sizeof(uint32_t);
	static constexpr size_t KEYS_BYTES = (size_t) STEP * sizeof(K) > COUNTER_BYTES
		? (size_t) STEP * sizeof(K) : COUNTER_BYTES;
	static constexpr size_t VALS_BYTES = (size_t) STEP * sizeof(uint32_t) > MATCH_BYTES
		? (size_t) STEP * sizeof(uint32_t) : MATCH_BYTES;
	static constexpr size_t SMEM = KEYS_BYTES + VALS_BYTES +
		(size_t) STEP * (sizeof(uint16_t) + sizeof(uint32_t));

	static_assert(STEP < 65536, "16-bit counters");
	static_assert(QS_SPLIT_BINS % THREADS_ == 0 || THREADS_ % QS_SPLIT_BINS == 0,
				  "whole buckets a thread");
};

template <typename K>
struct qs_split_items
{
	static constexpr int ITEMS = 8;	/* pairs a thread counts per step */
	static constexpr int STEP = QS_THREADS * ITEMS;
	/*
	 * The scatter's shapes: a long step (threads a block, pairs a thread)
	 * whose shared memory a block of an H100 may have (217 KB for 32-bit
	 * keys, 220 KB for 64-bit ones), so that a step writes long runs of
	 * each bucket at once (the runs, not the blocks a SM, set its pace: see
	 * qs_split_scatter_kernel); mid for devices that give a block 99 KB
	 * (96 / 92 KB), compact for those that give it 48 (34 KB).
	 */
	typedef qs_scatter_shape<K, 512, sizeof(K) == 4 ? 30 : 20>
				scatter_long;
	typedef qs_scatter_shape<K, 512, sizeof(K) == 4 ? 12 : 8> scatter_mid;
	typedef qs_scatter_shape<K, 256, 4> scatter_compact;
};

struct qs_split_seq
{
	uint32_t	start,
				end,
				kmax,			/* most pivots it may get */
				pivot_base,		/* its pivots' place in the round's pivot array */
				bucket_base,	/* its bucket totals' place in the round's totals */
				first_task,
				ntasks,
				pad;
};

/* How the split scatter ranks its buckets (warp_digit_rank): as the onesweep pass does. */
struct qs_rank_policy
{
	static constexpr int RANK = RANK_ATOMIC_OR;
	static constexpr bool LEADER_CLEARS = true;
	static constexpr int BITS = QS_SPLIT_BITS;
};

struct qs_split_task
{
	uint32_t	seq,
				begin,
				end,
				count_base;		/* its 2 kmax + 1 counts (then first places) */
};

/* A 32-bit mix (for the sample's places). */
__device__ __forceinline__ uint32_t
qs_hash(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

/*
 * One block a sequence: QS_SPLIT_SAMPLE keys, one at a random place in each
 * of as many equal strides of the sequence, sorted in shared memory
 * (bitonic); the k = kmax quantiles between them, repeats dropped, are the
 * pivots (npiv[seq] of them, at least one).
 */
template <typename K>
__global__ void __launch_bounds__(QS_THREADS)
qs_split_pivots_kernel(const qs_split_seq *seqs, const K *__restrict__ keys, K *pivots,
					   uint32_t *npiv)
{
	__shared__ K s[QS_SPLIT_SAMPLE];
	__shared__ uint32_t wsum[QS_WARPS];
	const qs_split_seq sq = seqs[blockIdx.x];
	const uint32_t len = sq.end - sq.start,
				stride = len / QS_SPLIT_SAMPLE;	/* >= 4: len > QS_SPLIT_MIN */
	const int	t = threadIdx.x;

	for (int i = t; i < QS_SPLIT_SAMPLE; i += QS_THREADS)
	{
		const uint32_t at = (uint32_t) ((uint64_t) i * len / QS_SPLIT_SAMPLE) +
			qs_hash((uint32_t) i * 0x9e3779b9u ^ sq.start ^ (len << 7)) % stride;

		s[i] = keys[sq.start + at];
	}
	for (int size = 2; size <= QS_SPLIT_SAMPLE; size <<= 1)
		for (int half = size >> 1; half > 0; half >>= 1)
		{
			__syncthreads();
			for (int i = t; i < QS_SPLIT_SAMPLE / 2; i += QS_THREADS)
			{
				const int	lo = 2 * i - (i & (half - 1)),
							hi = lo + half;
				const K		a = s[lo],
							b = s[hi];

				if ((a > b) == ((lo & size) == 0))
				{
					s[lo] = b;
					s[hi] = a;
				}
			}
		}
	__syncthreads();

	/* candidate j: the (j + 1)-th of kmax + 1 quantiles; kept unless it repeats */
	const int	k = (int) sq.kmax;	/* <= QS_SPLIT_PIVOTS < QS_THREADS */
	K			cand = 0;
	bool		keep = false;

	if (t < k)
	{
		cand = s[(size_t) (t + 1) * QS_SPLIT_SAMPLE / (k + 1)];
		keep = t == 0 || cand != s[(size_t) t * QS_SPLIT_SAMPLE / (k + 1)];
	}

	uint32_t	total;
	const uint32_t before = block_exclusive_scan<QS_WARPS>(keep, wsum, &total);

	if (keep)
		pivots[sq.pivot_base + before] = cand;
	if (t == 0)
		npiv[blockIdx.x] = total;
}

/*
 * The bucket of a key in a split round: the sequence's k sorted pivots in
 * shared memory and a table over the range from the lowest pivot to the
 * highest cut into QS_SPLIT_LUT cells of 2^shift keys each (shift the
 * least that makes that many cover it): cell e holds the pivots whose cell
 * is below e, so a key of cell e has at least lut[e] and at most lut[e + 1]
 * pivots below it, and a binary search between the two finds the count --
 * no step where the pivots spread evenly over the cells (a cell a pivot or
 * none), eight at most where they crowd into one.  Where the eight-level
 * search over all pivots read eight shared words a key and kept the count
 * issue-bound, this reads two bytes and a pivot or two.  Where over a
 * quarter of the pivots share their cell with seven others or more (keys
 * bunched far below their range, as ANDs of random words are), the
 * searches would take longer and part ways within a warp: those sequences
 * keep the eight-level search, over the pivots laid out as a search tree
 * in level order (piv[1] the median, the children of node j at 2j and
 * 2j + 1), so that the nodes a warp reads at one depth lie in different
 * banks while the level has at most 32 of them.
 */
#define QS_SPLIT_LUT_BITS 11
#define QS_SPLIT_LUT	(1 << QS_SPLIT_LUT_BITS)

template <typename K>
struct qs_split_lookup
{
	K			piv[QS_SPLIT_PIVOTS];
	K			tree[QS_SPLIT_PIVOTS + 1];	/* crowded: the pivots as a search tree */
	uint8_t		lut[QS_SPLIT_LUT + 1];	/* counts of at most QS_SPLIT_PIVOTS (255) */
	K			lo,
				hi;
	int			shift,
				crowded;
};

/* The cell of key lo <= x <= hi, of a table from lo in cells of 2^shift keys. */
template <typename K>
__device__ __forceinline__ uint32_t
qs_split_cell(K x, K lo, int shift)
{
	return (uint32_t) ((x - lo) >> shift);
}

/*
 * The start of the count: the task's sequence's pivots and their table
 * into L, the block's 2k + 1 bucket counts zeroed (barriers inside, every
 * thread calls it); returns k.
 */
template <typename K>
__device__ __forceinline__ int
qs_split_begin(const qs_split_task &task, const qs_split_seq *seqs, const K *pivots,
			   const uint32_t *npiv, qs_split_lookup<K> &L, uint32_t *cnt)
{
	const int	k = (int) npiv[task.seq];
	const uint32_t base = seqs[task.seq].pivot_base;

	for (int j = threadIdx.x; j < k; j += QS_THREADS)
		L.piv[j] = pivots[base + j];
	for (int b = threadIdx.x; b < 2 * k + 1; b += QS_THREADS)
		cnt[b] = 0;
	__syncthreads();

	const K		lo = L.piv[0],
				hi = L.piv[k - 1],
				span = hi - lo;
	const int	bits = span == 0 ? 0 : (int) (8 * sizeof(K)) -
		(sizeof(K) == 8 ? __clzll((long long) span) : __clz((int) span)),
				shift = bits > QS_SPLIT_LUT_BITS ? bits - QS_SPLIT_LUT_BITS : 0;

	/* cell e: the pivots of a cell below e (their cells rise with them) */
	for (int e = threadIdx.x; e <= QS_SPLIT_LUT; e += QS_THREADS)
	{
		int			a = 0,
					b = k;

		while (a < b)
		{
			const int	mid = (a + b) >> 1;

			if (qs_split_cell(L.piv[mid], lo, shift) < (uint32_t) e)
				a = mid + 1;
			else
				b = mid;
		}
		L.lut[e] = (uint8_t) a;
	}
	__syncthreads();

	/* pivots in cells of eight or more */
	bool		bunched = false;

	if (threadIdx.x < k)
	{
		const uint32_t e = qs_split_cell(L.piv[threadIdx.x], lo, shift);

		bunched = L.lut[e + 1] - L.lut[e] >= 8;
	}

	const bool	crowded = __syncthreads_count(bunched) > k / 4;

	for (int j = 1 + threadIdx.x; crowded && j < QS_SPLIT_PIVOTS + 1; j += QS_THREADS)
	{
		const int	depth = 31 - __clz(j),
					i = ((2 * (j - (1 << depth)) + 1) << (7 - depth)) - 1;	/* its rank */

		L.tree[j] = i < k ? L.piv[i] : ~(K) 0;
	}
	if (threadIdx.x == 0)
	{
		L.lo = lo;
		L.hi = hi;
		L.shift = shift;
		L.crowded = crowded;
	}
	__syncthreads();
	return k;
}

/*
 * The bucket of x: 2j for the keys strictly between pivots j - 1 and j
 * (j of them below x), 2j + 1 for those equal to pivot j.
 */
template <typename K>
__device__ __forceinline__ uint32_t
qs_split_bucket(K x, const qs_split_lookup<K> &L, K lo, K hi, int k, bool crowded)
{
	static_assert(QS_SPLIT_PIVOTS <= 255, "byte counts in the table");
	static_assert(QS_SPLIT_PIVOTS + 1 == 256, "eight levels");
	if (crowded)
	{
		/* eight steps down the tree without branches, keeping the last node not below x */
		int			j = 1;
		K			next = ~(K) 0;	/* the first pivot not below x */

#pragma unroll
		for (int d = 0; d < 8; d++)
		{
			const K		p = L.tree[j];
			const bool	below = p < x;

			next = below ? next : p;
			j = 2 * j + below;
		}

		const int	a = min(j - 256, k);	/* pivots below x */

		return 2 * a + (a < k && next == x);
	}
	if (x < lo)
		return 0;
	if (x > hi)
		return 2 * k;

	const uint32_t e = qs_split_cell(x, L.lo, L.shift);
	int			a = L.lut[e],
				b = L.lut[e + 1];

	while (a < b)
	{
		const int	mid = (a + b) >> 1;

		if (L.piv[mid] < x)
			a = mid + 1;
		else
			b = mid;
	}
	return 2 * a + (a < k && L.piv[a] == x);
}

/*
 * Each task's pairs of each bucket of its sequence, and each pair's bucket
 * (to bid, at its place), which the scatter reads instead of searching
 * the pivots again.  parts blocks share a task (block b takes part
 * b % parts of task b / parts: its steps part, part + parts, ...), so
 * that the count, which needs little shared memory, has more blocks in
 * flight than the scatter's tasks; each adds its counts to the task's
 * (zeroed before).
 */
template <typename K>
__global__ void __launch_bounds__(QS_THREADS)
qs_split_count_kernel(const qs_split_task *tasks, const qs_split_seq *seqs, const K *pivots,
					  const uint32_t *npiv, const K *__restrict__ keys, uint32_t *counts,
					  uint16_t *__restrict__ bid, uint32_t parts)
{
	constexpr int ITEMS = qs_split_items<K>::ITEMS;
	constexpr uint32_t STEP = qs_split_items<K>::STEP;
	__shared__ qs_split_lookup<K> L;
	__shared__ uint32_t cnt[QS_SPLIT_BUCKETS];
	const qs_split_task task = tasks[blockIdx.x / parts];
	const uint32_t part = blockIdx.x % parts,
				first = task.begin + part * STEP;
	const int	t = threadIdx.x,
				lane = t & 31;
	K			next[ITEMS];	/* the next step's keys, loaded while this one's are searched */
	auto		load = [&](uint32_t step) {
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			const uint32_t idx = step + i * QS_THREADS + t;

			next[i] = idx < task.end ? keys[idx] : (K) 0;
		}
	};

	/* the first keys on their way while the table is made */
	if (first < task.end)
		load(first);

	const int	k = qs_split_begin<K>(task, seqs, pivots, npiv, L, cnt),
				nb = 2 * k + 1;
	const K		lo = L.lo,
				hi = L.hi;
	const bool	crowded = L.crowded;

	for (uint32_t step = first; step < task.end; step += parts * STEP)
	{
		K			key[ITEMS];

#pragma unroll
		for (int i = 0; i < ITEMS; i++)
			key[i] = next[i];
		if (step + parts * STEP < task.end)
			load(step + parts * STEP);
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			const uint32_t idx = step + i * QS_THREADS + t,
						b = idx < task.end ? qs_split_bucket(key[i], L, lo, hi, k, crowded) : QS_SPLIT_BUCKETS,
						b0 = __shfl_sync(0xffffffffu, b, 0);

			if (idx < task.end)
				bid[idx] = (uint16_t) b;

			/*
			 * Counts need no ranks: a shared add a pair, or one for the
			 * warp where all its pairs share a bucket (runs of sorted keys)
			 */
			if (__all_sync(0xffffffffu, b == b0))
			{
				if (lane == 0 && b0 < QS_SPLIT_BUCKETS)
					atomicAdd(&cnt[b0], 32u);
			}
			else if (b < QS_SPLIT_BUCKETS)
				atomicAdd(&cnt[b], 1u);
		}
	}
	__syncthreads();
	for (int b = t; b < nb; b += QS_THREADS)
		if (cnt[b] != 0)
			atomicAdd(&counts[task.count_base + b], cnt[b]);
}

/*
 * One block a sequence, a thread a bucket: the bucket's total over the
 * sequence's tasks (to totals, for the host), the buckets' starts (a scan
 * over them), and each task's count replaced by its first place.
 */
__global__ void __launch_bounds__(QS_SPLIT_OFFSET_THREADS)
qs_split_offsets_kernel(const qs_split_seq *seqs, const qs_split_task *tasks,
						const uint32_t *npiv, uint32_t *counts, uint32_t *totals)
{
	__shared__ uint32_t wsum[QS_SPLIT_OFFSET_THREADS / 32];
	const qs_split_seq sq = seqs[blockIdx.x];
	const int	nb = 2 * (int) npiv[blockIdx.x] + 1,
				b = threadIdx.x;
	const bool	in = b < nb;
	uint32_t	total = 0;

	/* a sequence's tasks have their counts one after another, 2 kmax + 1 apart */
	uint32_t   *c = counts + tasks[sq.first_task].count_base + b;
	const uint32_t tstride = 2 * sq.kmax + 1;

	if (in)
	{
#pragma unroll 16
		for (uint32_t j = 0; j < sq.ntasks; j++)
			total += c[(size_t) j * tstride];
		totals[sq.bucket_base + b] = total;
	}

	/* exclusive scan of the totals over the buckets */
	uint32_t	all;
	const uint32_t before = block_exclusive_scan<QS_SPLIT_OFFSET_THREADS / 32>(total, wsum, &all);

	if (in)
	{
		uint32_t	run = sq.start + before;

#pragma unroll 16
		for (uint32_t j = 0; j < sq.ntasks; j++)
		{
			const uint32_t mine = c[(size_t) j * tstride];

			c[(size_t) j * tstride] = run;
			run += mine;
		}
	}
}

/*
 * A split scatter step's buckets from its warps' counts (wc, [warp][bucket]):
 * each warp's first place of a bucket in the step, in wc, and the step's
 * offset of each bucket (off: its place less its first slot) from the
 * task's next place in it (base, moved past the step's pairs).
 */
template <typename SH>
static __device__ __forceinline__ void
qs_split_bucket_starts(uint16_t *wc, uint32_t (&wsum)[SH::WARPS], uint32_t (&base)[QS_SPLIT_BINS],
					   uint32_t (&off)[QS_SPLIT_BINS], int nb, int t)
{
	constexpr int WARPS = SH::WARPS;
	constexpr int BPT = SH::BINS_PER_THREAD;	/* buckets a thread scans */
	uint32_t	cnt[BPT],
				tsum = 0;

#pragma unroll
	for (int b = 0; b < BPT; b++)
	{
		const int	dg = t * BPT + b;
		uint32_t	run = 0;

#pragma unroll
		for (int w = 0; w < WARPS; w++)
			run += dg < QS_SPLIT_BINS ? wc[w * QS_SPLIT_BINS + dg] : 0;
		cnt[b] = run;
		tsum += run;
	}
	{
		uint32_t	all;
		uint32_t	run = block_exclusive_scan<WARPS>(tsum, wsum, &all);

#pragma unroll
		for (int b = 0; b < BPT; b++)
		{
			const int	dg = t * BPT + b;

			if (dg < QS_SPLIT_BINS)
				warp_digit_starts<WARPS, QS_SPLIT_BINS>(wc, dg, run);
			if (dg < nb)
			{
				off[dg] = base[dg] - run;
				base[dg] += cnt[b];
			}
			run += cnt[b];
		}
	}
}

/*
 * A split scatter step's pairs into shared memory in bucket order: each
 * pair's slot from its rank in the warp's bucket (r: rank | bucket << 16,
 * then slot | bucket << 16) and the warp's first place of the bucket
 * (wc), then keys, staged payloads and buckets into sk, sv and sb.
 */
template <typename K, typename SH>
static __device__ __forceinline__ void
qs_split_stage_step(uint32_t (&r)[SH::ITEMS], const K (&key)[SH::ITEMS], const uint16_t *wc,
					K *sk, uint32_t *sv, uint16_t *sb, const uint32_t *staged, uint32_t slice,
					int warp)
{
	constexpr int ITEMS = SH::ITEMS;

#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		const uint32_t d = r[i] >> 16;

		r[i] = ((r[i] & 0xffffu) + wc[warp * QS_SPLIT_BINS + d]) | (d << 16);
	}
	copy_async_wait_all();
	__syncthreads();		/* the counters and match words are read: keys and payloads next */
#pragma unroll
	for (int i = 0; i < ITEMS; i++)
	{
		const uint32_t slot = r[i] & 0xffffu;

		sk[slot] = key[i];
		sv[slot] = staged[slice + i * 32];
		sb[slot] = (uint16_t) (r[i] >> 16);
	}
}

/*
 * Every pair of each task into its bucket, from ks/vs to kd/vd, a step at
 * a time, as a onesweep radix pass moves a tile (its bucket ids, from the
 * count, standing for digits): each warp ranks its slice of the step with
 * its own 16-bit counters (the lanes of a bucket found by an atomic OR of
 * their bits into the warp's match word of it, one shared add by the
 * lowest), the counts over the warps give every pair its place in bucket
 * order, and the step's pairs, in that order in shared memory with their
 * buckets, are written from there, so that a warp's stores go to a few
 * runs, not to a bucket each.  The task's first place in each bucket comes
 * from the count's scan, so no block waits for another.  Shared memory:
 * the warps' counters, later the keys; the match words, later the
 * payloads; the buckets; the payloads as read, copied there without
 * registers while the keys are ranked (qs_scatter_shape).
 *
 * What sets its pace is the length of a step -- the runs of a bucket it
 * writes at once, a step's pairs over some 256 buckets -- not the blocks a
 * SM: measured on the H100 (bench/results/quicksort-scatter2-h100.txt),
 * 100M uniform 32-bit pairs, the split scatter took 1.65 ms a round with
 * steps of 7,168 pairs (the earlier kernel, 2 blocks a SM), 1.94 ms with
 * this one at 5,120 (3 a SM), 1.27-1.33 ms with one block of 512 threads
 * and 12,288 or 15,360 pairs.
 */
template <typename K, typename SH>
__global__ void __launch_bounds__(SH::THREADS, 1)
qs_split_scatter_kernel(const qs_split_task *tasks, const qs_split_seq *seqs,
						const uint32_t *npiv, const uint32_t *counts,
						const uint16_t *__restrict__ bid, const K *__restrict__ ks,
						const uint32_t *__restrict__ vs, K *__restrict__ kd,
						uint32_t *__restrict__ vd)
{
	constexpr int THREADS = SH::THREADS;
	constexpr int WARPS = SH::WARPS;
	constexpr int ITEMS = SH::ITEMS;
	constexpr int STEP = SH::STEP;
	__shared__ uint32_t base[QS_SPLIT_BINS],	/* the task's next place in each bucket */
				off[QS_SPLIT_BINS],	/* the step's: a bucket's first place less its first slot */
				wsum[WARPS];
	extern __shared__ __align__(16) unsigned char qs_split_mem[];
	uint16_t   *wc = reinterpret_cast<uint16_t *>(qs_split_mem);	/* [warp][bucket] */
	K		   *sk = reinterpret_cast<K *>(qs_split_mem);
	uint32_t   *sv = reinterpret_cast<uint32_t *>(qs_split_mem + SH::KEYS_BYTES),
			   *mwords = sv;	/* [warp][bucket] */
	uint16_t   *sb = reinterpret_cast<uint16_t *>(qs_split_mem + SH::KEYS_BYTES + SH::VALS_BYTES);
	uint32_t   *staged = reinterpret_cast<uint32_t *>(sb + STEP);	/* payloads in input order */
	const qs_split_task task = tasks[blockIdx.x];
	const int	nb = 2 * (int) npiv[task.seq] + 1,
				t = threadIdx.x,
				lane = t & 31,
				warp = t >> 5;
	const uint32_t slice = warp * (ITEMS * 32) + lane;	/* the warp's part of a step */
	uint32_t   *mw = mwords + warp * QS_SPLIT_BINS;
	uint32_t   *packed = reinterpret_cast<uint32_t *>(wc + warp * QS_SPLIT_BINS);

	for (int b = t; b < QS_SPLIT_BINS; b += THREADS)
		base[b] = b < nb ? counts[task.count_base + b] : 0;

	K			key[ITEMS];
	uint32_t	r[ITEMS];		/* the bucket; then its rank in the warp | bucket << 16 */

	/*
	 * a step's keys and buckets into registers (the sentinel bucket past
	 * the task), its payloads into staged (copied without registers; each
	 * thread reads back its own)
	 */
	auto		load = [&](uint32_t step) {
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			const uint32_t idx = step + slice + i * 32;
			const bool	in = idx < task.end;

			key[i] = in ? ks[idx] : (K) 0;
			r[i] = in ? bid[idx] : QS_SPLIT_BUCKETS;
			if (in)
				copy_async<4>(&staged[slice + i * 32], &vs[idx]);
		}
	};

	load(task.begin);
	for (uint32_t step = task.begin; step < task.end; step += STEP)
	{
		const uint32_t nstep = min((uint32_t) STEP, task.end - step);

		/*
		 * the warps' counters and match words zeroed (the last step's pairs
		 * are out; the ranking leaves its match words zero again)
		 */
		for (int i = t; i < WARPS * QS_SPLIT_BINS / 2; i += THREADS)
			reinterpret_cast<uint32_t *>(wc)[i] = 0;
		for (int i = t; i < WARPS * QS_SPLIT_BINS; i += THREADS)
			mwords[i] = 0;
		__syncthreads();

		/* rank within the warp's bucket (as a onesweep pass ranks its digits) */
#pragma unroll
		for (int i = 0; i < ITEMS; i++)
		{
			const uint32_t d = r[i];

			r[i] = warp_digit_rank<qs_rank_policy>(d, mw, packed) | (d << 16);
		}
		__syncthreads();

		/* each bucket's pairs in the step, and the warps' places in it */
		qs_split_bucket_starts<SH>(wc, wsum, base, off, nb, t);
		__syncthreads();

		/* each pair's slot in bucket order; the pairs there in shared memory */
		qs_split_stage_step<K, SH>(r, key, wc, sk, sv, sb, staged, slice, warp);
		__syncthreads();

		/*
		 * the next step's loads, into the registers just freed, are on their
		 * way while this step's pairs go out (the sentinels sort last, past nstep)
		 */
		if (step + STEP < task.end)
			load(step + STEP);
		for (uint32_t j = t; j < nstep; j += THREADS)
		{
			const uint32_t d = off[sb[j]] + j;

			kd[d] = sk[j];
			vd[d] = sv[j];
		}
		__syncthreads();
	}
}

/*
 * Launch the split scatter of shape SH (the step's shared memory over the
 * default 48 KB allowed on the current device, each time: the device may
 * be another).
 */
template <typename K, typename SH>
static gpusort_status
qs_launch_split_scatter(size_t ntasks, cudaStream_t stream, const qs_split_task *tasks,
						const qs_split_seq *seqs, const uint32_t *npiv, const uint32_t *counts,
						const uint16_t *bid, const K *ks, const uint32_t *vs, K *kd,
						uint32_t *vd)
{
	CUDA_TRY(cudaFuncSetAttribute(qs_split_scatter_kernel<K, SH>,
								  cudaFuncAttributeMaxDynamicSharedMemorySize, (int) SH::SMEM));
	qs_split_scatter_kernel<K, SH><<<(unsigned) ntasks, SH::THREADS, SH::SMEM, stream>>>(
		tasks, seqs, npiv, counts, bid, ks, vs, kd, vd);
	CUDA_TRY_LAUNCH("qs_split_scatter_kernel");
	return GPUSORT_OK;
}

/*
 * Does the scatter of shape SH fit a block of the current device (its
 * dynamic shared memory and its own static arrays)?
 */
template <typename K, typename SH>
static bool
qs_scatter_fits(void)
{
	cudaFuncAttributes fa;

	if (cudaFuncGetAttributes(&fa, qs_split_scatter_kernel<K, SH>) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return false;
	}
	return fa.sharedSizeBytes + SH::SMEM <= device_block_smem();
}

/* The scatter's shape on the current device: 2 long, 1 mid, 0 compact. */
template <typename K>
static int
qs_scatter_tier(void)
{
	typedef qs_split_items<K> S;

	return qs_scatter_fits<K, typename S::scatter_long>() ? 2 :
		qs_scatter_fits<K, typename S::scatter_mid>() ? 1 : 0;
}

/*
 * f(SH()) for the scatter shape SH of tier (qs_scatter_tier): the one
 * place a tier names its shape, for the wave sizing and the launch alike.
 */
template <typename K, typename F>
static auto
qs_with_scatter_shape(int tier, F &&f)
{
	typedef qs_split_items<K> S;

	return tier == 2 ? f(typename S::scatter_long())
		: tier == 1 ? f(typename S::scatter_mid())
		: f(typename S::scatter_compact());
}

#endif
