/*
 * bitonic_sort.cu -- the bitonic sort as a sort of its own (bitonic.cuh):
 * one block with its places in registers (bitonic_regs_network) when the
 * input fits, else the whole network over the input padded to a power of
 * two, chunks of BITONIC_BLOCK_PAIRS places a block in registers and the
 * strides of a chunk or more in global memory -- in one cooperative launch
 * where a block per chunk can all be resident at once, else a kernel per
 * global stride.  Every merge is the network's mirror form (its first step
 * compares place e with e ^ (size - 1)), so every chunk and every merge
 * sorts ascending.
 */
#include <stdlib.h>
#include <string.h>

#include <cooperative_groups.h>

#include "bitonic.cuh"
#include "cuda_check.cuh"
#include "device_smem.cuh"

namespace cg = cooperative_groups;

/* The threads of a chunk of the network beyond one block, and its places a thread. */
#define BITONIC_CHUNK_THREADS	bitonic_threads(BITONIC_BLOCK_PAIRS)
#define BITONIC_CHUNK_PLACES	(BITONIC_BLOCK_PAIRS / BITONIC_CHUNK_THREADS)

/*
 * n <= SIZE pairs (payload i where vin is NULL) sorted by one block of
 * bitonic_threads(SIZE) threads (bitonic_smem_bytes<K>(SIZE) of dynamic
 * shared memory); pairs already ascending or strictly descending skip the
 * network (one look over them first).
 */
template <typename K, int SIZE>
__global__ void __launch_bounds__(bitonic_threads(SIZE))
bitonic_one_block_kernel(const K *kin, const uint32_t *vin, K *kout, uint32_t *vout,
						 uint32_t n)
{
	constexpr int THREADS = bitonic_threads(SIZE);
	constexpr int E = SIZE / THREADS;
	extern __shared__ __align__(16) unsigned char bitonic_block_mem[];
	K		   *sk = reinterpret_cast<K *>(bitonic_block_mem);
	uint32_t   *sv = reinterpret_cast<uint32_t *>(sk + bitonic_smem_places(SIZE));
	const int	t = threadIdx.x;
	bool		up = true,
				down = true;

#pragma unroll
	for (int r = 0; r < E; r++)
	{
		const uint32_t e = r * THREADS + t;

		sk[bitonic_pad(e)] = e < n ? kin[e] : ~(K) 0;
		sv[bitonic_pad(e)] = e < n ? (vin ? vin[e] : e) : BITONIC_PAD_VAL;
	}
	__syncthreads();
	for (uint32_t i = t; i + 1 < n; i += THREADS)
	{
		const bool	gt = pair_greater(sk[bitonic_pad(i)], sv[bitonic_pad(i)],
									  sk[bitonic_pad(i + 1)], sv[bitonic_pad(i + 1)]);

		up &= !gt;
		down &= gt;
	}
	up = __syncthreads_and(up);
	down = __syncthreads_and(down);
	if (!up && !down)
	{
		const bool	idle = (uint32_t) ((t >> 5) * 32 * E) >= n,	/* the warp holds padding only */
					pad_only = (uint32_t) (t * E) >= n;	/* this thread does */
		K			k[E];
		uint32_t	v[E];

		bitonic_smem_to_regs<K, E>(k, v, sk, sv);
		bitonic_regs_network<K, SIZE, THREADS, 2, true>(k, v, sk, sv, idle, pad_only);
		bitonic_regs_to_smem<K, E>(k, v, sk, sv, idle);
	}
#pragma unroll
	for (int r = 0; r < E; r++)
	{
		const uint32_t e = r * THREADS + t;

		if (e < n)
		{
			const uint32_t from = down && !up ? n - 1 - e : e;

			kout[e] = sk[bitonic_pad(from)];
			vout[e] = sv[bitonic_pad(from)];
		}
	}
}

/*
 * The word after a sort's padded buffers: nonzero once a pair out of order
 * was seen (the pad kernel sets it, the unpad kernel clears it for the next
 * sort).  bitonic_temp_clear zeroes it once after allocation, so that no
 * kernel reads memory nothing wrote; a stale nonzero would only cost the
 * network on pairs in order.
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

/*
 * Chunk base's places of the global arrays (k, v) into the block's
 * registers, through shared memory (coalesced).
 */
