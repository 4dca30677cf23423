/*
 * service_worker.c -- the GPU service's background worker, one per GPU
 * (gpu_service.h, service_shared.h).
 *
 * The worker of ordinal 0 is registered at preload.  It counts the GPUs,
 * registers a worker for each further one, and opens its own; each worker
 * then opens its device once (CUDA is initialised here, never in the
 * postmaster) and runs the queued jobs one at a time, oldest first, taking
 * a job only if it fits the device's free memory.  Where there is no GPU
 * the worker of ordinal 0 stays, idle, so that the backends know there is
 * none without opening CUDA themselves.
 *
 * A worker that is terminated finishes no job: it marks its running job
 * failed (the backend takes the CPU path) and the postmaster starts it
 * again after SERVICE_RESTART_SECONDS.  A failure that leaves the CUDA
 * context unusable ends the worker the same way, so that the next one
 * starts with a fresh context.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/timestamp.h"

#include "gpu_service.h"
#include "phase_hook.h"
#include "service_shared.h"

/* seconds before the postmaster starts a worker that ended */
#define SERVICE_RESTART_SECONDS 5

/* how long an idle worker sleeps between looks at the queue (a new job sets its latch) */
#define SERVICE_IDLE_WAIT_MS 1000

bool
service_register_worker(int ordinal, bool dynamic)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	/* connected to no database: only to show in pg_stat_activity */
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = SERVICE_RESTART_SECONDS;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "gpusort");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "gpusort_service_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "gpusort service for GPU %d", ordinal);
	snprintf(worker.bgw_type, BGW_MAXLEN, "gpusort service");
	worker.bgw_main_arg = Int32GetDatum(ordinal);
	if (!dynamic)
	{
		RegisterBackgroundWorker(&worker);
		return true;
	}
	if (RegisterDynamicBackgroundWorker(&worker, NULL))
		return true;
	ereport(WARNING,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("gpusort: could not start the GPU service for GPU %d", ordinal),
			 errhint("Raise max_worker_processes: the service needs one per GPU.")));
	return false;
}

/*
 * At the worker's exit (terminated, or ended after a failure): its running
 * job fails over to its backend's CPU path, and the device takes no jobs.
 */
static void
worker_exit(int code, Datum arg)
{
	int			ordinal = DatumGetInt32(arg);
	ServiceDevice *dev = &service_shared->devices[ordinal];
	PGPROC	   *wake[SERVICE_SLOTS];
	int			nwake = 0;

	SpinLockAcquire(&service_shared->mutex);
	for (int i = 0; i < SERVICE_SLOTS; i++)
	{
		ServiceSlot *slot = &service_shared->slots[i];

		if (slot->runner_pid != MyProcPid ||
			(slot->state != SLOT_RUNNING && slot->state != SLOT_ABANDONED))
			continue;
		if (slot->state == SLOT_ABANDONED)
			slot->state = SLOT_FREE;
		else if (slot->state == SLOT_RUNNING)
		{
			slot->status = GPUSORT_ERR_CUDA;
			slot->ties_done = false;
			snprintf(slot->detail, sizeof(slot->detail),
					 "the GPU service for GPU %d stopped during the job", ordinal);
			slot->state = SLOT_DONE;
			wake[nwake++] = slot->owner;
			dev->failures++;
		}
	}
	if (dev->pid == MyProcPid)
	{
		dev->pid = 0;
		dev->proc = NULL;
		dev->ready = false;
	}
	SpinLockRelease(&service_shared->mutex);
	for (int i = 0; i < nwake; i++)
		SetLatch(&wake[i]->procLatch);
}

/*
 * The device's free memory now (other processes' use changes it), published
 * for the backends' piece sizes too; read before each look at the queue.
 */
