/*
 * quicksort.cu -- GPU-Quicksort; see quicksort.cuh for the design.  Here:
 * phase one, phase two and the host's rounds; the multi-pivot round, the
 * split rounds and the leaf sorts are in quicksort_multi.cuh,
 * quicksort_split.cuh and quicksort_leaf.cuh, the shared tuning constants
 * in quicksort_config.cuh.
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
#include "block_scan.cuh"
#include "cuda_check.cuh"
#include "device_smem.cuh"
#include "onesweep.cuh"			/* histogram_kernel (key range), iota */
#include "quicksort.cuh"
#include "quicksort_config.cuh"
#include "quicksort_leaf.cuh"
#include "quicksort_multi.cuh"
#include "quicksort_split.cuh"

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

template <typename K>
__device__ __forceinline__ K
median3(K a, K b, K c)
{
	return max(min(a, b), min(max(a, b), c));
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

/* A tuning constant: the tests' value where they set one, else dflt; within [lo, hi]. */
static long
qs_tuning(long test_value, long dflt, long lo, long hi)
{
	return std::min(std::max(test_value != 0 ? test_value : dflt, lo), hi);
}

/* Leaves sent to the device at a time (see qs_leaf_queue). */
static size_t
qs_leaf_batch(void)
{
	return (size_t) qs_tuning(gpusort_test_hooks.quicksort_leaf_batch, QS_LEAF_BATCH, 64,
							  QS_LEAF_BATCH_LIMIT);
}

/*
 * Sequences phase one may split in a round for n keys: QS_MAXSEQ, and no
 * more than n's leaves; a multiple of 64, so that the parts of temp stay
 * 8-byte aligned.
 */
static size_t
qs_max_sequences(size_t n)
{
	const size_t limit = (size_t) qs_tuning(gpusort_test_hooks.quicksort_max_sequences,
											QS_MAXSEQ, 16, QS_MAXSEQ_LIMIT);

	return (std::min(limit, n / QS_LEAF + 16) + 63) / 64 * 64;
}

/*
 * Sections (tasks) per SM a phase-one round splits its pairs into:
 * QS_TASKS_PER_SM.  More sections than the SM holds blocks at once balance
 * the blocks' uneven pace.
 */
static int
qs_tasks_per_sm(void)
{
	return (int) qs_tuning(gpusort_test_hooks.quicksort_tasks_per_sm, QS_TASKS_PER_SM, 1,
						   QS_TASKS_PER_SM_LIMIT);
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

/*
 * Pinned host buffers kept between sorts for the process's life (freed by
 * quicksort_release_host_buffers): the multi-pivot round's results, and
 * qs_pinned's slots.
 */
static qs_multi *multi_pinned = NULL;
static bool multi_tried = false;
static void *pinned_buf[3];
static size_t pinned_cap[3];
static bool pinned_failed = false;

void
quicksort_release_host_buffers(void)
{
	if (multi_pinned != NULL)
		(void) cudaFreeHost(multi_pinned);
	multi_pinned = NULL;
	multi_tried = false;
	for (int slot = 0; slot < 3; slot++)
	{
		if (pinned_buf[slot] != NULL)
			(void) cudaFreeHost(pinned_buf[slot]);
		pinned_buf[slot] = NULL;
		pinned_cap[slot] = 0;
	}
	pinned_failed = false;
}

/* The host's copy of the multi-pivot round's results (pinned where it can be). */
static qs_multi *
qs_host_multi(void)
{
	qs_multi *&pinned = multi_pinned;
	static qs_multi pageable;
	bool	   &tried = multi_tried;

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
 * The tests' stage timing (gpusort_test_hooks.quicksort_stage): each stage's
 * time, the stream synchronised after it.
 */
static void
qs_trace(cudaStream_t stream, const char *what, size_t count)
{
	static struct timespec last;
	struct timespec now;

	if (gpusort_test_hooks.quicksort_stage == NULL)
		return;
	(void) cudaStreamSynchronize(stream);
	clock_gettime(CLOCK_MONOTONIC, &now);
	gpusort_test_hooks.quicksort_stage(what, count, what == NULL ? 0.0
									   : (now.tv_sec - last.tv_sec) * 1e3 +
									   (now.tv_nsec - last.tv_nsec) / 1e6);
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
	void	  **buf = pinned_buf;
	size_t	   *cap = pinned_cap;
	bool	   &failed = pinned_failed;

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
 * Whether the split rounds run for n pairs (the tests may ask for the
 * paper's two-way phase one only: gpusort_test_hooks.quicksort_no_split).
 */
static bool
qs_split_applies(size_t n)
{
	return !gpusort_test_hooks.quicksort_no_split && n > QS_SPLIT_MIN;
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
