/*
 * quicksort.cu -- GPU-Quicksort; see quicksort.cuh for the design.
 * Its tuning constants are the QS_* below.
 */
#include <algorithm>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <type_traits>
#include <vector>

#include "bitonic.cuh"
#include "cuda_check.cuh"
#include "device_smem.cuh"
#include "onesweep.cuh"			/* histogram_kernel (key range), iota */
#include "quicksort.cuh"

#define QS_THREADS		256
#define QS_WARPS		(QS_THREADS / 32)
#define QS_ITEMS		4			/* phase two: QS_ITEMS * QS_WARPS == 32, one warp scans a step */
#define QS_STEP			(QS_THREADS * QS_ITEMS)
#ifndef QS1_ITEMS
#define QS1_ITEMS		16			/* phase one: pairs a thread moves per step (-D to measure others) */
#endif
#define QS1_STEP		(QS_THREADS * QS1_ITEMS)
#define QS_MAXSEQ		1024		/* phase one stops at this many sequences ... */
#define QS_MAXSEQ_LIMIT	65536		/* ... or GPUSORT_QS_MAXSEQ's, up to this (tuning) */
#define QS_TASKS_PER_SM	8			/* phase-one sections per SM and round ... */
#define QS_TASKS_PER_SM_LIMIT 64	/* ... or GPUSORT_QS_TASKS_PER_SM's, up to this (tuning) */
#define QS_EXTRA_TASKS	16384		/* tasks of a round: <= sequences + 64 * SMs (256 SMs) */
#define QS_STACK		64
#define QS_COPY_ENGINE_MIN (1 << 20)	/* one-value sequences copied by cudaMemcpyAsync */
#define QS_LEAF			BITONIC_BLOCK_PAIRS
#define QS_BUCKETS_MAX	(2 * QS_PIVOTS_MAX + 1)
#define QS_MULTI_ITEMS	8			/* multi-pivot round: pairs a thread moves per step */
#define QS_MULTI_STEP	(QS_THREADS * QS_MULTI_ITEMS)
#define QS_MULTI_BLOCKS_PER_SM 4
#define QS_MULTI_MIN_N	(4 * QS_LEAF)	/* smaller inputs: no multi-pivot round */
/*
 * More keys: a sample decides whether their range is read.  Fewer: the
 * first read (range and sample) as the auto choice takes it, whose time
 * the range read's saving would not repay there (measured on the H100: at
 * 2^20 and 10^7 keys of few values a forced quicksort that skipped it was
 * up to 11% faster than auto's first read and quicksort).
 */
#define QS_SAMPLE_FIRST_MIN_N (1 << 24)
#define QS_LEAF_BATCH	32768		/* leaves phase two gets a launch (fewer at the end) ... */
#define QS_LEAF_BATCH_LIMIT (1 << 20)	/* ... or GPUSORT_QS_LEAF_BATCH's, up to this (tuning) */

/*
 * Phase one's order of a step's pairs on each side: item-major (item i of
 * every warp, then item i + 1) or warp-major (every item of warp w, then
 * warp w + 1); measured on the H100, item-major was faster for 64-bit keys
 * and warp-major for 32-bit keys (bench/results/quicksort-h100.txt).
 */
template <typename K>
struct qs1_order
{
	static constexpr bool ITEM_MAJOR = sizeof(K) == 8;
	static constexpr int SLOTS = ITEM_MAJOR ? QS1_ITEMS * QS_WARPS : QS_WARPS;
	static_assert(!ITEM_MAJOR || SLOTS % 32 == 0, "whole lanes of slots");
};

template <typename K>
struct qs_seq
{
	uint32_t	start,
				end,
				lt_ptr,			/* next free place for smaller keys */
				gt_ptr;			/* end of the free places for the others */
	K			pivot,
				lmin,
				lmax,
				rmin,
				rmax;
};

struct qs_task
{
	uint32_t	seq,
				begin,
				end;
};

struct qs_leaf
{
	uint32_t	start,
				end;
	int			buf;			/* buffer holding it */
};

/* exclusive scan of the lanes' a over one warp; *total gets the sum */
__device__ __forceinline__ uint32_t
warp_exclusive_scan_lanes(uint32_t a, int lane, uint32_t *total)
{
	uint32_t	incl = a;

	for (int o = 1; o < 32; o <<= 1)
	{
		uint32_t	y = __shfl_up_sync(0xffffffffu, incl, o);

		if (lane >= o)
			incl += y;
	}
	*total = __shfl_sync(0xffffffffu, incl, 31);
	return incl - a;
}

/* exclusive scan over one warp, in place; returns the total */
__device__ __forceinline__ uint32_t
warp_exclusive_scan(uint32_t *x, int lane)
{
	uint32_t	total;

	x[lane] = warp_exclusive_scan_lanes(x[lane], lane, &total);
	return total;
}

/*
 * Phase one: a block partitions its section of a shared sequence, a step of
 * QS1_STEP pairs at a time.  Each warp counts its pairs of each item on
 * each side (ballots), the counts are scanned in qs1_order, and the step
 * takes its room at the two ends of the sequence with one atomic add per
 * side; every warp's item then lands in one contiguous run per side.
 */
template <typename K>
__global__ void __launch_bounds__(QS_THREADS)
qs_partition_kernel(const qs_task *tasks, qs_seq<K> *seqs, const K *__restrict__ ks,
					const uint32_t *__restrict__ vs, K *__restrict__ kd,
					uint32_t *__restrict__ vd)
{
	__shared__ uint32_t cnt[2][qs1_order<K>::SLOTS];
	__shared__ uint32_t base[2];
	const qs_task task = tasks[blockIdx.x];
	qs_seq<K>  *sq = &seqs[task.seq];
	const K		pivot = sq->pivot;
	const int	t = threadIdx.x,
				lane = t & 31,
				warp = t >> 5;
	const uint32_t ltmask = (1u << lane) - 1;
	K			lmin = ~(K) 0,
				lmax = 0,
				rmin = ~(K) 0,
				rmax = 0;

	for (uint32_t step = task.begin; step < task.end; step += QS1_STEP)
	{
		K			k[QS1_ITEMS];
		uint32_t	v[QS1_ITEMS],
					pre[QS1_ITEMS];
		uint32_t	nl = 0,		/* the warp's smaller and other pairs so far */
					ng = 0,
					ltbits = 0,
					inbits = 0;

#pragma unroll
		for (int i = 0; i < QS1_ITEMS; i++)
		{
			uint32_t	idx = step + i * QS_THREADS + t;
			bool		in = idx < task.end;

			k[i] = in ? ks[idx] : (K) 0;
			v[i] = in ? vs[idx] : 0;
			inbits |= (uint32_t) in << i;
		}
#pragma unroll
		for (int i = 0; i < QS1_ITEMS; i++)
		{
			const bool	in = (inbits >> i) & 1;
			const bool	lt = in && k[i] < pivot;

			if (lt)
				lmin = min(lmin, k[i]), lmax = max(lmax, k[i]);
			else if (in)
				rmin = min(rmin, k[i]), rmax = max(rmax, k[i]);

			uint32_t	bl = __ballot_sync(0xffffffffu, lt);
			uint32_t	bg = __ballot_sync(0xffffffffu, in && !lt);

			ltbits |= (uint32_t) lt << i;
			if constexpr (qs1_order<K>::ITEM_MAJOR)
			{
				pre[i] = __popc((lt ? bl : bg) & ltmask);
				if (lane == 0)
				{
					cnt[0][i * QS_WARPS + warp] = __popc(bl);
					cnt[1][i * QS_WARPS + warp] = __popc(bg);
				}
			}
			else
			{
				pre[i] = lt ? nl + __popc(bl & ltmask) : ng + __popc(bg & ltmask);
				nl += __popc(bl);
				ng += __popc(bg);
			}
		}
		if (!qs1_order<K>::ITEM_MAJOR && lane == 0)
		{
			cnt[0][warp] = nl;
			cnt[1][warp] = ng;
		}
		__syncthreads();
		if (warp == 0)
		{
			/* each lane scans PER consecutive slots of each side */
			constexpr int PER = (qs1_order<K>::SLOTS + 31) / 32;
			uint32_t	x[2][PER],
						sum[2] = {0, 0},
						tot[2];

#pragma unroll
			for (int c = 0; c < 2; c++)
			{
#pragma unroll
				for (int j = 0; j < PER; j++)
				{
					const int	slot = lane * PER + j;

					x[c][j] = sum[c];
					sum[c] += slot < qs1_order<K>::SLOTS ? cnt[c][slot] : 0;
				}
				sum[c] = warp_exclusive_scan_lanes(sum[c], lane, &tot[c]);
			}
			if (lane == 0)
			{
				base[0] = atomicAdd(&sq->lt_ptr, tot[0]);
				base[1] = atomicSub(&sq->gt_ptr, tot[1]) - tot[1];
			}
			__syncwarp();
#pragma unroll
			for (int c = 0; c < 2; c++)
#pragma unroll
				for (int j = 0; j < PER; j++)
					if (lane * PER + j < qs1_order<K>::SLOTS)
						cnt[c][lane * PER + j] = sum[c] + x[c][j];
		}
		__syncthreads();

#pragma unroll
		for (int i = 0; i < QS1_ITEMS; i++)
			if ((inbits >> i) & 1)
			{
				const int	side = (ltbits >> i) & 1 ? 0 : 1;
				const int	slot = qs1_order<K>::ITEM_MAJOR ? i * QS_WARPS + warp : warp;
				const uint32_t pos = base[side] + cnt[side][slot] + pre[i];

				kd[pos] = k[i];
				vd[pos] = v[i];
			}
		__syncthreads();
	}
	warp_merge_range(&sq->lmin, &sq->lmax, lmin, lmax);
	warp_merge_range(&sq->rmin, &sq->rmax, rmin, rmax);
}

/* Copies of sequences of one value from buffer 0 into buffer 1: a task a block. */
template <typename K>
__global__ void __launch_bounds__(QS_THREADS)
qs_copy_kernel(const qs_task *tasks, const K *__restrict__ ks, const uint32_t *__restrict__ vs,
			   K *__restrict__ kd, uint32_t *__restrict__ vd)
{
	const qs_task task = tasks[blockIdx.x];

#pragma unroll 4
	for (uint32_t i = task.begin + threadIdx.x; i < task.end; i += QS_THREADS)
	{
		kd[i] = ks[i];
		vd[i] = vs[i];
	}
}

/*
 * The multi-pivot round (first, where a sample of the keys holds few
 * distinct keys): the sample's distinct keys p[0] < ... < p[k-1] are the
 * pivots, and every pair goes to one of 2k + 1 buckets in one pass --
 * bucket 2j holds the keys between p[j-1] and p[j] (open: sorted on by the
 * rounds after), bucket 2j + 1 the keys equal to p[j] (finished).  Keys
 * of few distinct values are sorted by it; skewed keys lose their common
 * values at once.
 */
struct qs_multi
{
	uint32_t	count[QS_BUCKETS_MAX];	/* pairs of each bucket */
	uint32_t	cursor[QS_BUCKETS_MAX];	/* places taken in each bucket so far */
	int			pivots;					/* k; 0: the sample has more distinct keys */
	int			distinct;				/* the sample's distinct keys ... */
	int			order;					/* ... and its order (first_read_summary's, same layout) */
	int			pad;
	unsigned long long range[2];		/* qs_range_kernel's: the minimum's complement, the maximum */
	unsigned long long pivot[QS_PIVOTS_MAX];
};

static_assert(sizeof(qs_multi) <= 1024, "quicksort_sample_distinct's scratch");

