/*
 * bitonic.cuh -- bitonic sorting networks for (key, payload) pairs, after
 * Batcher: in shared memory for one block's worth of pairs (the leaves of
 * GPU-Quicksort and the whole sort of small inputs), and as a network in
 * global memory for inputs larger than a block (strides of a block or more
 * one kernel each, the smaller strides of a stage in shared memory).
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
 * One block sorts count <= BITONIC_BLOCK_PAIRS pairs from (kin, vin) into
 * (kout, vout) (vin NULL: payload i is base + i); the in/out ranges may be
 * the same.
 */
template <typename K>
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
	bitonic_smem(sk, sv, size, 0, 2, size, 0);
	for (uint32_t i = threadIdx.x; i < count; i += blockDim.x)
	{
		kout[i] = sk[i];
		vout[i] = sv[i];
	}
	__syncthreads();
}

/*
 * Device-level bitonic sort of n pairs: keys[0]/vals[0] in (vals_are_positions:
 * payload i is i), the result in keys[1]/vals[1].  temp: bitonic_temp_bytes.
 * Defined in bitonic_sort.cu for uint32_t and uint64_t keys.
 */
size_t		bitonic_temp_bytes(size_t n, int key_bytes);

template <typename K>
gpusort_status bitonic_sort_pairs(K *keys[2], uint32_t *vals[2], size_t n,
								  bool vals_are_positions, void *temp, cudaStream_t stream);

#endif
