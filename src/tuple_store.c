/*
 * tuple_store.c -- GpuSort's in-memory tuple store.
 *
 * Tuples are copied back to back into chunks (no per-tuple allocation
 * header) that start at 1 MB and double up to 64 MB (or the store's
 * chunk_max, if less), and a row-number index points at them.  Allocation failures are reported, not raised, so that
 * the node can fall back to tuplesort.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "utils/memutils.h"

#include "big_alloc.h"
#include "tuple_store.h"

#define FIRST_CHUNK_SIZE ((Size) 1024 * 1024)
#define MAX_CHUNK_SIZE ((Size) 64 * 1024 * 1024)

void
tuple_store_init(TupleStore *store, MemoryContext cxt)
{
	memset(store, 0, sizeof(*store));
	store->cxt = cxt;
	store->chunk_max = MAX_CHUNK_SIZE;
}

void
tuple_store_limit_chunks(TupleStore *store, Size bytes)
{
	store->chunk_max = Max(Min(bytes, MAX_CHUNK_SIZE), 8 * 1024);
}

bool
tuple_store_reserve(TupleStore *store, Size rows)
{
	MinimalTuple *grown;

	if (rows <= store->capacity)
		return true;
	grown = store->tuples ? gpusort_realloc_big(store->tuples, store->ntuples * sizeof(MinimalTuple),
										  rows * sizeof(MinimalTuple)) :
		gpusort_alloc_big_lazy(store->cxt, rows * sizeof(MinimalTuple));
	if (grown == NULL)
		return false;
	store->bytes += (rows - store->capacity) * sizeof(MinimalTuple);
	store->tuples = grown;
	store->capacity = rows;
	return true;
}

bool
tuple_store_room(TupleStore *store, Size n)
{
	return store->ntuples + n <= store->capacity ||
		tuple_store_reserve(store, Max(store->ntuples + n, Max(store->capacity * 2, 1024)));
}

/* Room for len bytes of tuples in one piece, or NULL if memory ran out. */
static char *
reserve_bytes(TupleStore *store, Size len)
{
	char	   *dest;

	len = MAXALIGN(len);
	if (store->chunk == NULL || store->chunk_used + len > store->chunk_size)
	{
		Size		size = store->chunk_size == 0 ? Min(FIRST_CHUNK_SIZE, store->chunk_max) :
			Min(store->chunk_size * 2, store->chunk_max);

		size = Max(size, len);
		store->chunk = gpusort_alloc_big_lazy(store->cxt, size);
		if (store->chunk == NULL)
			return NULL;
		store->chunk_size = size;
		store->chunk_used = 0;
		store->bytes += size;
	}
	dest = store->chunk + store->chunk_used;
	store->chunk_used += len;
	return dest;
}

/* Room for a tuple of len bytes and its index entry, or NULL if memory ran out. */
static char *
reserve(TupleStore *store, Size len)
{
	char	   *dest;

	if (!tuple_store_room(store, 1))
		return NULL;
	dest = reserve_bytes(store, len);
	if (dest != NULL)
		store->tuples[store->ntuples++] = (MinimalTuple) dest;
	return dest;
}

/*
 * A virtual slot's row (a projection's) formed as a minimal tuple right
 * where reserve_fn puts it, as heap_form_minimal_tuple lays it out,
 * without forming it elsewhere first and copying.  NULL if no room.
 */
static char *
form_virtual(TupleTableSlot *slot, TupleReserveFn reserve_fn, void *arg)
{
	TupleDesc	desc = slot->tts_tupleDescriptor;
	bool		hasnull = false;
	Size		hoff,
				data_len;
	MinimalTuple tup;

	for (int i = 0; i < desc->natts && !hasnull; i++)
		hasnull = slot->tts_isnull[i];
	hoff = SizeofMinimalTupleHeader;
	if (hasnull)
		hoff += BITMAPLEN(desc->natts);
	hoff = MAXALIGN(hoff);
	data_len = heap_compute_data_size(desc, slot->tts_values, slot->tts_isnull);
	tup = (MinimalTuple) reserve_fn(arg, hoff + data_len);
	if (tup == NULL)
		return NULL;
	memset(tup, 0, hoff + data_len);
	tup->t_len = hoff + data_len;
	HeapTupleHeaderSetNatts(tup, desc->natts);
	tup->t_hoff = hoff + MINIMAL_TUPLE_OFFSET;
	heap_fill_tuple(desc, slot->tts_values, slot->tts_isnull, (char *) tup + hoff, data_len,
					&tup->t_infomask, hasnull ? tup->t_bits : NULL);
	return (char *) tup;
}

bool
tuple_copy_slot(TupleTableSlot *slot, TupleReserveFn reserve_fn, void *arg)
{
	bool		should_free;
	char	   *dest;

	if (TTS_IS_BUFFERTUPLE(slot) || TTS_IS_HEAPTUPLE(slot))
	{
		/* the row as it sits in the buffer, turned into a minimal tuple */
		HeapTuple	htup = ExecFetchSlotHeapTuple(slot, false, &should_free);
		uint32		len = htup->t_len - MINIMAL_TUPLE_OFFSET;

		dest = reserve_fn(arg, len);
		if (dest != NULL)
		{
			memcpy(dest, (char *) htup->t_data + MINIMAL_TUPLE_OFFSET, len);
			((MinimalTuple) dest)->t_len = len;
		}
		if (should_free)
			heap_freetuple(htup);
	}
	else if (TTS_IS_VIRTUAL(slot))
		dest = form_virtual(slot, reserve_fn, arg);
	else
	{
		MinimalTuple mtup = ExecFetchSlotMinimalTuple(slot, &should_free);

		dest = reserve_fn(arg, mtup->t_len);
		if (dest != NULL)
			memcpy(dest, mtup, mtup->t_len);
		if (should_free)
			pfree(mtup);
	}
	return dest != NULL;
}

static char *
reserve_in_store(void *arg, Size len)
{
	return reserve((TupleStore *) arg, len);
}

bool
tuple_store_add_slot(TupleStore *store, TupleTableSlot *slot)
{
	return tuple_copy_slot(slot, reserve_in_store, store);
}

bool
tuple_store_add_copies(TupleStore *store, const char *data, Size data_len,
					   const uint32 *offsets, Size n)
{
	char	   *dest;

	if (!tuple_store_room(store, n))
		return false;
	dest = reserve_bytes(store, data_len);
	if (dest == NULL)
		return false;
	memcpy(dest, data, data_len);
	for (Size i = 0; i < n; i++)
		store->tuples[store->ntuples++] = (MinimalTuple) (dest + offsets[i]);
	return true;
}

void
tuple_store_add_refs(TupleStore *store, const char *data, const uint32 *offsets, Size n)
{
	Assert(store->ntuples + n <= store->capacity);
	for (Size i = 0; i < n; i++)
		store->tuples[store->ntuples++] = (MinimalTuple) (data + offsets[i]);
}
