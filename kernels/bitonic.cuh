/*
 * bitonic.cuh -- bitonic sorting networks for (key, payload) pairs, after
 * Batcher: in shared memory for one block's worth of pairs (the leaves of
 * GPU-Quicksort and the whole sort of small inputs), and as a network in
 * global memory for inputs larger than a block (strides of a block or more
 * over the whole array, the smaller strides of a stage in shared memory:
 * all in one cooperative launch with grid-wide barriers where a block per
 * chunk can be resident at once, else a kernel per global stride).
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

#define BITONIC_THREADS		512
#define BITONIC_BLOCK_PAIRS	2048	/* pairs one block sorts in shared memory */
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
 * Device-level bitonic sort of n pairs: keys[0]/vals[0] in (vals_are_positions:
 * payload i is i), the result in keys[1]/vals[1].  temp: bitonic_temp_bytes.
 * Pairs already in order skip the network: in one block, ascending or
 * strictly descending ones; beyond a block, ascending ones (the copy into
 * the padded buffers notes any pair out of order; without one the single
 * launch copies the pairs out after its first barrier, and the
 * kernel-per-stride network's kernels return at once).
 * Defined in bitonic_sort.cu for uint32_t and uint64_t keys.
 */
size_t		bitonic_temp_bytes(size_t n, int key_bytes);

template <typename K>
gpusort_status bitonic_sort_pairs(K *keys[2], uint32_t *vals[2], size_t n,
								  bool vals_are_positions, void *temp, cudaStream_t stream);

#endif
