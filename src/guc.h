/*
 * guc.h -- gpusort's configuration parameters (guc.c).
 */
#ifndef GPUSORT_GUC_H
#define GPUSORT_GUC_H

#include "postgres.h"

/* gpusort.device */
typedef enum GpuSortDevice
{
	GPUSORT_DEVICE_AUTO,
	GPUSORT_DEVICE_GPU,
	GPUSORT_DEVICE_CPU
} GpuSortDevice;

/* gpusort.algorithm */
typedef enum GpuSortAlgorithm
{
	GPUSORT_ALGORITHM_AUTO,
	GPUSORT_ALGORITHM_RADIX,
	GPUSORT_ALGORITHM_QUICKSORT,
	GPUSORT_ALGORITHM_BITONIC,
	GPUSORT_ALGORITHM_CPU
} GpuSortAlgorithm;

/* gpusort.parallel_fill */
typedef enum GpuSortParallelFill
{
	GPUSORT_PARALLEL_FILL_OFF,
	GPUSORT_PARALLEL_FILL_ON,
	GPUSORT_PARALLEL_FILL_AUTO	/* the default; as on (parallel_fill.c) */
} GpuSortParallelFill;

/* GUC variables (guc.c) */
extern int	gpusort_device;
extern int	gpusort_algorithm_choice;
extern int	gpusort_gpu_min_elements;
extern bool gpusort_enabled;
extern int	gpusort_min_rows;
extern bool gpusort_cost_model;
extern int	gpusort_max_memory;	/* MB */
extern int	gpusort_work_mem;	/* MB; -1: gpusort_max_memory */
extern bool gpusort_verify_order;
extern bool gpusort_service;	/* jobs to the GPU service where it runs */
extern int	gpusort_service_queue_wait; /* ms */
extern int	gpusort_gpu_reorder_min_rows;
extern int	gpusort_gpu_job_memory;	/* MB; 0: no cap but the GPU's free memory */
extern int	gpusort_parallel_fill;
extern bool gpusort_gather_leader_scans;

/* The memory one GpuSort node may hold, in bytes. */
extern Size gpusort_memory_limit(void);

extern void gpusort_define_gucs(void);

#endif