static Size
refresh_free_bytes(int ordinal)
{
	ServiceDevice *dev = &service_shared->devices[ordinal];
	size_t		free_b = 0,
				total_b = 0;
	bool		measured = gpusort_service_emulation_hook == NULL &&
		gpusort_device_memory(&free_b, &total_b) == GPUSORT_OK;
	Size		result;

	SpinLockAcquire(&service_shared->mutex);
	if (measured)
		dev->free_bytes = free_b;
	result = dev->free_bytes;
	SpinLockRelease(&service_shared->mutex);
	return result;
}

/* Sleep until a job may have come, answering a terminate. */
static void
wait_for_work(void)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 SERVICE_IDLE_WAIT_MS, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/*
 * Register a worker for each counted GPU past the first that has none
 * (worker 0, at start and when idle: a registration that failed for lack
 * of worker slots is tried again).
 */
static void
launch_workers(void)
{
	bool		launch[SERVICE_MAX_DEVICES] = {0};
	int			count;

	SpinLockAcquire(&service_shared->mutex);
	count = service_shared->ndevices;
	for (int i = 1; i < count; i++)
	{
		launch[i] = !service_shared->devices[i].launched;
		service_shared->devices[i].launched = true;
	}
	SpinLockRelease(&service_shared->mutex);
	for (int i = 1; i < count; i++)
		if (launch[i] && !service_register_worker(i, true))
		{
			SpinLockAcquire(&service_shared->mutex);
			service_shared->devices[i].launched = false;
			SpinLockRelease(&service_shared->mutex);
		}
}

/* Count the GPUs (worker 0); a driver error ends the worker, to count again at its restart. */
static int
count_devices(void)
{
	const gpusort_service_emulation *emu = gpusort_service_emulation_hook;
	int			count = 0;

	if (emu != NULL)
		count = emu->devices;
	else
	{
		gpusort_status st = gpusort_device_count(&count);

		if (st == GPUSORT_ERR_NO_DEVICE)
			count = 0;
		else if (st != GPUSORT_OK)
			ereport(FATAL,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("gpusort service: could not count the GPUs: %s",
							gpusort_status_message(st)),
					 errdetail("%s", gpusort_error_detail())));
	}
	if (count > SERVICE_MAX_DEVICES)
	{
		ereport(LOG,
				(errmsg("gpusort service: %d GPUs found, the first %d used",
						count, SERVICE_MAX_DEVICES)));
		count = SERVICE_MAX_DEVICES;
	}
	SpinLockAcquire(&service_shared->mutex);
	service_shared->ndevices = count;
	SpinLockRelease(&service_shared->mutex);
	launch_workers();
	return count;
}

/* Open this worker's device; false (logged) if it cannot be used. */
static bool
open_device(int ordinal, gpusort_device_info *info, Size *free_bytes)
{
	const gpusort_service_emulation *emu = gpusort_service_emulation_hook;
	gpusort_status st;
	size_t		free_b = 0,
				total_b = 0;

	memset(info, 0, sizeof(*info));
	info->ordinal = ordinal;
	if (emu != NULL)
	{
		snprintf(info->name, sizeof(info->name), "emulated GPU %d", ordinal);
		info->total_memory = *free_bytes = emu->memory;
		return true;
	}
	st = gpusort_device_open(ordinal);
	if (st == GPUSORT_OK)
		st = gpusort_device_get_info(ordinal, info);
	if (st == GPUSORT_OK)
		st = gpusort_device_memory(&free_b, &total_b);
	if (st != GPUSORT_OK)
	{
		ereport(WARNING,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("gpusort service: could not open GPU %d: %s", ordinal,
						gpusort_status_message(st)),
				 errdetail("%s", gpusort_error_detail())));
		return false;
	}
	info->total_memory = total_b;
	*free_bytes = free_b;
	return true;
}

/*
 * Take the oldest queued job that fits free_bytes: its slot number, or -1.
 * *job is a copy of the slot as taken.
 */
