/*
 * bitonic_sort.cu -- the bitonic sort as a sort of its own (bitonic.cuh):
 * one block in shared memory when the input fits, else the whole network
 * over the input padded to a power of two -- in one cooperative launch
 * where a block per chunk of the padded input can all be resident at once,
 * else a kernel per global stride.
 */
#include <stdlib.h>
#include <string.h>

#include <cooperative_groups.h>

#include "bitonic.cuh"
#include "cuda_check.cuh"

namespace cg = cooperative_groups;

template <typename K>
__global__ void __launch_bounds__(BITONIC_THREADS)
bitonic_one_block_kernel(const K *kin, const uint32_t *vin, K *kout, uint32_t *vout,
						 uint32_t n)
{
	__shared__ K sk[BITONIC_BLOCK_PAIRS];
	__shared__ uint32_t sv[BITONIC_BLOCK_PAIRS];

	bitonic_block_sort<K, true>(kin, vin, kout, vout, n, 0, sk, sv);
}

/*
 * The word after a sort's padded buffers: nonzero once a pair out of order
 * was seen (the pad kernel sets it, the unpad kernel clears it for the next
 * sort).  Any value it holds before the pad kernel is safe: a stale nonzero
 * only costs the network on pairs in order.
 */
struct bitonic_order_flag
{
	unsigned int unsorted;
	unsigned int pad[3];
};

/*
 * Pair i of the padded input into (*key, *val): (kin, vin)'s pair i below
 * n (vin NULL: payload i), a padding pair from n on; true where pair i is
 * greater than pair i + 1, both below n.
 */
template <typename K, typename I>
__device__ __forceinline__ bool
bitonic_padded_pair(const K *kin, const uint32_t *vin, I n, I i, K *key, uint32_t *val)
{
	*key = i < n ? kin[i] : ~(K) 0;
	*val = i < n ? (vin ? vin[i] : (uint32_t) i) : BITONIC_PAD_VAL;
	return i + 1 < n && pair_greater(*key, *val, kin[i + 1], vin ? vin[i + 1] : (uint32_t) (i + 1));
}

/* Copy chunk base's BITONIC_BLOCK_PAIRS pairs from (ks, vs) to (kd, vd) (one block). */
template <typename K, typename I>
__device__ __forceinline__ void
bitonic_chunk_copy(K *kd, uint32_t *vd, I dbase, const K *ks, const uint32_t *vs, I sbase)
{
	for (uint32_t i = threadIdx.x; i < BITONIC_BLOCK_PAIRS; i += blockDim.x)
	{
		kd[dbase + i] = ks[sbase + i];
		vd[dbase + i] = vs[sbase + i];
	}
}

/* Compare-exchange p of a global stride (a chunk or more) of stage `size`. */
template <typename K, typename I>
__device__ __forceinline__ void
bitonic_stride_cx(K *k, uint32_t *v, I p, I size, I stride)
{
	const I		lo = 2 * p - (p & (stride - 1));

	bitonic_cx(k, v, lo, lo + stride, (lo & size) == 0);
}

/*
 * pad: copy n pairs into the power-of-two buffers, padding pairs after
 * them, and note in flag whether any pair is out of order.
 */
template <typename K>
__global__ void
bitonic_pad_kernel(const K *kin, const uint32_t *vin, K *k, uint32_t *v, size_t n, size_t size,
				   bitonic_order_flag *flag)
{
	bool		unsorted = false;

	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < size;
		 i += (size_t) gridDim.x * blockDim.x)
	{
		K			key;
		uint32_t	val;

		unsorted |= bitonic_padded_pair(kin, vin, n, i, &key, &val);
		k[i] = key;
		v[i] = val;
	}
	/* one store a warp that saw any (blocks of whole warps, none returned early) */
	if (__ballot_sync(0xffffffffu, unsorted) && (threadIdx.x & 31) == 0)
		flag->unsorted = 1;
}

/* Stages size_from..size_to of each block's chunk, in shared memory. */
template <typename K>
__global__ void __launch_bounds__(BITONIC_THREADS)
bitonic_chunk_kernel(K *k, uint32_t *v, uint32_t size_from, uint32_t size_to,
					 uint32_t first_stride, const bitonic_order_flag *flag)
{
	__shared__ K sk[BITONIC_BLOCK_PAIRS];
	__shared__ uint32_t sv[BITONIC_BLOCK_PAIRS];
	size_t		base = (size_t) blockIdx.x * BITONIC_BLOCK_PAIRS;

	if (!*(volatile const unsigned int *) &flag->unsorted)
		return;					/* every pair in order already */

	bitonic_chunk_copy(sk, sv, (size_t) 0, k, v, base);
	__syncthreads();
	bitonic_smem(sk, sv, BITONIC_BLOCK_PAIRS, base, size_from, size_to, first_stride);
	bitonic_chunk_copy(k, v, base, sk, sv, (size_t) 0);
}

