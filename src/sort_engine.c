/*
 * sort_engine.c -- chooses between the GPU and the CPU path for one sort,
 * owns the backend's GPU state, and makes sure no failure of the GPU side
 * costs a query its result.
 *
 * The GPU is opened the first time a backend needs it and stays open for
 * the backend's life.  A job's device memory is tied to the current memory
 * context by a reset callback, so an error or a cancel between phases frees
 * it.  Any CUDA failure gives one WARNING and the CPU path; a failure that
 * leaves the CUDA context unusable disables the GPU for the rest of the
 * backend's life.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "guc.h"
#include "sort_engine.h"
#include "big_alloc.h"
#include "cpu_radix.h"
#include "device_opener.h"
#include "phase_hook.h"
#include "run_threads.h"
#include "../kernels/gpusort_kernels.h"

typedef enum GpuState
{
	GPU_UNKNOWN,				/* not tried yet in this backend */
	GPU_READY,
	GPU_ABSENT,					/* no driver or device */
	GPU_BROKEN					/* failed to open, or a sticky error */
} GpuState;

static GpuState gpu_state = GPU_UNKNOWN;
static gpusort_device_info gpu_info;
static char gpu_unusable_reason[256];

/* A job whose device memory a memory-context callback frees. */
typedef struct JobGuard
{
	gpusort_job *job;
	MemoryContextCallback callback;
} JobGuard;

/*
 * Try to open the GPU (once per backend, in a thread of its own: a cancel
 * is answered meanwhile); true if it is usable.
 */
static bool
gpusort_gpu_ready(const char **reason)
{
	if (gpu_state == GPU_UNKNOWN)
	{
		DeviceOpenResult opened;

		device_opener_wait(&opened);
		if (opened.status == GPUSORT_OK)
		{
			gpu_info = opened.info;
			gpu_state = GPU_READY;
			elog(DEBUG1, "gpusort: opened GPU 0 (%s)", gpu_info.name);
		}
		else
		{
			gpu_state = opened.status == GPUSORT_ERR_NO_DEVICE ? GPU_ABSENT : GPU_BROKEN;
			strlcpy(gpu_unusable_reason, opened.detail, sizeof(gpu_unusable_reason));
			if (gpu_state == GPU_BROKEN)
				ereport(WARNING,
						(errcode(ERRCODE_SYSTEM_ERROR),
						 errmsg("gpusort: could not open the GPU, using the CPU path"),
						 errdetail("%s", gpu_unusable_reason)));
		}
	}
	if (reason)
		*reason = gpu_state == GPU_READY ? NULL : gpu_unusable_reason;
	return gpu_state == GPU_READY;
}

void
gpusort_gpu_prepare(size_t n)
{
	if (gpu_state != GPU_UNKNOWN || gpusort_device == GPUSORT_DEVICE_CPU ||
		gpusort_algorithm_choice == GPUSORT_ALGORITHM_CPU || IsParallelWorker())
		return;
	/* gpusort_sort_rows' choice: a small sort takes the CPU path unopened */
	if (gpusort_device == GPUSORT_DEVICE_AUTO &&
		gpusort_algorithm_choice == GPUSORT_ALGORITHM_AUTO &&
		n < (size_t) gpusort_gpu_min_elements)
		return;
	device_opener_start();
}

bool
gpusort_gpu_expected(void)
{
	if (gpusort_device == GPUSORT_DEVICE_CPU ||
		gpusort_algorithm_choice == GPUSORT_ALGORITHM_CPU || IsParallelWorker())
		return false;
	return gpusort_gpu_ready(NULL);
}

bool
gpusort_gpu_known_unusable(void)
{
	return gpusort_device == GPUSORT_DEVICE_CPU ||
		gpusort_algorithm_choice == GPUSORT_ALGORITHM_CPU || IsParallelWorker() ||
		gpu_state == GPU_ABSENT || gpu_state == GPU_BROKEN;
}

uint32 *
gpusort_tie_bits_for(MemoryContext cxt, size_t n)
{
	/* gpusort_sort_rows' choices, the cheap ones first */
	if (gpusort_device == GPUSORT_DEVICE_AUTO &&
		gpusort_algorithm_choice == GPUSORT_ALGORITHM_AUTO &&
		n < (size_t) gpusort_gpu_min_elements)
		return NULL;
	if (n > gpusort_job_max_rows() || !gpusort_gpu_expected())
		return NULL;
	return gpusort_alloc_big(cxt, GPUSORT_TIE_BITS_BYTES(n) + 1);
}

static void
job_guard_release(void *arg)
{
	JobGuard   *guard = (JobGuard *) arg;

	gpusort_job_destroy(guard->job);
	guard->job = NULL;
}

static void
interrupt_check(void)
{
	CHECK_FOR_INTERRUPTS();
}

