/*
 * column_store.h -- GpuSort's in-memory store for rows whose columns are
 * all passed by value (int2/4/8, float4/8, date, timestamp, oid, bool, ...):
 * one Datum array per column, and a NULL-flag array for a column only once
 * it has held a NULL.  No tuples are formed going in and none are deformed
 * coming out; a row is handed up as a virtual tuple.
 */
#ifndef GPUSORT_COLUMN_STORE_H
#define GPUSORT_COLUMN_STORE_H

#include "postgres.h"

#include "executor/tuptable.h"

typedef struct ColumnStore
{
	MemoryContext cxt;			/* everything below lives here */
	int			natts;
	Datum	  **values;			/* [natts][capacity] */
	bool	  **isnull;			/* [natts][capacity]; NULL: no NULL yet */
	Size		nrows;
	Size		capacity;
	Size		bytes;			/* memory taken so far */
} ColumnStore;

/* Can rows of this descriptor go into a column store? */
extern bool column_store_fits(TupleDesc desc);

extern void column_store_init(ColumnStore *store, MemoryContext cxt, int natts);

/* Room for at least rows rows; false (store unchanged) if memory ran out. */
extern bool column_store_reserve(ColumnStore *store, Size rows);

/* Append the slot's row; false (nothing stored) if memory ran out. */
extern bool column_store_add_slot(ColumnStore *store, TupleTableSlot *slot);

/*
 * Append nrows rows given column-wise (isnull[c] NULL: no NULLs in column
 * c); false if memory ran out (then rows may be partly written but are not
 * counted).
 */
extern bool column_store_append(ColumnStore *store, const Datum *const *values,
								const bool *const *isnull, Size nrows);

/* Put row `row` into a virtual slot (cleared first). */
extern void column_store_get(const ColumnStore *store, Size row, TupleTableSlot *slot);

#endif