template <typename K>
__device__ __forceinline__ void
bitonic_chunk_load(K *kr, uint32_t *vr, const K *k, const uint32_t *v, size_t base, K *sk,
				   uint32_t *sv)
{
#pragma unroll
	for (int r = 0; r < BITONIC_CHUNK_PLACES; r++)
	{
		const int	e = r * BITONIC_CHUNK_THREADS + threadIdx.x;

		sk[bitonic_pad(e)] = k[base + e];
		sv[bitonic_pad(e)] = v[base + e];
	}
	__syncthreads();
	bitonic_smem_to_regs<K, BITONIC_CHUNK_PLACES>(kr, vr, sk, sv);
}

/* The block's registers into chunk base's places of (k, v), through shared memory. */
template <typename K>
__device__ __forceinline__ void
bitonic_chunk_store(const K *kr, const uint32_t *vr, K *k, uint32_t *v, size_t base, K *sk,
					uint32_t *sv)
{
	bitonic_regs_to_smem<K, BITONIC_CHUNK_PLACES>(kr, vr, sk, sv, false);
#pragma unroll
	for (int r = 0; r < BITONIC_CHUNK_PLACES; r++)
	{
		const int	e = r * BITONIC_CHUNK_THREADS + threadIdx.x;

		k[base + e] = sk[bitonic_pad(e)];
		v[base + e] = sv[bitonic_pad(e)];
	}
}

/*
 * Comparator p of a global stride (a chunk or more) of the merges of size
 * places, the smaller pair at the lower place; mirror (stride size / 2):
 * the merge's first step, place lo against lo ^ (size - 1).
 */
