/*
 * quicksort_phase_two.cuh -- GPU-Quicksort's phase two: a block sorts a
 * leaf on its own (qs_phase_two_kernel, for leaves longer than the
 * register networks of quicksort_leaf.cuh), and the leaf queue that
 * gathers leaves on the host and sends them to the device in batches.
 * Included by quicksort.cu only (after quicksort_host.cuh).
 */
#ifndef GPUSORT_QUICKSORT_PHASE_TWO_CUH
#define GPUSORT_QUICKSORT_PHASE_TWO_CUH

#include <stdint.h>
#include <vector>
#include <cuda_runtime.h>

#include "quicksort_config.cuh"
#include "quicksort_host.cuh"
#include "quicksort_leaf.cuh"

template <typename K>
__device__ __forceinline__ K
median3(K a, K b, K c)
{
	return max(min(a, b), min(max(a, b), c));
}

/* Phase two's count: the keys of [s, e) below and equal to pivot, added to tot[0] and tot[1]. */
template <typename K>
__device__ __forceinline__ void
qs_two_count(const K *ks, uint32_t s, uint32_t e, K pivot, uint32_t *tot)
{
	const int	lane = threadIdx.x & 31;
	uint32_t	nlt = 0,
				neq = 0;

#pragma unroll 8
	for (uint32_t i = s + threadIdx.x; i < e; i += QS_THREADS)
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
}

/*
 * Push the two sides of a sequence [s, e) split into nl smaller, ne equal
 * and ng larger keys (in buffer buf) on phase two's stack: the larger
 * first, so that the smaller one is sorted next.
 */
__device__ __forceinline__ void
qs_two_push(uint32_t *st_start, uint32_t *st_end, int *st_buf, int *top, uint32_t s, uint32_t e,
			uint32_t nl, uint32_t ne, uint32_t ng, int buf)
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
			st_start[*top] = rs, st_end[*top] = re, st_buf[*top] = buf, (*top)++;
		if (nl)
			st_start[*top] = ls, st_end[*top] = le, st_buf[*top] = buf, (*top)++;
	}
	else
	{
		if (nl)
			st_start[*top] = ls, st_end[*top] = le, st_buf[*top] = buf, (*top)++;
		if (ng)
			st_start[*top] = rs, st_end[*top] = re, st_buf[*top] = buf, (*top)++;
	}
}

/*
 * Phase two's three-way scatter of [s, e) around pivot, from ks/vs into
 * kd/vd (the runs of smaller, equal and larger keys begin at run[0..2]), a
 * step at a time: ballots rank each item among its warp's of its side,
 * warp 0 scans the warps' counts (cnt) into the step's places.
 */
template <typename K>
static __device__ __forceinline__ void
qs_two_scatter(const K *ks, const uint32_t *vs, K *kd, uint32_t *vd, uint32_t s, uint32_t e,
			   K pivot, uint32_t (&cnt)[3][32], uint32_t (&run)[3], int t, int lane, int warp,
			   uint32_t ltmask)
{
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
		qs_two_count<K>(ks, s, e, pivot, tot);
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
		qs_two_scatter<K>(ks, vs, kd, vd, s, e, pivot, cnt, run, t, lane, warp, ltmask);

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
			qs_two_push(st_start, st_end, st_buf, &top, s, e, nl, ne, ng, b ^ 1);
	}
}

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

#endif
