/*
 * bitonic.cuh -- bitonic sorting networks for (key, payload) pairs, after
 * Batcher: with a block's places in registers (bitonic_regs_network: the
 * leaves of GPU-Quicksort, the whole sort of small inputs, the chunks of
 * larger ones), in shared memory alone (bitonic_block_sort: quicksort's
 * phase two), and as a network in global memory for inputs larger than a
 * block (strides of a chunk or more over the whole array, the smaller
 * strides of a merge in registers: all in one cooperative launch with
 * grid-wide barriers where a block per chunk can be resident at once, else
 * a kernel per global stride; bitonic_sort.cu).
 *
 * Pairs compare by key, then by payload, so the order is total and the
 * result is the stable one when payloads are row positions; padding pairs
 * (all-ones key and payload) sort last.
 */
#ifndef GPUSORT_BITONIC_CUH
#define GPUSORT_BITONIC_CUH

#include <stdint.h>
#include <cuda_runtime.h>

#include "gpusort_kernels.h"

#define BITONIC_BLOCK_PAIRS	2048	/* pairs one block sorts in shared memory; the bitonic sort's chunk */
#define BITONIC_ONE_BLOCK_MAX	4096	/* most pairs the bitonic sort gives one block, where it fits */
#define BITONIC_PAD_VAL		0xffffffffu

template <typename K>
__device__ __forceinline__ bool
pair_greater(K ka, uint32_t va, K kb, uint32_t vb)
{
	return ka > kb || (ka == kb && va > vb);
}

/* One compare-exchange: ascending puts the smaller pair at lo. */
template <typename K>
__device__ __forceinline__ void
bitonic_cx(K *k, uint32_t *v, uint32_t lo, uint32_t hi, bool ascending)
{
	K			a = k[lo],
				b = k[hi];
	uint32_t	va = v[lo],
				vb = v[hi];

	if (pair_greater(a, va, b, vb) == ascending)
	{
		k[lo] = b;
		k[hi] = a;
		v[lo] = vb;
		v[hi] = va;
	}
}

/*
 * Stages size_from .. size_to (powers of two) of the network over count
 * pairs in shared memory, the stage-size-`size_to` ... strides down to 1.
 * base: global index of k[0] (the direction of a pair depends on it).
 * If first_stride is nonzero, the first stage starts at that stride.
 */
template <typename K>
__device__ void
bitonic_smem(K *k, uint32_t *v, uint32_t count, size_t base, uint32_t size_from,
			 uint32_t size_to, uint32_t first_stride)
{
	for (uint32_t size = size_from; size <= size_to; size <<= 1)
	{
		for (uint32_t stride = first_stride ? first_stride : size >> 1; stride > 0; stride >>= 1)
		{
			for (uint32_t p = threadIdx.x; p < count / 2; p += blockDim.x)
			{
				uint32_t	lo = 2 * p - (p & (stride - 1));

				bitonic_cx(k, v, lo, lo + stride, ((base + lo) & size) == 0);
			}
			__syncthreads();
		}
		first_stride = 0;
	}
}

/*
 * Are the count pairs in shared memory already in order (ascending, or
 * strictly descending)?  Returns 1 for ascending, -1 for descending, 0 for
 * neither, in every thread of the block (has barriers).  Pairs being
 * totally ordered, the network would leave ascending pairs as they are and
 * reverse strictly descending ones, so either answer gives its result.
 */
template <typename K>
__device__ __forceinline__ int
bitonic_presorted(const K *sk, const uint32_t *sv, uint32_t count)
{
	bool		up = true,
				down = true;

	for (uint32_t i = threadIdx.x; i + 1 < count; i += blockDim.x)
	{
		up &= !pair_greater(sk[i], sv[i], sk[i + 1], sv[i + 1]);
		down &= pair_greater(sk[i], sv[i], sk[i + 1], sv[i + 1]);
	}
	up = __syncthreads_and(up);
	down = __syncthreads_and(down);
	return up ? 1 : down ? -1 : 0;
}

/*
 * One block sorts count <= BITONIC_BLOCK_PAIRS pairs from (kin, vin) into
 * (kout, vout) (vin NULL: payload i is base + i); the in/out ranges may be
 * the same.  With CHECK_ORDER, pairs already ascending or strictly
 * descending skip the network (one look over them first).
 */