template <typename K, typename I>
__device__ __forceinline__ void
bitonic_stride_cx(K *k, uint32_t *v, I p, I size, I stride)
{
	const I		lo = 2 * p - (p & (stride - 1));

	bitonic_cx(k, v, lo, stride == size >> 1 ? lo ^ (size - 1) : lo + stride, true);
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

/*
 * Each block's chunk of the padded arrays in registers: sorted (MERGE
 * false), or the merge of `size` places (more than a chunk) finished, its
 * strides of a chunk and more done.
 */
template <typename K, bool MERGE>
__global__ void __launch_bounds__(BITONIC_CHUNK_THREADS)
bitonic_chunk_kernel(K *k, uint32_t *v, const bitonic_order_flag *flag)
{
	__shared__ K sk[bitonic_smem_places(BITONIC_BLOCK_PAIRS)];
	__shared__ uint32_t sv[bitonic_smem_places(BITONIC_BLOCK_PAIRS)];
	const size_t base = (size_t) blockIdx.x * BITONIC_BLOCK_PAIRS;
	K			kr[BITONIC_CHUNK_PLACES];
	uint32_t	vr[BITONIC_CHUNK_PLACES];

	if (!*(volatile const unsigned int *) &flag->unsorted)
		return;					/* every pair in order already */

	bitonic_chunk_load(kr, vr, k, v, base, sk, sv);
	bitonic_regs_network<K, BITONIC_BLOCK_PAIRS, BITONIC_CHUNK_THREADS,
		MERGE ? 2 * BITONIC_BLOCK_PAIRS : 2, true>(kr, vr, sk, sv, false, false);
	bitonic_chunk_store(kr, vr, k, v, base, sk, sv);
}

/* One stride (>= a chunk) of the merges of `size` places over the whole array. */
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
 * chunk's pairs, padded after n, into shared memory, noting in flag any
 * pair out of order; pairs all ascending are copied out after the first
 * barrier (one read, one write); else the chunk sorted in registers, then
 * per merge larger than a chunk its strides of a chunk or more over the
 * whole array (k, v) and its smaller strides in registers.  The first
 * block clears flag at the end, every block having read it.
 */
template <typename K>
__global__ void __launch_bounds__(BITONIC_CHUNK_THREADS, 4)
bitonic_grid_kernel(const K *kin, const uint32_t *vin, K *k, uint32_t *v, K *kout,
					uint32_t *vout, uint32_t n, uint32_t size, bitonic_order_flag *flag)
{
	constexpr int E = BITONIC_CHUNK_PLACES;
	__shared__ K sk[bitonic_smem_places(BITONIC_BLOCK_PAIRS)];
	__shared__ uint32_t sv[bitonic_smem_places(BITONIC_BLOCK_PAIRS)];
	cg::grid_group grid = cg::this_grid();
	const uint32_t base = blockIdx.x * BITONIC_BLOCK_PAIRS;
	bool		unsorted = false;

#pragma unroll
	for (int r = 0; r < E; r++)
	{
		const uint32_t e = r * BITONIC_CHUNK_THREADS + threadIdx.x;

		unsorted |= bitonic_padded_pair(kin, vin, n, base + e, &sk[bitonic_pad(e)],
										&sv[bitonic_pad(e)]);
	}
	if (__syncthreads_or(unsorted) && threadIdx.x == 0)
		flag->unsorted = 1;
	grid.sync();
	if (*(volatile unsigned int *) &flag->unsorted)
	{
		/* the chunk's padding places: the top ones, which the network never moves */
		const uint32_t count = base >= n ? 0 : n - base < BITONIC_BLOCK_PAIRS ? n - base
			: BITONIC_BLOCK_PAIRS;
		const bool	idle = ((threadIdx.x >> 5) * 32 * E) >= count,
					pad_only = threadIdx.x * E >= count;
		K			kr[E];
		uint32_t	vr[E];

		bitonic_smem_to_regs<K, E>(kr, vr, sk, sv);
		bitonic_regs_network<K, BITONIC_BLOCK_PAIRS, BITONIC_CHUNK_THREADS, 2, true>(
			kr, vr, sk, sv, idle, pad_only);
		for (uint32_t stage = 2 * BITONIC_BLOCK_PAIRS; stage <= size; stage <<= 1)
		{
			bitonic_chunk_store(kr, vr, k, v, (size_t) base, sk, sv);
			grid.sync();
			for (uint32_t stride = stage >> 1; stride >= BITONIC_BLOCK_PAIRS; stride >>= 1)
			{
				/* this block's share of the stride's pairs */
				for (uint32_t p = base / 2 + threadIdx.x; p < (base + BITONIC_BLOCK_PAIRS) / 2;
					 p += BITONIC_CHUNK_THREADS)
					bitonic_stride_cx(k, v, p, stage, stride);
				grid.sync();
			}
			bitonic_chunk_load(kr, vr, k, v, (size_t) base, sk, sv);
			bitonic_regs_network<K, BITONIC_BLOCK_PAIRS, BITONIC_CHUNK_THREADS,
				2 * BITONIC_BLOCK_PAIRS, true>(kr, vr, sk, sv, idle, pad_only);
		}
		bitonic_regs_to_smem<K, E>(kr, vr, sk, sv, idle);
		if (blockIdx.x == 0 && threadIdx.x == 0)
			flag->unsorted = 0;	/* for the next sort: read by every block before a barrier since */
	}
#pragma unroll
	for (int r = 0; r < E; r++)
	{
		const uint32_t e = r * BITONIC_CHUNK_THREADS + threadIdx.x;

		if (base + e < n)
		{
			kout[base + e] = sk[bitonic_pad(e)];
			vout[base + e] = sv[bitonic_pad(e)];
		}
	}
}

/*
 * Blocks of bitonic_grid_kernel<K> the device keeps resident at once (0:
 * no cooperative launch, or gpusort_test_hooks.bitonic_stride_kernels,
 * which the tests set to run the kernel-per-stride path at small sizes);
 * the current device of the first call decides.
 */
template <typename K>
static int
bitonic_grid_blocks(void)
{
	static int	blocks = -1;

	if (blocks < 0)
	{
		int			dev,
					coop = 0,
					sms = 0,
					per_sm = 0;
		bool		ok = cudaGetDevice(&dev) == cudaSuccess &&
			cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev) == cudaSuccess &&
			cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess &&
			cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bitonic_grid_kernel<K>,
														  BITONIC_CHUNK_THREADS, 0) == cudaSuccess;

		if (!ok)
			(void) cudaGetLastError();	/* not an error of the sort: the other path */
		blocks = ok && coop ? per_sm * sms : 0;
	}
	return gpusort_test_hooks.bitonic_stride_kernels ? 0 : blocks;
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

gpusort_status
bitonic_temp_clear(void *temp, size_t bytes, cudaStream_t stream)
{
	/* the flag is the buffer's last bytes (bitonic_temp_bytes) */
	if (bytes >= sizeof(bitonic_order_flag))
		CUDA_TRY(cudaMemsetAsync((char *) temp + bytes - sizeof(bitonic_order_flag), 0,
								 sizeof(bitonic_order_flag), stream));
	return GPUSORT_OK;
}

