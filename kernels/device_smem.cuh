/*
 * device_smem.cuh -- how much shared memory a block of the current device
 * may have, for the kernels that choose between a variant that needs more
 * than the 48 KB every device gives and a compact one.  Internal to
 * kernels/.
 */
#ifndef GPUSORT_DEVICE_SMEM_CUH
#define GPUSORT_DEVICE_SMEM_CUH

#include <stddef.h>

/* What every device gives a block without opting in. */
#define DEVICE_SMEM_DEFAULT		(48 * 1024)

/*
 * Bytes of shared memory a block of the current device may have (its
 * opt-in limit; device.cu).  DEVICE_SMEM_DEFAULT where the query fails or
 * under GPUSORT_COMPACT_SMEM=1 in the environment (the test script runs
 * the compact variants that way: the radix sort's compact policies,
 * quicksort's shorter scatter steps and smaller leaf networks); at most
 * N bytes under GPUSORT_BLOCK_SMEM=N (N >= 48 KB; the test script runs
 * the variants of a device of 99 KB a block that way, as sm_86/sm_89
 * GPUs give).
 */
size_t		device_block_smem(void);

#endif
