/*
 * cuda_check.cuh -- turning CUDA return codes into gpusort_status values.
 * Internal to kernels/; src/ never sees it.
 */
#ifndef GPUSORT_CUDA_CHECK_CUH
#define GPUSORT_CUDA_CHECK_CUH

#include <cuda_runtime.h>
#include "gpusort_kernels.h"
#include "gpusort_test_hooks.h"

/* Record a failed CUDA call and map its code onto a gpusort_status. */
gpusort_status gpusort_from_cuda(cudaError_t err, const char *what);

/* The failure a test hook injects into the call `what`; cudaSuccess: none. */
static inline cudaError_t
injected_fault(const char *what)
{
	return gpusort_test_hooks.cuda_fault == NULL ? cudaSuccess :
		(cudaError_t) gpusort_test_hooks.cuda_fault(what);
}

/*
 * Evaluate a CUDA call (unless a test hook fails it first); on failure
 * return its gpusort_status from the caller.
 */
#define CUDA_TRY(call) \
	do { \
		cudaError_t cuda_try_err_ = injected_fault(#call); \
		if (cuda_try_err_ == cudaSuccess) \
			cuda_try_err_ = (call); \
		if (cuda_try_err_ != cudaSuccess) \
			return gpusort_from_cuda(cuda_try_err_, #call); \
	} while (0)

/* After a kernel launch: launch errors and (asynchronous) execution errors. */
#define CUDA_TRY_LAUNCH(what) CUDA_TRY(cudaGetLastError())

#endif
