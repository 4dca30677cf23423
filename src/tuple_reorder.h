/*
 * tuple_reorder.h -- a tuple store's sorted rows copied out in their order.
 *
 * After the sort, the rows of a tuple store are handed up in permutation
 * order: at random over the store (and over the workers' chunks), at least
 * one cache miss a row, in the one process that hands them up while the
 * nodes above do their own work per row.  Copying them once, in sorted
 * order, into one block -- with several threads, each keeping many misses
 * in flight, and doing nothing but copy -- makes the emission a sequential
 * read.  The threads call no PostgreSQL function and block every signal;
 * the backend answers cancels between slices of rows.
 */
#ifndef GPUSORT_TUPLE_REORDER_H
#define GPUSORT_TUPLE_REORDER_H

#include "postgres.h"

#include "access/htup_details.h"

/*
 * tuples[perm[i]] for i in [0, n), copied back to back into a block of cxt
 * with nthreads threads (the calling one among them); the result's entry i
 * is row i's copy.  NULL, nothing allocated, if memory ran out or the copies
 * and their index would take more than room bytes.  *bytes: the memory the
 * copies and their index take.
 */
extern MinimalTuple *tuple_reorder(MemoryContext cxt, MinimalTuple *tuples, const uint32 *perm,
								   Size n, int nthreads, Size room, Size *bytes);

#endif
