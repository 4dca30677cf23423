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
	MinimalTuple *tuples;		/* row number -> tuple */
	Size		ntuples;
	Size		capacity;
	Size		bytes;			/* memory taken so far */
} TupleStore;

extern void tuple_store_init(TupleStore *store, MemoryContext cxt);

/* Index room for at least rows rows; false (store unchanged) if memory ran out. */
extern bool tuple_store_reserve(TupleStore *store, Size rows);

/* Copy a slot's row into the store, with as few copies as its type allows. */
extern bool tuple_store_add_slot(TupleStore *store, TupleTableSlot *slot);

#endif