/* The GPU algorithm gpusort.algorithm asks for. */
static gpusort_algorithm
requested_algorithm(void)
{
	switch ((GpuSortAlgorithm) gpusort_algorithm_choice)
	{
		case GPUSORT_ALGORITHM_RADIX:
			return GPUSORT_ALGO_RADIX;
		case GPUSORT_ALGORITHM_QUICKSORT:
			return GPUSORT_ALGO_QUICKSORT;
		case GPUSORT_ALGORITHM_BITONIC:
			return GPUSORT_ALGO_BITONIC;
		case GPUSORT_ALGORITHM_AUTO:
		case GPUSORT_ALGORITHM_CPU:
			break;
	}
	return GPUSORT_ALGO_AUTO;
}

/* The CPU path; false if memory for its scratch space ran out. */
static bool
cpu_sort(const uint32 *const *words, int nwords, size_t n, uint32 *perm,
		 GpuSortRun *run)
{
	uint32	   *scratch = gpusort_alloc_big(CurrentMemoryContext,
											cpu_radix_scratch_words(n) * sizeof(uint32));
	instr_time	start,
				elapsed;

	if (scratch == NULL)
		return false;
	INSTR_TIME_SET_CURRENT(start);
	run->passes = cpu_radix_sort_rows(words, nwords, n, perm, NULL, scratch,
									  interrupt_check, gpusort_threads_allowed());
	INSTR_TIME_SET_CURRENT(elapsed);
	INSTR_TIME_SUBTRACT(elapsed, start);
	run->sort_ms = INSTR_TIME_GET_MILLISEC(elapsed);
	run->on_gpu = false;
	run->device_name = "CPU";
	run->algorithm = "radix";
	strlcpy(run->algorithm_reason, "the CPU path is a radix sort", sizeof(run->algorithm_reason));
	pfree(scratch);
	return true;
}

/*
 * Put the row data of *reorder into sorted order on the device.  A failure
 * only costs the speed-up (the permutation is already on the host), unless
 * it leaves the CUDA context unusable.
 */
static gpusort_status
gpu_reorder(gpusort_job *job, size_t n, GpuSortReorder *reorder)
{
	gpusort_status st = GPUSORT_OK;
	size_t		free_bytes,
				total_bytes,
				need = 0;

	if (!reorder->prepare(reorder))
		return GPUSORT_OK;
	for (int c = 0; c < reorder->nfixed; c++)
		need = Max(need, (n + reorder->m) * reorder->fixed_size[c]);
	st = gpusort_device_memory(&free_bytes, &total_bytes);
	if (st != GPUSORT_OK || need > free_bytes)
		return st;
	gpusort_phase_begin("reorder");
	for (int c = 0; c < reorder->nfixed && st == GPUSORT_OK; c++)
	{
		st = gpusort_job_permute_fixed(job, reorder->fixed_in[c], reorder->fixed_out[c],
									   reorder->fixed_size[c], reorder->m);
		CHECK_FOR_INTERRUPTS();
	}
	reorder->done = st == GPUSORT_OK;
	return st;
}

/*
 * The GPU path.  Returns false (with the job's memory freed) if the CPU
 * must take over; *failed is set if that is because something went wrong.
 */
