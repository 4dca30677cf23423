/*
 * big_alloc.h -- memory for GpuSort's large arrays (row stores, key words,
 * permutations), which may exceed 1 GB and are read in random order.
 *
 * Large blocks are advised to the kernel as transparent-huge-page
 * candidates: random access into them then misses the TLB far less, and
 * each fault maps 2 MB.  But the first write to such a page may stall while
 * the kernel compacts memory to find a free huge page: hundreds of
 * milliseconds for a few hundred MB on a fragmented host.  A loop that
 * scatters its writes over a fresh block (a radix pass, a copy from the
 * GPU) meets every such stall between two of its interrupt checks, so
 * blocks that are written whole are faulted in where they are allocated, a
 * huge page at a time, answering a cancel between pages.
 */
#ifndef GPUSORT_BIG_ALLOC_H
#define GPUSORT_BIG_ALLOC_H

#include "postgres.h"

/*
 * bytes (> 1 GB allowed) in cxt, or NULL if memory ran out; for arrays
 * the caller writes whole: a large block's pages are faulted in here
 * (CHECK_FOR_INTERRUPTS between them, so this may raise a cancel).
 */
extern void *gpusort_alloc_big(MemoryContext cxt, Size bytes);

/*
 * The same for stores that are filled in order and may never be filled
 * (sized from an estimate): pages are faulted as the writes reach them.
 */
extern void *gpusort_alloc_big_lazy(MemoryContext cxt, Size bytes);

/*
 * p (from either allocator) grown or shrunk to bytes, its first old_bytes
 * kept; NULL, with p unchanged, if memory ran out.  From
 * PostgreSQL 16 on a large block is resized where it lies when the C
 * library can (mremap): neither copied nor touched anew; before 16 it is
 * copied a slice at a time, answering a cancel between slices.
 */
extern void *gpusort_realloc_big(void *p, Size old_bytes, Size bytes);

/*
 * memcpy of bytes into a block of ours that may be fresh, a huge page at a
 * time, answering a cancel between them.
 */
extern void gpusort_copy_big(void *dest, const void *src, Size bytes);

/* memset(dest, 0, bytes) the same way. */
extern void gpusort_zero_big(void *dest, Size bytes);

/* gpusort_alloc_big in CurrentMemoryContext, raising an error if memory ran out. */
extern void *gpusort_alloc_huge(size_t bytes);

#endif