static int
take_job(int ordinal, Size free_bytes, ServiceSlot *job)
{
	int			best = -1;
	TimestampTz now = GetCurrentTimestamp();

	SpinLockAcquire(&service_shared->mutex);
	for (int i = 0; i < SERVICE_SLOTS; i++)
	{
		ServiceSlot *slot = &service_shared->slots[i];

		if (slot->state == SLOT_QUEUED && slot->device_bytes <= free_bytes &&
			(best < 0 || slot->job_id < service_shared->slots[best].job_id))
			best = i;
	}
	if (best >= 0)
	{
		ServiceSlot *slot = &service_shared->slots[best];

		slot->state = SLOT_RUNNING;
		slot->device = ordinal;
		slot->runner_pid = MyProcPid;
		/* queued after `now` was read: no wait */
		slot->queue_ms = Max(0.0, (double) (now - slot->queued_at) / 1000.0);
		*job = *slot;
	}
	SpinLockRelease(&service_shared->mutex);
	return best;
}

/* A job's columns to put in order: where their input and output lie in the segment. */
typedef struct JobColumns
{
	int			nfixed;
	Size		m;
	const uint64 *sizes;
	const void **in;
	void	  **out;
} JobColumns;

/*
 * The columns' sorted copies, on the GPU after its sort; false if they
 * were not made (too little free device memory, or a recoverable error:
 * the backend then orders them on the CPU).  A sticky error goes to *st.
 */
static bool
reorder_on_gpu(gpusort_job *gj, Size n, const JobColumns *cols, gpusort_status *st)
{
	size_t		free_b,
				total_b,
				need = 0;
	gpusort_status rst;

	for (int c = 0; c < cols->nfixed; c++)
		need = Max(need, (n + cols->m) * cols->sizes[c]);
	rst = gpusort_device_memory(&free_b, &total_b);
	if (rst == GPUSORT_ERR_CUDA_STICKY)
		*st = rst;
	if (rst != GPUSORT_OK || need > free_b)
		return false;
	for (int c = 0; c < cols->nfixed && rst == GPUSORT_OK; c++)
		rst = gpusort_job_permute_fixed(gj, cols->in[c], cols->out[c], cols->sizes[c], cols->m);
	if (rst == GPUSORT_ERR_CUDA_STICKY)
		*st = rst;
	return rst == GPUSORT_OK;
}

/* Run one job on the GPU into its segment; the status, timing and detail into *job. */
static void
run_on_gpu(ServiceSlot *job, const uint32 *const *words, uint32 *perm, uint32 *ties,
		   const JobColumns *cols)
{
	gpusort_job *gj = NULL;
	gpusort_status st;

	st = gpusort_job_create(job->n, job->nwords, &gj);
	if (st == GPUSORT_OK)
		st = gpusort_job_upload(gj, words);
	if (st == GPUSORT_OK)
		st = gpusort_job_sort_with(gj, job->algorithm);
	if (st == GPUSORT_OK)
		st = gpusort_job_download(gj, perm, NULL);
	job->ties_done = false;
	if (st == GPUSORT_OK && ties != NULL)
	{
		/* optional: without them the backend's finish finds the ties itself */
		gpusort_status tst = gpusort_job_download_ties(gj, ties);

		if (tst == GPUSORT_ERR_CUDA_STICKY)
			st = tst;
		job->ties_done = tst == GPUSORT_OK;
	}
	job->reordered = false;
	if (st == GPUSORT_OK && cols->nfixed > 0)
		job->reordered = reorder_on_gpu(gj, job->n, cols, &st);
	if (st == GPUSORT_OK)
		gpusort_job_timing(gj, &job->timing);
	else
		strlcpy(job->detail, gpusort_error_detail(), sizeof(job->detail));
	gpusort_job_destroy(gj);
	job->status = st;
}

