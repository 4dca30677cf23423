/*
 * run_threads.h -- one function run on the parts of a piece of work by
 * threads of this process (run_threads.c).  Plain C: the CPU radix sort's
 * test programs use it too.
 *
 * For work that calls no PostgreSQL function at all -- no palloc, no
 * elog, no catalog or interrupt check -- and touches only memory the
 * caller set up: copies, counts, and comparisons by libraries that are
 * safe to call from several threads.  The threads block every signal, so
 * that a backend's signal handlers run only in its own thread, and are all
 * joined before run_thread_parts returns; the caller checks for
 * interrupts between calls (a piece of work is best cut into slices of a
 * few tens of milliseconds).
 */
#ifndef GPUSORT_RUN_THREADS_H
#define GPUSORT_RUN_THREADS_H

#include <stddef.h>

/* the most parts (threads) one call runs */
#define RUN_THREADS_MAX 16

typedef void (*ThreadPartFn) (void *part);

/*
 * fn on each of the nparts parts (part i at (char *) parts + i * part_size),
 * 1 <= nparts <= RUN_THREADS_MAX: part 0 in this thread, each other one in
 * a thread of its own (in this thread too where no thread could be
 * started).  All are done on return.
 */
extern void run_thread_parts(ThreadPartFn fn, void *parts, size_t part_size, int nparts);

#endif
