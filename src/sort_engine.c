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
#include "gpu_service.h"
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
own_gpu_ready(const char **reason)
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

/* Whether the GPU is usable: the service's, or else this backend's own. */
static bool
gpusort_gpu_ready(const char **reason)
{
	if (gpu_service_in_use())
	{
		/* the service's workers hold the GPUs; this backend opens none */
		int			devices = gpu_service_devices();

		if (reason)
			*reason = devices < 0 ? "the GPU service is starting" :
				devices == 0 ? "the GPU service found no GPU" : NULL;
		return devices > 0;
	}
	return own_gpu_ready(reason);
}

void
gpusort_gpu_prepare(size_t n)
{
	if (gpu_state != GPU_UNKNOWN || gpusort_device == GPUSORT_DEVICE_CPU ||
		gpusort_algorithm_choice == GPUSORT_ALGORITHM_CPU || IsParallelWorker() ||
		gpu_service_in_use())
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
	if (gpusort_device == GPUSORT_DEVICE_CPU ||
		gpusort_algorithm_choice == GPUSORT_ALGORITHM_CPU || IsParallelWorker())
		return true;
	if (gpu_service_in_use())
		return gpu_service_devices() == 0;
	return gpu_state == GPU_ABSENT || gpu_state == GPU_BROKEN;
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

bool
gpusort_reorder_describe(GpuSortReorder *reorder)
{
	if (reorder->described == 0)
		reorder->described = reorder->describe(reorder) && reorder->nfixed > 0 ? 1 : -1;
	return reorder->described == 1;
}

bool
gpusort_reorder_outputs(GpuSortReorder *reorder)
{
	for (int c = 0; c < reorder->nfixed; c++)
	{
		if (reorder->fixed_out[c] == NULL)
			reorder->fixed_out[c] = gpusort_alloc_big(reorder->cxt,
													  Max(reorder->m, 1) * reorder->fixed_size[c]);
		if (reorder->fixed_out[c] == NULL)
			return false;
	}
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

	if (!gpusort_reorder_describe(reorder))
		return GPUSORT_OK;
	for (int c = 0; c < reorder->nfixed; c++)
		need = Max(need, (n + reorder->m) * reorder->fixed_size[c]);
	st = gpusort_device_memory(&free_bytes, &total_bytes);
	if (st != GPUSORT_OK || need > free_bytes || !gpusort_reorder_outputs(reorder))
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
	if (gpu_service_in_use())
	{
		GpuServiceOutcome outcome = gpu_service_sort(words, nwords, n, perm, tie_bits, reorder,
													 requested_algorithm(), run);

		if (outcome == GPU_SERVICE_SORTED)
			return true;
		/* a job too large for the shared memory file system: this backend's own GPU */
		if (outcome != GPU_SERVICE_NO_SHARED_MEMORY || !own_gpu_ready(NULL))
		{
			*failed = outcome == GPU_SERVICE_FAILED;
			gpu_service_count_fallback(n);
			return false;
		}
		run->device_reason = "its keys do not fit the shared memory for the GPU service";
	}
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

/*
 * The most rows one GPU job may take: what the device's free memory, the
 * cap of gpusort.gpu_job_memory and the job's own row limit allow (0: not
 * even a small piece fits).
 */
static size_t
gpu_piece_rows(size_t n, int nwords)
{
	size_t		free_bytes,
				total_bytes;
	size_t		limit,
				bytes;
	size_t		m = Min(n, gpusort_job_max_rows());

	if (gpu_service_in_use())
	{
		/* the most free memory of a service GPU (0: none runs, the job says so) */
		free_bytes = gpu_service_job_bytes_limit();
		if (free_bytes == 0)
			return n;
	}
	else if (gpusort_device_memory(&free_bytes, &total_bytes) != GPUSORT_OK)
		return n;				/* the job itself will meet the error */
	limit = free_bytes;
	if (gpusort_gpu_job_memory > 0)
		limit = Min(limit, (size_t) gpusort_gpu_job_memory * 1024 * 1024);
	/* the job's bytes grow about linearly with its rows */
	while (m > 0 && (bytes = gpusort_job_device_bytes(m, nwords)) > limit)
		m = bytes > 2 * limit ? (size_t) ((double) m * limit / bytes) : m - m / 16 - 1;
	return m;
}

/*
 * The fewest rows a piece takes, and the most pieces a sort is split
 * into: below, the GPU's jobs and their merge are not worth it, and the
 * CPU path sorts instead.
 */
#define GPU_PIECE_MIN_ROWS ((size_t) 65536)
#define GPU_PIECES_MAX ((size_t) 64)

/* Binary heap of pieces by their next row: the row's words, then its number. */
static inline bool
piece_row_before(const uint32 *const *words, int nwords, uint32 a, uint32 b)
{
	for (int w = 0; w < nwords; w++)
		if (words[w][a] != words[w][b])
			return words[w][a] < words[w][b];
	return a < b;
}

static void
piece_sift_down(const uint32 *const *words, int nwords, const uint32 *perm,
				const size_t *next, int *heap, int k, int i)
{
	for (;;)
	{
		int			l = 2 * i + 1;
		int			least = i;
		int			tmp;

		if (l < k && piece_row_before(words, nwords, perm[next[heap[l]]],
									  perm[next[heap[least]]]))
			least = l;
		if (l + 1 < k && piece_row_before(words, nwords, perm[next[heap[l + 1]]],
										  perm[next[heap[least]]]))
			least = l + 1;
		if (least == i)
			return;
		tmp = heap[i];
		heap[i] = heap[least];
		heap[least] = tmp;
		i = least;
	}
}

/*
 * A sort too large for one GPU job (its device memory, or
 * gpusort.gpu_job_memory): consecutive pieces of piece rows each sorted on
 * the GPU, then merged on the CPU by their words (rows of earlier pieces
 * first among equal words: the order stays that of one stable sort).
 * False, as gpu_sort, if the CPU must take over (*failed: something went
 * wrong) or memory for the merge ran out.
 */
static bool
gpu_sort_pieces(const uint32 *const *words, int nwords, size_t n, size_t piece, uint32 *perm,
				GpuSortRun *run, bool *failed)
{
	int			k = (int) ((n + piece - 1) / piece);
	const uint32 **pw = palloc(Max(nwords, 1) * sizeof(uint32 *));
	size_t	   *next = palloc(k * sizeof(size_t));
	size_t	   *end = palloc(k * sizeof(size_t));
	int		   *heap = palloc(k * sizeof(int));
	int			hn = 0;
	uint32	   *merged;
	GpuSortRun	one;
	instr_time	start;

	*failed = false;
	for (int p = 0; p < k; p++)
	{
		size_t		first = (size_t) p * piece;
		size_t		m = Min(piece, n - first);

		for (int w = 0; w < nwords; w++)
			pw[w] = words[w] + first;
		memset(&one, 0, sizeof(one));
		one.device_reason = run->device_reason;
		if (!gpu_sort(pw, nwords, m, perm + first, &one, NULL, NULL, failed))
		{
			run->device_reason = one.device_reason;
			return false;
		}
		for (size_t i = 0; i < m; i++)
			perm[first + i] += (uint32) first;
		run->to_device_ms += one.to_device_ms;
		run->sort_ms += one.sort_ms;
		run->from_device_ms += one.from_device_ms;
		run->queue_ms += one.queue_ms;
		run->passes = Max(run->passes, one.passes);
		next[p] = first;
		end[p] = first + m;
		heap[hn++] = p;
	}
	merged = gpusort_alloc_big(CurrentMemoryContext, Max(n, 1) * sizeof(uint32));
	if (merged == NULL)
	{
		run->device_reason = "out of memory for the merge of GPU pieces";
		return false;
	}
	INSTR_TIME_SET_CURRENT(start);
	for (int i = hn / 2 - 1; i >= 0; i--)
		piece_sift_down(words, nwords, perm, next, heap, hn, i);
	for (size_t i = 0; i < n; i++)
	{
		int			p = heap[0];

		if (i % 65536 == 0)
			CHECK_FOR_INTERRUPTS();
		merged[i] = perm[next[p]++];
		if (next[p] == end[p])
			heap[0] = heap[--hn];
		if (hn > 0)
			piece_sift_down(words, nwords, perm, next, heap, hn, 0);
	}
	memcpy(perm, merged, n * sizeof(uint32));
	pfree(merged);
	{
		instr_time	now;

		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		run->sort_ms += INSTR_TIME_GET_MILLISEC(now);
	}
	run->on_gpu = true;
	run->device_name = one.device_name;
	run->via_service = one.via_service;
	run->service_device = one.service_device;
	run->algorithm = one.algorithm;
	run->pieces = k;
	snprintf(run->algorithm_reason, sizeof(run->algorithm_reason),
			 "%d GPU jobs of up to %zu rows, merged on the CPU (%s)", k, piece, one.algorithm_reason);
	/* the finish finds the ties itself */
	run->tie_bits_done = false;
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
	run->pieces = 1;

	if (gpusort_device == GPUSORT_DEVICE_CPU)
		run->device_reason = "gpusort.device = cpu";
	else if (gpusort_algorithm_choice == GPUSORT_ALGORITHM_CPU)
		run->device_reason = "gpusort.algorithm = cpu";
	else if (IsParallelWorker())
		run->device_reason = "parallel worker (only the leader opens the GPU)";
	else if (gpusort_device == GPUSORT_DEVICE_AUTO && !forced &&
			 n < (size_t) gpusort_gpu_min_elements)
		run->device_reason = "fewer rows than gpusort.gpu_min_elements";
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
		size_t		piece = gpu_piece_rows(n, nwords);
		bool		sorted;

		run->device_reason = gpusort_device == GPUSORT_DEVICE_GPU ? "gpusort.device = gpu" :
			forced ? "gpusort.algorithm names a GPU sort" : "at least gpusort.gpu_min_elements rows";

		if (reorder)
			reorder->done = false;
		if (piece == 0)
		{
			run->device_reason = "not enough free GPU memory";
			sorted = false;
		}
		else if (piece < n && piece < Max(n / GPU_PIECES_MAX, GPU_PIECE_MIN_ROWS))
		{
			/* pieces so small that the CPU sorts faster than their jobs and merge */
			run->device_reason = "not enough free GPU memory (gpusort.gpu_job_memory)";
			sorted = false;
		}
		else if (piece < n)
			sorted = gpu_sort_pieces(words, nwords, n, piece, perm, run, &failed);
		else
			sorted = gpu_sort(words, nwords, n, perm, run, reorder, tie_bits, &failed);
		if (sorted)
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