static bool
gpu_sort(const uint32 *const *words, int nwords, size_t n, uint32 *perm,
		 GpuSortRun *run, GpuSortReorder *reorder, uint32 *tie_bits, bool *failed)
{
	JobGuard   *guard;
	gpusort_status st;
	size_t		free_bytes,
				total_bytes;
	gpusort_timing timing;

	*failed = false;
	st = gpusort_device_memory(&free_bytes, &total_bytes);
	if (st == GPUSORT_OK && gpusort_job_device_bytes(n, nwords) > free_bytes)
	{
		run->device_reason = "not enough free GPU memory";
		return false;
	}

	guard = palloc0(sizeof(JobGuard));
	guard->callback.func = job_guard_release;
	guard->callback.arg = guard;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &guard->callback);

	if (st == GPUSORT_OK)
		st = gpusort_job_create(n, nwords, &guard->job);
	CHECK_FOR_INTERRUPTS();
	gpusort_phase_begin("to_device");
	if (st == GPUSORT_OK)
		st = gpusort_job_upload(guard->job, words);
	CHECK_FOR_INTERRUPTS();
	gpusort_phase_begin("device_sort");
	if (st == GPUSORT_OK)
		st = gpusort_job_sort_with(guard->job, requested_algorithm());
	CHECK_FOR_INTERRUPTS();
	gpusort_phase_begin("from_device");
	if (st == GPUSORT_OK)
		st = gpusort_job_download(guard->job, perm, NULL);
	if (st == GPUSORT_OK && tie_bits != NULL)
	{
		/* optional: without them the finish finds the ties itself */
		gpusort_status tst = gpusort_job_download_ties(guard->job, tie_bits);

		if (tst == GPUSORT_ERR_CUDA_STICKY)
			st = tst;
		else if (tst != GPUSORT_OK)
			elog(DEBUG1, "gpusort: tie bits not made on the GPU: %s: %s",
				 gpusort_status_message(tst), gpusort_error_detail());
		run->tie_bits_done = tst == GPUSORT_OK;
	}
	if (st == GPUSORT_OK && reorder != NULL)
	{
		gpusort_status rst = gpu_reorder(guard->job, n, reorder);

		if (rst == GPUSORT_ERR_CUDA_STICKY)
			st = rst;
		else if (rst != GPUSORT_OK)
			elog(DEBUG1, "gpusort: rows not reordered on the GPU: %s: %s",
				 gpusort_status_message(rst), gpusort_error_detail());
	}
	if (st == GPUSORT_OK)
	{
		gpusort_job_timing(guard->job, &timing);
		run->on_gpu = true;
		run->device_name = gpu_info.name;
		run->algorithm = gpusort_algorithm_name(timing.algorithm);
		strlcpy(run->algorithm_reason, timing.algorithm_reason, sizeof(run->algorithm_reason));
		run->passes = timing.digit_passes;
		run->to_device_ms = timing.to_device_ms;
		run->sort_ms = timing.sort_ms;
		run->from_device_ms = timing.from_device_ms;
	}
	job_guard_release(guard);

	if (st != GPUSORT_OK)
	{
		*failed = true;
		run->tie_bits_done = false;
		if (st == GPUSORT_ERR_CUDA_STICKY)
		{
			gpu_state = GPU_BROKEN;
			snprintf(gpu_unusable_reason, sizeof(gpu_unusable_reason),
					 "an earlier unrecoverable CUDA error: %s", gpusort_error_detail());
		}
		ereport(WARNING,
				(errcode(st == GPUSORT_ERR_OUT_OF_MEMORY ?
						 ERRCODE_OUT_OF_MEMORY : ERRCODE_SYSTEM_ERROR),
				 errmsg("gpusort: GPU sort of %zu rows failed, using the CPU path", n),
				 errdetail("%s: %s", gpusort_status_message(st), gpusort_error_detail()),
				 st == GPUSORT_ERR_CUDA_STICKY ?
				 errhint("The GPU stays disabled in this session; reconnect to retry it.") : 0));
		run->device_reason = "GPU failure";
		return false;
	}
	return true;
}

bool
gpusort_sort_rows(const uint32 *const *words, int nwords, size_t n, uint32 *perm,
				  GpuSortRun *run, GpuSortReorder *reorder, uint32 *tie_bits)
{
	const char *why_not = NULL;
	bool		failed = false;

	bool		forced = gpusort_algorithm_choice != GPUSORT_ALGORITHM_AUTO;

	gpusort_phase_begin("sort");
	memset(run, 0, sizeof(*run));
	run->algorithm = "radix";

	if (gpusort_device == GPUSORT_DEVICE_CPU)
		run->device_reason = "gpusort.device = cpu";
	else if (gpusort_algorithm_choice == GPUSORT_ALGORITHM_CPU)
		run->device_reason = "gpusort.algorithm = cpu";
	else if (IsParallelWorker())
		run->device_reason = "parallel worker (only the leader opens the GPU)";
	else if (gpusort_device == GPUSORT_DEVICE_AUTO && !forced &&
			 n < (size_t) gpusort_gpu_min_elements)
		run->device_reason = "fewer rows than gpusort.gpu_min_elements";
	else if (n > gpusort_job_max_rows() && gpusort_gpu_ready(NULL))
		run->device_reason = "more rows than one GPU sort takes";
	else if (!gpusort_gpu_ready(&why_not))
	{
		run->device_reason = "no usable GPU";
		if (gpusort_device == GPUSORT_DEVICE_GPU)
			ereport(WARNING,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("gpusort.device is \"gpu\" but no GPU is usable, using the CPU path"),
					 errdetail("%s", why_not),
					 errhint("Set gpusort.device to \"auto\" to use the CPU path without this warning.")));
	}
	else
	{
		run->device_reason = gpusort_device == GPUSORT_DEVICE_GPU ? "gpusort.device = gpu" :
			forced ? "gpusort.algorithm names a GPU sort" : "at least gpusort.gpu_min_elements rows";
		if (reorder)
			reorder->done = false;
		if (gpu_sort(words, nwords, n, perm, run, reorder, tie_bits, &failed))
		{
			elog(DEBUG1, "gpusort: sorted %zu rows on %s (%s) with %s (%s), %d passes",
				 n, run->device_name, run->device_reason, run->algorithm, run->algorithm_reason,
				 run->passes);
			return true;
		}
	}

	if (!cpu_sort(words, nwords, n, perm, run))
		return false;
	elog(DEBUG1, "gpusort: sorted %zu rows on the CPU (%s) with %s (%s), %d passes",
		 n, run->device_reason, run->algorithm, run->algorithm_reason, run->passes);
	return true;
}

int
gpusort_threads_allowed(void)
{
	return Min(1 + max_parallel_workers_per_gather, RUN_THREADS_MAX);
}
