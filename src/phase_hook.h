/*
 * phase_hook.h -- the test-only door to the phases of a sort.
 *
 * Each phase of gpu_sort() and of the GpuSort node calls
 * gpusort_phase_begin() as it starts.  In production the hook is NULL and
 * the call is one test of it; a test module (test/test_modules/
 * gpusort_phase_wait.c) sets it to stop a sort at the start of a phase
 * until a cancel has reached the backend, so that a test aims its cancel at
 * every phase on every run, whatever the machine's load.
 *
 * The phases, by the name the hook receives:
 *   copy         gpu_sort(): the argument read and its values copied out
 *   fill         GpuSort: the input read, its keys encoded, rows stored
 *   encode       gpu_sort(): the values' key codes
 *   sort         the sort engine (sort_engine.h), on either path: the CPU
 *                radix sort's scratch and passes, or the GPU job's memory
 *   to_device    the GPU path: key words copied to the device
 *   device_sort  the GPU path: the sort kernels
 *   from_device  the GPU path: the permutation (and tie bits) copied back
 *   reorder      the GPU path: fixed-length columns put in sorted order
 *   finish       the CPU: rows whose key words tie ordered by their values
 *   check        GpuSort by strxfrm keys: every adjacent pair of rows checked
 *   run          GpuSort past its budget: the rows held sorted and written
 *                to a temporary file as one run (node_spill.c)
 *   merge        GpuSort past its budget: the last run written, the runs'
 *                merge begins (merge passes, or the merge into one file)
 *   decode       gpu_sort(): the result array built
 *   emit         GpuSort: the first sorted row handed up
 *   free         the sort's memory released (gpu_sort() of int4[] or
 *                float4[] before it returns, GpuSort at rescan or end)
 */
#ifndef GPUSORT_PHASE_HOOK_H
#define GPUSORT_PHASE_HOOK_H

#include "postgres.h"

typedef void (*gpusort_phase_hook_type) (const char *phase);

extern PGDLLEXPORT gpusort_phase_hook_type gpusort_phase_hook;

static inline void
gpusort_phase_begin(const char *phase)
{
	if (unlikely(gpusort_phase_hook != NULL))
		gpusort_phase_hook(phase);
}

/*
 * The test-only door to the order check of a sort by strxfrm keys
 * (node_intake.c, collation_keys.h): called with the sorted permutation of
 * n rows just before the check, a test module may swap rows as a strxfrm at
 * odds with strcoll would have ordered them, so that the check's fallback
 * to the tuplesort runs on demand.  NULL in production.
 */
typedef void (*gpusort_check_hook_type) (uint32 *perm, Size n);

extern PGDLLEXPORT gpusort_check_hook_type gpusort_check_hook;

/*
 * The test-only door to the writes of runs (node_spill.c): called before
 * each write to a run's temporary file, a test module returns an errno
 * value (ENOSPC, EIO) that the write then fails with, without being made,
 * or 0 to let it be made.  NULL in production.
 */
typedef int (*gpusort_write_hook_type) (void);

extern PGDLLEXPORT gpusort_write_hook_type gpusort_write_hook;

/*
 * The test-only door to the GPU service (service_worker.c): a test module
 * in shared_preload_libraries after gpusort sets it in its _PG_init, and
 * the service's workers then run their jobs through run_job on `devices`
 * emulated devices of `memory` bytes each instead of CUDA, so that the
 * queue, cancels and failures are tested on machines without a GPU.
 * run_job sorts n rows (stably, by words[0..nwords-1]) into perm, writes
 * tie bits where tie_bits is not NULL (returning whether it did in
 * *ties_done), and returns a gpusort_status value; permute puts the
 * first m rows of a column (n elements of elem_size bytes) into sorted
 * order by perm, as gpusort_job_permute_fixed does on a GPU.  NULL in
 * production.
 */
typedef struct gpusort_service_emulation
{
	int			devices;
	Size		memory;
	int			(*run_job) (int device, const uint32 *const *words, int nwords, Size n,
							uint32 *perm, uint32 *tie_bits, bool *ties_done);
	int			(*permute) (const void *in, void *out, Size elem_size, const uint32 *perm,
							Size m);
} gpusort_service_emulation;

extern PGDLLEXPORT const gpusort_service_emulation *gpusort_service_emulation_hook;

#endif