/*
 * One block of FIRST_READ_SAMPLE threads: the distinct keys of the first
 * read's sample (the one whose count the first read's summary reports),
 * sorted, as pivots; and whether the sample is in order, either way.
 * host (mapped host memory; NULL: none) gets the distinct count and order
 * as well.  Zeroes m's range for qs_range_kernel after it.
 */
template <typename K>
__global__ void __launch_bounds__(FIRST_READ_SAMPLE)
qs_sample_pivots_kernel(const K *__restrict__ keys, size_t n, qs_multi *m,
						first_read_summary *host)
{
	__shared__ K s[FIRST_READ_SAMPLE];
	__shared__ bool first[FIRST_READ_SAMPLE];
	__shared__ int distinct;
	const int	t = threadIdx.x;
	int			rank = 0;

	if (t == 0)
		distinct = 0;

	const bool	f = sample_key_is_first(keys, n, s);

	/* the sample in order, either way (barriers: every thread takes part) */
	const bool	up = __syncthreads_and(t == 0 || s[t - 1] <= s[t]),
				down = __syncthreads_and(t == 0 || s[t - 1] >= s[t]);

	first[t] = f;
	if (f)
		atomicAdd(&distinct, 1);
	__syncthreads();
	if (f && distinct <= QS_PIVOTS_MAX)
	{
		for (int j = 0; j < FIRST_READ_SAMPLE; j++)
			rank += first[j] && s[j] < s[t];
		m->pivot[rank] = (unsigned long long) s[t];
	}
	if (t < QS_BUCKETS_MAX)
		m->count[t] = m->cursor[t] = 0;
	if (t == 0)
	{
		m->range[0] = m->range[1] = 0;	/* for qs_range_kernel */
		m->pivots = distinct <= QS_PIVOTS_MAX ? distinct : 0;
		m->distinct = distinct;
		m->order = up ? 1 : down ? -1 : 0;
		if (host != NULL)
		{
			/* mapped host memory: no copy to wait for */
			host->distinct = distinct;
			host->order = m->order;
		}
	}
}

/*
 * The range of the keys (into m->range, zeroed by qs_sample_pivots_kernel
 * before it), unless the sample before it found more distinct keys than
 * the multi-pivot round takes: then no block reads a key (neither the
 * one-value case nor the few-value one, the two that need the range,
 * can be).  Four 16-byte vectors of keys in flight a thread.
 */
#define QS_RANGE_THREADS 256
#define QS_RANGE_BLOCKS_PER_SM 8	/* the range kernel's grid */

template <typename K>
__global__ void __launch_bounds__(QS_RANGE_THREADS)
qs_range_kernel(const K *__restrict__ keys, size_t n, qs_multi *m)
{
	constexpr int PER_VEC = 16 / sizeof(K);
	const size_t nvec = n / PER_VEC,
				stride = (size_t) gridDim.x * blockDim.x,
				first = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	const uint4 *vecs = reinterpret_cast<const uint4 *>(keys);
	K			lo = ~(K) 0,
				hi = 0;
	size_t		v = first;

	if (m->distinct > QS_PIVOTS_MAX)
		return;
	for (; v + 3 * stride < nvec; v += 4 * stride)
	{
		vec_keys<K>	u[4];

#pragma unroll
		for (int r = 0; r < 4; r++)
			u[r].vec = __ldg(vecs + v + r * stride);
#pragma unroll
		for (int r = 0; r < 4; r++)
#pragma unroll
			for (int j = 0; j < PER_VEC; j++)
			{
				lo = min(lo, u[r].k[j]);
				hi = max(hi, u[r].k[j]);
			}
	}
	for (; v < nvec; v += stride)
	{
		vec_keys<K>	u;

		u.vec = __ldg(vecs + v);
#pragma unroll
		for (int j = 0; j < PER_VEC; j++)
		{
			lo = min(lo, u.k[j]);
			hi = max(hi, u.k[j]);
		}
	}
	for (size_t i = nvec * PER_VEC + first; i < n; i += stride)
	{
		lo = min(lo, keys[i]);
		hi = max(hi, keys[i]);
	}
	/* the block's range, then one pair of atomics a block (not a warp: they queue at one address) */
	constexpr int WARPS = QS_RANGE_THREADS / 32;
	__shared__ K wlo[WARPS],
				whi[WARPS];

	warp_reduce_range(&lo, &hi);
	if ((threadIdx.x & 31) == 0)
	{
		wlo[threadIdx.x >> 5] = lo;
		whi[threadIdx.x >> 5] = hi;
	}
	__syncthreads();
	if (threadIdx.x == 0)
	{
		for (int w = 1; w < WARPS; w++)
		{
			lo = min(lo, wlo[w]);
			hi = max(hi, whi[w]);
		}
		atomicMax(&m->range[0], ~(unsigned long long) lo);
		atomicMax(&m->range[1], (unsigned long long) hi);
	}
}

