/*
 * big_alloc.c -- allocation of GpuSort's large arrays (big_alloc.h).
 */
#include "postgres.h"

#include <sys/mman.h>

#include "miscadmin.h"
#include "utils/memdebug.h"
#include "utils/memutils.h"

#include "big_alloc.h"

/* blocks from this size on are worth huge pages */
#define HUGE_PAGE_SIZE ((Size) 2 * 1024 * 1024)
/* the smallest page a block may be mapped with */
#define SMALL_PAGE_SIZE ((Size) 4096)

static bool
is_big(Size bytes)
{
	return bytes >= 2 * HUGE_PAGE_SIZE;
}

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

/*
 * Write every page of [p, p + bytes) once, a huge page's worth between two
 * interrupt checks.  The contents stay undefined to the caller (and to
 * Valgrind).
 */
static void
fault_in(void *p, Size bytes)
{
	volatile char *c = (volatile char *) p;

	for (Size off = 0; off < bytes; off += SMALL_PAGE_SIZE)
	{
		if (off % HUGE_PAGE_SIZE == 0)
			CHECK_FOR_INTERRUPTS();
		c[off] = 0;
	}
	VALGRIND_MAKE_MEM_UNDEFINED(p, bytes);
}

void *
gpusort_alloc_big_lazy(MemoryContext cxt, Size bytes)
{
	void	   *p = MemoryContextAllocExtended(cxt, Max(bytes, 1),
											   MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);

	if (p != NULL && is_big(bytes))
		advise_huge_pages(p, bytes);
	return p;
}

void *
gpusort_alloc_big(MemoryContext cxt, Size bytes)
{
	void	   *p = gpusort_alloc_big_lazy(cxt, bytes);

	if (p != NULL && is_big(bytes))
	{
		/* a cancel here must not leave the block behind */
		PG_TRY();
		{
			fault_in(p, bytes);
		}
		PG_CATCH();
		{
			pfree(p);
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
	return p;
}

/*
 * Copy src into dest (src NULL: zero dest), one huge page between two
 * interrupt checks (gpusort_copy_big, gpusort_zero_big).
 */
static void
write_big(void *dest, const void *src, Size bytes)
{
	for (Size off = 0; off < bytes; off += HUGE_PAGE_SIZE)
	{
		Size		len = Min(HUGE_PAGE_SIZE, bytes - off);

		CHECK_FOR_INTERRUPTS();
		if (src != NULL)
			memcpy((char *) dest + off, (const char *) src + off, len);
		else
			memset((char *) dest + off, 0, len);
	}
}

void
gpusort_copy_big(void *dest, const void *src, Size bytes)
{
	write_big(dest, src, bytes);
}

void
gpusort_zero_big(void *dest, Size bytes)
{
	write_big(dest, NULL, bytes);
}

void *
gpusort_realloc_big(void *p, Size old_bytes, Size bytes)
{
	void	   *q;

	/* repalloc_extended, which returns NULL instead of raising, came in 16 */
#if PG_VERSION_NUM >= 160000
	q = repalloc_extended(p, Max(bytes, 1), MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (q != NULL && is_big(bytes))
		advise_huge_pages(q, bytes);
#else
	/* advised before the copy writes it, so that all of it can be huge pages */
	q = gpusort_alloc_big_lazy(GetMemoryChunkContext(p), bytes);
	if (q != NULL)
	{
		PG_TRY();
		{
			gpusort_copy_big(q, p, Min(old_bytes, bytes));
		}
		PG_CATCH();
		{
			pfree(q);
			PG_RE_THROW();
		}
		PG_END_TRY();
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
