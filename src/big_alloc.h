/*
 * big_alloc.h -- memory for GpuSort's large arrays (row stores, key words,
 * permutations), which may exceed 1 GB and are read in random order.
 */
#ifndef GPUSORT_BIG_ALLOC_H
#define GPUSORT_BIG_ALLOC_H

#include "postgres.h"

/*
 * bytes (> 1 GB allowed) in cxt, or NULL if memory ran out.  Large blocks
 * are advised to the kernel as transparent-huge-page candidates: random
 * access into them then misses the TLB far less.
 */
extern void *gpusort_alloc_big(MemoryContext cxt, Size bytes);

/*
 * p (from gpusort_alloc_big) grown or shrunk to bytes, its first old_bytes
 * kept; NULL, with p unchanged, if memory ran out.  From
 * PostgreSQL 16 on a large block is resized where it lies when the C
 * library can (mremap): neither copied nor touched anew.
 */
extern void *gpusort_realloc_big(void *p, Size old_bytes, Size bytes);

/* The same in CurrentMemoryContext, raising an error if memory ran out. */
extern void *gpusort_alloc_huge(size_t bytes);

#endif
