/*
 * gpusort.h -- declarations shared by the PostgreSQL-facing C files.
 */
#ifndef GPUSORT_H
#define GPUSORT_H

#include "postgres.h"

/* gpusort.device */
typedef enum GpuSortDevice
{
	GPUSORT_DEVICE_AUTO,
	GPUSORT_DEVICE_GPU,
	GPUSORT_DEVICE_CPU
} GpuSortDevice;

/* GUC variables (guc.c) */
extern int	gpusort_device;
extern int	gpusort_gpu_min_elements;
extern bool gpusort_enabled;
extern int	gpusort_min_rows;
extern int	gpusort_max_memory;	/* MB */

extern void gpusort_define_gucs(void);

/* What one sort did, for EXPLAIN and DEBUG messages (sort_engine.c). */
typedef struct GpuSortRun
{
	bool		on_gpu;			/* the GPU produced the result */
	const char *device_name;	/* GPU name, or "CPU" */
	const char *algorithm;		/* "radix" */
	const char *reason;			/* why this path was taken */
	int			passes;			/* digit passes run */
	double		to_device_ms;
	double		sort_ms;
	double		from_device_ms;
} GpuSortRun;

/*
 * Stable sort of n rows whose keys are nwords encoded 32-bit words each
 * (word-major: words[w * n + i]); writes the sorting permutation to perm.
 * Picks the GPU or the CPU path; never fails for lack of a GPU.
 */
extern void gpusort_sort_rows(const uint32 *words, int nwords, size_t n,
							  uint32 *perm, GpuSortRun *run);

/* palloc for arrays that may exceed 1 GB */
extern void *gpusort_alloc_huge(size_t bytes);

#endif
