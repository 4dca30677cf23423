/*
 * service_client.c -- the backends' side of the GPU service (gpu_service.h):
 * its shared memory, sending a job and waiting for it, and the
 * gpusort_stat view.
 *
 * A job's key words go into a DSM segment the backend creates; the
 * permutation and tie bits come back in the same segment.  While it waits
 * the backend answers cancels: it then withdraws a queued job, or leaves a
 * running one to the worker, which frees the slot when the job ends.  A
 * backend that exits does the same from a before_shmem_exit callback.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/parallel.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include <sys/statvfs.h>

#include "storage/dsm_impl.h"

#include "gpu_service.h"
#include "guc.h"
#include "phase_hook.h"
#include "service_shared.h"

ServiceShared *service_shared = NULL;

/* how often a waiting backend looks at its job (its latch also wakes it) */
#define SERVICE_POLL_MS 10

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static bool exit_callback_set = false;
static bool warned_unavailable = false;

/* the devices' names as this backend last read them, for GpuSortRun.device_name */
static char device_names[SERVICE_MAX_DEVICES][256];

static void
service_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(ServiceShared)));
}

static void
service_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	service_shared = ShmemInitStruct("gpusort GPU service", sizeof(ServiceShared), &found);
	if (!found)
	{
		memset(service_shared, 0, sizeof(ServiceShared));
		SpinLockInit(&service_shared->mutex);
		service_shared->ndevices = -1;
		service_shared->next_job_id = 1;
		service_shared->initialized_at = GetCurrentTimestamp();
		for (int i = 0; i < SERVICE_SLOTS; i++)
			service_shared->slots[i].device = -1;
	}
	LWLockRelease(AddinShmemInitLock);
}

void
gpu_service_register(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = service_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = service_shmem_startup;
	service_register_worker(0, false);
}

/* One poll's sleep of a waiting backend, answering cancels. */
static void
poll_pause(void)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, SERVICE_POLL_MS,
					 PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/* how long the first worker may take to start before the service counts as absent */
#define SERVICE_START_GRACE_MS 10000

/*
 * Whether the service's first worker never started, well after the
 * shared memory was made: too few max_worker_processes, or single-user
 * mode.  Then each session opens the GPU itself (one WARNING).
 */
static bool
service_never_started(void)
{
	static bool seen_started = false;
	static bool warned = false;
	bool		started;
	TimestampTz since;

	if (seen_started)
		return false;
	SpinLockAcquire(&service_shared->mutex);
	started = service_shared->devices[0].started;
	since = service_shared->initialized_at;
	SpinLockRelease(&service_shared->mutex);
	if (started)
	{
		seen_started = true;
		return false;
	}
	if (!TimestampDifferenceExceeds(since, GetCurrentTimestamp(), SERVICE_START_GRACE_MS))
		return false;
	if (!warned)
		ereport(WARNING,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("gpusort: the GPU service has not started; this session opens the GPU itself"),
				 errhint("The service needs a background worker per GPU: raise max_worker_processes.")));
	warned = true;
	return true;
}

bool
gpu_service_in_use(void)
{
	return service_shared != NULL && gpusort_service && !IsParallelWorker() &&
		!service_never_started();
}

int
gpu_service_devices(void)
{
	int			n;

	if (service_shared == NULL)
		return -1;
	SpinLockAcquire(&service_shared->mutex);
	n = service_shared->ndevices;
	SpinLockRelease(&service_shared->mutex);
	return n;
}

size_t
gpu_service_job_bytes_limit(void)
{
	Size		most = 0;

	if (service_shared == NULL)
		return 0;
	SpinLockAcquire(&service_shared->mutex);
	for (int i = 0; i < SERVICE_MAX_DEVICES; i++)
		if (service_shared->devices[i].ready)
			most = Max(most, service_shared->devices[i].free_bytes);
	SpinLockRelease(&service_shared->mutex);
	return most;
}

