/*
 * tuple_reorder.c -- a tuple store's sorted rows copied out in their order
 * (see tuple_reorder.h).
 *
 * Two passes over the permutation, each cut into slices of SLICE_ROWS rows
 * that the threads share evenly: the first reads every row's length (its
 * first cache line) and leaves it in the result's entry; the calling thread
 * then turns the lengths into places in one block; the second copies each
 * row to its place.  Both prefetch the rows they will read PREFETCH_AHEAD
 * rows ahead (the index entry three steps ahead, the tuple's first line two,
 * the rest of it, by the length that line holds, one), so that a thread has
 * many misses in flight.  The threads write only their own entries and
 * places, and are joined before the calling thread checks for a cancel.
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>

#include "miscadmin.h"

#include "big_alloc.h"
#include "tuple_reorder.h"

/* rows between two interrupt checks: about 50 ms of copying at most */
#define SLICE_ROWS ((Size) 1 << 20)
#define MAX_THREADS 16
#define PREFETCH_AHEAD 16

typedef struct ReorderPart
{
	MinimalTuple *tuples;
	const uint32 *perm;
	MinimalTuple *ordered;		/* pass 1: lengths; pass 2: places */
	Size		from;
	Size		to;
	bool		copy;			/* the pass: false 1, true 2 */
	Size		bytes;			/* pass 1: the part's copies' bytes */
} ReorderPart;

/* Prefetch what row i of the part will read, at the step `ahead` says. */
static inline void
prefetch_row(const ReorderPart *p, Size i, int ahead)
{
	MinimalTuple t;

	if (i >= p->to)
		return;
	if (ahead == 3)
	{
		__builtin_prefetch(&p->tuples[p->perm[i]]);
		return;
	}
	t = p->tuples[p->perm[i]];
	if (ahead == 2 || !p->copy)
	{
		__builtin_prefetch(t);
		return;
	}
	/* the first line was prefetched a step ago: t_len is in cache */
	for (Size off = 64; off < t->t_len + ((uintptr_t) t & 63); off += 64)
		__builtin_prefetch((char *) t + off);
}

static void *
run_part(void *arg)
{
	ReorderPart *p = (ReorderPart *) arg;
	Size		bytes = 0;

	for (Size i = p->from; i < p->to; i++)
	{
		MinimalTuple t;

		prefetch_row(p, i + 3 * PREFETCH_AHEAD, 3);
		prefetch_row(p, i + 2 * PREFETCH_AHEAD, 2);
		prefetch_row(p, i + PREFETCH_AHEAD, 1);
		t = p->tuples[p->perm[i]];
		if (p->copy)
			memcpy(p->ordered[i], t, t->t_len);
		else
		{
			Size		len = MAXALIGN(t->t_len);

			p->ordered[i] = (MinimalTuple) (uintptr_t) len;
			bytes += len;
		}
	}
	p->bytes = bytes;
	return NULL;
}

/*
 * Run the parts, parts[0] in this thread and each other one in a thread of
 * its own (here too where no thread could be started); all are done on
 * return.  The threads block every signal, so that the backend's handlers
 * run only in this thread.
 */
static void
run_parts(ReorderPart *parts, int nparts)
{
	pthread_t	threads[MAX_THREADS];
	bool		started[MAX_THREADS];
	sigset_t	all,
				old;
	bool		masked;

	sigfillset(&all);
	masked = pthread_sigmask(SIG_SETMASK, &all, &old) == 0;
	for (int t = 1; t < nparts; t++)
		started[t] = masked && pthread_create(&threads[t], NULL, run_part, &parts[t]) == 0;
	if (masked)
		(void) pthread_sigmask(SIG_SETMASK, &old, NULL);
	run_part(&parts[0]);
	for (int t = 1; t < nparts; t++)
	{
		if (started[t])
			(void) pthread_join(threads[t], NULL);
		else
			run_part(&parts[t]);
	}
}

/* One pass over rows [0, n), a slice at a time; the bytes the parts counted. */
static Size
run_pass(MinimalTuple *tuples, const uint32 *perm, MinimalTuple *ordered, Size n,
		 int nthreads, bool copy)
{
	ReorderPart parts[MAX_THREADS];
	Size		bytes = 0;

	for (Size s = 0; s < n; s += SLICE_ROWS)
	{
		Size		e = Min(n, s + SLICE_ROWS);
		int			nparts = (int) Min((Size) nthreads, e - s);

		for (int t = 0; t < nparts; t++)
		{
			parts[t].tuples = tuples;
			parts[t].perm = perm;
			parts[t].ordered = ordered;
			parts[t].from = s + (e - s) * t / nparts;
			parts[t].to = s + (e - s) * (t + 1) / nparts;
			parts[t].copy = copy;
			parts[t].bytes = 0;
		}
		run_parts(parts, nparts);
		for (int t = 0; t < nparts; t++)
			bytes += parts[t].bytes;
		CHECK_FOR_INTERRUPTS();
	}
	return bytes;
}

MinimalTuple *
tuple_reorder(MemoryContext cxt, MinimalTuple *tuples, const uint32 *perm, Size n,
			  int nthreads, Size room, Size *bytes)
{
	MinimalTuple *ordered;
	char	   *block;
	Size		total,
				off = 0;

	*bytes = 0;
	nthreads = Max(1, Min(nthreads, MAX_THREADS));
	if (n == 0 || n * sizeof(MinimalTuple) > room)
		return NULL;
	ordered = gpusort_alloc_big_lazy(cxt, n * sizeof(MinimalTuple));
	if (ordered == NULL)
		return NULL;
	total = run_pass(tuples, perm, ordered, n, nthreads, false);
	if (total + n * sizeof(MinimalTuple) > room ||
		(block = gpusort_alloc_big_lazy(cxt, total)) == NULL)
	{
		pfree(ordered);
		return NULL;
	}
	for (Size i = 0; i < n; i++)
	{
		Size		len = (Size) (uintptr_t) ordered[i];

		ordered[i] = (MinimalTuple) (block + off);
		off += len;
	}
	(void) run_pass(tuples, perm, ordered, n, nthreads, true);
	*bytes = total + n * sizeof(MinimalTuple);
	return ordered;
}