template <typename K, bool CHECK_ORDER = false>
__device__ void
bitonic_block_sort(const K *kin, const uint32_t *vin, K *kout, uint32_t *vout,
				   uint32_t count, size_t base, K *sk, uint32_t *sv)
{
	uint32_t	size = 2;

	while (size < count)
		size <<= 1;
	for (uint32_t i = threadIdx.x; i < size; i += blockDim.x)
	{
		sk[i] = i < count ? kin[i] : ~(K) 0;
		sv[i] = i < count ? (vin ? vin[i] : (uint32_t) (base + i)) : BITONIC_PAD_VAL;
	}
	__syncthreads();

	const int	order = CHECK_ORDER ? bitonic_presorted(sk, sv, count) : 0;

	if (order == 0)
		bitonic_smem(sk, sv, size, 0, 2, size, 0);
	for (uint32_t i = threadIdx.x; i < count; i += blockDim.x)
	{
		const uint32_t from = order < 0 ? count - 1 - i : i;

		kout[i] = sk[from];
		vout[i] = sv[from];
	}
	__syncthreads();
}

/*
 * The network with a block's places in registers: SIZE places (a power of
 * two) over bitonic_threads(SIZE) threads, each holding E = SIZE / threads
 * consecutive places -- strides below E within a thread, strides within a
 * warp by shuffles, the larger ones through shared memory (sk/sv:
 * bitonic_smem_places(SIZE) places, padded a place every 32 so that both a
 * thread's consecutive places and a warp's coalesced ones are free of bank
 * conflicts).  GPU-Quicksort's leaves and the bitonic sort's one block and
 * chunks take it.
 *
 * This is the form of the network in which every comparator puts the
 * smaller pair at the lower place: each merge of size places first
 * compares place e with its mirror e ^ (size - 1), then e with e ^ stride
 * for the strides below size / 2 (bitonic_keep, bitonic_swaps).  Places past
 * the pairs hold padding pairs of the greatest key and payload, and a
 * comparator whose upper place holds one leaves both places as they were;
 * so the padding never moves (the real pairs end sorted in the lowest
 * places), and the warps whose places are all padding do nothing but wait
 * at the barriers (their places in shared memory keep the padding written
 * at the start).
 *
 * TOTAL: pairs compare by key, then payload -- a total order, so the result
 * is the stable one where payloads are row positions (the bitonic sort).
 * Without it (quicksort, which needs no order among equal keys) 32-bit
 * keys alone decide, by one min-or-max instruction; 64-bit keys, which
 * have no such instruction, compare as pairs either way (measured on the
 * H100: the keys-only form was 7% slower there).
 */
#define BITONIC_REG_PLACES	8			/* most places a thread */
#define BITONIC_REG_THREADS_MIN 256		/* fewest threads a network */

/* Threads of the network of size places: BITONIC_REG_PLACES places a thread at most. */
__host__ __device__ constexpr int
bitonic_threads(int size, int places = BITONIC_REG_PLACES, int threads_min = BITONIC_REG_THREADS_MIN)
{
	return size / places > threads_min ? size / places : threads_min;
}

__host__ __device__ constexpr int
bitonic_smem_places(int size)
{
	return size + size / 32;
}

/* Shared memory of a network of size places (keys, then payloads). */
template <typename K>
__host__ __device__ constexpr size_t
bitonic_smem_bytes(int size)
{
	return (size_t) bitonic_smem_places(size) * (sizeof(K) + sizeof(uint32_t));
}

__device__ __forceinline__ int
bitonic_pad(int e)
{
	return e + (e >> 5);
}

/*
 * One side of a comparator whose other side is (pk, pv): the pair at the
 * lower place (keep_min: this one) ends with the smaller.  Keys alone (32-bit
 * keys without TOTAL): each side -- its own thread -- takes the partner's
 * pair only where the partner's key wins, so that both make the same choice:
 * equal keys stay put, no payload is lost or doubled, and padding (the
 * greatest key) never moves below a real pair of the same key.
 */
