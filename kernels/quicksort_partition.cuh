/*
 * quicksort_partition.cuh -- GPU-Quicksort's phase one on the device:
 * blocks share a sequence and partition it around its pivot, a step at a
 * time (qs_partition_kernel), and sequences of one value are copied
 * (qs_copy_kernel).  Included by quicksort.cu only.
 */
#ifndef GPUSORT_QUICKSORT_PARTITION_CUH
#define GPUSORT_QUICKSORT_PARTITION_CUH

#include <stdint.h>
#include <cuda_runtime.h>

#include "block_scan.cuh"
#include "quicksort_config.cuh"
#include "warp_primitives.cuh"

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
 * Phase one's sides of a step's pairs held by a thread (inbits: those in
 * the task): each key's side, the ranges of both sides, the warp's counts
 * of each side (cnt, or nl and ng warp-major) and each pair's place among
 * its warp's pairs of its side (pre).
 */
template <typename K>
static __device__ __forceinline__ void
qs1_classify_step(const K (&k)[QS1_ITEMS], uint32_t inbits, K pivot,
				  uint32_t (&cnt)[2][qs1_order<K>::SLOTS], uint32_t (&pre)[QS1_ITEMS],
				  uint32_t &ltbits, uint32_t &nl, uint32_t &ng, K &lmin, K &lmax, K &rmin, K &rmax,
				  int lane, int warp, uint32_t ltmask)
{
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
}

/*
 * Warp 0's part of a phase one step: the counts of each side scanned in
 * qs1_order (cnt, in place), and the step's room at the sequence's two
 * ends taken (base).
 */
template <typename K>
static __device__ __forceinline__ void
qs1_step_places(uint32_t (&cnt)[2][qs1_order<K>::SLOTS], uint32_t (&base)[2], qs_seq<K> *sq,
				int lane)
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
		qs1_classify_step<K>(k, inbits, pivot, cnt, pre, ltbits, nl, ng, lmin, lmax, rmin, rmax,
							 lane, warp, ltmask);
		if (!qs1_order<K>::ITEM_MAJOR && lane == 0)
		{
			cnt[0][warp] = nl;
			cnt[1][warp] = ng;
		}
		__syncthreads();
		if (warp == 0)
			qs1_step_places<K>(cnt, base, sq, lane);
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

#endif