/* Run the job of slot `slotno` (a copy in *job) and hand its result back. */
static void
run_job(int ordinal, int slotno, ServiceSlot *job)
{
	const gpusort_service_emulation *emu = gpusort_service_emulation_hook;
	ServiceDevice *dev = &service_shared->devices[ordinal];
	ServiceSlot *slot = &service_shared->slots[slotno];
	dsm_segment *seg = dsm_attach(job->segment);
	PGPROC	   *wake = NULL;

	job->detail[0] = '\0';
	if (seg != NULL &&
		service_keys_bytes(job->n, job->nwords, job->want_ties) +
		MAXALIGN(job->nfixed * sizeof(uint64)) > dsm_segment_map_length(seg))
	{
		/* not the layout the slot describes: another segment under a reused handle */
		dsm_detach(seg);
		seg = NULL;
	}
	if (seg == NULL)
	{
		/* the backend left and its segment is gone: nobody waits for this job */
		job->status = GPUSORT_ERR_INVALID_ARGUMENT;
		strlcpy(job->detail, "the job's shared memory is gone", sizeof(job->detail));
	}
	else
	{
		uint32	   *base = dsm_segment_address(seg);
		const uint32 **words = palloc(job->nwords * sizeof(uint32 *));
		uint32	   *perm = base + (Size) job->nwords * job->n;
		uint32	   *ties = job->want_ties ? perm + job->n : NULL;
		Size		keys_bytes = service_keys_bytes(job->n, job->nwords, job->want_ties);
		JobColumns	cols = {job->nfixed, job->m, NULL, NULL, NULL};

		for (int w = 0; w < job->nwords; w++)
			words[w] = base + (Size) w * job->n;
		if (job->nfixed > 0)
		{
			Size	   *in_at = palloc(job->nfixed * sizeof(Size));
			Size	   *out_at = palloc(job->nfixed * sizeof(Size));
			Size		end;

			cols.sizes = (const uint64 *) ((char *) base + keys_bytes);
			cols.in = palloc(job->nfixed * sizeof(void *));
			cols.out = palloc(job->nfixed * sizeof(void *));
			service_fixed_offsets(keys_bytes, cols.sizes, job->nfixed, job->n, job->m,
								  in_at, out_at, &end);
			for (int c = 0; c < job->nfixed; c++)
			{
				cols.in[c] = (char *) base + in_at[c];
				cols.out[c] = (char *) base + out_at[c];
			}
			pfree(in_at);
			pfree(out_at);
			/* a layout past the segment's end is no job of ours: no reorder */
			if (end > dsm_segment_map_length(seg) ||
				(emu != NULL && emu->permute == NULL))
				cols.nfixed = 0;
		}
		if (emu != NULL)
		{
			TimestampTz start = GetCurrentTimestamp();

			job->ties_done = false;
			job->reordered = false;
			job->status = emu->run_job(ordinal, words, job->nwords, job->n, perm, ties,
									   &job->ties_done);
			if (job->status == GPUSORT_OK && cols.nfixed > 0)
			{
				job->reordered = true;
				for (int c = 0; c < cols.nfixed && job->reordered; c++)
					job->reordered = emu->permute(cols.in[c], cols.out[c], cols.sizes[c],
												  perm, job->m) == GPUSORT_OK;
			}
			memset(&job->timing, 0, sizeof(job->timing));
			job->timing.algorithm = GPUSORT_ALGO_RADIX;
			job->timing.sort_ms = (double) (GetCurrentTimestamp() - start) / 1000.0;
			strlcpy(job->timing.algorithm_reason, "an emulated device (a test module)",
					sizeof(job->timing.algorithm_reason));
			if (job->status != GPUSORT_OK)
				strlcpy(job->detail, "an emulated device failure", sizeof(job->detail));
		}
		else
			run_on_gpu(job, words, perm, ties, &cols);
		if (cols.in != NULL)
		{
			pfree(cols.in);
			pfree(cols.out);
		}
		pfree(words);
	}
	SpinLockAcquire(&service_shared->mutex);
	if (slot->job_id != job->job_id || slot->runner_pid != MyProcPid)
	{
		/* not this worker's any more (failed over when another worker for this GPU exited) */
	}
	else if (slot->state == SLOT_ABANDONED)
		slot->state = SLOT_FREE;
	else if (slot->state == SLOT_RUNNING)
	{
		slot->status = job->status;
		slot->ties_done = job->ties_done;
		slot->reordered = job->reordered;
		slot->timing = job->timing;
		strlcpy(slot->detail, job->detail, sizeof(slot->detail));
		slot->state = SLOT_DONE;
		wake = slot->owner;
	}
	if (seg != NULL)
	{
		dev->jobs++;
		dev->rows += job->n;
		dev->bytes += (uint64) job->nwords * job->n * sizeof(uint32);
		dev->queue_wait_ms += job->queue_ms;
		if (job->status != GPUSORT_OK)
			dev->failures++;
	}
	SpinLockRelease(&service_shared->mutex);
	if (wake != NULL)
		SetLatch(&wake->procLatch);
	if (seg != NULL)
		dsm_detach(seg);

	if (job->status == GPUSORT_ERR_CUDA_STICKY)
		ereport(FATAL,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("gpusort service: GPU %d failed a job and its context is unusable; restarting",
						ordinal),
				 errdetail("%s", job->detail)));
}

