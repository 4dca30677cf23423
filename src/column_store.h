/*
 * column_store.h -- GpuSort's in-memory store for rows whose columns are
 * all passed by value (int2/4/8, float4/8, date, timestamp, oid, bool, ...):
 * one array per column whose values take the column's own width (4 bytes
 * for an int4, not a whole Datum), and a NULL-flag array for a column only
 * once it has held a NULL.  No tuples are formed going in and none are
 * deformed coming out; a row is handed up as a virtual tuple.
 */
#ifndef GPUSORT_COLUMN_STORE_H
#define GPUSORT_COLUMN_STORE_H

#include "postgres.h"

#include "access/tupmacs.h"
#include "executor/tuptable.h"

typedef struct ColumnStore
{
	MemoryContext cxt;			/* everything below lives here */
	int			natts;
	int16	   *width;			/* [natts]: bytes a value takes (its attlen) */
	char	  **values;			/* [natts][capacity * width] */
	bool	  **isnull;			/* [natts][capacity]; NULL: no NULL yet */
	Size		nrows;
	Size		capacity;
	Size		bytes;			/* memory taken so far */
} ColumnStore;

/* Can rows of this descriptor go into a column store? */
extern bool column_store_fits(TupleDesc desc);

/* An empty store for rows of desc (column_store_fits). */
extern void column_store_init(ColumnStore *store, MemoryContext cxt, TupleDesc desc);

/* Room for at least rows rows; false (store unchanged) if memory ran out. */
extern bool column_store_reserve(ColumnStore *store, Size rows);

/* Append the slot's row; false (nothing stored) if memory ran out. */
extern bool column_store_add_slot(ColumnStore *store, TupleTableSlot *slot);

/*
 * Append nrows rows given column-wise, each column at its width as the
 * store keeps it (isnull[c] NULL: no NULLs in column c); false if memory ran
 * out (then rows may be partly written but are not counted).
 */
extern bool column_store_append(ColumnStore *store, const char *const *values,
								const bool *const *isnull, Size nrows);

/*
 * A column in the store's form -- values of width bytes side by side, as
 * the store and the parallel fill's chunks keep them: where row `row`'s
 * value lies, and that value as a Datum.
 */
static inline char *
column_value_at(const char *column, int16 width, Size row)
{
	return (char *) column + row * width;
}

static inline Datum
column_value_get(const char *column, int16 width, Size row)
{
	return fetch_att(column_value_at(column, width, row), true, width);
}

/* Where column c of row `row` lies. */
static inline char *
column_store_at(const ColumnStore *store, int c, Size row)
{
	return column_value_at(store->values[c], store->width[c], row);
}

/* Column c of row `row` as a Datum. */
static inline Datum
column_store_value(const ColumnStore *store, int c, Size row)
{
	return column_value_get(store->values[c], store->width[c], row);
}

/* Put row `row` into a virtual slot (cleared first). */
extern void column_store_get(const ColumnStore *store, Size row, TupleTableSlot *slot);

#endif
