/*
 * row_permute.cuh -- moving row data into sorted order on the device, so
 * that the host reads its rows sequentially afterwards instead of chasing
 * the permutation through memory: fixed-size elements (a column of values,
 * a column of NULL flags) gathered through the permutation.
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

/*
 * out[i * lanes + l] = in[perm[i] * lanes + l] for i < m, l < lanes: wider
 * elements (a uuid, an interval) as lanes units of T each; one unit a
 * thread, so that neighbouring threads write neighbouring units.
 */
template <typename T>
__global__ void
permute_lanes_kernel(const T *__restrict__ in, const uint32_t *__restrict__ perm,
					 T *__restrict__ out, size_t m, unsigned lanes)
{
	size_t		units = m * lanes;

	for (size_t u = blockIdx.x * (size_t) blockDim.x + threadIdx.x; u < units;
		 u += (size_t) gridDim.x * blockDim.x)
	{
		size_t		i = u / lanes;

		out[u] = in[(size_t) perm[i] * lanes + (u - i * lanes)];
	}
}

#endif