/* One stride (>= a chunk) of stage `size` over the whole array. */
template <typename K>
__global__ void
bitonic_global_kernel(K *k, uint32_t *v, size_t size_total, size_t size, size_t stride,
					  const bitonic_order_flag *flag)
{
	if (!*(volatile const unsigned int *) &flag->unsorted)
		return;					/* every pair in order already */
	for (size_t p = blockIdx.x * (size_t) blockDim.x + threadIdx.x; p < size_total / 2;
		 p += (size_t) gridDim.x * blockDim.x)
		bitonic_stride_cx(k, v, p, size, stride);
}

/*
 * The whole network over the padded input in one launch, a block per chunk
 * of BITONIC_BLOCK_PAIRS (all resident: a cooperative launch), grid-wide
 * barriers where the kernel-per-stride path has kernel boundaries: the
 * chunk's pairs into shared memory, padded after n, noting in flag any
 * pair out of order; pairs all ascending are copied out after the first
 * barrier (one read, one write); else the chunks' first stages in shared
 * memory, then per stage its strides of a chunk or more over the whole
 * array (k, v) and its smaller strides in shared memory.  The first
 * block clears flag at the end, every block having read it.
 */
template <typename K>
__global__ void __launch_bounds__(BITONIC_THREADS)
bitonic_grid_kernel(const K *kin, const uint32_t *vin, K *k, uint32_t *v, K *kout,
					uint32_t *vout, uint32_t n, uint32_t size, bitonic_order_flag *flag)
{
	__shared__ K sk[BITONIC_BLOCK_PAIRS];
	__shared__ uint32_t sv[BITONIC_BLOCK_PAIRS];
	cg::grid_group grid = cg::this_grid();
	const uint32_t base = blockIdx.x * BITONIC_BLOCK_PAIRS;
	bool		unsorted = false;

	for (uint32_t i = threadIdx.x; i < BITONIC_BLOCK_PAIRS; i += blockDim.x)
		unsorted |= bitonic_padded_pair(kin, vin, n, base + i, &sk[i], &sv[i]);
	if (__syncthreads_or(unsorted) && threadIdx.x == 0)
		flag->unsorted = 1;
	grid.sync();
	if (*(volatile unsigned int *) &flag->unsorted)
	{
		bitonic_smem(sk, sv, BITONIC_BLOCK_PAIRS, base, 2, BITONIC_BLOCK_PAIRS, 0);
		for (uint32_t stage = 2 * BITONIC_BLOCK_PAIRS; stage <= size; stage <<= 1)
		{
			bitonic_chunk_copy(k, v, base, sk, sv, 0u);
			grid.sync();
			for (uint32_t stride = stage >> 1; stride >= BITONIC_BLOCK_PAIRS; stride >>= 1)
			{
				/* this block's share of the stride's pairs */
				for (uint32_t p = base / 2 + threadIdx.x; p < (base + BITONIC_BLOCK_PAIRS) / 2;
					 p += blockDim.x)
					bitonic_stride_cx(k, v, p, stage, stride);
				grid.sync();
			}
			bitonic_chunk_copy(sk, sv, 0u, k, v, base);
			__syncthreads();
			bitonic_smem(sk, sv, BITONIC_BLOCK_PAIRS, base, stage, stage, BITONIC_BLOCK_PAIRS / 2);
		}
		if (blockIdx.x == 0 && threadIdx.x == 0)
			flag->unsorted = 0;	/* for the next sort: read by every block before a barrier since */
	}
	for (uint32_t i = threadIdx.x; i < BITONIC_BLOCK_PAIRS && base + i < n; i += blockDim.x)
	{
		kout[base + i] = sk[i];
		vout[base + i] = sv[i];
	}
}

/*
 * Blocks of bitonic_grid_kernel<K> the device keeps resident at once (0:
 * no cooperative launch, or GPUSORT_BITONIC_STRIDE_KERNELS=1 in the
 * environment, which the tests set to run the kernel-per-stride path at
 * small sizes); the current device of the first call decides.
 */
template <typename K>
static int
bitonic_grid_blocks(void)
{
	static int	blocks = -1;

	if (blocks < 0)
	{
		const char *off = getenv("GPUSORT_BITONIC_STRIDE_KERNELS");
		int			dev,
					coop = 0,
					sms = 0,
					per_sm = 0;
		bool		ok = cudaGetDevice(&dev) == cudaSuccess &&
			cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev) == cudaSuccess &&
			cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess &&
			cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bitonic_grid_kernel<K>,
														  BITONIC_THREADS, 0) == cudaSuccess;

		if (!ok)
			(void) cudaGetLastError();	/* not an error of the sort: the other path */
		blocks = ok && coop && !(off && strcmp(off, "1") == 0) ? per_sm * sms : 0;
	}
	return blocks;
}

