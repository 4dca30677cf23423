/*
 * big_alloc.c -- allocation of GpuSort's large arrays.
 */
#include "postgres.h"

#include <sys/mman.h>

#include "utils/memutils.h"

#include "big_alloc.h"

/* blocks from this size on are worth huge pages */
#define HUGE_PAGE_SIZE ((Size) 2 * 1024 * 1024)

static void
advise_huge_pages(void *p, Size bytes)
{
#ifdef MADV_HUGEPAGE
	uintptr_t	start = TYPEALIGN(HUGE_PAGE_SIZE, (uintptr_t) p);
	uintptr_t	end = TYPEALIGN_DOWN(HUGE_PAGE_SIZE, (uintptr_t) p + bytes);

	/* only a hint: where the kernel says no, small pages serve as before */
	if (end > start)
		(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
#endif
}

void *
gpusort_alloc_big(MemoryContext cxt, Size bytes)
{
	void	   *p = MemoryContextAllocExtended(cxt, Max(bytes, 1),
											   MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);

	if (p != NULL && bytes >= 2 * HUGE_PAGE_SIZE)
		advise_huge_pages(p, bytes);
	return p;
}

void *
gpusort_realloc_big(void *p, Size old_bytes, Size bytes)
{
	void	   *q;

	/* repalloc_extended, which returns NULL instead of raising, came in 16 */
#if PG_VERSION_NUM >= 160000
	q = repalloc_extended(p, Max(bytes, 1), MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (q != NULL && bytes >= 2 * HUGE_PAGE_SIZE)
		advise_huge_pages(q, bytes);
#else
	/* advised before the copy writes it, so that all of it can be huge pages */
	q = gpusort_alloc_big(GetMemoryChunkContext(p), bytes);
	if (q != NULL)
	{
		memcpy(q, p, Min(old_bytes, bytes));
		pfree(p);
	}
#endif
	return q;
}

void *
gpusort_alloc_huge(size_t bytes)
{
	void	   *p = gpusort_alloc_big(CurrentMemoryContext, bytes);

	if (p == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Failed on request of size %zu in memory context \"%s\".",
						   bytes, CurrentMemoryContext->name)));
	return p;
}
