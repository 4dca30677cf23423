/*
 * run_threads.c -- one function run on the parts of a piece of work by
 * threads of this process (see run_threads.h).
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

#include "run_threads.h"

typedef struct ThreadStart
{
	ThreadPartFn fn;
	void	   *part;
} ThreadStart;

static void *
thread_main(void *arg)
{
	ThreadStart *start = (ThreadStart *) arg;

	start->fn(start->part);
	return NULL;
}

void
run_thread_parts(ThreadPartFn fn, void *parts, size_t part_size, int nparts)
{
	pthread_t	threads[RUN_THREADS_MAX];
	ThreadStart starts[RUN_THREADS_MAX];
	bool		started[RUN_THREADS_MAX];
	sigset_t	all,
				old;
	bool		masked;

	if (nparts > RUN_THREADS_MAX)
		nparts = RUN_THREADS_MAX;
	sigfillset(&all);
	masked = pthread_sigmask(SIG_SETMASK, &all, &old) == 0;
	for (int t = 1; t < nparts; t++)
	{
		starts[t].fn = fn;
		starts[t].part = (char *) parts + t * part_size;
		started[t] = masked && pthread_create(&threads[t], NULL, thread_main, &starts[t]) == 0;
	}
	if (masked)
		(void) pthread_sigmask(SIG_SETMASK, &old, NULL);
	fn(parts);
	for (int t = 1; t < nparts; t++)
	{
		if (started[t])
			(void) pthread_join(threads[t], NULL);
		else
			fn((char *) parts + t * part_size);
	}
}