bool
gpu_service_device_infos(gpusort_device_info *infos, int *count)
{
	TimestampTz start = GetCurrentTimestamp();

	if (!gpu_service_in_use())
		return false;

	/*
	 * Right after a start the workers may still be counting or opening
	 * their GPUs: wait for them (answering cancels) rather than ask CUDA here.
	 */
	for (;;)
	{
		bool		settled;

		SpinLockAcquire(&service_shared->mutex);
		settled = service_shared->ndevices >= 0;
		for (int i = 0; i < Max(service_shared->ndevices, 0) && settled; i++)
			settled = service_shared->devices[i].ready || service_shared->devices[i].pid == 0;
		SpinLockRelease(&service_shared->mutex);
		if (settled || service_never_started() ||
			TimestampDifferenceExceeds(start, GetCurrentTimestamp(), SERVICE_START_GRACE_MS))
			break;
		poll_pause();
	}
	SpinLockAcquire(&service_shared->mutex);
	*count = service_shared->ndevices;
	for (int i = 0; i < Max(*count, 0); i++)
	{
		ServiceDevice *dev = &service_shared->devices[i];

		memset(&infos[i], 0, sizeof(infos[i]));
		infos[i].ordinal = i;
		strlcpy(infos[i].name, dev->ready ? dev->name : "(not open)", sizeof(infos[i].name));
		infos[i].cc_major = dev->cc_major;
		infos[i].cc_minor = dev->cc_minor;
		infos[i].multiprocessors = dev->multiprocessors;
		infos[i].total_memory = dev->total_bytes;
	}
	SpinLockRelease(&service_shared->mutex);
	return *count >= 0;
}

void
gpu_service_count_fallback(size_t n)
{
	if (service_shared == NULL)
		return;
	SpinLockAcquire(&service_shared->mutex);
	service_shared->fallback_jobs++;
	service_shared->fallback_rows += n;
	SpinLockRelease(&service_shared->mutex);
}

/* Its owner lets go of a slot: a queued or done job is withdrawn, a running one abandoned. */
static void
release_slot_locked(ServiceSlot *slot)
{
	if (slot->state == SLOT_RUNNING)
		slot->state = SLOT_ABANDONED;
	else if (slot->state == SLOT_QUEUED || slot->state == SLOT_DONE)
		slot->state = SLOT_FREE;
}

/* At backend exit: withdraw or abandon this backend's jobs. */
static void
abandon_my_jobs(int code, Datum arg)
{
	if (service_shared == NULL)
		return;
	SpinLockAcquire(&service_shared->mutex);
	for (int i = 0; i < SERVICE_SLOTS; i++)
		if (service_shared->slots[i].owner_pid == MyProcPid)
			release_slot_locked(&service_shared->slots[i]);
	SpinLockRelease(&service_shared->mutex);
}

/* Withdraw or abandon the job in slotno, if still ours. */
static void
release_job(int slotno, uint64 job_id)
{
	ServiceSlot *slot = &service_shared->slots[slotno];

	SpinLockAcquire(&service_shared->mutex);
	if (slot->job_id == job_id)
		release_slot_locked(slot);
	SpinLockRelease(&service_shared->mutex);
}

/*
 * Whether any device's worker runs: it takes jobs, or will once its device
 * is open (a job queued meanwhile waits for it).
 */
static bool
any_device_running(void)
{
	bool		running = false;

	SpinLockAcquire(&service_shared->mutex);
	for (int i = 0; i < SERVICE_MAX_DEVICES && !running; i++)
		running = service_shared->devices[i].pid != 0;
	SpinLockRelease(&service_shared->mutex);
	return running;
}

/*
 * Whether a segment of `bytes` fits the shared memory file system (POSIX
 * segments live in /dev/shm, 64 MB in a default Docker container: past
 * its room, creating one is an ERROR, not a NULL).
 */
static bool
segment_fits(Size bytes)
{
	struct statvfs fs;

	if (dynamic_shared_memory_type != DSM_IMPL_POSIX || statvfs("/dev/shm", &fs) != 0)
		return true;
	/* half of what is left: room for others' segments */
	return bytes <= (Size) fs.f_bavail * fs.f_frsize / 2;
}

