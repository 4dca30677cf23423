/*
 * tuple_store.h -- an append-only in-memory store of MinimalTuples, packed
 * into large chunks, addressed by row number.
 */
#ifndef GPUSORT_TUPLE_STORE_H
#define GPUSORT_TUPLE_STORE_H

#include "postgres.h"

#include "access/htup_details.h"
#include "executor/tuptable.h"

typedef struct TupleStore
{
	MemoryContext cxt;			/* everything below lives here */
	char	   *chunk;			/* current chunk */
	Size		chunk_used;
	Size		chunk_size;
	Size		chunk_max;		/* the largest chunk (tuple_store_limit_chunks) */
	MinimalTuple *tuples;		/* row number -> tuple */
	Size		ntuples;
	Size		capacity;
	Size		bytes;			/* memory taken so far */
} TupleStore;

extern void tuple_store_init(TupleStore *store, MemoryContext cxt);

/*
 * Chunks of at most bytes (at least 8 kB; a tuple larger than a chunk
 * gets its own): a node with a small budget counts chunks, not the rows
 * in them, against it.
 */
extern void tuple_store_limit_chunks(TupleStore *store, Size bytes);

/* Index room for at least rows rows; false (store unchanged) if memory ran out. */
extern bool tuple_store_reserve(TupleStore *store, Size rows);

/* Copy a slot's row into the store, with as few copies as its type allows. */
extern bool tuple_store_add_slot(TupleStore *store, TupleTableSlot *slot);

/*
 * Copy n tuples that lie in data_len bytes at data, tuple i at offsets[i]
 * (each MAXALIGNed), in one piece; false if memory ran out (the index may
 * have grown, nothing was added).
 */
extern bool tuple_store_add_copies(TupleStore *store, const char *data, Size data_len,
								   const uint32 *offsets, Size n);

/* Index room for n more tuples (doubling); false if memory ran out. */
extern bool tuple_store_room(TupleStore *store, Size n);

/*
 * Index n tuples that lie at data + offsets[i] where they are, without
 * copying them (tuple_store_room first): the caller keeps that memory
 * until the store is gone.
 */
extern void tuple_store_add_refs(TupleStore *store, const char *data,
								 const uint32 *offsets, Size n);

/*
 * Copy a slot's row as a MinimalTuple to where reserve_fn(arg, length) says
 * (with as few copies as the slot type allows); false, nothing copied, when
 * it says NULL.
 */
typedef char *(*TupleReserveFn) (void *arg, Size len);
extern bool tuple_copy_slot(TupleTableSlot *slot, TupleReserveFn reserve_fn, void *arg);

#endif
