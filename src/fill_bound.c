/*
 * fill_bound.c -- the rows that can still be in a bounded sort's result
 * (see fill_bound.h).
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "fill_bound.h"

struct FillBound
{
	int64		n;				/* the bound */
	uint64		cut;			/* this process's lowest cut */
	pg_atomic_uint64 *shared_cut;
	uint64	   *ranks;			/* ranks of rows let through since ... */
	Size		count;			/* ... the last cut: the n at or below it first */
	Size		cap;			/* allocated */
	Size		full;			/* 2n: when the next cut is taken */
	uint64		dropped;
};

FillBound *
fill_bound_create(int64 n, pg_atomic_uint64 *shared_cut)
{
	FillBound  *fb;

	if (n <= 0 || n > FILL_BOUND_MAX)
		return NULL;
	fb = palloc0(sizeof(FillBound));
	fb->n = n;
	fb->cut = FILL_BOUND_NO_CUT;
	fb->shared_cut = shared_cut;
	fb->full = (Size) n * 2;
	/* grown as rows come, so that a bound above the row count costs little */
	fb->cap = Min(fb->full, (Size) 4096);
	fb->ranks = MemoryContextAllocHuge(CurrentMemoryContext, fb->cap * sizeof(uint64));
	return fb;
}

/* Put the k-th smallest (from 0) of a[0..n) at a[k], smaller ones before it. */
static void
select_kth(uint64 *a, Size n, Size k)
{
	Size		lo = 0,
				hi = n - 1;

	while (hi > lo)
	{
		Size		mid = lo + (hi - lo) / 2;
		uint64		pivot,
					t;
		Size		i,
					j;

		CHECK_FOR_INTERRUPTS();
		/* median of three as the pivot */
		if (a[mid] < a[lo])
		{
			t = a[mid]; a[mid] = a[lo]; a[lo] = t;
		}
		if (a[hi] < a[lo])
		{
			t = a[hi]; a[hi] = a[lo]; a[lo] = t;
		}
		if (a[hi] < a[mid])
		{
			t = a[hi]; a[hi] = a[mid]; a[mid] = t;
		}
		pivot = a[mid];
		i = lo;
		j = hi;
		/* Hoare's partition: [lo, j] <= pivot <= [i, hi] */
		for (;;)
		{
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i >= j)
				break;
			t = a[i]; a[i] = a[j]; a[j] = t;
			i++;
			j--;
		}
		if (i == j)
		{
			/* a[i] == pivot, in its final place */
			if (k == i)
				return;
			if (k < i)
				hi = i - 1;
			else
				lo = i + 1;
		}
		else if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
}

/* The n-th smallest rank let through becomes the cut; keep those n. */
static void
take_cut(FillBound *fb)
{
	uint64		cut;
	uint64		seen;

	select_kth(fb->ranks, fb->count, (Size) fb->n - 1);
	cut = fb->ranks[fb->n - 1];
	fb->count = (Size) fb->n;
	if (cut < fb->cut)
		fb->cut = cut;
	if (fb->shared_cut == NULL)
		return;
	/* the shared cut becomes the lower of the two */
	seen = pg_atomic_read_u64(fb->shared_cut);
	while (fb->cut < seen)
	{
		if (pg_atomic_compare_exchange_u64(fb->shared_cut, &seen, fb->cut))
			break;
	}
}

bool
fill_bound_admit(FillBound *fb, uint64 rank)
{
	if (rank > fill_bound_cut(fb))
	{
		fb->dropped++;
		return false;
	}
	if (fb->count == fb->cap)
	{
		if (fb->cap < fb->full)
		{
			fb->cap = Min(fb->full, fb->cap * 2);
			fb->ranks = repalloc_huge(fb->ranks, fb->cap * sizeof(uint64));
		}
		else
			take_cut(fb);
	}
	fb->ranks[fb->count++] = rank;
	return true;
}

void
fill_bound_finish(FillBound *fb)
{
	if (fb->count > (Size) fb->n)
		take_cut(fb);
}

uint64
fill_bound_cut(FillBound *fb)
{
	if (fb->shared_cut != NULL)
	{
		uint64		shared = pg_atomic_read_u64(fb->shared_cut);

		if (shared < fb->cut)
			fb->cut = shared;
	}
	return fb->cut;
}

uint64
fill_bound_dropped(const FillBound *fb)
{
	return fb->dropped;
}

void
fill_bound_free(FillBound *fb)
{
	if (fb == NULL)
		return;
	pfree(fb->ranks);
	pfree(fb);
}
