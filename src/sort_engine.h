/*
 * sort_engine.h -- the sort of encoded key words, on the GPU or the CPU
 * (sort_engine.c).
 */
#ifndef GPUSORT_SORT_ENGINE_H
#define GPUSORT_SORT_ENGINE_H

#include "postgres.h"

/* What one sort did, for EXPLAIN and DEBUG messages (sort_engine.c). */
typedef struct GpuSortRun
{
	bool		on_gpu;			/* the GPU produced the result */
	const char *device_name;	/* GPU name, or "CPU" */
	const char *algorithm;		/* "radix", "quicksort", "bitonic", ... */
	const char *device_reason;	/* why this device (and path) */
	char		algorithm_reason[128];	/* why this algorithm */
	int			passes;			/* digit passes run */
	int			pieces;			/* GPU jobs the rows were split into (merged on the CPU); 1: one */
	double		to_device_ms;
	double		sort_ms;
	double		from_device_ms;
	bool		tie_bits_done;	/* the GPU wrote the tie bits asked for */
	bool		via_service;	/* sorted by the GPU service (gpu_service.h) */
	int			service_device; /* its GPU's ordinal, where via_service */
	double		queue_ms;		/* waited in the service's queue, where via_service */
} GpuSortRun;

/*
 * Column arrays that a GPU sort also puts into sorted order through the
 * device, so that the rows are read sequentially afterwards (see
 * gpusort_job_permute_fixed in kernels/gpusort_kernels.h): fixed_in[c] of
 * n elements into fixed_out[c] of m.  done tells whether it happened; when
 * not, nothing the caller reads has changed (fixed_out entries that were
 * allocated are the caller's to free).
 */
typedef struct GpuSortReorder
{
	/*
	 * Names the columns: nfixed, fixed_in, fixed_size, and fixed_out as an
	 * array of NULLs (the sorted copies are allocated only when a GPU has
	 * put them in order: gpusort_reorder_outputs).  false: no reorder.
	 * Called through gpusort_reorder_describe, at most once.
	 */
	bool		(*describe) (struct GpuSortReorder *reorder);
	void	   *arg;			/* for describe */
	MemoryContext cxt;			/* where the sorted copies go */
	size_t		m;				/* the first m rows of the sorted order */
	int			nfixed;
	const void **fixed_in;
	void	  **fixed_out;
	size_t	   *fixed_size;
	int			described;		/* 0: not yet; 1: described; -1: no reorder */
	bool		done;
} GpuSortReorder;

/* reorder->describe, once whatever the number of calls; false: no reorder */
extern bool gpusort_reorder_describe(GpuSortReorder *reorder);

/* The sorted copies allocated (those not yet); false if memory ran out. */
extern bool gpusort_reorder_outputs(GpuSortReorder *reorder);

/*
 * Sort of n rows whose keys are nwords encoded 32-bit words each
 * (words[w][i]: word w of row i, word 0 most significant); writes the
 * sorting permutation to perm.
 * Picks the GPU or the CPU path and the algorithm (gpusort.device,
 * gpusort.algorithm); never fails for lack of a GPU.  Stable except when
 * the GPU quicksort runs (rows with equal keys may then come in any order).
 * reorder (may be NULL) asks the GPU path to put row data in order too.
 * tie_bits (may be NULL; (n + 31) / 32 words) asks the GPU path for the
 * rows that tie with the row before (gpusort_job_download_ties);
 * run->tie_bits_done tells whether they came.
 * Returns false, with nothing sorted, only where the CPU path could not get
 * its scratch memory (cpu_radix_scratch_words(n) words).
 */
extern bool gpusort_sort_rows(const uint32 *const *words, int nwords, size_t n,
							  uint32 *perm, GpuSortRun *run, GpuSortReorder *reorder,
							  uint32 *tie_bits);

/*
 * Will a sort in this backend run on the GPU (settings allow it, and a GPU
 * is usable: opened on the first call)?  Small sorts may still take the
 * CPU path (gpusort.gpu_min_elements).
 */
extern bool gpusort_gpu_expected(void);

/*
 * Has this backend already found that it sorts on the CPU: gpusort.device
 * or gpusort.algorithm say cpu, or it tried the GPU and found none usable?
 * Opens nothing (the planner asks).
 */
extern bool gpusort_gpu_known_unusable(void);

/*
 * A sort has n rows so far: where the settings and n send it to the GPU
 * and the GPU is not open yet, start opening it in the background
 * (device_opener.h), to be ready when all the rows are.
 */
extern void gpusort_gpu_prepare(size_t n);

/*
 * The tie bits of n sorted rows (gpusort_sort_rows' tie_bits), where the
 * GPU will sort them -- the settings and n send them there and a GPU is
 * usable -- else NULL: the finish then finds the ties itself.  Never opens
 * the GPU for a sort that would not use it.  Bytes: GPUSORT_TIE_BITS_BYTES.
 */
#define GPUSORT_TIE_BITS_BYTES(n) (((Size) (n) + 31) / 32 * sizeof(uint32))
extern uint32 *gpusort_tie_bits_for(MemoryContext cxt, size_t n);

/*
 * The threads a sort's CPU work may use (the CPU radix sort, the ICU
 * finish): the leader and the parallel workers the session allows a
 * Gather (max_parallel_workers_per_gather), at most RUN_THREADS_MAX
 * (run_threads.h).
 */
extern int	gpusort_threads_allowed(void);

#endif