template <typename K>
__global__ void
bitonic_unpad_kernel(const K *k, const uint32_t *v, K *kout, uint32_t *vout, size_t n,
					 bitonic_order_flag *flag)
{
	if (blockIdx.x == 0 && threadIdx.x == 0)
		flag->unsorted = 0;		/* for the next sort: every kernel before has read it */
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
		 i += (size_t) gridDim.x * blockDim.x)
	{
		kout[i] = k[i];
		vout[i] = v[i];
	}
}

static size_t
pow2_at_least(size_t n)
{
	size_t		s = BITONIC_BLOCK_PAIRS;

	while (s < n)
		s <<= 1;
	return s;
}

size_t
bitonic_temp_bytes(size_t n, int key_bytes)
{
	return n <= BITONIC_BLOCK_PAIRS ? 0 :
		pow2_at_least(n) * (key_bytes + sizeof(uint32_t)) + sizeof(bitonic_order_flag);
}

template <typename K>
gpusort_status
bitonic_sort_pairs(K *keys[2], uint32_t *vals[2], size_t n, bool positions, void *temp,
				   cudaStream_t stream)
{
	const uint32_t *vin = positions ? NULL : vals[0];

	if (n == 0)
		return GPUSORT_OK;
	if (n <= BITONIC_BLOCK_PAIRS)
	{
		bitonic_one_block_kernel<K><<<1, BITONIC_THREADS, 0, stream>>>(
			keys[0], vin, keys[1], vals[1], (uint32_t) n);
		CUDA_TRY_LAUNCH("bitonic_one_block_kernel");
		return GPUSORT_OK;
	}

	size_t		size = pow2_at_least(n);
	K		   *k = (K *) temp;
	uint32_t   *v = (uint32_t *) (k + size);
	bitonic_order_flag *flag = (bitonic_order_flag *) (v + size);
	unsigned	grid = (unsigned) (size / 2 / 256 < 65535 ? size / 2 / 256 : 65535);
	unsigned	chunks = (unsigned) (size / BITONIC_BLOCK_PAIRS);

	if (chunks <= (unsigned) bitonic_grid_blocks<K>())
	{
		/* one launch, a block a chunk, all resident */
		K		   *kin = keys[0],
				   *kout = keys[1];
		uint32_t   *vout = vals[1],
					n32 = (uint32_t) n,
					size32 = (uint32_t) size;
		void	   *args[] = {&kin, &vin, &k, &v, &kout, &vout, &n32, &size32, &flag};
		cudaError_t err = cudaLaunchCooperativeKernel((const void *) bitonic_grid_kernel<K>,
													  chunks, BITONIC_THREADS, args, 0, stream);

		if (err == cudaSuccess)
			return GPUSORT_OK;
		if (err != cudaErrorCooperativeLaunchTooLarge)
			return gpusort_from_cuda(err, "cudaLaunchCooperativeKernel(bitonic_grid_kernel)");
		/* fewer multiprocessors to this process than measured (MPS): a kernel a stride */
		(void) cudaGetLastError();
	}
	bitonic_pad_kernel<K><<<grid, 256, 0, stream>>>(keys[0], vin, k, v, n, size, flag);
	CUDA_TRY_LAUNCH("bitonic_pad_kernel");
	bitonic_chunk_kernel<K><<<chunks, BITONIC_THREADS, 0, stream>>>(k, v, 2, BITONIC_BLOCK_PAIRS, 0,
																	flag);
	CUDA_TRY_LAUNCH("bitonic_chunk_kernel");
	for (size_t stage = 2 * BITONIC_BLOCK_PAIRS; stage <= size; stage <<= 1)
	{
		for (size_t stride = stage >> 1; stride >= BITONIC_BLOCK_PAIRS; stride >>= 1)
		{
			bitonic_global_kernel<K><<<grid, 256, 0, stream>>>(k, v, size, stage, stride, flag);
			CUDA_TRY_LAUNCH("bitonic_global_kernel");
		}
		bitonic_chunk_kernel<K><<<chunks, BITONIC_THREADS, 0, stream>>>(
			k, v, (uint32_t) stage, (uint32_t) stage, BITONIC_BLOCK_PAIRS / 2, flag);
		CUDA_TRY_LAUNCH("bitonic_chunk_kernel");
	}
	bitonic_unpad_kernel<K><<<grid, 256, 0, stream>>>(k, v, keys[1], vals[1], n, flag);
	CUDA_TRY_LAUNCH("bitonic_unpad_kernel");
	return GPUSORT_OK;
}

template gpusort_status bitonic_sort_pairs<uint32_t>(uint32_t *[2], uint32_t *[2], size_t, bool,
													 void *, cudaStream_t);
template gpusort_status bitonic_sort_pairs<uint64_t>(uint64_t *[2], uint32_t *[2], size_t, bool,
													 void *, cudaStream_t);
