/*
 * device_opener.c -- the GPU opened in a thread of its own (device_opener.h).
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"

#include "device_opener.h"
#include "pg_compat.h"

typedef struct Opener
{
	pthread_t	thread;
	bool		running;		/* a thread was made and not yet joined */
	pg_atomic_uint32 done;		/* the thread has written result */
	DeviceOpenResult result;
} Opener;

static Opener opener;
static bool exit_callback_set = false;

/* Open device 0 and describe it, into *result (either thread). */
static void
open_device(DeviceOpenResult *result)
{
	gpusort_status st = gpusort_device_open(0);

	if (st == GPUSORT_OK)
		st = gpusort_device_get_info(0, &result->info);
	result->status = st;
	result->detail[0] = '\0';
	if (st != GPUSORT_OK)
		snprintf(result->detail, sizeof(result->detail), "%s: %s",
				 gpusort_status_message(st), gpusort_error_detail());
}

/*
 * The thread's cudaSetDevice(0) is its own; the backend's thread uses
 * device 0, the runtime's default, and so the same primary context.
 */
static void *
opener_main(void *arg)
{
	Opener	   *o = (Opener *) arg;

	open_device(&o->result);
	pg_write_barrier();
	pg_atomic_write_u32(&o->done, 1);
	return NULL;
}

/*
 * A backend that exits while the thread runs lets it finish first: the C
 * library's exit tears the CUDA runtime down, which must not race the
 * thread's opening of it.  This runs after the backend has left shared
 * memory (an on_proc_exit callback) and its last message has gone out;
 * the client's connection is shut down before the wait, so that a
 * pg_terminate_backend is answered at once, not when the open ends.
 */
static void
join_at_exit(int code, Datum arg)
{
	if (!opener.running)
		return;
	if (pg_atomic_read_u32(&opener.done) == 0 && client_socket() != PGINVALID_SOCKET)
		(void) shutdown(client_socket(), SHUT_RDWR);
	(void) pthread_join(opener.thread, NULL);
	opener.running = false;
}

void
device_opener_start(void)
{
	sigset_t	all,
				old;

	if (opener.running)
		return;
	if (!exit_callback_set)
	{
		on_proc_exit(join_at_exit, (Datum) 0);
		exit_callback_set = true;
	}
	pg_atomic_init_u32(&opener.done, 0);
	sigfillset(&all);
	if (pthread_sigmask(SIG_SETMASK, &all, &old) != 0)
		return;
	opener.running = pthread_create(&opener.thread, NULL, opener_main, &opener) == 0;
	(void) pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void
device_opener_wait(DeviceOpenResult *result)
{
	device_opener_start();
	if (!opener.running)
	{
		/* no thread to be had: open it here */
		open_device(result);
		return;
	}
	while (pg_atomic_read_u32(&opener.done) == 0)
	{
		CHECK_FOR_INTERRUPTS();
		pg_usleep(1000L);
	}
	pg_read_barrier();
	(void) pthread_join(opener.thread, NULL);
	opener.running = false;
	*result = opener.result;
}
