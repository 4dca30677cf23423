/*
 * block_primitives.cuh -- block-level building blocks shared by the radix
 * sort and quicksort (the block-wide scan is block_scan.cuh): asynchronous
 * copies from global to shared memory.
 */
#ifndef GPUSORT_BLOCK_PRIMITIVES_CUH
#define GPUSORT_BLOCK_PRIMITIVES_CUH

#include <stdint.h>
#include <type_traits>
#include <cuda_runtime.h>

/*
 * BYTES (4 or 16) from global to shared memory without passing through
 * registers (sm_80+; 16-byte copies skip L1, which only that size may).
 */
template <int BYTES>
__device__ __forceinline__ void
copy_async(void *shared_dst, const void *global_src)
{
	static_assert(BYTES == 4 || BYTES == 16, "the sizes used");
#if __CUDA_ARCH__ >= 800
	unsigned	dst = (unsigned) __cvta_generic_to_shared(shared_dst);

	if constexpr (BYTES == 16)
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n"::"r"(dst), "l"(global_src));
	else
		asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n"::"r"(dst), "l"(global_src));
#else
	typedef typename std::conditional<BYTES == 16, uint4, uint32_t>::type word;

	*(word *) shared_dst = *(const word *) global_src;
#endif
}

/* Wait for this thread's copy_async copies (others': __syncthreads after). */
__device__ __forceinline__ void
copy_async_wait_all()
{
#if __CUDA_ARCH__ >= 800
	asm volatile("cp.async.commit_group;\ncp.async.wait_all;\n":::"memory");
#endif
}

#endif