void
gpusort_service_main(Datum main_arg)
{
	int			ordinal = DatumGetInt32(main_arg);
	ServiceDevice *dev;
	gpusort_device_info info;
	Size		free_bytes = 0;
	int			count;
	bool		held;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	if (service_shared == NULL || ordinal < 0 || ordinal >= SERVICE_MAX_DEVICES)
		proc_exit(1);
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	/* a cancel (pg_cancel_backend) would end the worker at its next interrupt check */
	pqsignal(SIGINT, SIG_IGN);
	pgstat_report_appname(psprintf("gpusort service for GPU %d", ordinal));
	dev = &service_shared->devices[ordinal];

	/*
	 * Claim the device.  After a crash reset, a dynamic worker restarted by
	 * the postmaster and one registered anew by worker 0 may both start for
	 * it: the second leaves for good (exit 0 unregisters it).
	 */
	SpinLockAcquire(&service_shared->mutex);
	held = dev->pid != 0 && dev->pid != MyProcPid && kill(dev->pid, 0) == 0;
	if (!held)
	{
		if (dev->started)
			dev->restarts++;
		dev->started = true;
		dev->launched = true;
		dev->pid = MyProcPid;
		dev->proc = MyProc;
		dev->ready = false;
	}
	SpinLockRelease(&service_shared->mutex);
	if (held)
		proc_exit(0);
	before_shmem_exit(worker_exit, Int32GetDatum(ordinal));

	if (ordinal == 0)
		count = count_devices();
	else
	{
		/* worker 0 counts the GPUs */
		while ((count = gpu_service_devices()) < 0)
			wait_for_work();
	}
	if (ordinal >= count)
	{
		if (ordinal == 0)
		{
			/* no GPU: stay, idle, as the answer "none" to the backends */
			ereport(LOG, (errmsg("gpusort service: no GPU; sorts take the CPU path")));
			for (;;)
				wait_for_work();
		}
		proc_exit(0);			/* no such GPU (any more): not started again */
	}
	if (!open_device(ordinal, &info, &free_bytes))
		proc_exit(1);			/* started again after SERVICE_RESTART_SECONDS */

	SpinLockAcquire(&service_shared->mutex);
	strlcpy(dev->name, info.name, sizeof(dev->name));
	dev->cc_major = info.cc_major;
	dev->cc_minor = info.cc_minor;
	dev->multiprocessors = info.multiprocessors;
	dev->total_bytes = info.total_memory;
	dev->free_bytes = free_bytes;
	dev->ready = true;
	SpinLockRelease(&service_shared->mutex);
	ereport(LOG, (errmsg("gpusort service: GPU %d (%s) open", ordinal, info.name)));

	for (;;)
	{
		ServiceSlot job;
		int			slotno;

		CHECK_FOR_INTERRUPTS();
		free_bytes = refresh_free_bytes(ordinal);
		slotno = take_job(ordinal, free_bytes, &job);
		if (slotno >= 0)
			run_job(ordinal, slotno, &job);
		else
		{
			wait_for_work();
			if (ordinal == 0)
				launch_workers();
		}
	}
}
