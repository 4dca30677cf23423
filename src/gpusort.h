/*
 * gpusort.h -- declarations shared by the PostgreSQL-facing C files.
 */
#ifndef GPUSORT_H
#define GPUSORT_H

#include "postgres.h"

#include "nodes/pg_list.h"

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
	GPUSORT_PARALLEL_FILL_AUTO	/* where the rows are stored as columns */
} GpuSortParallelFill;

/* GUC variables (guc.c) */
extern int	gpusort_device;
extern int	gpusort_algorithm_choice;
extern int	gpusort_gpu_min_elements;
extern bool gpusort_enabled;
extern int	gpusort_min_rows;
extern int	gpusort_max_memory;	/* MB */
extern int	gpusort_work_mem;	/* MB; -1: gpusort_max_memory */
extern bool gpusort_verify_order;

/* The memory one GpuSort node may hold, in bytes (guc.c). */
extern Size gpusort_memory_limit(void);
extern int	gpusort_gpu_reorder_min_rows;
extern int	gpusort_parallel_fill;
extern bool gpusort_gather_leader_scans;

/* A plan node id no node of the plan being rewritten has (gpusort_planner.c). */
extern int	gpusort_new_plan_node_id(void);

/*
 * A targetlist of Vars (varno: OUTER_VAR, INDEX_VAR, ...) that passes every
 * column of targetlist on, with its name (gpusort_planner.c).
 */
extern List *gpusort_column_vars(List *targetlist, int varno);

extern void gpusort_define_gucs(void);

/* What one sort did, for EXPLAIN and DEBUG messages (sort_engine.c). */
typedef struct GpuSortRun
{
	bool		on_gpu;			/* the GPU produced the result */
	const char *device_name;	/* GPU name, or "CPU" */
	const char *algorithm;		/* "radix", "quicksort", "bitonic", ... */
	const char *reason;			/* why this path was taken */
	char		algorithm_why[128];	/* why this algorithm */
	int			passes;			/* digit passes run */
	double		to_device_ms;
	double		sort_ms;
	double		from_device_ms;
} GpuSortRun;

/*
 * Column arrays that a GPU sort also puts into sorted order through the
 * device, so that the rows are read sequentially afterwards (see
 * gpusort_job_permute_fixed in kernels/gpusort_kernels.h): fixed_in[c] of
 * n elements into fixed_out[c] of m.  done tells whether it happened; when
 * not, nothing the caller reads has changed.
 */
typedef struct GpuSortReorder
{
	/* called once the GPU sort has succeeded, to fill in the rest; false: skip */
	bool		(*prepare) (struct GpuSortReorder *reorder);
	void	   *arg;			/* for prepare */
	size_t		m;				/* the first m rows of the sorted order */
	int			nfixed;
	const void **fixed_in;
	void	  **fixed_out;
	size_t	   *fixed_size;
	bool		done;
} GpuSortReorder;

/*
 * Sort of n rows whose keys are nwords encoded 32-bit words each
 * (words[w][i]: word w of row i, word 0 most significant); writes the
 * sorting permutation to perm.
 * Picks the GPU or the CPU path and the algorithm (gpusort.device,
 * gpusort.algorithm); never fails for lack of a GPU.  Stable except when
 * the GPU quicksort runs (rows with equal keys may then come in any order).
 * reorder (may be NULL) asks the GPU path to put row data in order too.
 * Returns false, with nothing sorted, only where the CPU path could not get
 * its scratch memory (cpu_radix_scratch_words(n) words).
 */
extern bool gpusort_sort_rows(const uint32 *const *words, int nwords, size_t n,
							  uint32 *perm, GpuSortRun *run, GpuSortReorder *reorder);

#endif
