/*
 * gpusort_cost.h -- what a GpuSort is expected to cost (gpusort_cost.c).
 *
 * The planner (gpusort_planner.c) compares this estimate with the cost of
 * what the GpuSort would replace, both in the planner's cost units, and
 * replaces a Sort only where the GpuSort's is lower (gpusort.cost_model).
 * doc/cost_model.md explains the model and where each figure comes from.
 */
#ifndef GPUSORT_COST_H
#define GPUSORT_COST_H

#include "postgres.h"

#include "nodes/nodes.h"

#include "sort_keys.h"

/* What the planner knows of one GpuSort when it prices it. */
typedef struct GpuSortCostInput
{
	double		rows;			/* rows the GpuSort reads */
	int			width;			/* average bytes of a row (plan_width) */
	int			key_words;		/* 32-bit words of the keys' codes per row */
	GpuSortKeyCode prefix_code; /* code of the first key not WHOLE, or WHOLE */
	bool		ties_finished;	/* a key sorted by a prefix: ties ordered on the CPU */
	bool		checked;		/* a key whose order is checked pair by pair (libc) */
	int64		bound;			/* LIMIT + OFFSET known at plan time, or -1 */
	bool		in_workers;		/* below a Gather: run by parallel workers (CPU path) */
	double		groups;			/* distinct keys expected above (sorted GROUP BY), or 0 */
	double		intake_processes;	/* processes that encode and store the rows side by
									 * side: a Gather's workers and leader over
									 * GpuSortFill; 1 (or 0): the GpuSort alone */
	double		spill_bytes;	/* bytes of runs written past the memory budget (0: none) */
	double		runs;			/* the runs they make */
} GpuSortCostInput;

/* The parts of the estimate, in the planner's cost units. */
typedef struct GpuSortCost
{
	Cost		intake;			/* storing rows and encoding keys */
	Cost		sort;			/* the GPU or CPU sort, with the transfer */
	Cost		finish;			/* rows whose keys tie, ordered on the CPU */
	Cost		emit;			/* handing rows up */
	Cost		runs;			/* runs past the budget: written, read and merged */
	Cost		startup;		/* everything before the first row comes out */
	Cost		total;
	bool		on_gpu;			/* priced by the GPU path's figures */
} GpuSortCost;

/*
 * Will this backend's sorts of n rows take the GPU path, as far as it
 * knows without opening a GPU?  Assumes a GPU unless gpusort.device or
 * gpusort.algorithm say cpu, n is below gpusort.gpu_min_elements, or this
 * backend already found no usable GPU.
 */
extern bool gpusort_cost_gpu_path(double n);

/*
 * What a native Sort of rows rows of width bytes (under bound, or -1)
 * costs beyond its own estimate: cost_sort counts comparisons, not the
 * bytes the Sort moves.
 */
extern Cost gpusort_native_sort_extra(double rows, int width, int64 bound);

/* The estimate for in (est: filled in). */
extern void gpusort_estimate(const GpuSortCostInput *in, GpuSortCost *est);

#endif
