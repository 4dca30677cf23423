/*
 * quicksort_leaf.cuh -- GPU-Quicksort's leaves: the sequences phase two
 * gets, and the bitonic networks in registers and shared memory that sort
 * those of up to QS_LEAF_MAX pairs (longer ones take qs_phase_two_kernel
 * in quicksort.cu).
 */
#ifndef GPUSORT_QUICKSORT_LEAF_CUH
#define GPUSORT_QUICKSORT_LEAF_CUH

#include <stdint.h>
#include "bitonic.cuh"
#include "cuda_check.cuh"
#include "device_smem.cuh"
#include "quicksort_config.cuh"

/* A sequence for phase two: pairs start .. end - 1 of buffer buf. */
struct qs_leaf
{
	uint32_t	start,
				end;
	int			buf;			/* buffer holding it */
};

/*
 * A leaf of at most SIZE pairs (a power of two), sorted by a block of
 * THREADS threads: the bitonic network with places in registers
 * (bitonic_regs_network, keys alone deciding), E = SIZE / THREADS places a
 * thread.  Sorted from kin/vin into kout/vout.  The leaf kernels take
 * leaves of SIZE / 2 < count <= SIZE (the smallest size, every shorter leaf
 * too); the largest, QS_LEAF_MAX, takes the split rounds' buckets a little
 * longer than QS_LEAF that no neighbour joins.
 */
#define QS_LEAF_MAX		(2 * QS_LEAF)	/* the largest network */
#define QS_REG_LEAF_MIN	(QS_LEAF / 4)	/* the smallest network */
#define QS_LEAF_NETWORKS 4			/* QS_LEAF_MAX, QS_LEAF, QS_LEAF / 2, QS_LEAF / 4 */
#define QS_LEAF_PLACES	BITONIC_REG_PLACES	/* most places a thread */
#define QS_LEAF_THREADS_MIN QS_THREADS	/* fewest threads a network */
static_assert(QS_LEAF_MAX >> (QS_LEAF_NETWORKS - 1) == QS_REG_LEAF_MIN, "the networks' sizes");
static_assert(QS_REG_LEAF_MIN >= QS_LEAF_THREADS_MIN && QS_REG_LEAF_MIN % QS_LEAF_THREADS_MIN == 0,
			  "a leaf is whole places of every thread");

/* Threads of the network of size places: QS_LEAF_PLACES places a thread at most. */
__host__ __device__ constexpr int
qs_leaf_threads(int size)
{
	return bitonic_threads(size, QS_LEAF_PLACES, QS_LEAF_THREADS_MIN);
}

template <typename K, int SIZE>
__device__ void
qs_leaf_sort_regs(const K *kin, const uint32_t *vin, K *kout, uint32_t *vout, uint32_t count,
				  K *sk, uint32_t *sv)
{
	constexpr int THREADS = qs_leaf_threads(SIZE);
	constexpr int E = SIZE / THREADS;
	const int	t = threadIdx.x;
	const bool	idle = (uint32_t) ((t >> 5) * 32 * E) >= count,	/* the warp holds padding only */
				pad_only = (uint32_t) (t * E) >= count;	/* this thread does */
	K			k[E];
	uint32_t	v[E];

#pragma unroll
	for (int r = 0; r < E; r++)
	{
		const int	e = r * THREADS + t;

		sk[bitonic_pad(e)] = e < (int) count ? kin[e] : ~(K) 0;
		sv[bitonic_pad(e)] = e < (int) count ? vin[e] : BITONIC_PAD_VAL;
	}
	__syncthreads();
#pragma unroll
	for (int r = 0; r < E; r++)
	{
		k[r] = sk[bitonic_pad(t * E + r)];
		v[r] = sv[bitonic_pad(t * E + r)];
	}

	bitonic_regs_network<K, SIZE, THREADS, 2, false>(k, v, sk, sv, idle, pad_only);
	bitonic_regs_to_smem<K, E>(k, v, sk, sv, idle);
#pragma unroll
	for (int r = 0; r < E; r++)
	{
		const int	e = r * THREADS + t;

		if (e < (int) count)
		{
			kout[e] = sk[bitonic_pad(e)];
			vout[e] = sv[bitonic_pad(e)];
		}
	}
	__syncthreads();
}

#define QS_LEAF_REGS	64			/* registers a thread at most, 0: the compiler's choice */
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
	uint32_t   *sv = reinterpret_cast<uint32_t *>(sk + bitonic_smem_places(SIZE));
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
	static_assert(bitonic_smem_bytes<K>(QS_LEAF) <= DEVICE_SMEM_DEFAULT, "QS_LEAF fits any device");
	return bitonic_smem_bytes<K>(QS_LEAF_MAX) <= device_block_smem() ? QS_LEAF_MAX : QS_LEAF;
}

/* Launch the leaf kernel of SIZE places on count leaves (at leaves). */
template <typename K, int SIZE>
static gpusort_status
qs_launch_leaves(const qs_leaf *leaves, size_t count, K *keys[2], uint32_t *vals[2],
				 cudaStream_t stream)
{
	constexpr size_t smem = bitonic_smem_bytes<K>(SIZE);

	/* over the default 48 KB (the largest network of 64-bit keys): on the current device */
	if (smem > DEVICE_SMEM_DEFAULT)
		CUDA_TRY(cudaFuncSetAttribute(qs_leaf_kernel<K, SIZE>,
									  cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem));
	qs_leaf_kernel<K, SIZE><<<(unsigned) count, qs_leaf_threads(SIZE), smem, stream>>>(
		leaves, keys[0], vals[0], keys[1], vals[1]);
	CUDA_TRY_LAUNCH("qs_leaf_kernel");
	return GPUSORT_OK;
}

#endif