/* Queue a job in a free slot: its number, or -1 if every slot is taken. */
static pg_noinline int
queue_job(dsm_segment *seg, size_t n, int nwords, bool want_ties, int nfixed, Size m,
		  gpusort_algorithm algorithm, uint64 *job_id)
{
	int			slotno = -1;
	PGPROC	   *wake[SERVICE_MAX_DEVICES];
	int			nwake = 0;

	SpinLockAcquire(&service_shared->mutex);
	for (int i = 0; i < SERVICE_SLOTS; i++)
		if (service_shared->slots[i].state == SLOT_FREE)
		{
			ServiceSlot *slot = &service_shared->slots[i];

			slotno = i;
			slot->job_id = *job_id = service_shared->next_job_id++;
			slot->owner = MyProc;
			slot->owner_pid = MyProcPid;
			slot->segment = dsm_segment_handle(seg);
			slot->n = n;
			slot->nwords = nwords;
			slot->want_ties = want_ties;
			slot->nfixed = nfixed;
			slot->m = m;
			slot->algorithm = algorithm;
			slot->device_bytes = gpusort_job_device_bytes(n, nwords);
			slot->queued_at = GetCurrentTimestamp();
			slot->device = -1;
			slot->status = GPUSORT_OK;
			slot->ties_done = false;
			slot->reordered = false;
			slot->queue_ms = 0;
			slot->detail[0] = '\0';
			slot->state = SLOT_QUEUED;
			break;
		}
	if (slotno >= 0)
		for (int i = 0; i < SERVICE_MAX_DEVICES; i++)
			if (service_shared->devices[i].proc != NULL)
				wake[nwake++] = service_shared->devices[i].proc;
	SpinLockRelease(&service_shared->mutex);
	for (int i = 0; i < nwake; i++)
		SetLatch(&wake[i]->procLatch);
	return slotno;
}

/*
 * Wait until the job is done (true, *result a copy of the slot) or, while
 * still queued, until gpusort.service_queue_wait has passed or no device
 * is left to take it (false: withdrawn).  Answers cancels.
 */
static bool
wait_for_job(int slotno, uint64 job_id, ServiceSlot *result)
{
	ServiceSlot *slot = &service_shared->slots[slotno];
	TimestampTz start = GetCurrentTimestamp();

	for (;;)
	{
		ServiceSlotState state;
		bool		withdrawn = false;

		SpinLockAcquire(&service_shared->mutex);
		Assert(slot->job_id == job_id);
		state = slot->state;
		if (state == SLOT_DONE)
			*result = *slot;
		SpinLockRelease(&service_shared->mutex);
		if (state == SLOT_DONE)
			return true;
		if (state == SLOT_QUEUED &&
			(TimestampDifferenceExceeds(start, GetCurrentTimestamp(), gpusort_service_queue_wait) ||
			 !any_device_running()))
		{
			SpinLockAcquire(&service_shared->mutex);
			if (slot->state == SLOT_QUEUED)
			{
				slot->state = SLOT_FREE;
				withdrawn = true;
			}
			SpinLockRelease(&service_shared->mutex);
			if (withdrawn)
				return false;
			continue;			/* a device took it meanwhile */
		}
		poll_pause();
	}
}

/*
 * wait_for_job, and on a cancel or error the job withdrawn or abandoned and
 * the segment detached before the error goes on.
 */