/* The bucket of key x among k sorted pivots (in shared memory). */
template <typename K>
__device__ __forceinline__ uint32_t
qs_bucket(K x, const K *pivot, int k)
{
	int			lo = 0,
				hi = k;			/* the first pivot not below x is in [lo, hi] */

	while (lo < hi)
	{
		int			mid = (lo + hi) >> 1;

		if (pivot[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 2 * lo + (lo < k && pivot[lo] == x);
}

/*
 * The lanes of peers (this lane's bucket b among them) add themselves to
 * cnt[b] with one shared atomic, by the lowest of them (none where b is
 * the sentinel none); returns the lane's place among the bucket's keys
 * counted so far.
 */
__device__ __forceinline__ uint32_t
qs_peers_add(uint32_t peers, uint32_t b, uint32_t none, uint32_t *cnt, int lane)
{
	const int	leader = __ffs(peers) - 1;
	uint32_t	before = 0;

	if (lane == leader && b < none)
		before = atomicAdd(&cnt[b], (uint32_t) __popc(peers));
	before = __shfl_sync(0xffffffffu, before, leader);
	return before + __popc(peers & ((1u << lane) - 1));
}

/* qs_peers_add for the warp's keys of bucket b, peers found by __match_any_sync. */
__device__ __forceinline__ uint32_t
qs_warp_count(uint32_t b, uint32_t *cnt, int lane)
{
	return qs_peers_add(__match_any_sync(0xffffffffu, b), b, QS_BUCKETS_MAX, cnt, lane);
}

/*
 * The start of a multi-pivot kernel: the pivots into shared memory and the
 * block's bucket counts zeroed (a barrier to follow); returns k, 0 where
 * the sample had too many distinct keys (no round).
 */
template <typename K>
__device__ __forceinline__ int
qs_multi_begin(const qs_multi *m, K *pivot, uint32_t *cnt)
{
	const int	k = m->pivots;

	if ((int) threadIdx.x < k)
		pivot[threadIdx.x] = (K) m->pivot[threadIdx.x];
	if (threadIdx.x < QS_BUCKETS_MAX)
		cnt[threadIdx.x] = 0;
	return k;
}

/* The pairs of each bucket (grid-stride over all n keys). */
template <typename K>
__global__ void __launch_bounds__(QS_THREADS)
qs_multi_count_kernel(const K *__restrict__ keys, size_t n, qs_multi *m)
{
	__shared__ K pivot[QS_PIVOTS_MAX];
	__shared__ uint32_t cnt[QS_BUCKETS_MAX];
	const int	k = qs_multi_begin(m, pivot, cnt),
				t = threadIdx.x,
				lane = t & 31;

	if (k == 0)
		return;
	__syncthreads();
	for (size_t step = (size_t) blockIdx.x * QS_MULTI_STEP; step < n;
		 step += (size_t) gridDim.x * QS_MULTI_STEP)
	{
		K			key[QS_MULTI_ITEMS];

#pragma unroll
		for (int i = 0; i < QS_MULTI_ITEMS; i++)
		{
			const size_t idx = step + (size_t) i * QS_THREADS + t;

			key[i] = idx < n ? keys[idx] : (K) 0;
		}
#pragma unroll
		for (int i = 0; i < QS_MULTI_ITEMS; i++)
		{
			const size_t idx = step + (size_t) i * QS_THREADS + t;

			(void) qs_warp_count(idx < n ? qs_bucket(key[i], pivot, k) : QS_BUCKETS_MAX, cnt, lane);
		}
	}
	__syncthreads();
	if (t < 2 * k + 1 && cnt[t])
		atomicAdd(&m->count[t], cnt[t]);
}

/*
 * Every pair into its bucket, from buffer 0 to buffer 1: a step of
 * QS_THREADS * QS_MULTI_ITEMS pairs at a time, each step's pairs of a
 * bucket written as one run whose room is taken with one atomic add.
 */
template <typename K>
__global__ void __launch_bounds__(QS_THREADS)
qs_multi_scatter_kernel(const K *__restrict__ ks, const uint32_t *__restrict__ vs, size_t n,
						qs_multi *m, K *__restrict__ kd, uint32_t *__restrict__ vd)
{
	__shared__ K pivot[QS_PIVOTS_MAX];
	__shared__ uint32_t start[QS_BUCKETS_MAX],
				cnt[QS_BUCKETS_MAX],
				base[QS_BUCKETS_MAX];
	const int	k = qs_multi_begin(m, pivot, cnt),
				t = threadIdx.x,
				lane = t & 31;

	if (k == 0)
		return;
	if (t == 0)
	{
		uint32_t	run = 0;

		for (int b = 0; b < 2 * k + 1; b++)
		{
			start[b] = run;
			run += m->count[b];
		}
	}
	__syncthreads();
	for (size_t step = (size_t) blockIdx.x * QS_MULTI_STEP; step < n;
		 step += (size_t) gridDim.x * QS_MULTI_STEP)
	{
		K			key[QS_MULTI_ITEMS];
		uint32_t	val[QS_MULTI_ITEMS],
					bucket[QS_MULTI_ITEMS],
					place[QS_MULTI_ITEMS];

#pragma unroll
		for (int i = 0; i < QS_MULTI_ITEMS; i++)
		{
			const size_t idx = step + (size_t) i * QS_THREADS + t;
			const bool	in = idx < n;

			key[i] = in ? ks[idx] : (K) 0;
			val[i] = in ? vs[idx] : 0;
			bucket[i] = in ? qs_bucket(key[i], pivot, k) : QS_BUCKETS_MAX;
		}
#pragma unroll
		for (int i = 0; i < QS_MULTI_ITEMS; i++)
			place[i] = qs_warp_count(bucket[i], cnt, lane);
		__syncthreads();
		if (t < 2 * k + 1)
		{
			base[t] = cnt[t] ? start[t] + atomicAdd(&m->cursor[t], cnt[t]) : 0;
			cnt[t] = 0;
		}
		__syncthreads();
#pragma unroll
		for (int i = 0; i < QS_MULTI_ITEMS; i++)
			if (bucket[i] < QS_BUCKETS_MAX)
			{
				kd[base[bucket[i]] + place[i]] = key[i];
				vd[base[bucket[i]] + place[i]] = val[i];
			}
		__syncthreads();
	}
}

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
#ifndef QS_SCATTER_ITEMS_32
#define QS_SCATTER_ITEMS_32 30	/* (-D to measure others) */
#endif
#ifndef QS_SCATTER_ITEMS_64
#define QS_SCATTER_ITEMS_64 20
#endif
	typedef qs_scatter_shape<K, 512, sizeof(K) == 4 ? QS_SCATTER_ITEMS_32 : QS_SCATTER_ITEMS_64>
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

/*
 * Exclusive scan of x over a block of WARPS warps (wsum: WARPS words of
 * shared memory; barriers inside, so every thread calls it); *total gets
 * the block's sum.
 */
template <int WARPS>
__device__ __forceinline__ uint32_t
qs_block_exclusive_scan(uint32_t x, uint32_t *wsum, uint32_t *total)
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
	const uint32_t before = qs_block_exclusive_scan<QS_WARPS>(keep, wsum, &total);

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
	const uint32_t before = qs_block_exclusive_scan<QS_SPLIT_OFFSET_THREADS / 32>(total, wsum, &all);

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
	constexpr int BPT = QS_SPLIT_BINS > THREADS ? QS_SPLIT_BINS / THREADS : 1;	/* buckets a thread scans */
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
			uint32_t	run = qs_block_exclusive_scan<WARPS>(tsum, wsum, &all);

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
		__syncthreads();

		/* each pair's slot in bucket order */
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

template <typename K>
__device__ __forceinline__ K
median3(K a, K b, K c)
{
	return max(min(a, b), min(max(a, b), c));
}

/*
 * A leaf of at most SIZE pairs (a power of two), sorted by a block of
 * THREADS threads: a bitonic network over SIZE places, each thread holding
 * E = SIZE / THREADS consecutive places in registers -- strides below E
 * within a thread, strides within a warp by shuffles, the larger ones
 * through shared memory (sk/sv: qs_leaf_smem(SIZE) places, padded a place
 * every 32 so that both a thread's consecutive places and a warp's
 * coalesced ones are free of bank conflicts).  Sorted from kin/vin into
 * kout/vout.  The leaf kernels take leaves of SIZE / 2 < count <= SIZE
 * (the smallest size, every shorter leaf too); the largest, QS_LEAF_MAX,
 * takes the split rounds' buckets a little longer than QS_LEAF that no
 * neighbour joins.
 *
 * The network is the bitonic sort's form in which every comparator puts
 * the smaller pair at the lower place: each merge of size places first
 * compares place e with its mirror e ^ (size - 1), then e with e ^ stride
 * for the strides below size / 2 (qs_keep, qs_swaps).  The places past
 * count hold padding pairs of the greatest key and payload, and a
 * comparator whose upper place holds one leaves both places as they were;
 * so the padding never moves (the real pairs end sorted in places 0 ..
 * count - 1), and the warps whose places are all padding -- up to half of
 * a network's, where a leaf is just over the next smaller size -- do
 * nothing but wait at the barriers (their places in shared memory keep the
 * padding written at the start).
 */
#define QS_LEAF_MAX		(2 * QS_LEAF)	/* the largest network */
#define QS_REG_LEAF_MIN	(QS_LEAF / 4)	/* the smallest network */
#define QS_LEAF_NETWORKS 4			/* QS_LEAF_MAX, QS_LEAF, QS_LEAF / 2, QS_LEAF / 4 */
#ifndef QS_LEAF_PLACES
#define QS_LEAF_PLACES	8			/* most places a thread (-D to measure others) */
#endif
#ifndef QS_LEAF_THREADS_MIN
#define QS_LEAF_THREADS_MIN QS_THREADS	/* fewest threads a network */
#endif
static_assert(QS_LEAF_MAX >> (QS_LEAF_NETWORKS - 1) == QS_REG_LEAF_MIN, "the networks' sizes");
static_assert(QS_REG_LEAF_MIN >= QS_LEAF_THREADS_MIN && QS_REG_LEAF_MIN % QS_LEAF_THREADS_MIN == 0,
			  "a leaf is whole places of every thread");

/* Threads of the network of size places: QS_LEAF_PLACES places a thread at most. */
__host__ __device__ constexpr int
qs_leaf_threads(int size)
{
	return size / QS_LEAF_PLACES > QS_LEAF_THREADS_MIN ? size / QS_LEAF_PLACES
		: QS_LEAF_THREADS_MIN;
}

__host__ __device__ constexpr int
qs_leaf_smem(int size)
{
	return size + size / 32;
}

__device__ __forceinline__ int
qs_pad(int e)
{
	return e + (e >> 5);
}

/*
 * One side of a comparator whose other side is (pk, pv): the pair at the
 * lower place (keep_min: this one) ends with the smaller key.  32-bit keys:
 * keys alone decide, by one min-or-max instruction, and each side -- its
 * own thread -- takes the partner's pair only where the partner's key
 * wins, so that both make the same choice: equal keys stay put, no payload
 * is lost or doubled, and padding (the greatest key) never moves below a
 * real pair of the same key (quicksort needs no order among equal keys).
 * 64-bit keys, which have no such instruction: pairs compare by key, then
 * payload, a total order (measured on the H100: the keys-only form was 7%
 * slower there).
 */
template <typename K>
__device__ __forceinline__ void
qs_keep(K &k, uint32_t &v, K pk, uint32_t pv, bool keep_min)
{
	if constexpr (sizeof(K) == 4)
	{
		const K		nk = keep_min ? min(k, pk) : max(k, pk);

		v = nk != k ? pv : v;
		k = nk;
	}
	else
	{
		const bool	gt = pair_greater(k, v, pk, pv);

		if (keep_min ? gt : !gt)
		{
			k = pk;
			v = pv;
		}
	}
}

/* Does the pair at the lower place of a comparator go up (as qs_keep orders them)? */
template <typename K>
__device__ __forceinline__ bool
qs_swaps(K klo, uint32_t vlo, K khi, uint32_t vhi)
{
	if constexpr (sizeof(K) == 4)
		return klo > khi;
	else
		return pair_greater(klo, vlo, khi, vhi);
}

/*
 * Every thread's E places from registers into shared memory, between
 * barriers (skip: the warp's places there are as it would write them).
 */
template <typename K, int E>
__device__ __forceinline__ void
qs_regs_to_smem(const K *k, const uint32_t *v, K *sk, uint32_t *sv, bool skip)
{
	const int	t = threadIdx.x;

	__syncthreads();
	if (!skip)
#pragma unroll
		for (int r = 0; r < E; r++)
		{
			sk[qs_pad(t * E + r)] = k[r];
			sv[qs_pad(t * E + r)] = v[r];
		}
	__syncthreads();
}

template <typename K, int SIZE>
__device__ void
qs_leaf_sort_regs(const K *kin, const uint32_t *vin, K *kout, uint32_t *vout, uint32_t count,
				  K *sk, uint32_t *sv)
{
	constexpr int THREADS = qs_leaf_threads(SIZE);
	constexpr int E = SIZE / THREADS;
	const int	t = threadIdx.x,
				lane = t & 31;
	const bool	idle = (uint32_t) ((t >> 5) * 32 * E) >= count,	/* the warp holds padding only */
				pad_only = (uint32_t) (t * E) >= count;	/* this thread does */
	K			k[E];
	uint32_t	v[E];

#pragma unroll
	for (int r = 0; r < E; r++)
	{
		const int	e = r * THREADS + t;

		sk[qs_pad(e)] = e < (int) count ? kin[e] : ~(K) 0;
		sv[qs_pad(e)] = e < (int) count ? vin[e] : BITONIC_PAD_VAL;
	}
	__syncthreads();
#pragma unroll
	for (int r = 0; r < E; r++)
	{
		k[r] = sk[qs_pad(t * E + r)];
		v[r] = sv[qs_pad(t * E + r)];
	}

#pragma unroll
	for (int size = 2; size <= SIZE; size <<= 1)
	{
#pragma unroll
		for (int stride = size >> 1; stride > 0; stride >>= 1)
		{
			const bool	mirror = stride == size >> 1;

			if (stride >= E * 32)
			{
				/* the partner is in another warp */
				qs_regs_to_smem<K, E>(k, v, sk, sv, idle);
				if (!idle)
#pragma unroll
					for (int r = 0; r < E; r++)
					{
						const int	e = t * E + r,
									p = e ^ (mirror ? size - 1 : stride);

						qs_keep(k[r], v[r], sk[qs_pad(p)], sv[qs_pad(p)], (e & stride) == 0);
					}
			}
			else if (stride >= E)
			{
				/* the partner is in another lane of this warp */
				const int	m = stride / E;

				if (idle)
					continue;
				if (mirror)
				{
					/* lane ^ (2m - 1), its place E - 1 - r */
#pragma unroll
					for (int r = 0; r < E / 2; r++)
					{
						const K		pk_lo = __shfl_xor_sync(0xffffffffu, k[E - 1 - r], 2 * m - 1),
									pk_hi = __shfl_xor_sync(0xffffffffu, k[r], 2 * m - 1);
						const uint32_t pv_lo = __shfl_xor_sync(0xffffffffu, v[E - 1 - r], 2 * m - 1),
									pv_hi = __shfl_xor_sync(0xffffffffu, v[r], 2 * m - 1);

						qs_keep(k[r], v[r], pk_lo, pv_lo, (lane & m) == 0);
						qs_keep(k[E - 1 - r], v[E - 1 - r], pk_hi, pv_hi, (lane & m) == 0);
					}
				}
				else
#pragma unroll
					for (int r = 0; r < E; r++)
					{
						const K		pk = __shfl_xor_sync(0xffffffffu, k[r], m);
						const uint32_t pv = __shfl_xor_sync(0xffffffffu, v[r], m);

						qs_keep(k[r], v[r], pk, pv, (lane & m) == 0);
					}
			}
			else if (!pad_only)
			{
				/* both places are this thread's */
#pragma unroll
				for (int r = 0; r < E; r++)
					if ((r & stride) == 0)
					{
						const int	q = r ^ (mirror ? size - 1 : stride);

						if (qs_swaps(k[r], v[r], k[q], v[q]))
						{
							const K		tk = k[r];
							const uint32_t tv = v[r];

							k[r] = k[q];
							v[r] = v[q];
							k[q] = tk;
							v[q] = tv;
						}
					}
			}
		}
	}
	qs_regs_to_smem<K, E>(k, v, sk, sv, idle);
#pragma unroll
	for (int r = 0; r < E; r++)
	{
		const int	e = r * THREADS + t;

		if (e < (int) count)
		{
			kout[e] = sk[qs_pad(e)];
			vout[e] = sv[qs_pad(e)];
		}
	}
	__syncthreads();
}

/*
 * Leaves of at most SIZE pairs (see qs_leaf_sort_regs): one block of
 * qs_leaf_threads(SIZE) each, with qs_leaf_smem_bytes<K>(SIZE) of dynamic
 * shared memory.
 */
template <typename K>
__host__ __device__ constexpr size_t
qs_leaf_smem_bytes(int size)
{
	return (size_t) qs_leaf_smem(size) * (sizeof(K) + sizeof(uint32_t));
}

#ifndef QS_LEAF_REGS
#define QS_LEAF_REGS	64			/* registers a thread at most, 0: the compiler's choice (-D to measure) */
#endif
__host__ __device__ constexpr int
qs_leaf_min_blocks(int size)
{
	return QS_LEAF_REGS > 0 && 65536 / (qs_leaf_threads(size) * QS_LEAF_REGS) > 0
		? 65536 / (qs_leaf_threads(size) * QS_LEAF_REGS) : 1;
}

template <typename K, int SIZE>
__global__ void __launch_bounds__(qs_leaf_threads(SIZE), qs_leaf_min_blocks(SIZE))
qs_leaf_kernel(const qs_leaf *leaves, K *k0, uint32_t *v0, K *k1, uint32_t *v1)
{
	extern __shared__ __align__(16) unsigned char qs_leaf_mem[];
	K		   *sk = reinterpret_cast<K *>(qs_leaf_mem);
	uint32_t   *sv = reinterpret_cast<uint32_t *>(sk + qs_leaf_smem(SIZE));
	const qs_leaf leaf = leaves[blockIdx.x];
	const K    *ks = leaf.buf ? k1 : k0;
	const uint32_t *vs = leaf.buf ? v1 : v0;

	qs_leaf_sort_regs<K, SIZE>(ks + leaf.start, vs + leaf.start, k1 + leaf.start, v1 + leaf.start,
							   leaf.end - leaf.start, sk, sv);
}

/*
 * The network a leaf of len pairs takes: the smallest size of
 * QS_REG_LEAF_MIN .. largest that holds it; 0 for a longer one (phase
 * two's kernel).
 */
static int
qs_leaf_network(uint32_t len, int largest)
{
	int			size = QS_REG_LEAF_MIN;

	while ((uint32_t) size < len && size < largest)
		size <<= 1;
	return len <= (uint32_t) size ? size : 0;
}

/*
 * The largest leaf network for keys K that a block of the current device
 * has the shared memory for (QS_LEAF's fits every device).
 */
template <typename K>
static int
qs_largest_leaf_network(void)
{
	static_assert(qs_leaf_smem_bytes<K>(QS_LEAF) <= DEVICE_SMEM_DEFAULT, "QS_LEAF fits any device");
	return qs_leaf_smem_bytes<K>(QS_LEAF_MAX) <= device_block_smem() ? QS_LEAF_MAX : QS_LEAF;
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

/* Launch the leaf kernel of SIZE places on count leaves (at leaves). */
template <typename K, int SIZE>
static gpusort_status
qs_launch_leaves(const qs_leaf *leaves, size_t count, K *keys[2], uint32_t *vals[2],
				 cudaStream_t stream)
{
	constexpr size_t smem = qs_leaf_smem_bytes<K>(SIZE);

	/* over the default 48 KB (the largest network of 64-bit keys): on the current device */
	if (smem > DEVICE_SMEM_DEFAULT)
		CUDA_TRY(cudaFuncSetAttribute(qs_leaf_kernel<K, SIZE>,
									  cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem));
	qs_leaf_kernel<K, SIZE><<<(unsigned) count, qs_leaf_threads(SIZE), smem, stream>>>(
		leaves, keys[0], vals[0], keys[1], vals[1]);
	CUDA_TRY_LAUNCH("qs_leaf_kernel");
	return GPUSORT_OK;
}

/* Phase two: one block sorts one sequence into buffer 1. */
template <typename K>
__global__ void __launch_bounds__(QS_THREADS)
qs_phase_two_kernel(const qs_leaf *leaves, K *k0, uint32_t *v0, K *k1, uint32_t *v1)
{
	__shared__ K sk[QS_LEAF];
	__shared__ uint32_t sv[QS_LEAF];
	__shared__ uint32_t st_start[QS_STACK],
				st_end[QS_STACK];
	__shared__ int st_buf[QS_STACK];
	__shared__ int top;
	__shared__ uint32_t cnt[3][32];
	__shared__ uint32_t tot[3],
				run[3];
	__shared__ K pivot_s;
	const qs_leaf leaf = leaves[blockIdx.x];
	K		   *kb[2] = {k0, k1};
	uint32_t   *vb[2] = {v0, v1};
	const int	t = threadIdx.x,
				lane = t & 31,
				warp = t >> 5;
	const uint32_t ltmask = (1u << lane) - 1;

	if (t == 0)
	{
		st_start[0] = leaf.start;
		st_end[0] = leaf.end;
		st_buf[0] = leaf.buf;
		top = 1;
	}
	for (;;)
	{
		__syncthreads();
		if (top == 0)
			break;

		const uint32_t s = st_start[top - 1],
					e = st_end[top - 1];
		const int	b = st_buf[top - 1];
		const uint32_t len = e - s;

		__syncthreads();
		if (t == 0)
			top--;
		if (len <= QS_LEAF)
		{
			bitonic_block_sort(kb[b] + s, vb[b] + s, k1 + s, v1 + s, len, 0, sk, sv);
			continue;
		}

		const K    *ks = kb[b];
		const uint32_t *vs = vb[b];
		K		   *kd = kb[b ^ 1];
		uint32_t   *vd = vb[b ^ 1];

		if (t == 0)
			pivot_s = median3(ks[s], ks[s + len / 2], ks[e - 1]);
		if (t < 3)
			tot[t] = 0;
		__syncthreads();

		const K		pivot = pivot_s;
		uint32_t	nlt = 0,
					neq = 0;

#pragma unroll 8
		for (uint32_t i = s + t; i < e; i += QS_THREADS)
		{
			K			k = ks[i];

			nlt += k < pivot;
			neq += k == pivot;
		}
		for (int o = 16; o > 0; o >>= 1)
		{
			nlt += __shfl_xor_sync(0xffffffffu, nlt, o);
			neq += __shfl_xor_sync(0xffffffffu, neq, o);
		}
		if (lane == 0)
		{
			atomicAdd(&tot[0], nlt);
			atomicAdd(&tot[1], neq);
		}
		__syncthreads();
		if (t == 0)
		{
			tot[2] = len - tot[0] - tot[1];
			run[0] = s;
			run[1] = s + tot[0];
			run[2] = s + tot[0] + tot[1];
		}
		__syncthreads();

		/* three-way scatter into the other buffer, a step at a time */
		for (uint32_t step = s; step < e; step += QS_STEP)
		{
			K			k[QS_ITEMS];
			uint32_t	v[QS_ITEMS],
						pre[QS_ITEMS];
			int			side[QS_ITEMS];

#pragma unroll
			for (int i = 0; i < QS_ITEMS; i++)
			{
				uint32_t	idx = step + i * QS_THREADS + t;
				bool		in = idx < e;

				k[i] = in ? ks[idx] : (K) 0;
				v[i] = in ? vs[idx] : 0;
				side[i] = !in ? 3 : k[i] < pivot ? 0 : k[i] == pivot ? 1 : 2;
#pragma unroll
				for (int c = 0; c < 3; c++)
				{
					uint32_t	bal = __ballot_sync(0xffffffffu, side[i] == c);

					if (side[i] == c)
						pre[i] = __popc(bal & ltmask);
					if (lane == 0)
						cnt[c][i * QS_WARPS + warp] = __popc(bal);
				}
			}
			__syncthreads();
			if (warp == 0)
			{
				/* offsets within the step, then the step's places in each run */
				uint32_t	total[3],
							start[3];

				for (int c = 0; c < 3; c++)
				{
					total[c] = warp_exclusive_scan(cnt[c], lane);
					start[c] = run[c];
				}
				__syncwarp();
				for (int c = 0; c < 3; c++)
					cnt[c][lane] += start[c];
				if (lane == 0)
					for (int c = 0; c < 3; c++)
						run[c] = start[c] + total[c];
			}
			__syncthreads();
#pragma unroll
			for (int i = 0; i < QS_ITEMS; i++)
				if (side[i] < 3)
				{
					uint32_t	pos = cnt[side[i]][i * QS_WARPS + warp] + pre[i];

					kd[pos] = k[i];
					vd[pos] = v[i];
				}
			__syncthreads();
		}

		const uint32_t nl = tot[0],
					ne = tot[1],
					ng = tot[2];

		/* the equal run is in place; it belongs in buffer 1 */
		if ((b ^ 1) != 1)
			for (uint32_t i = s + nl + t; i < s + nl + ne; i += QS_THREADS)
			{
				k1[i] = kd[i];
				v1[i] = vd[i];
			}
		if (t == 0)
		{
			uint32_t	ls = s,
						le = s + nl,
						rs = s + nl + ne,
						re = e;
			bool		left_small = nl <= ng;

			/* larger first, so that the smaller one is sorted next */
			if (left_small)
			{
				if (ng)
					st_start[top] = rs, st_end[top] = re, st_buf[top] = b ^ 1, top++;
				if (nl)
					st_start[top] = ls, st_end[top] = le, st_buf[top] = b ^ 1, top++;
			}
			else
			{
				if (nl)
					st_start[top] = ls, st_end[top] = le, st_buf[top] = b ^ 1, top++;
				if (ng)
					st_start[top] = rs, st_end[top] = re, st_buf[top] = b ^ 1, top++;
			}
		}
	}
}

/*
 * Sequences phase one may split in a round for n keys: QS_MAXSEQ
 * (GPUSORT_QS_MAXSEQ in the environment overrides it, for tuning), and no
 * more than n's leaves; a multiple of 64, so that the parts of temp stay
 * 8-byte aligned.
 */
/* A tuning constant: the environment variable name's value if set, else dflt; within [lo, hi]. */
static long
qs_tuning(const char *name, long dflt, long lo, long hi)
{
	const char *e = getenv(name);

	return std::min(std::max(e ? atol(e) : dflt, lo), hi);
}

/* Leaves sent to the device at a time (see qs_leaf_queue). */
static size_t
qs_leaf_batch(void)
{
	static const size_t v = (size_t) qs_tuning("GPUSORT_QS_LEAF_BATCH", QS_LEAF_BATCH, 64,
												QS_LEAF_BATCH_LIMIT);

	return v;
}

static size_t
qs_max_sequences(size_t n)
{
	static const size_t limit = (size_t) qs_tuning("GPUSORT_QS_MAXSEQ", QS_MAXSEQ, 16,
												   QS_MAXSEQ_LIMIT);

	return (std::min(limit, n / QS_LEAF + 16) + 63) / 64 * 64;
}

/*
 * Sections (tasks) per SM a phase-one round splits its pairs into:
 * QS_TASKS_PER_SM (GPUSORT_QS_TASKS_PER_SM in the environment overrides it,
 * for tuning).  More sections than the SM holds blocks at once balance
 * the blocks' uneven pace.
 */
static int
qs_tasks_per_sm(void)
{
	static const int v = (int) qs_tuning("GPUSORT_QS_TASKS_PER_SM", QS_TASKS_PER_SM, 1,
										 QS_TASKS_PER_SM_LIMIT);

	return v;
}

/* A round's tasks: every sequence's sections of at most one chunk each. */
static size_t
qs_max_tasks(size_t n)
{
	return qs_max_sequences(n) + QS_EXTRA_TASKS;
}

static size_t qs_split_temp_bytes(size_t n, int key_bytes);

/*
 * Leaves the device's leaf array holds (the leaf queue's ring): twice the
 * sequences phase one leaves, and room for the split rounds' (two joined
 * buckets hold more than QS_LEAF pairs, so fewer than 2n / QS_LEAF of
 * them, plus the long ones).
 */
static size_t
qs_leaf_capacity(size_t n)
{
	return 2 * qs_max_sequences(n) + 4 * (n / QS_LEAF);
}

size_t
quicksort_temp_bytes(size_t n, int key_bytes)
{
	size_t		seq = key_bytes == 8 ? sizeof(qs_seq<uint64_t>) : sizeof(qs_seq<uint32_t>);
	size_t		maxseq = qs_max_sequences(n);

	return maxseq * seq + qs_max_tasks(n) * sizeof(qs_task) + qs_leaf_capacity(n) * sizeof(qs_leaf) +
		16 + ONESWEEP_SUMMARY_OFFSET + ONESWEEP_SUMMARY_BYTES + 16 + sizeof(qs_multi) +
		qs_split_temp_bytes(n, key_bytes);
}

struct qs_work
{
	uint32_t	start,
				end;
	int			buf;
	uint64_t	min,
				max;
	bool		nosplit = false;	/* a split round barely shortened it: two-way rounds */
};

/* The host's copy of the multi-pivot round's results (pinned where it can be). */
static qs_multi *
qs_host_multi(void)
{
	static qs_multi *pinned = NULL;
	static qs_multi pageable;
	static bool tried = false;

	if (!tried)
	{
		tried = true;
		if (cudaMallocHost((void **) &pinned, sizeof(qs_multi)) != cudaSuccess)
		{
			(void) cudaGetLastError();
			pinned = NULL;
		}
	}
	return pinned != NULL ? pinned : &pageable;
}

/*
 * The multi-pivot round: the sample's pivots (qs_sample_pivots_kernel),
 * and where it has at most QS_PIVOTS_MAX distinct keys every pair from
 * buffer 0 into its bucket in buffer 1 (the kernels see the pivot count on
 * the device: no round trip before them); the buckets become the work of
 * the rounds after (those of one pivot finished).  Moves nothing, and
 * leaves *work empty, where the sample has more distinct keys.
 */
template <typename K>
static gpusort_status
qs_multi_round(K *keys[2], uint32_t *vals[2], size_t n, const unsigned long long range[2],
			   qs_multi *d_m, qs_multi *h, int sms, cudaStream_t stream,
			   std::vector<qs_work> *work, quicksort_stats *stats)
{
	const unsigned grid = (unsigned) std::min<size_t>((n + QS_MULTI_STEP - 1) / QS_MULTI_STEP,
													  (size_t) sms * QS_MULTI_BLOCKS_PER_SM);
	uint32_t	at = 0;
	int			k;

	qs_sample_pivots_kernel<K><<<1, FIRST_READ_SAMPLE, 0, stream>>>(keys[0], n, d_m, NULL);
	CUDA_TRY_LAUNCH("qs_sample_pivots_kernel");
	qs_multi_count_kernel<K><<<grid, QS_THREADS, 0, stream>>>(keys[0], n, d_m);
	CUDA_TRY_LAUNCH("qs_multi_count_kernel");
	qs_multi_scatter_kernel<K><<<grid, QS_THREADS, 0, stream>>>(keys[0], vals[0], n, d_m,
																keys[1], vals[1]);
	CUDA_TRY_LAUNCH("qs_multi_scatter_kernel");
	CUDA_TRY(cudaMemcpyAsync(h, d_m, sizeof(qs_multi), cudaMemcpyDeviceToHost, stream));
	CUDA_TRY(cudaStreamSynchronize(stream));
	if ((k = h->pivots) == 0)
		return GPUSORT_OK;		/* the sample had more distinct keys: nothing moved */
	stats->phase_one_rounds++;
	for (int b = 0; b < 2 * k + 1; b++)
	{
		const uint32_t c = h->count[b];
		const int	j = b >> 1;

		if (c == 0)
			continue;
		if (h->cursor[b] != c)	/* every counted pair placed, or the kernels went wrong */
			return gpusort_from_cuda(cudaErrorUnknown, "qs_multi_round: pairs placed != counted");
		if (b & 1)
			work->push_back({at, at + c, 1, h->pivot[j], h->pivot[j]});
		else
			/* keys strictly between the pivots around the bucket */
			work->push_back({at, at + c, 1,
							 j == 0 ? range[0] : (unsigned long long) (K) (h->pivot[j - 1] + 1),
							 j == k ? range[1] : (unsigned long long) (K) (h->pivot[j] - 1)});
		at += c;
	}
	return at == n ? GPUSORT_OK
		: gpusort_from_cuda(cudaErrorUnknown, "qs_multi_round: buckets do not add up to n");
}

/*
 * GPUSORT_QS_TRACE=1 in the environment (tuning): each stage's time to
 * stderr, the stream synchronised after it.
 */
static void
qs_trace(cudaStream_t stream, const char *what, size_t count)
{
	static const bool on = qs_tuning("GPUSORT_QS_TRACE", 0, 0, 1) != 0;
	static struct timespec last;
	struct timespec now;

	if (!on)
		return;
	(void) cudaStreamSynchronize(stream);
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (what != NULL)
		fprintf(stderr, "qs %-24s %9zu %8.3f ms\n", what, count,
				(now.tv_sec - last.tv_sec) * 1e3 + (now.tv_nsec - last.tv_nsec) / 1e6);
	last = now;
}

/*
 * A pinned host buffer of at least bytes (slot 0: the split rounds'
 * results, 1: the leaves, 2: the split rounds' sequences and tasks going
 * in), kept and grown between calls; NULL where pinned memory cannot be
 * had (then pageable memory is copied, more slowly: a copy from it waits
 * for the stream's work so far, so the device idles while the host
 * launches what follows).
 */
static void *
qs_pinned(int slot, size_t bytes)
{
	static void *buf[3];
	static size_t cap[3];
	static bool failed = false;

	if (bytes <= cap[slot])
		return buf[slot];
	if (failed)
		return NULL;
	if (buf[slot] != NULL)
		(void) cudaFreeHost(buf[slot]);
	buf[slot] = NULL;
	cap[slot] = 0;
	bytes = std::max<size_t>(2 * bytes, (size_t) 1 << 20);
	if (cudaMallocHost(&buf[slot], bytes) != cudaSuccess)
	{
		(void) cudaGetLastError();
		buf[slot] = NULL;
		failed = true;
		return NULL;
	}
	cap[slot] = bytes;
	return buf[slot];
}

/* Room the split rounds need in temp for n pairs (none below QS_SPLIT_MIN). */
struct qs_split_caps
{
	size_t		seqs,
				tasks,
				pivots,
				buckets;
};

static qs_split_caps
qs_split_capacity(size_t n)
{
	qs_split_caps c = {0, 0, 0, 0};

	if (n <= QS_SPLIT_MIN)
		return c;
	/* the sequences of a round are disjoint and longer than QS_SPLIT_MIN */
	c.seqs = n / QS_SPLIT_MIN + 1;
	/* a round's tasks: up to 4 a SM of 1024 SMs, and one more per sequence (shorter steps: 64-bit keys) */
	c.tasks = std::min<size_t>(4096, n / qs_split_items<uint64_t>::STEP + 1) + c.seqs;
	/* kmax <= len / QS_SPLIT_TARGET */
	c.pivots = n / QS_SPLIT_TARGET + 64;
	c.buckets = 2 * c.pivots + c.seqs;
	return c;
}

static size_t
qs_split_temp_bytes(size_t n, int key_bytes)
{
	const qs_split_caps c = qs_split_capacity(n);

	if (c.seqs == 0)
		return 0;
	return 16 + c.seqs * sizeof(qs_split_seq) + c.tasks * sizeof(qs_split_task) +
		c.tasks * QS_SPLIT_BUCKETS * sizeof(uint32_t) +	/* counts */
		(c.seqs + c.buckets) * sizeof(uint32_t) +			/* npiv, totals */
		c.pivots * (size_t) key_bytes + 16 +
		n * sizeof(uint16_t) + 16;							/* each pair's bucket */
}

/*
 * Whether the split rounds run for n pairs (GPUSORT_QS_SPLIT=0: the paper's
 * two-way phase one only).
 */
static bool
qs_split_applies(size_t n)
{
	static const bool on = qs_tuning("GPUSORT_QS_SPLIT", 1, 0, 1) != 0;

	return on && n > QS_SPLIT_MIN;
}

/* The most pivots a sequence of len > QS_SPLIT_MIN pairs gets: buckets of about QS_SPLIT_TARGET. */
static uint32_t
qs_split_kmax(size_t len)
{
	return (uint32_t) std::min<size_t>(QS_SPLIT_PIVOTS, len / QS_SPLIT_TARGET - 1);
}

/* An event that is destroyed with its holder (on every return). */
struct qs_event
{
	cudaEvent_t ev = NULL;

	~qs_event()
	{
		if (ev != NULL)
			(void) cudaEventDestroy(ev);
	}
};

/* A stream that is destroyed with its holder (once its work is done). */
struct qs_stream
{
	cudaStream_t s = NULL;

	~qs_stream()
	{
		if (s != NULL)
			(void) cudaStreamDestroy(s);
	}
};

/*
 * Leaves on their way to phase two: gathered on the host and sent to the
 * device a batch at a time (QS_LEAF_BATCH leaves, and the rest at the
 * end; those longer than every register network in batches of their own),
 * each batch sorted there -- by the register network or by phase
 * two's kernel -- while the host goes on building the next one from the
 * split rounds' buckets or phase one's sequences.  Leaves are disjoint
 * ranges, so their sorts may run between any other rounds.  Batches go
 * through rings in the pinned host buffer and in the device's leaf array;
 * the stream is waited for only where the rings wrap, and at the end.
 * The longer leaves left at the end -- a few, each a block's long sort --
 * run on a stream of their own, ahead of the last register leaves and
 * beside them, instead of after them with most of the device idle.
 */
template <typename K>
struct qs_leaf_queue
{
	K		  **keys;
	uint32_t  **vals;
	qs_leaf    *d_leaves;		/* capacity leaves on the device */
	qs_leaf    *h_leaves;		/* as many pinned on the host; NULL: none could be had */
	size_t		capacity,
				batch,
				at;				/* the next batch's place in both rings */
	std::vector<qs_leaf> *pending;	/* not yet sent: for the register networks ... */
	std::vector<qs_leaf> deferred;	/* ... and longer ones */
	int			largest;		/* the largest network the device has room for */
	cudaStream_t stream;
	quicksort_stats *stats;
	qs_stream	side;			/* the longer leaves' stream at the end ... */
	qs_event	side_ready,		/* ... waiting for the main stream's work so far */
				side_done;		/* ... and waited for by it */
	bool		side_used = false;

	qs_leaf_queue(K *keys_[2], uint32_t *vals_[2], qs_leaf *d_leaves_, size_t capacity_,
				  std::vector<qs_leaf> *pending_, cudaStream_t stream_, quicksort_stats *stats_)
		: keys(keys_), vals(vals_), d_leaves(d_leaves_), capacity(capacity_),
		  batch(std::min<size_t>(qs_leaf_batch(), capacity_)), at(0), pending(pending_),
		  largest(qs_largest_leaf_network<K>()), stream(stream_), stats(stats_)
	{
		/* the whole ring at once: a buffer grown later could still be read by a copy */
		h_leaves = (qs_leaf *) qs_pinned(1, capacity * sizeof(qs_leaf));
		pending->clear();
	}

	/*
	 * A leaf to sort.  Those longer than the largest register network wait
	 * for a batch of their own (or the end): a launch of a few of them
	 * would hold up the stream for their long sorts.
	 */
	gpusort_status add(uint32_t start, uint32_t end, int buf)
	{
		std::vector<qs_leaf> *to = qs_leaf_network(end - start, largest) ? pending : &deferred;

		to->push_back({start, end, buf});
		return to->size() >= batch ? send(to) : GPUSORT_OK;
	}

	/* the leaves left to the device, their sorts launched, and the wait for all */
	gpusort_status finish()
	{
		gpusort_status st;

		if (!deferred.empty() && !pending->empty())
		{
			/* the longer leaves first, on the side stream, then the others beside them */
			if ((st = send(&deferred, true)) != GPUSORT_OK)
				return st;
		}
		if ((st = send(pending)) != GPUSORT_OK || (st = send(&deferred)) != GPUSORT_OK)
			return st;
		if (side_used)
			CUDA_TRY(cudaStreamWaitEvent(stream, side_done.ev, 0));
		CUDA_TRY(cudaStreamSynchronize(stream));
		return GPUSORT_OK;
	}

	/*
	 * the leaves of list (at most batch) to the device, their sorts
	 * launched (aside: phase two's kernel on the side stream)
	 */
	gpusort_status send(std::vector<qs_leaf> *list, bool aside = false)
	{
		const size_t m = list->size();

		if (m > 0)
		{
			if (at + m > capacity)
			{
				/* the ring is full: the batches in it are done before it is reused */
				CUDA_TRY(cudaStreamSynchronize(stream));
				if (side_used)
					CUDA_TRY(cudaEventSynchronize(side_done.ev));
				at = 0;
			}
			stats->sequences += (int) m;
			qs_trace(stream, "phase two: before", m);

			/*
			 * grouped by the register network that sorts them, largest
			 * first, then the longer ones (leaves are disjoint: any order)
			 */
			size_t		first[QS_LEAF_NETWORKS + 1];
			auto		from = list->begin();

			for (int c = 0; c < QS_LEAF_NETWORKS; c++)
			{
				first[c] = from - list->begin();
				from = std::partition(from, list->end(), [c, this](const qs_leaf &l) {
					return qs_leaf_network(l.end - l.start, largest) == QS_LEAF_MAX >> c;
				});
			}
			first[QS_LEAF_NETWORKS] = from - list->begin();

			/* from pageable memory the copy has taken the leaves when it returns */
			if (h_leaves != NULL)
				memcpy(h_leaves + at, list->data(), m * sizeof(qs_leaf));
			CUDA_TRY(cudaMemcpyAsync(d_leaves + at, h_leaves ? h_leaves + at : list->data(),
									 m * sizeof(qs_leaf), cudaMemcpyHostToDevice, stream));
			qs_trace(stream, "phase two: leaves in", m);
			for (int c = 0; c < QS_LEAF_NETWORKS; c++)
			{
				const size_t count = first[c + 1] - first[c];
				const qs_leaf *dl = d_leaves + at + first[c];
				gpusort_status lst = GPUSORT_OK;

				if (count == 0)
					continue;
				switch (QS_LEAF_MAX >> c)
				{
					case QS_LEAF_MAX:
						lst = qs_launch_leaves<K, QS_LEAF_MAX>(dl, count, keys, vals, stream);
						break;
					case QS_LEAF:
						lst = qs_launch_leaves<K, QS_LEAF>(dl, count, keys, vals, stream);
						break;
					case QS_LEAF / 2:
						lst = qs_launch_leaves<K, QS_LEAF / 2>(dl, count, keys, vals, stream);
						break;
					default:
						lst = qs_launch_leaves<K, QS_LEAF / 4>(dl, count, keys, vals, stream);
						break;
				}
				if (lst != GPUSORT_OK)
					return lst;
			}
			qs_trace(stream, "phase two: register leaves", first[QS_LEAF_NETWORKS]);
			if (m > first[QS_LEAF_NETWORKS])
			{
				cudaStream_t ks = stream;

				if (aside)
				{
					if (side.s == NULL)
					{
						int			least,
									greatest;

						/* ahead of the register leaves: the highest priority */
						CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
						CUDA_TRY(cudaStreamCreateWithPriority(&side.s, cudaStreamNonBlocking,
															  greatest));
						CUDA_TRY(cudaEventCreateWithFlags(&side_ready.ev, cudaEventDisableTiming));
						CUDA_TRY(cudaEventCreateWithFlags(&side_done.ev, cudaEventDisableTiming));
					}
					CUDA_TRY(cudaEventRecord(side_ready.ev, stream));
					CUDA_TRY(cudaStreamWaitEvent(side.s, side_ready.ev, 0));
					ks = side.s;
				}
				qs_phase_two_kernel<K><<<(unsigned) (m - first[QS_LEAF_NETWORKS]), QS_THREADS, 0,
					ks>>>(d_leaves + at + first[QS_LEAF_NETWORKS], keys[0], vals[0], keys[1],
						  vals[1]);
				CUDA_TRY_LAUNCH("qs_phase_two_kernel");
				if (aside)
				{
					CUDA_TRY(cudaEventRecord(side_done.ev, side.s));
					side_used = true;
				}
			}
			qs_trace(stream, "phase two", m);
			at += m;
			list->clear();
		}
		return GPUSORT_OK;
	}
};

/*
 * Blocks of kernel (threads threads, smem bytes of dynamic shared
 * memory) that a SM of the current device holds; cache: the device last
 * asked about and its answer (-1, 0 at first), so that a device is asked
 * once.
 */
template <typename F>
static int
qs_blocks_per_sm(F *kernel, int threads, size_t smem, int cache[2])
{
	int			device,
				blocks = 0;

	if (cudaGetDevice(&device) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return 1;
	}
	if (device == cache[0])
		return cache[1];
	if ((smem > 0 && cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
										  (int) smem) != cudaSuccess) ||
		cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem) !=
		cudaSuccess)
	{
		(void) cudaGetLastError();
		blocks = 0;
	}
	cache[0] = device;
	cache[1] = std::max(blocks, 1);
	return cache[1];
}

/* Blocks of the split scatter of shape SH that a SM of the current device holds. */
template <typename K, typename SH>
static int
qs_split_scatter_per_sm(void)
{
	static int	cache[2] = {-1, 0};

	return qs_blocks_per_sm(qs_split_scatter_kernel<K, SH>, SH::THREADS, SH::SMEM, cache);
}

/* Blocks of the split count that a SM of the current device holds. */
template <typename K>
static int
qs_split_count_per_sm(void)
{
	static int	cache[2] = {-1, 0};

	return qs_blocks_per_sm(qs_split_count_kernel<K>, QS_THREADS, 0, cache);
}

/* The length of each of m tasks of a sequence of len pairs: whole steps. */
static size_t
qs_split_task_len(size_t len, size_t m, size_t step)
{
	return ((len + m - 1) / m + step - 1) / step * step;
}

/*
 * The length of a round's tasks (a multiple of step).  A sequence of len
 * pairs is cut into ceil(len / chunk) tasks of equal length; the device
 * runs slots scatter blocks at once, each a task at a time, at about one
 * pace, so the round takes about waves = ceil(tasks / slots) tasks, the
 * last of them the longest, plus four steps a wave for the tasks' starts
 * (bucket offsets, zeroed counts).  Of the chunks
 * total / (slots * w), w = 1 .. 12, those that would finish within 3% of
 * the earliest are the candidates, and the one of fewest tasks is taken.
 * One sequence gets one wave of slots tasks; a fixed number of tasks a SM,
 * above the blocks a SM holds, left a second, partly idle wave.  At most
 * max_tasks tasks (> the sequences: the caller's room).
 */
static size_t
qs_split_chunk(const std::vector<qs_work> &split, size_t total, size_t slots, size_t step,
			   size_t max_tasks)
{
	const size_t least = (total + (max_tasks - split.size()) - 1) / (max_tasks - split.size());
	size_t		best = 0,
				best_span = SIZE_MAX,
				best_tasks = 0;
	struct
	{
		size_t		chunk,
					span,
					ntasks;
	}			cand[12];

	for (size_t w = 1; w <= 12; w++)
	{
		const size_t chunk = std::max({(total + slots * w - 1) / (slots * w), least, step});
		size_t		ntasks = 0,
					longest = 0;

		for (const qs_work &q : split)
		{
			const size_t len = q.end - q.start,
						m = (len + chunk - 1) / chunk;

			ntasks += m;
			longest = std::max(longest, qs_split_task_len(len, m, step));
		}
		const size_t waves = (ntasks + slots - 1) / slots;

		cand[w - 1] = {chunk, (waves - 1) * (total / ntasks) + longest + waves * 4 * step, ntasks};
		best_span = std::min(best_span, cand[w - 1].span);
	}
	for (const auto &c : cand)
		if (c.span <= best_span + best_span / 32 && (best == 0 || c.ntasks < best_tasks))
		{
			best = c.chunk;
			best_tasks = c.ntasks;
		}
	return best;
}

/*
 * The split rounds: while some sequence of work is longer than QS_SPLIT_MIN
 * (and not of one value, and not left by a poor split), those of one buffer
 * are split into the other, and their buckets replace them in work.
 * Buckets of at most QS_LEAF pairs next to each other are joined into
 * leaves of at most QS_LEAF (phase two sorts a leaf whole); a bucket more
 * than half as long as its sequence is not split again (phase one's
 * two-way rounds take it).  Buckets and leaves of at most QS_SPLIT_MIN
 * pairs (and more than one value) go to the leaf queue at once, so that
 * phase two sorts them while the host reads the rest.  temp:
 * qs_split_temp_bytes(n) at split_temp.
 */
template <typename K>
static gpusort_status
qs_split_rounds(K *keys[2], uint32_t *vals[2], size_t n, void *split_temp, int sms,
				cudaStream_t stream, std::vector<qs_work> *work, qs_leaf_queue<K> *queue,
				quicksort_stats *stats)
{
	const qs_split_caps cap = qs_split_capacity(n);
	unsigned char *p = (unsigned char *) (((uintptr_t) split_temp + 15) & ~(uintptr_t) 15);
	qs_split_seq *d_seqs = (qs_split_seq *) p;
	qs_split_task *d_tasks = (qs_split_task *) (d_seqs + cap.seqs);
	uint32_t   *d_counts = (uint32_t *) (d_tasks + cap.tasks),
			   *d_npiv = d_counts + cap.tasks * QS_SPLIT_BUCKETS,
			   *d_totals = d_npiv + cap.seqs;
	K		   *d_pivots = (K *) (((uintptr_t) (d_totals + cap.buckets) + 15) & ~(uintptr_t) 15);
	uint16_t   *d_bid = (uint16_t *) (((uintptr_t) (d_pivots + cap.pivots) + 15) & ~(uintptr_t) 15);
	constexpr size_t STEP = qs_split_items<K>::STEP;
	static std::vector<qs_split_seq> seqs;
	static std::vector<qs_split_task> tasks;
	static std::vector<uint32_t> npiv,
				totals;
	static std::vector<K> pivots;

	if (!qs_split_applies(n))
		return GPUSORT_OK;
	static std::vector<qs_work> rest,
				split;
	const int	scatter_tier = qs_scatter_tier<K>();
	const int	scatter_per_sm = qs_with_scatter_shape<K>(scatter_tier, [](auto shape) {
		return qs_split_scatter_per_sm<K, decltype(shape)>();
	});
	const int	count_per_sm = qs_split_count_per_sm<K>();
	qs_event	totals_in;		/* the round's totals on the host (the scatter still running) */

	CUDA_TRY(cudaEventCreateWithFlags(&totals_in.ev, cudaEventDisableTiming));

	for (;;)
	{
		size_t		total = 0,
					npivots = 0,
					nbuckets = 0;
		int			src = -1;

		rest.clear();
		split.clear();
		for (const qs_work &w : *work)
		{
			const size_t len = w.end - w.start;
			if (w.min == w.max || w.nosplit || len <= QS_SPLIT_MIN ||
				(src >= 0 && w.buf != src) || split.size() == cap.seqs ||
				npivots + qs_split_kmax(len) > cap.pivots)
			{
				rest.push_back(w);
				continue;
			}
			src = w.buf;
			split.push_back(w);
			total += len;
			npivots += qs_split_kmax(len);
		}
		if (split.empty())
			return GPUSORT_OK;

		const size_t chunk = qs_split_chunk(split, total, (size_t) sms * scatter_per_sm, STEP,
											cap.tasks);
		size_t		ncounts = 0;

		seqs.clear();
		tasks.clear();
		npivots = nbuckets = 0;
		for (size_t q = 0; q < split.size(); q++)
		{
			const qs_work &w = split[q];
			const size_t len = w.end - w.start;
			qs_split_seq sq;

			sq.start = w.start;
			sq.end = w.end;
			sq.kmax = qs_split_kmax(len);
			sq.pivot_base = (uint32_t) npivots;
			sq.bucket_base = (uint32_t) nbuckets;
			sq.first_task = (uint32_t) tasks.size();
			const size_t tlen = qs_split_task_len(len, (len + chunk - 1) / chunk, STEP);

			for (size_t b = w.start; b < w.end; b += tlen)
			{
				tasks.push_back({(uint32_t) q, (uint32_t) b,
								 (uint32_t) std::min<size_t>(b + tlen, w.end),
								 (uint32_t) ncounts});
				ncounts += 2 * sq.kmax + 1;
			}
			sq.ntasks = (uint32_t) tasks.size() - sq.first_task;
			sq.pad = 0;
			npivots += sq.kmax;
			nbuckets += 2 * sq.kmax + 1;
			seqs.push_back(sq);
		}
		if (tasks.size() > cap.tasks || ncounts > cap.tasks * QS_SPLIT_BUCKETS ||
			nbuckets > cap.buckets)
			return gpusort_from_cuda(cudaErrorUnknown, "qs_split_rounds: temp too small");
		{
			/*
			 * through pinned memory (free again: the last round's copies were
			 * done before its totals came back)
			 */
			const size_t sbytes = seqs.size() * sizeof(qs_split_seq),
						tbytes = tasks.size() * sizeof(qs_split_task);
			unsigned char *in = (unsigned char *) qs_pinned(2, sbytes + tbytes);
			const void *hs = seqs.data(),
					   *ht = tasks.data();

			if (in != NULL)
			{
				memcpy(in, seqs.data(), sbytes);
				memcpy(in + sbytes, tasks.data(), tbytes);
				hs = in;
				ht = in + sbytes;
			}
			CUDA_TRY(cudaMemcpyAsync(d_seqs, hs, sbytes, cudaMemcpyHostToDevice, stream));
			CUDA_TRY(cudaMemcpyAsync(d_tasks, ht, tbytes, cudaMemcpyHostToDevice, stream));
		}
		qs_trace(stream, "split: copies in", seqs.size());
		qs_split_pivots_kernel<K><<<(unsigned) seqs.size(), QS_THREADS, 0, stream>>>(
			d_seqs, keys[src], d_pivots, d_npiv);
		CUDA_TRY_LAUNCH("qs_split_pivots_kernel");
		qs_trace(stream, "split: pivots", seqs.size());
		/* the count's blocks: the scatter's tasks, each shared by parts blocks (whole steps each) */
		const size_t parts = std::max<size_t>(1, std::min(
			(size_t) sms * count_per_sm / tasks.size(), chunk / qs_split_items<K>::STEP));

		CUDA_TRY(cudaMemsetAsync(d_counts, 0, ncounts * sizeof(uint32_t), stream));
		qs_split_count_kernel<K><<<(unsigned) (tasks.size() * parts), QS_THREADS, 0, stream>>>(
			d_tasks, d_seqs, d_pivots, d_npiv, keys[src], d_counts, d_bid, (uint32_t) parts);
		CUDA_TRY_LAUNCH("qs_split_count_kernel");
		qs_trace(stream, "split: count", tasks.size());
		qs_split_offsets_kernel<<<(unsigned) seqs.size(), QS_SPLIT_OFFSET_THREADS, 0, stream>>>(
			d_seqs, d_tasks, d_npiv, d_counts, d_totals);
		CUDA_TRY_LAUNCH("qs_split_offsets_kernel");
		qs_trace(stream, "split: offsets", tasks.size());

		/*
		 * the pivot counts, bucket totals and pivots back (into pinned
		 * memory if it can be had) before the scatter, which does not change
		 * them: the host reads them and plans the next round, or sends the
		 * leaves, while the scatter runs
		 */
		const size_t tot_at = (seqs.size() * sizeof(uint32_t) + 15) & ~(size_t) 15,
					piv_at = (tot_at + nbuckets * sizeof(uint32_t) + 15) & ~(size_t) 15;
		unsigned char *h = (unsigned char *) qs_pinned(0, piv_at + npivots * sizeof(K));

		if (h == NULL)
		{
			npiv.resize(seqs.size());
			totals.resize(nbuckets);
			pivots.resize(npivots);
		}

		uint32_t   *h_npiv = h ? (uint32_t *) h : npiv.data(),
				   *h_totals = h ? (uint32_t *) (h + tot_at) : totals.data();
		K		   *h_pivots = h ? (K *) (h + piv_at) : pivots.data();

		CUDA_TRY(cudaMemcpyAsync(h_npiv, d_npiv, seqs.size() * sizeof(uint32_t),
								 cudaMemcpyDeviceToHost, stream));
		CUDA_TRY(cudaMemcpyAsync(h_totals, d_totals, nbuckets * sizeof(uint32_t),
								 cudaMemcpyDeviceToHost, stream));
		CUDA_TRY(cudaMemcpyAsync(h_pivots, d_pivots, npivots * sizeof(K),
								 cudaMemcpyDeviceToHost, stream));
		CUDA_TRY(cudaEventRecord(totals_in.ev, stream));
		{
			const gpusort_status sst = qs_with_scatter_shape<K>(scatter_tier, [&](auto shape) {
				return qs_launch_split_scatter<K, decltype(shape)>(
					tasks.size(), stream, d_tasks, d_seqs, d_npiv, d_counts, d_bid,
					keys[src], vals[src], keys[src ^ 1], vals[src ^ 1]);
			});

			if (sst != GPUSORT_OK)
				return sst;
		}
		qs_trace(stream, "split: scatter", total);
		CUDA_TRY(cudaEventSynchronize(totals_in.ev));
		qs_trace(stream, "split: copies out", nbuckets);
		stats->phase_one_rounds++;

		/* what is left of a sequence: short ones of more than one value are leaves */
		auto		keep = [&](const qs_work &w) -> gpusort_status {
			if (w.min != w.max && w.end - w.start <= QS_SPLIT_MIN)
				return queue->add(w.start, w.end, w.buf);
			rest.push_back(w);
			return GPUSORT_OK;
		};
		gpusort_status kst = GPUSORT_OK;

		/* the buckets, small neighbours joined into leaves */
		for (size_t q = 0; q < split.size(); q++)
		{
			const qs_work &w = split[q];
			const qs_split_seq &sq = seqs[q];
			const uint32_t k = h_npiv[q];
			const K    *pv = &h_pivots[sq.pivot_base];
			const uint32_t len = w.end - w.start;
			uint32_t	at = w.start;
			qs_work		leaf;		/* small buckets joined so far */
			bool		joining = false;

			if (k < 1 || k > sq.kmax)
				return gpusort_from_cuda(cudaErrorUnknown, "qs_split_rounds: bad pivot count");
			for (uint32_t b = 0; b < 2 * k + 1; b++)
			{
				const uint32_t c = h_totals[sq.bucket_base + b],
							j = b >> 1;
				qs_work		bw;

				if (c == 0)
					continue;
				bw.start = at;
				bw.end = at + c;
				bw.buf = src ^ 1;
				bw.nosplit = false;
				if (b & 1)
					bw.min = bw.max = (uint64_t) pv[j];
				else
				{
					/* keys strictly between the pivots around the bucket */
					bw.min = j == 0 ? w.min : (uint64_t) (K) (pv[j - 1] + 1);
					bw.max = j == k ? w.max : (uint64_t) (K) (pv[j] - 1);
					bw.nosplit = c > len / 2;
				}
				at += c;
				if (joining && c <= QS_LEAF && leaf.end - leaf.start + c <= QS_LEAF)
				{
					leaf.end = bw.end;
					leaf.max = bw.max;
					continue;
				}
				if (joining && (kst = keep(leaf)) != GPUSORT_OK)
					return kst;
				joining = c <= QS_LEAF;
				if (joining)
					leaf = bw;
				else if ((kst = keep(bw)) != GPUSORT_OK)
					return kst;
			}
			if (joining && (kst = keep(leaf)) != GPUSORT_OK)
				return kst;
			if (at != w.end)
				return gpusort_from_cuda(cudaErrorUnknown, "qs_split_rounds: buckets do not add up");
		}
		work->swap(rest);
		qs_trace(stream, "split: host", work->size());
	}
}

template <typename K>
gpusort_status
quicksort_sort_pairs(K *keys[2], uint32_t *vals[2], size_t n, bool positions, void *temp,
					 size_t temp_bytes, cudaStream_t stream, quicksort_stats *stats,
					 int *out, const unsigned long long *known_range)
{
	unsigned char *tp = (unsigned char *) temp;
	qs_seq<K>  *d_seqs = (qs_seq<K> *) tp;
	const size_t maxseq = qs_max_sequences(n);
	qs_task    *d_tasks = (qs_task *) (tp + maxseq * sizeof(qs_seq<K>));
	qs_leaf    *d_leaves = (qs_leaf *) (d_tasks + qs_max_tasks(n));
	const size_t leaf_capacity = qs_leaf_capacity(n);
	/* the first read's head (fewer than QS_SAMPLE_FIRST_MIN_N keys), laid out as the radix sort's */
	void	   *d_head = (void *) (((uintptr_t) (d_leaves + leaf_capacity) + 15) & ~(uintptr_t) 15);
	/* then the sample's and range's results and the multi-pivot round's pivots and counts */
	qs_multi   *d_multi = (qs_multi *) (((uintptr_t) d_head + ONESWEEP_SUMMARY_OFFSET +
										 ONESWEEP_SUMMARY_BYTES + 15) & ~(uintptr_t) 15);
	qs_multi   *h_multi = qs_host_multi();
	void	   *split_temp = (void *) (d_multi + 1);
	static std::vector<qs_seq<K> > seqs;
	static std::vector<qs_task> tasks;
	/* kept between calls, so that their memory is reused */
	static std::vector<qs_leaf> leaves;
	static std::vector<qs_work> work;
	unsigned long long range[2];
	int			dev,
				sms,
				sample_distinct = 0;	/* the sample's distinct keys; 0: not known */
	bool		in_order = false;	/* the first read found every key <= the next */
	unsigned	grid = (unsigned) std::min<size_t>((n + 255) / 256 + 1, 4096);

	stats->phase_one_rounds = 0;
	stats->sequences = 0;
	*out = 1;
	work.clear();
	if (n == 0)
		return GPUSORT_OK;
	if (n > ((size_t) 1 << 31) || temp_bytes < quicksort_temp_bytes(n, sizeof(K)))
		return GPUSORT_ERR_INVALID_ARGUMENT;
	CUDA_TRY(cudaGetDevice(&dev));
	CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	qs_trace(stream, NULL, 0);
	if (positions)
	{
		onesweep_iota_kernel<<<grid, 256, 0, stream>>>(vals[0], n);
		CUDA_TRY_LAUNCH("onesweep_iota_kernel");
	}
	if (known_range != NULL)
	{
		range[0] = known_range[0];
		range[1] = known_range[1];
	}
	else if (n < QS_SAMPLE_FIRST_MIN_N)
	{
		/* few keys: one read for the range and the sample (two kernels, one launch's wait) */
		digit_plan	none;		/* no digit places: the key range alone */
		const first_read_summary *look;
		gpusort_status hst;

		none.passes = 0;
		if ((hst = onesweep_first_read<K>(keys[0], n, none, d_head, QS_PIVOTS_MAX,
										  stream)) != GPUSORT_OK ||
			(hst = onesweep_first_read_wait(stream, &look)) != GPUSORT_OK)
			return hst;
		range[0] = look->range[0];
		range[1] = look->range[1];
		sample_distinct = look->distinct;
		in_order = look->sorted != 0;
	}
	else
	{
		/*
		 * Many keys: the sample of the first read (its distinct keys decide
		 * on the multi-pivot round), then the range -- which only one value or few
		 * need, so the read of every key is skipped on the device where the
		 * sample holds more distinct keys than that round takes: the whole
		 * type's range bounds them then (the split rounds' pivots come from
		 * samples, and phase one's from the bounds it tightens).  One wait.
		 */
		constexpr size_t from = offsetof(qs_multi, distinct),
					to = offsetof(qs_multi, range) + sizeof(h_multi->range);

		qs_sample_pivots_kernel<K><<<1, FIRST_READ_SAMPLE, 0, stream>>>(keys[0], n, d_multi, NULL);
		CUDA_TRY_LAUNCH("qs_sample_pivots_kernel");
		/* blocks of four vectors a thread, at most QS_RANGE_BLOCKS_PER_SM a SM */
		const unsigned rgrid = (unsigned) std::min<size_t>(
			(n / (16 / sizeof(K)) + 4 * QS_RANGE_THREADS - 1) / (4 * QS_RANGE_THREADS) + 1,
			(size_t) sms * QS_RANGE_BLOCKS_PER_SM);

		qs_range_kernel<K><<<rgrid, QS_RANGE_THREADS, 0, stream>>>(keys[0], n, d_multi);
		CUDA_TRY_LAUNCH("qs_range_kernel");
		CUDA_TRY(cudaMemcpyAsync((char *) h_multi + from, (const char *) d_multi + from, to - from,
								 cudaMemcpyDeviceToHost, stream));
		CUDA_TRY(cudaStreamSynchronize(stream));
		sample_distinct = h_multi->distinct;
		if (sample_distinct > QS_PIVOTS_MAX)
		{
			range[0] = 0;
			range[1] = (unsigned long long) ~(K) 0;
		}
		else
		{
			range[0] = ~h_multi->range[0];
			range[1] = h_multi->range[1];
		}
	}
	qs_trace(stream, "range read", n);
	if (range[0] == range[1] || in_order)
	{
		/* one value, or keys in order: in order already, where they are (O(n): iota and one read) */
		*out = 0;
		return GPUSORT_OK;
	}
	if (n >= QS_MULTI_MIN_N && sample_distinct <= QS_PIVOTS_MAX)
	{
		gpusort_status mst = qs_multi_round<K>(keys, vals, n, range, d_multi, h_multi, sms, stream,
											   &work, stats);

		if (mst != GPUSORT_OK)
			return mst;
	}
	qs_trace(stream, "multi-pivot round", work.size());
	if (work.empty())
		work.push_back({0, (uint32_t) n, 0, range[0], range[1]});

	/* phase two sorts the leaves a batch at a time, while the host goes on */
	qs_leaf_queue<K> queue(keys, vals, d_leaves, leaf_capacity, &leaves, stream, stats);
	gpusort_status sst = qs_split_rounds<K>(keys, vals, n, split_temp, sms, stream, &work,
											&queue, stats);

	if (sst != GPUSORT_OK)
		return sst;

	/* after split rounds, what they left is for phase two (up to QS_SPLIT_MIN) */
	const size_t minlength = std::max<size_t>(n / maxseq,
											  qs_split_applies(n) ? QS_SPLIT_MIN : QS_LEAF);
	const size_t max_blocks = (size_t) sms * qs_tasks_per_sm();

	/* [b, e) of sequence q in tasks of at most chunk pairs */
	auto		add_tasks = [&](uint32_t q, size_t b, size_t e, size_t chunk) {
		for (; b < e; b += chunk)
			tasks.push_back({q, (uint32_t) b, (uint32_t) std::min<size_t>(b + chunk, e)});
	};
	/* a section size for total pairs over a round's blocks, in whole steps */
	auto		round_chunk = [&](size_t total) -> size_t {
		size_t		chunk = std::max<size_t>((total + max_blocks - 1) / max_blocks, QS1_STEP);

		return (chunk + QS1_STEP - 1) / QS1_STEP * QS1_STEP;
	};

	/*
	 * Phase one, until every sequence is short (at most minlength) or of
	 * one value.  Every sequence it splits is longer than n / maxseq, so a
	 * round never splits more than maxseq; skewed keys take more rounds
	 * rather than leaving long sequences to a single block.
	 */
	while (!work.empty())
	{
		static std::vector<qs_work> active,
					copies,
					later;		/* long ones in the other buffer: a round after */
		gpusort_status fst;

		active.clear();
		copies.clear();
		later.clear();

		for (const qs_work &w : work)
		{
			if (w.min == w.max)
			{
				/*
				 * One value: in order already; to buffer 1.  Long ones by
				 * device copies, the others all in one launch.
				 */
				if (w.buf != 1 && w.end - w.start >= QS_COPY_ENGINE_MIN)
				{
					CUDA_TRY(cudaMemcpyAsync(keys[1] + w.start, keys[0] + w.start,
											 (size_t) (w.end - w.start) * sizeof(K),
											 cudaMemcpyDeviceToDevice, stream));
					CUDA_TRY(cudaMemcpyAsync(vals[1] + w.start, vals[0] + w.start,
											 (size_t) (w.end - w.start) * sizeof(uint32_t),
											 cudaMemcpyDeviceToDevice, stream));
				}
				else if (w.buf != 1)
					copies.push_back(w);
			}
			else if (w.end - w.start <= minlength || active.size() == maxseq)
			{
				if ((fst = queue.add(w.start, w.end, w.buf)) != GPUSORT_OK)
					return fst;
			}
			else if (!active.empty() && w.buf != active[0].buf)
				later.push_back(w);
			else
				active.push_back(w);
		}
		work.swap(later);
		if (!copies.empty())
		{
			size_t		total = 0;

			for (const qs_work &w : copies)
				total += w.end - w.start;

			const size_t chunk = round_chunk(total);

			tasks.clear();
			for (const qs_work &w : copies)
				add_tasks(0, w.start, w.end, chunk);
			/* in launches of at most the task buffer (stream order keeps it until read) */
			for (size_t f = 0; f < tasks.size(); f += qs_max_tasks(n))
			{
				size_t		m = std::min(tasks.size() - f, qs_max_tasks(n));

				CUDA_TRY(cudaMemcpyAsync(d_tasks, tasks.data() + f, m * sizeof(qs_task),
										 cudaMemcpyHostToDevice, stream));
				qs_copy_kernel<K><<<(unsigned) m, QS_THREADS, 0, stream>>>(
					d_tasks, keys[0], vals[0], keys[1], vals[1]);
				CUDA_TRY_LAUNCH("qs_copy_kernel");
			}
		}
		if (active.empty())
			break;

		size_t		total = 0;

		for (const qs_work &w : active)
			total += w.end - w.start;

		const size_t chunk = round_chunk(total);

		seqs.clear();
		tasks.clear();
		for (size_t q = 0; q < active.size(); q++)
		{
			const qs_work &w = active[q];
			qs_seq<K>	sq;
			K			lo = (K) w.min,
						hi = (K) w.max;

			sq.start = w.start;
			sq.end = w.end;
			sq.lt_ptr = w.start;
			sq.gt_ptr = w.end;
			sq.pivot = lo + (K) ((hi - lo) / 2 + 1);	/* in (min, max] */
			sq.lmin = sq.rmin = ~(K) 0;
			sq.lmax = sq.rmax = 0;
			seqs.push_back(sq);
			add_tasks((uint32_t) q, w.start, w.end, chunk);
		}
		if (tasks.size() > qs_max_tasks(n))
			return GPUSORT_ERR_INVALID_ARGUMENT;
		CUDA_TRY(cudaMemcpyAsync(d_seqs, seqs.data(), seqs.size() * sizeof(qs_seq<K>),
								 cudaMemcpyHostToDevice, stream));
		CUDA_TRY(cudaMemcpyAsync(d_tasks, tasks.data(), tasks.size() * sizeof(qs_task),
								 cudaMemcpyHostToDevice, stream));

		const int	src = active[0].buf;	/* every active sequence is in one buffer */

		qs_partition_kernel<K><<<(unsigned) tasks.size(), QS_THREADS, 0, stream>>>(
			d_tasks, d_seqs, keys[src], vals[src], keys[src ^ 1], vals[src ^ 1]);
		CUDA_TRY_LAUNCH("qs_partition_kernel");
		CUDA_TRY(cudaMemcpyAsync(seqs.data(), d_seqs, seqs.size() * sizeof(qs_seq<K>),
								 cudaMemcpyDeviceToHost, stream));
		CUDA_TRY(cudaStreamSynchronize(stream));
		qs_trace(stream, "phase one round", seqs.size());
		stats->phase_one_rounds++;
		for (const qs_seq<K> &sq : seqs)
		{
			if (sq.lt_ptr > sq.start)
				work.push_back({sq.start, sq.lt_ptr, src ^ 1, (uint64_t) sq.lmin, (uint64_t) sq.lmax});
			if (sq.lt_ptr < sq.end)
				work.push_back({sq.lt_ptr, sq.end, src ^ 1, (uint64_t) sq.rmin, (uint64_t) sq.rmax});
		}
	}

	/* phase two: the leaves left, and the wait for all */
	return queue.finish();
}

template <typename K>
gpusort_status
quicksort_sample_distinct(const K *keys, size_t n, void *temp, cudaStream_t stream, int *distinct,
						  int *order)
{
	/* the first read's host summary, idle until a read: its distinct and order fields, mapped where it can be */
	first_read_summary *dev,
			   *host = onesweep_host_summary(&dev);
	qs_multi   *d_m = (qs_multi *) temp;

	static_assert(offsetof(qs_multi, order) - offsetof(qs_multi, distinct) ==
				  offsetof(first_read_summary, order) - offsetof(first_read_summary, distinct),
				  "distinct and order copied at once");
	*distinct = 0;
	*order = 0;
	if (n < FIRST_READ_SAMPLE)
		return GPUSORT_ERR_INVALID_ARGUMENT;
	qs_sample_pivots_kernel<K><<<1, FIRST_READ_SAMPLE, 0, stream>>>(keys, n, d_m, dev);
	CUDA_TRY_LAUNCH("qs_sample_pivots_kernel");
	if (dev == NULL)
		CUDA_TRY(cudaMemcpyAsync(&host->distinct, &d_m->distinct, 2 * sizeof(int),
								 cudaMemcpyDeviceToHost, stream));
	CUDA_TRY(cudaStreamSynchronize(stream));
	*distinct = *(volatile int *) &host->distinct;
	*order = *(volatile int *) &host->order;
	return GPUSORT_OK;
}

template gpusort_status quicksort_sample_distinct<uint32_t>(const uint32_t *, size_t, void *,
															cudaStream_t, int *, int *);
template gpusort_status quicksort_sample_distinct<uint64_t>(const uint64_t *, size_t, void *,
															cudaStream_t, int *, int *);
template gpusort_status quicksort_sort_pairs<uint32_t>(uint32_t *[2], uint32_t *[2], size_t, bool,
													   void *, size_t, cudaStream_t, quicksort_stats *,
													   int *, const unsigned long long *);
template gpusort_status quicksort_sort_pairs<uint64_t>(uint64_t *[2], uint32_t *[2], size_t, bool,
													   void *, size_t, cudaStream_t, quicksort_stats *,
													   int *, const unsigned long long *);
