/*
 * column_store.h -- GpuSort's in-memory store for rows whose columns all
 * have a fixed length: those passed by value (int2/4/8, float4/8, date,
 * timestamp, oid, bool, ...) and fixed-length ones passed by reference
 * (uuid, interval, macaddr, name, point, ...).  One array per column
 * whose values take the column's own width (4 bytes for an int4, 16 for a
 * uuid, not a whole Datum or a tuple), and a NULL-flag array for a column
 * only once it has held a NULL.  No tuples are formed going in and none
 * are deformed coming out; a row is handed up as a virtual tuple whose
 * by-reference values point into the store.
 */
#ifndef GPUSORT_COLUMN_STORE_H
#define GPUSORT_COLUMN_STORE_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "access/tupmacs.h"
#include "executor/tuptable.h"

/*
 * The widest fixed-length by-reference value a column store keeps, and
 * the most bytes its columns may take a row (so that a parallel worker's
 * chunk of 16,384 rows, NULL flags included, stays far below 1 GB).
 */
#define COLUMN_MAX_WIDTH 256
#define COLUMN_MAX_ROW_WIDTH 32768

/*
 * How a column's values lie in the store: width bytes each, side by side.
 * A by-value column takes its length (1, 2, 4 or 8); a by-reference one its
 * length rounded up to MAXALIGN (the rest zeroed), so that every value is
 * aligned as its type needs.
 */
typedef struct ColumnType
{
	int16		len;			/* attlen */
	int16		width;
	bool		byval;
} ColumnType;

/* The form of column att in a store (att of a descriptor column_store_fits). */
extern void column_type_init(ColumnType *type, Form_pg_attribute att);

typedef struct ColumnStore
{
	MemoryContext cxt;			/* everything below lives here */
	int			natts;
	ColumnType *type;			/* [natts] */
	char	  **values;			/* [natts][capacity * type.width] */
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
 * A column in the store's form -- values of type->width bytes side by
 * side, as the store and the parallel fill's chunks keep them: where row
 * `row`'s value lies, that value as a Datum (a by-reference one points into
 * the column), and the writing of a Datum there (zeros for a NULL).
 */
static inline char *
column_value_at(const char *column, const ColumnType *type, Size row)
{
	return (char *) column + row * type->width;
}

static inline Datum
column_value_get(const char *column, const ColumnType *type, Size row)
{
	const char *at = column_value_at(column, type, row);

	return type->byval ? fetch_att(at, true, type->len) : PointerGetDatum(at);
}

static inline void
column_value_put(char *column, const ColumnType *type, Size row, Datum value, bool isnull)
{
	char	   *at = column_value_at(column, type, row);

	if (isnull)
		memset(at, 0, type->width);
	else if (type->byval)
		store_att_byval(at, value, type->len);
	else
	{
		memcpy(at, DatumGetPointer(value), type->len);
		memset(at + type->len, 0, type->width - type->len);
	}
}

/* Where column c of row `row` lies. */
static inline char *
column_store_at(const ColumnStore *store, int c, Size row)
{
	return column_value_at(store->values[c], &store->type[c], row);
}

/* Memory a row takes in a store of these columns: values and NULL flags. */
extern Size column_row_bytes(const ColumnType *types, int natts);

/* Column c of row `row` as a Datum. */
static inline Datum
column_store_value(const ColumnStore *store, int c, Size row)
{
	return column_value_get(store->values[c], &store->type[c], row);
}

/*
 * Put row `row` into a virtual slot (cleared first).  Inline: it runs once
 * for every row handed up.
 */
static inline void
column_store_get(const ColumnStore *store, Size row, TupleTableSlot *slot)
{
	Datum	   *values = slot->tts_values;
	bool	   *isnull = slot->tts_isnull;

	ExecClearTuple(slot);
	for (int c = 0; c < store->natts; c++)
	{
		const bool *nulls = store->isnull[c];

		values[c] = column_store_value(store, c, row);
		isnull[c] = nulls ? nulls[row] : false;
	}
	ExecStoreVirtualTuple(slot);
}

#endif