/* Launch bitonic_one_block_kernel<K, SIZE> on n <= SIZE pairs. */
template <typename K, int SIZE>
static gpusort_status
bitonic_one_block(const K *kin, const uint32_t *vin, K *kout, uint32_t *vout, size_t n,
				  cudaStream_t stream)
{
	constexpr size_t smem = bitonic_smem_bytes<K>(SIZE);

	/* over the default 48 KB (4,096 64-bit pairs): on the current device */
	if (smem > DEVICE_SMEM_DEFAULT)
		CUDA_TRY(cudaFuncSetAttribute(bitonic_one_block_kernel<K, SIZE>,
									  cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem));
	bitonic_one_block_kernel<K, SIZE><<<1, bitonic_threads(SIZE), smem, stream>>>(
		kin, vin, kout, vout, (uint32_t) n);
	CUDA_TRY_LAUNCH("bitonic_one_block_kernel");
	return GPUSORT_OK;
}

/*
 * The most pairs one block sorts: BITONIC_ONE_BLOCK_MAX where the current
 * device gives a block the shared memory, else BITONIC_BLOCK_PAIRS.
 */
template <typename K>
static size_t
bitonic_one_block_max(void)
{
	static_assert(bitonic_smem_bytes<K>(BITONIC_BLOCK_PAIRS) <= DEVICE_SMEM_DEFAULT,
				  "a chunk fits any device");
	return bitonic_smem_bytes<K>(BITONIC_ONE_BLOCK_MAX) <= device_block_smem()
		? BITONIC_ONE_BLOCK_MAX : BITONIC_BLOCK_PAIRS;
}

template <typename K>
gpusort_status
bitonic_sort_pairs(K *keys[2], uint32_t *vals[2], size_t n, bool positions, void *temp,
				   cudaStream_t stream)
{
	const uint32_t *vin = positions ? NULL : vals[0];

	if (n == 0)
		return GPUSORT_OK;
	/* one block: the smallest network that holds the pairs */
	if (n <= BITONIC_BLOCK_PAIRS / 4)
		return bitonic_one_block<K, BITONIC_BLOCK_PAIRS / 4>(keys[0], vin, keys[1], vals[1], n,
															 stream);
	if (n <= BITONIC_BLOCK_PAIRS / 2)
		return bitonic_one_block<K, BITONIC_BLOCK_PAIRS / 2>(keys[0], vin, keys[1], vals[1], n,
															 stream);
	if (n <= BITONIC_BLOCK_PAIRS)
		return bitonic_one_block<K, BITONIC_BLOCK_PAIRS>(keys[0], vin, keys[1], vals[1], n, stream);
	if (n <= bitonic_one_block_max<K>())
		return bitonic_one_block<K, BITONIC_ONE_BLOCK_MAX>(keys[0], vin, keys[1], vals[1], n,
														   stream);

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
		cudaError_t err = injected_fault("cudaLaunchCooperativeKernel(bitonic_grid_kernel)");

		if (err == cudaSuccess)
			err = cudaLaunchCooperativeKernel((const void *) bitonic_grid_kernel<K>,
											  chunks, BITONIC_CHUNK_THREADS, args, 0, stream);

		if (err == cudaSuccess)
			return GPUSORT_OK;
		if (err != cudaErrorCooperativeLaunchTooLarge)
			return gpusort_from_cuda(err, "cudaLaunchCooperativeKernel(bitonic_grid_kernel)");
		/* fewer multiprocessors to this process than measured (MPS): a kernel a stride */
		(void) cudaGetLastError();
	}
	bitonic_pad_kernel<K><<<grid, 256, 0, stream>>>(keys[0], vin, k, v, n, size, flag);
	CUDA_TRY_LAUNCH("bitonic_pad_kernel");
	bitonic_chunk_kernel<K, false><<<chunks, BITONIC_CHUNK_THREADS, 0, stream>>>(k, v, flag);
	CUDA_TRY_LAUNCH("bitonic_chunk_kernel");
	for (size_t stage = 2 * BITONIC_BLOCK_PAIRS; stage <= size; stage <<= 1)
	{
		for (size_t stride = stage >> 1; stride >= BITONIC_BLOCK_PAIRS; stride >>= 1)
		{
			bitonic_global_kernel<K><<<grid, 256, 0, stream>>>(k, v, size, stage, stride, flag);
			CUDA_TRY_LAUNCH("bitonic_global_kernel");
		}
		bitonic_chunk_kernel<K, true><<<chunks, BITONIC_CHUNK_THREADS, 0, stream>>>(k, v, flag);
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