static pg_noinline bool
wait_releasing(int slotno, uint64 job_id, dsm_segment *seg, ServiceSlot *result)
{
	bool		done = false;

	PG_TRY();
	{
		gpusort_phase_begin("device_sort");
		done = wait_for_job(slotno, job_id, result);
		if (done)
			gpusort_phase_begin("from_device");
	}
	PG_CATCH();
	{
		release_job(slotno, job_id);
		dsm_detach(seg);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return done;
}

GpuServiceOutcome
gpu_service_sort(const uint32 *const *words, int nwords, size_t n, uint32 *perm,
				 uint32 *tie_bits, GpuSortReorder *reorder, gpusort_algorithm algorithm,
				 GpuSortRun *run)
{
	Size		keys_bytes = service_keys_bytes(n, nwords, tie_bits != NULL);
	Size		bytes = keys_bytes;
	int			nfixed = 0;
	Size		m = 0;
	uint64	   *sizes = NULL;
	Size	   *in_at = NULL,
			   *out_at = NULL;
	dsm_segment *seg;
	uint32	   *base;
	uint64		job_id = 0;
	int			slotno;
	bool		done;
	ServiceSlot result;
	TimestampTz copied;

	if (!any_device_running())
	{
		run->device_reason = "the GPU service is not running";
		if (!warned_unavailable)
			ereport(WARNING,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("gpusort: the GPU service is not running, using the CPU path"),
					 errhint("The postmaster restarts it; sorts use the GPU again once it runs.")));
		warned_unavailable = true;
		return GPU_SERVICE_UNAVAILABLE;
	}
	warned_unavailable = false;
	if (!exit_callback_set)
	{
		before_shmem_exit(abandon_my_jobs, (Datum) 0);
		exit_callback_set = true;
	}

	if (!segment_fits(bytes))
	{
		run->device_reason = "too little shared memory (/dev/shm) for a GPU service job";
		return GPU_SERVICE_NO_SHARED_MEMORY;
	}
	/* columns the GPU also puts in order, where the segment has room for them */
	if (reorder != NULL && gpusort_reorder_describe(reorder))
	{
		Size		end;

		sizes = palloc(reorder->nfixed * sizeof(uint64));
		in_at = palloc(reorder->nfixed * sizeof(Size));
		out_at = palloc(reorder->nfixed * sizeof(Size));
		for (int c = 0; c < reorder->nfixed; c++)
			sizes[c] = reorder->fixed_size[c];
		service_fixed_offsets(keys_bytes, sizes, reorder->nfixed, n, reorder->m,
							  in_at, out_at, &end);
		if (segment_fits(end))
		{
			nfixed = reorder->nfixed;
			m = reorder->m;
			bytes = end;
		}
	}
	seg = dsm_create(bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	if (seg == NULL)
	{
		run->device_reason = "no shared memory segment left for a GPU service job";
		return GPU_SERVICE_NO_SHARED_MEMORY;
	}
	base = dsm_segment_address(seg);
	gpusort_phase_begin("to_device");
	copied = GetCurrentTimestamp();
	for (int w = 0; w < nwords; w++)
	{
		memcpy(base + (Size) w * n, words[w], n * sizeof(uint32));
		CHECK_FOR_INTERRUPTS();
	}
	if (nfixed > 0)
	{
		memcpy((char *) base + keys_bytes, sizes, nfixed * sizeof(uint64));
		for (int c = 0; c < nfixed; c++)
		{
			memcpy((char *) base + in_at[c], reorder->fixed_in[c], n * sizes[c]);
			CHECK_FOR_INTERRUPTS();
		}
	}
	run->to_device_ms = (double) (GetCurrentTimestamp() - copied) / 1000.0;

	slotno = queue_job(seg, n, nwords, tie_bits != NULL, nfixed, m, algorithm, &job_id);
	if (slotno < 0)
	{
		dsm_detach(seg);
		run->device_reason = "the GPU service's queue is full";
		return GPU_SERVICE_NOT_PLACED;
	}
	done = wait_releasing(slotno, job_id, seg, &result);

	if (!done)
	{
		dsm_detach(seg);
		run->device_reason = "no GPU of the service took the job within gpusort.service_queue_wait";
		return GPU_SERVICE_NOT_PLACED;
	}
	if (result.status == GPUSORT_OK)
	{
		const uint32 *out = base + (Size) nwords * n;

		copied = GetCurrentTimestamp();
		memcpy(perm, out, n * sizeof(uint32));
		if (tie_bits != NULL && result.ties_done)
			memcpy(tie_bits, out + n, GPUSORT_TIE_BITS_BYTES(n));
		if (nfixed > 0 && result.reordered && gpusort_reorder_outputs(reorder))
		{
			for (int c = 0; c < nfixed; c++)
				memcpy(reorder->fixed_out[c], (char *) base + out_at[c], m * sizes[c]);
			reorder->done = true;
		}
		run->from_device_ms = (double) (GetCurrentTimestamp() - copied) / 1000.0;
	}
	release_job(slotno, job_id);
	dsm_detach(seg);
	if (sizes != NULL)
	{
		pfree(sizes);
		pfree(in_at);
		pfree(out_at);
	}

	if (result.status != GPUSORT_OK)
	{
		ereport(WARNING,
				(errcode(result.status == GPUSORT_ERR_OUT_OF_MEMORY ?
						 ERRCODE_OUT_OF_MEMORY : ERRCODE_SYSTEM_ERROR),
				 errmsg("gpusort: the GPU service failed a sort of %zu rows, using the CPU path", n),
				 errdetail("%s: %s", gpusort_status_message(result.status), result.detail)));
		run->device_reason = "GPU failure";
		return GPU_SERVICE_FAILED;
	}

	SpinLockAcquire(&service_shared->mutex);
	strlcpy(device_names[result.device], service_shared->devices[result.device].name,
			sizeof(device_names[result.device]));
	SpinLockRelease(&service_shared->mutex);
	run->on_gpu = true;
	run->via_service = true;
	run->service_device = result.device;
	run->queue_ms = result.queue_ms;
	run->device_name = device_names[result.device];
	run->algorithm = gpusort_algorithm_name(result.timing.algorithm);
	strlcpy(run->algorithm_reason, result.timing.algorithm_reason, sizeof(run->algorithm_reason));
	run->passes = result.timing.digit_passes;
	run->to_device_ms += result.timing.to_device_ms;
	run->sort_ms = result.timing.sort_ms;
	run->from_device_ms += result.timing.from_device_ms;
	run->tie_bits_done = tie_bits != NULL && result.ties_done;
	return GPU_SERVICE_SORTED;
}

/*
 * gpusort_stat(): one row per GPU of the service, and one for the jobs
 * that took the CPU path because the service could not run them.  No rows
 * where gpusort is not in shared_preload_libraries.
 */
PG_FUNCTION_INFO_V1(gpusort_stat);

Datum
gpusort_stat(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ServiceShared *copy;

	InitMaterializedSRF(fcinfo, 0);
	if (service_shared == NULL)
		return (Datum) 0;
	/* the counters, devices and each slot's state and device (not its result) */
	copy = palloc(sizeof(ServiceShared));
	SpinLockAcquire(&service_shared->mutex);
	memcpy(copy, service_shared, offsetof(ServiceShared, slots));
	for (int i = 0; i < SERVICE_SLOTS; i++)
	{
		copy->slots[i].state = service_shared->slots[i].state;
		copy->slots[i].device = service_shared->slots[i].device;
	}
	SpinLockRelease(&service_shared->mutex);

	for (int d = 0; d < Max(copy->ndevices, 0); d++)
	{
		ServiceDevice *dev = &copy->devices[d];
		Datum		values[13];
		bool		nulls[13] = {0};
		int			queued = 0,
					running = 0;

		for (int i = 0; i < SERVICE_SLOTS; i++)
		{
			if (copy->slots[i].state == SLOT_QUEUED)
				queued++;
			else if ((copy->slots[i].state == SLOT_RUNNING ||
					  copy->slots[i].state == SLOT_ABANDONED) && copy->slots[i].device == d)
				running++;
		}
		values[0] = Int32GetDatum(d);
		values[1] = CStringGetTextDatum(dev->name[0] ? dev->name : "(not open)");
		values[2] = Int32GetDatum(dev->pid);
		nulls[2] = dev->pid == 0;
		values[3] = Int64GetDatum((int64) dev->jobs);
		values[4] = Int64GetDatum((int64) dev->rows);
		values[5] = Int64GetDatum((int64) dev->bytes);
		values[6] = Float8GetDatum(dev->queue_wait_ms);
		values[7] = Int32GetDatum(queued);	/* the queue is shared by the devices */
		values[8] = Int32GetDatum(running);
		values[9] = Int64GetDatum((int64) (dev->total_bytes - Min(dev->free_bytes, dev->total_bytes)));
		values[10] = Int64GetDatum((int64) dev->total_bytes);
		values[11] = Int64GetDatum((int64) dev->failures);
		values[12] = Int64GetDatum((int64) dev->restarts);
		nulls[9] = nulls[10] = dev->total_bytes == 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	{
		Datum		values[13];
		bool		nulls[13];

		memset(nulls, true, sizeof(nulls));
		values[1] = CStringGetTextDatum("CPU path");
		values[3] = Int64GetDatum((int64) copy->fallback_jobs);
		values[4] = Int64GetDatum((int64) copy->fallback_rows);
		nulls[1] = nulls[3] = nulls[4] = false;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(copy);
	return (Datum) 0;
}
