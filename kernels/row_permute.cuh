/*
 * row_permute.cuh -- kernels that move row data into sorted order on the
 * device, so that the host reads its rows sequentially afterwards instead
 * of chasing the permutation through memory.
 *
 * Fixed-size elements (a column of Datums, a column of NULL flags) are
 * gathered through the permutation.  Variable-length rows (PostgreSQL
 * MinimalTuples: a 32-bit length first, rows 8-byte aligned) are copied
 * one warp per row, 8 bytes per lane, from their offsets in the uploaded
 * store to their offsets in the sorted output.
 */
#ifndef GPUSORT_ROW_PERMUTE_CUH
#define GPUSORT_ROW_PERMUTE_CUH

#include <stdint.h>

/* out[i] = in[perm[i]] for i < m */
template <typename T>
__global__ void
permute_fixed_kernel(const T *__restrict__ in, const uint32_t *__restrict__ perm,
					 T *__restrict__ out, size_t m)
{
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < m;
		 i += (size_t) gridDim.x * blockDim.x)
		out[i] = in[perm[i]];
}

/* bytes of the row at src: its 32-bit length, rounded up to 8 */
__device__ __forceinline__ uint32_t
row_bytes(const unsigned char *src)
{
	return (*(const uint32_t *) src + 7u) & ~7u;
}

/* lens[i] = bytes of row perm[i], i < m */
__global__ void
sorted_row_bytes_kernel(const unsigned char *__restrict__ store,
						const uint64_t *__restrict__ offsets,
						const uint32_t *__restrict__ perm,
						uint32_t *__restrict__ lens, size_t m)
{
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < m;
		 i += (size_t) gridDim.x * blockDim.x)
		lens[i] = row_bytes(store + offsets[perm[i]]);
}

/*
 * One warp per sorted position i < m: copy row perm[i] from the store to
 * out + dst[i] - dst_base (dst holds the host addresses the rows will
 * have, dst_base the host address of out's first byte).
 */
__global__ void
copy_rows_kernel(const unsigned char *__restrict__ store,
				 const uint64_t *__restrict__ offsets,
				 const uint32_t *__restrict__ perm,
				 const uint64_t *__restrict__ dst, uint64_t dst_base,
				 unsigned char *__restrict__ out, size_t m)
{
	const int	lane = threadIdx.x & 31;
	const size_t warps = (size_t) gridDim.x * (blockDim.x / 32);

	for (size_t i = (blockIdx.x * (size_t) blockDim.x + threadIdx.x) / 32; i < m; i += warps)
	{
		const uint64_t *src = (const uint64_t *) (store + offsets[perm[i]]);
		uint64_t   *to = (uint64_t *) (out + (dst[i] - dst_base));
		uint32_t	words = row_bytes((const unsigned char *) src) / 8;

		for (uint32_t w = lane; w < words; w += 32)
			to[w] = src[w];
	}
}

#endif
