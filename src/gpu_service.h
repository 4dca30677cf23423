/*
 * gpu_service.h -- the GPU service: background workers that own the GPUs
 * and sort the key words that backends send them.
 *
 * With gpusort in shared_preload_libraries, one background worker per GPU
 * (the first counts the GPUs and starts the others) opens its device once
 * and takes sort jobs from a queue in shared memory.  A backend writes a
 * job's key words into a DSM segment, queues the job, and waits on its
 * latch (answering cancels) for the permutation in the same segment.  The
 * backends then never open a CUDA context of their own.  Without preload,
 * or with gpusort.service off, each backend opens the GPU itself
 * (sort_engine.c), as before the service existed.
 *
 * service_shared.h holds the shared-memory layout both sides use,
 * service_worker.c the background worker, service_client.c the backend's
 * side and the gpusort_stat view.
 */
#ifndef GPUSORT_GPU_SERVICE_H
#define GPUSORT_GPU_SERVICE_H

#include "postgres.h"

#include "sort_engine.h"
#include "../kernels/gpusort_kernels.h"

/* _PG_init under shared_preload_libraries: shared memory and the first worker */
extern void gpu_service_register(void);

/*
 * Whether this backend sends its GPU jobs to the service: it was
 * preloaded, gpusort.service is on, and this is no parallel worker.
 * The service may still be starting or have no GPU (gpu_service_devices).
 */
extern bool gpu_service_in_use(void);

/* GPUs the service runs: -1 while it starts, 0 where there is none */
extern int	gpu_service_devices(void);

/*
 * The largest job (device bytes) a service device could take now: the
 * most free memory any running device reported after its last job.
 */
extern size_t gpu_service_job_bytes_limit(void);

typedef enum GpuServiceOutcome
{
	GPU_SERVICE_SORTED,			/* perm (and tie bits, if run->tie_bits_done) written */
	GPU_SERVICE_NOT_PLACED,		/* no device took it in time, or no slot: CPU path */
	GPU_SERVICE_NO_SHARED_MEMORY,	/* no room for its segment: this backend's own GPU */
	GPU_SERVICE_UNAVAILABLE,	/* no service running, or no GPU: CPU path */
	GPU_SERVICE_FAILED			/* the device failed the job: CPU path, WARNING given */
} GpuServiceOutcome;

/*
 * One job through the service: n rows of nwords key words (words[w][i]),
 * the permutation into perm, tie bits into tie_bits where not NULL, and
 * where reorder is not NULL (and its prepare succeeds) its columns' first
 * reorder->m rows in sorted order (reorder->done says whether).  Fills
 * run's device, algorithm, timings and queue wait on success, and
 * run->device_reason otherwise.
 */
extern GpuServiceOutcome gpu_service_sort(const uint32 *const *words, int nwords, size_t n,
										  uint32 *perm, uint32 *tie_bits,
										  GpuSortReorder *reorder,
										  gpusort_algorithm algorithm, GpuSortRun *run);

/*
 * The GPUs the service opened, for gpusort_devices(): false where the
 * service is not in use or has not counted them yet (the caller asks
 * CUDA).  infos (SERVICE_MAX_DEVICES entries) and *count are filled in.
 */
extern bool gpu_service_device_infos(gpusort_device_info *infos, int *count);

/* A job that took the CPU path because the service could not run it (gpusort_stat). */
extern void gpu_service_count_fallback(size_t n);

#endif
