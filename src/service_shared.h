/*
 * service_shared.h -- the GPU service's shared memory (gpu_service.h):
 * one entry per GPU and a fixed array of job slots, under one spinlock.
 *
 * A slot's life:
 *   FREE -> QUEUED       a backend fills it in (its DSM segment holds the
 *                        key words) and wakes the devices' workers
 *   QUEUED -> RUNNING    a device's worker takes it (oldest first, if it
 *                        fits the device's free memory)
 *   QUEUED -> FREE       the backend withdraws it (cancel, error, exit,
 *                        or no device took it within gpusort.service_queue_wait)
 *   RUNNING -> DONE      the worker wrote the result (or a failure) and set
 *                        the backend's latch
 *   RUNNING -> ABANDONED the backend left meanwhile; the worker frees the
 *                        slot when the job ends (a kernel is not stopped midway)
 *   DONE -> FREE         the backend read the result, or left
 * The backend that owns a slot detaches its segment as it frees or
 * abandons it; the worker attaches it only while RUNNING.  A worker that
 * exits (terminated, or a device failure) marks its RUNNING slot DONE with
 * a failure, so no backend waits on a worker that is gone.
 */
#ifndef GPUSORT_SERVICE_SHARED_H
#define GPUSORT_SERVICE_SHARED_H

#include "postgres.h"

#include "storage/dsm.h"
#include "storage/proc.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "sort_engine.h"
#include "../kernels/gpusort_kernels.h"

/* GPUs one server's service runs, at most */
#define SERVICE_MAX_DEVICES 16

/* jobs queued or running at once; a backend finding none free takes the CPU path */
#define SERVICE_SLOTS 128

typedef enum ServiceSlotState
{
	SLOT_FREE = 0,
	SLOT_QUEUED,
	SLOT_RUNNING,
	SLOT_DONE,
	SLOT_ABANDONED
} ServiceSlotState;

typedef struct ServiceSlot
{
	ServiceSlotState state;
	uint64		job_id;			/* unique per job: the owner's check that the slot is still its own */
	PGPROC	   *owner;			/* the backend, for its latch */
	int			owner_pid;
	dsm_handle	segment;		/* key words, then perm, then tie bits */
	Size		n;
	int			nwords;
	bool		want_ties;
	int			nfixed;			/* columns to put in order after the sort (0: none) */
	Size		m;				/* ... their first m rows */
	gpusort_algorithm algorithm;	/* gpusort.algorithm's choice */
	Size		device_bytes;	/* gpusort_job_device_bytes(n, nwords) */
	TimestampTz queued_at;
	int			device;			/* the device running it, -1 before */
	int			runner_pid;		/* the worker running it (two workers may briefly claim one device) */
	/* the result, written by the worker before DONE */
	gpusort_status status;
	bool		ties_done;
	bool		reordered;		/* the columns' sorted copies were written */
	double		queue_ms;
	gpusort_timing timing;
	char		detail[256];
} ServiceSlot;

typedef struct ServiceDevice
{
	bool		launched;		/* its worker was registered (for ordinals past 0) */
	bool		started;		/* its worker has run (a start after that is a restart) */
	int			pid;			/* its worker, 0 when none runs */
	PGPROC	   *proc;			/* its worker, for its latch */
	bool		ready;			/* the device is open and takes jobs */
	char		name[256];
	int			cc_major;		/* compute capability (0.0 emulated) */
	int			cc_minor;
	int			multiprocessors;
	Size		total_bytes;
	Size		free_bytes;		/* after its last job */
	/* since the server started */
	uint64		jobs;
	uint64		rows;
	uint64		bytes;			/* key words sent */
	double		queue_wait_ms;
	uint64		failures;
	uint64		restarts;		/* worker starts after the first */
} ServiceDevice;

typedef struct ServiceShared
{
	slock_t		mutex;
	TimestampTz initialized_at; /* shared memory made (postmaster start or crash reset) */
	int			ndevices;		/* -1 until the first worker has counted them */
	uint64		next_job_id;
	uint64		fallback_jobs;	/* jobs backends ran on the CPU as the service could not */
	uint64		fallback_rows;
	ServiceDevice devices[SERVICE_MAX_DEVICES];
	ServiceSlot slots[SERVICE_SLOTS];
} ServiceShared;

/* NULL unless gpusort was preloaded (service_client.c sets it at shared-memory startup) */
extern ServiceShared *service_shared;

/*
 * A job's segment: the key words (word w of the n rows at w * n), the
 * permutation, the tie bits, then for a reorder (service_fixed_*) the
 * columns' element sizes, each column's n values, and each column's first
 * m values in sorted order, every part 8-byte aligned.
 */
static inline Size
service_keys_bytes(Size n, int nwords, bool ties)
{
	return MAXALIGN(((Size) nwords + 1) * n * sizeof(uint32) +
					(ties ? GPUSORT_TIE_BITS_BYTES(n) : 0));
}

/* offsets of column c's input and output, past the keys; *end: the segment's size */
static inline void
service_fixed_offsets(Size keys_bytes, const uint64 *sizes, int nfixed, Size n, Size m,
					  Size *in, Size *out, Size *end)
{
	Size		at = keys_bytes + MAXALIGN(nfixed * sizeof(uint64));

	for (int c = 0; c < nfixed; c++)
	{
		in[c] = at;
		at += MAXALIGN(n * sizes[c]);
	}
	for (int c = 0; c < nfixed; c++)
	{
		out[c] = at;
		at += MAXALIGN(m * sizes[c]);
	}
	*end = at;
}

/* the background worker's entry point (service_worker.c) */
extern PGDLLEXPORT void gpusort_service_main(Datum main_arg);

/* register the worker of one device ordinal (service_worker.c); dynamic past postmaster start */
extern bool service_register_worker(int ordinal, bool dynamic);

#endif
