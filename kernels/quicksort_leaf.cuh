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

#endif
