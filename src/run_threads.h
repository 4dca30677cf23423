/*
 * run_threads.h -- one function run on the parts of a piece of work by
 * threads of this backend (run_threads.c).
 *
 * For work that calls no PostgreSQL function at all -- no palloc, no
 * elog, no catalog or interrupt check -- and touches only memory the
 * caller set up: copies, and comparisons by libraries that are safe to
 * call from several threads.  The threads block every signal, so that the
 * backend's signal handlers run only in its own thread, and are all
 * joined before run_thread_parts returns; the caller checks for
 * interrupts between calls (a piece of work is best cut into slices of a
 * few tens of milliseconds).
 */
#ifndef GPUSORT_RUN_THREADS_H
#define GPUSORT_RUN_THREADS_H

#include "postgres.h"

/* the most parts (threads) one call runs */
#define RUN_THREADS_MAX 16

typedef void (*ThreadPartFn) (void *part);

/*
 * fn on each of the nparts parts (part i at (char *) parts + i * part_size):
 * part 0 in this thread, each other one in a thread of its own (in this
 * thread too where no thread could be started).  All are done on return.
 */
extern void run_thread_parts(ThreadPartFn fn, void *parts, Size part_size, int nparts);

/*
 * The threads a query may use: the leader and the parallel workers the
 * session allows a Gather (max_parallel_workers_per_gather), at most
 * RUN_THREADS_MAX.
 */
extern int	run_threads_allowed(void);

#endif
