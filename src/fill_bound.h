/*
 * fill_bound.h -- the rows that can still be in a bounded sort's result
 * (fill_bound.c).
 *
 * Under ORDER BY ... LIMIT n (the bound: LIMIT + OFFSET), a row can be
 * left out as soon as n rows already read sort strictly before it.  Each
 * process that reads rows for a bounded GpuSort -- its parallel workers
 * and the leader's share of the scan -- keeps the ranks of the rows it let
 * through and, each time it holds 2n of them, the n-th smallest becomes
 * its cut: a row ranked above the cut is dropped where it is read, so it
 * is neither stored nor sent up.  The processes share the lowest cut any
 * of them found (an atomic in the fill's shared area), so each drops rows
 * by what all have seen.
 *
 * A rank is 64 bits that never decrease along the sort order: the first
 * key's leading code words (fill_bound_rank).  Rows whose ranks tie with
 * the cut are kept, since the words may not tell them apart; a row ranked
 * strictly above the cut sorts strictly after the n rows ranked at or
 * below it, so it cannot be among the first n.  The GpuSort then sorts
 * only the rows let through, with the bound.
 */
#ifndef GPUSORT_FILL_BOUND_H
#define GPUSORT_FILL_BOUND_H

#include "postgres.h"

#include "port/atomics.h"

typedef struct FillBound FillBound;

/* A cut no rank is above: every row is let through. */
#define FILL_BOUND_NO_CUT PG_UINT64_MAX

/*
 * The largest bound filtered: the ranks take up to 16 bytes a row of the
 * bound in each process (256 MB here).
 */
#define FILL_BOUND_MAX ((int64) 16 * 1024 * 1024)

/*
 * A filter for a bound of n rows, in CurrentMemoryContext; shared_cut: the
 * cut all processes share (FILL_BOUND_NO_CUT at first), or NULL for one
 * process alone.  NULL (no filter) unless 0 < n <= FILL_BOUND_MAX.
 */
extern FillBound *fill_bound_create(int64 n, pg_atomic_uint64 *shared_cut);

/* Can a row of this rank still be in the result?  If so it is counted. */
extern bool fill_bound_admit(FillBound *fb, uint64 rank);

/* The rows are all read: take a cut from those let through since the last. */
extern void fill_bound_finish(FillBound *fb);

/*
 * The cut now (the lower of this process's and the shared one): rows
 * ranked above it cannot be in the result, even those let through before.
 */
extern uint64 fill_bound_cut(FillBound *fb);

/* Rows dropped so far. */
extern uint64 fill_bound_dropped(const FillBound *fb);

extern void fill_bound_free(FillBound *fb);

/*
 * The rank of a row by its first key: NULL-ness (null, nulls_first) and,
 * if not NULL, the leading words of its code (nw of them, as
 * gpusort_encode_words gives them).
 */
static inline uint64
fill_bound_rank(bool null, bool nulls_first, const uint32 *code, int nw)
{
	if (null)
		return nulls_first ? 0 : PG_UINT64_MAX;
	return ((uint64) code[0] << 32) | (nw > 1 ? code[1] : 0);
}

#endif
