/*
 * gpusort_test_hooks.h -- the test-only door into the kernel library.
 *
 * Test programs and test modules (test/fault_injection/) set these hooks;
 * the extension itself never includes this header, so in a production
 * backend every hook stays NULL and the library behaves as if they did not
 * exist.  Plain C, like gpusort_kernels.h.
 */
#ifndef GPUSORT_TEST_HOOKS_H
#define GPUSORT_TEST_HOOKS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpusort_test_hooks_t
{
	/*
	 * Fault injection: called before each checked CUDA call of the library
	 * (device opening, allocation, copy, kernel launch check, stream wait)
	 * with the call's source text.  A nonzero return is the cudaError_t
	 * value the call then fails with, without being made.
	 */
	int			(*cuda_fault) (const char *call);
} gpusort_test_hooks_t;

extern gpusort_test_hooks_t gpusort_test_hooks;

#ifdef __cplusplus
}
#endif

#endif
