/*
 * tuple_store.c -- GpuSort's in-memory tuple store.
 *
 * Tuples are copied back to back into 8 MB chunks (no per-tuple allocation
 * header), and a row-number index points at them.  Allocation failures are
 * reported, not raised, so that the node can fall back to tuplesort.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "tuple_store.h"

#define CHUNK_SIZE ((Size) 8 * 1024 * 1024)

void
tuple_store_init(TupleStore *store, MemoryContext cxt)
{
	memset(store, 0, sizeof(*store));
	store->cxt = cxt;
}

bool
tuple_store_add(TupleStore *store, MinimalTuple tup)
{
	Size		len = MAXALIGN(tup->t_len);
	char	   *dest;

	if (store->ntuples == store->capacity)
	{
		Size		newcap = store->capacity ? store->capacity * 2 : 1024;
		MinimalTuple *grown;

		grown = MemoryContextAllocExtended(store->cxt, newcap * sizeof(MinimalTuple),
										   MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
		if (grown == NULL)
			return false;
		if (store->tuples)
		{
			memcpy(grown, store->tuples, store->ntuples * sizeof(MinimalTuple));
			pfree(store->tuples);
		}
		store->bytes += (newcap - store->capacity) * sizeof(MinimalTuple);
		store->tuples = grown;
		store->capacity = newcap;
	}
	if (store->chunk == NULL || store->chunk_used + len > store->chunk_size)
	{
		Size		size = Max(CHUNK_SIZE, len);

		store->chunk = MemoryContextAllocExtended(store->cxt, size,
												  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
		if (store->chunk == NULL)
			return false;
		store->chunk_size = size;
		store->chunk_used = 0;
		store->bytes += size;
	}
	dest = store->chunk + store->chunk_used;
	memcpy(dest, tup, tup->t_len);
	store->chunk_used += len;
	store->tuples[store->ntuples++] = (MinimalTuple) dest;
	return true;
}