template <typename K, bool TOTAL>
__device__ __forceinline__ void
bitonic_keep(K &k, uint32_t &v, K pk, uint32_t pv, bool keep_min)
{
	if constexpr (sizeof(K) == 4 && !TOTAL)
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

/* Does the pair at the lower place of a comparator go up (as bitonic_keep orders them)? */
template <typename K, bool TOTAL>
__device__ __forceinline__ bool
bitonic_swaps(K klo, uint32_t vlo, K khi, uint32_t vhi)
{
	if constexpr (sizeof(K) == 4 && !TOTAL)
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
bitonic_regs_to_smem(const K *k, const uint32_t *v, K *sk, uint32_t *sv, bool skip)
{
	const int	t = threadIdx.x;

	__syncthreads();
	if (!skip)
#pragma unroll
		for (int r = 0; r < E; r++)
		{
			sk[bitonic_pad(t * E + r)] = k[r];
			sv[bitonic_pad(t * E + r)] = v[r];
		}
	__syncthreads();
}

/* Every thread's E places from shared memory into registers (after a barrier). */
template <typename K, int E>
__device__ __forceinline__ void
bitonic_smem_to_regs(K *k, uint32_t *v, const K *sk, const uint32_t *sv)
{
	const int	t = threadIdx.x;

#pragma unroll
	for (int r = 0; r < E; r++)
	{
		k[r] = sk[bitonic_pad(t * E + r)];
		v[r] = sv[bitonic_pad(t * E + r)];
	}
}

/*
 * One step of the network over the block's places in registers: the
 * comparators of stride `stride` in merges of `size` places (mirror: the
 * merge's first step, e against e ^ (size - 1)).  idle: the warp holds
 * padding only; pad_only: this thread does.
 */
template <typename K, int E, bool TOTAL>
__device__ __forceinline__ void
bitonic_regs_step(K *k, uint32_t *v, K *sk, uint32_t *sv, int size, int stride, bool mirror,
				  bool idle, bool pad_only)
{
	const int	t = threadIdx.x,
				lane = t & 31;

	if (stride >= E * 32)
	{
		/* the partner is in another warp */
		bitonic_regs_to_smem<K, E>(k, v, sk, sv, idle);
		if (!idle)
#pragma unroll
			for (int r = 0; r < E; r++)
			{
				const int	e = t * E + r,
							p = e ^ (mirror ? size - 1 : stride);

				bitonic_keep<K, TOTAL>(k[r], v[r], sk[bitonic_pad(p)], sv[bitonic_pad(p)],
									   (e & stride) == 0);
			}
	}
	else if (stride >= E)
	{
		/* the partner is in another lane of this warp */
		const int	m = stride / E;

		if (idle)
			return;
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

				bitonic_keep<K, TOTAL>(k[r], v[r], pk_lo, pv_lo, (lane & m) == 0);
				bitonic_keep<K, TOTAL>(k[E - 1 - r], v[E - 1 - r], pk_hi, pv_hi, (lane & m) == 0);
			}
		}
		else
#pragma unroll
			for (int r = 0; r < E; r++)
			{
				const K		pk = __shfl_xor_sync(0xffffffffu, k[r], m);
				const uint32_t pv = __shfl_xor_sync(0xffffffffu, v[r], m);

				bitonic_keep<K, TOTAL>(k[r], v[r], pk, pv, (lane & m) == 0);
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

				if (bitonic_swaps<K, TOTAL>(k[r], v[r], k[q], v[q]))
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

/*
 * The merges of FROM .. SIZE places (powers of two) over the block's SIZE
 * places in registers (THREADS threads, bitonic_threads(SIZE) but where
 * measuring others): FROM 2 sorts them; FROM = 2 * SIZE only finishes a
 * merge larger than the block whose strides of SIZE and more are done (its
 * strides SIZE / 2 .. 1, no mirror step).
 */
template <typename K, int SIZE, int THREADS, int FROM, bool TOTAL>
__device__ __forceinline__ void
bitonic_regs_network(K *k, uint32_t *v, K *sk, uint32_t *sv, bool idle, bool pad_only)
{
	constexpr int E = SIZE / THREADS;

	static_assert(E >= 2 && E * THREADS == SIZE, "whole places, two a thread or more (the mirror steps)");
	if constexpr (FROM > SIZE)
	{
#pragma unroll
		for (int stride = SIZE >> 1; stride > 0; stride >>= 1)
			bitonic_regs_step<K, E, TOTAL>(k, v, sk, sv, FROM, stride, false, idle, pad_only);
	}
	else
	{
#pragma unroll
		for (int size = FROM; size <= SIZE; size <<= 1)
#pragma unroll
			for (int stride = size >> 1; stride > 0; stride >>= 1)
				bitonic_regs_step<K, E, TOTAL>(k, v, sk, sv, size, stride, stride == size >> 1,
											   idle, pad_only);
	}
}

/*
 * Device-level bitonic sort of n pairs: keys[0]/vals[0] in (vals_are_positions:
 * payload i is i), the result in keys[1]/vals[1].  temp: bitonic_temp_bytes,
 * made ready once after allocation by bitonic_temp_clear(temp,
 * bitonic_temp_bytes(n, ...)), for sorts of that n.
 * Pairs already in order skip the network: in one block, ascending or
 * strictly descending ones; beyond a block, ascending ones (the copy into
 * the padded buffers notes any pair out of order; without one the single
 * launch copies the pairs out after its first barrier, and the
 * kernel-per-stride network's kernels return at once).
 * Defined in bitonic_sort.cu for uint32_t and uint64_t keys.
 */
size_t		bitonic_temp_bytes(size_t n, int key_bytes);
gpusort_status bitonic_temp_clear(void *temp, size_t bytes, cudaStream_t stream);

template <typename K>
gpusort_status bitonic_sort_pairs(K *keys[2], uint32_t *vals[2], size_t n,
								  bool vals_are_positions, void *temp, cudaStream_t stream);

#endif
