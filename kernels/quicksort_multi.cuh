/*
 * quicksort_multi.cuh -- GPU-Quicksort's multi-pivot round: its sample,
 * range read, count and scatter kernels (quicksort.cu runs the round:
 * qs_multi_round).
 */
#ifndef GPUSORT_QUICKSORT_MULTI_CUH
#define GPUSORT_QUICKSORT_MULTI_CUH

#include <stdint.h>
#include "first_read_kernels.cuh"	/* FIRST_READ_SAMPLE, first_read_summary */
#include "warp_primitives.cuh"
#include "quicksort_config.cuh"

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

#endif
