/*
 * column_store.c -- GpuSort's column-wise store for rows of fixed-length
 * columns.
 *
 * Arrays grow by doubling (or to a size the caller reserves up front from
 * the planner's estimate); allocation failures are reported, not raised,
 * so that the node can fall back to tuplesort.
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "utils/memutils.h"

#include "big_alloc.h"
#include "column_store.h"

/* Does a column of this attribute have a fixed width a store can keep? */
static bool
column_fits(Form_pg_attribute att)
{
	if (att->attlen <= 0)
		return false;
	return att->attbyval ? att->attlen <= (int) sizeof(Datum) :
		MAXALIGN(att->attlen) <= COLUMN_MAX_WIDTH;
}

bool
column_store_fits(TupleDesc desc)
{
	Size		row_bytes = 0;

	if (desc->natts == 0)
		return false;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		ColumnType	type;

		if (!column_fits(att))
			return false;
		column_type_init(&type, att);
		row_bytes += column_row_bytes(&type, 1);
	}
	return row_bytes <= COLUMN_MAX_ROW_WIDTH;
}

Size
column_row_bytes(const ColumnType *types, int natts)
{
	Size		bytes = 0;

	for (int c = 0; c < natts; c++)
		bytes += types[c].width + sizeof(bool);
	return bytes;
}

void
column_type_init(ColumnType *type, Form_pg_attribute att)
{
	Assert(column_fits(att));
	type->len = att->attlen;
	type->byval = att->attbyval;
	type->width = att->attbyval ? att->attlen : MAXALIGN(att->attlen);
}

void
column_store_init(ColumnStore *store, MemoryContext cxt, TupleDesc desc)
{
	int			natts = desc->natts;

	memset(store, 0, sizeof(*store));
	store->cxt = cxt;
	store->natts = natts;
	store->type = MemoryContextAlloc(cxt, natts * sizeof(ColumnType));
	for (int c = 0; c < natts; c++)
		column_type_init(&store->type[c], TupleDescAttr(desc, c));
	store->values = MemoryContextAllocZero(cxt, natts * sizeof(char *));
	store->isnull = MemoryContextAllocZero(cxt, natts * sizeof(bool *));
}

/* A copy of old (used elements of size elem) in an array of cap elements. */
static void *
regrow(ColumnStore *store, void *old, Size elem, Size cap, bool zero)
{
	char	   *grown = gpusort_alloc_big_lazy(store->cxt, cap * elem);

	if (grown == NULL)
		return NULL;
	if (old)
		gpusort_copy_big(grown, old, store->nrows * elem);
	if (zero)
		gpusort_zero_big(grown + store->nrows * elem, (cap - store->nrows) * elem);
	return grown;
}

bool
column_store_reserve(ColumnStore *store, Size rows)
{
	char	  **values;
	bool	  **isnull;
	Size		cap = rows,
				row_bytes = 0;

	if (cap <= store->capacity)
		return true;
	values = palloc0(store->natts * sizeof(char *));
	isnull = palloc0(store->natts * sizeof(bool *));
	for (int c = 0; c < store->natts; c++)
	{
		row_bytes += store->type[c].width;
		values[c] = regrow(store, store->values[c], store->type[c].width, cap, false);
		if (values[c] == NULL)
			goto fail;
		if (store->isnull[c])
		{
			isnull[c] = regrow(store, store->isnull[c], sizeof(bool), cap, true);
			if (isnull[c] == NULL)
				goto fail;
			store->bytes += cap - store->capacity;
		}
	}
	for (int c = 0; c < store->natts; c++)
	{
		if (store->values[c])
			pfree(store->values[c]);
		if (store->isnull[c])
			pfree(store->isnull[c]);
		store->values[c] = values[c];
		store->isnull[c] = isnull[c];
	}
	store->bytes += (cap - store->capacity) * row_bytes;
	store->capacity = cap;
	pfree(values);
	pfree(isnull);
	return true;

fail:
	for (int c = 0; c < store->natts; c++)
	{
		if (values[c])
			pfree(values[c]);
		if (isnull[c])
			pfree(isnull[c]);
	}
	pfree(values);
	pfree(isnull);
	return false;
}

/* Column c's first NULL: its flag array, all false so far; false if out of memory. */
static bool
start_null_flags(ColumnStore *store, int c)
{
	store->isnull[c] = gpusort_alloc_big_lazy(store->cxt, store->capacity);
	if (store->isnull[c] == NULL)
		return false;
	gpusort_zero_big(store->isnull[c], store->capacity);
	store->bytes += store->capacity;
	return true;
}

bool
column_store_add_slot(ColumnStore *store, TupleTableSlot *slot)
{
	Size		row = store->nrows;

	if (row == store->capacity &&
		!column_store_reserve(store, Max(store->capacity * 2, 4096)))
		return false;
	slot_getallattrs(slot);
	for (int c = 0; c < store->natts; c++)
	{
		column_value_put(store->values[c], &store->type[c], row, slot->tts_values[c],
						 slot->tts_isnull[c]);
		if (slot->tts_isnull[c])
		{
			if (store->isnull[c] == NULL && !start_null_flags(store, c))
				return false;
			store->isnull[c][row] = true;
		}
	}
	store->nrows++;
	return true;
}

bool
column_store_append(ColumnStore *store, const char *const *values,
					const bool *const *isnull, Size nrows)
{
	Size		row = store->nrows;

	if (row + nrows > store->capacity &&
		!column_store_reserve(store, Max(store->capacity * 2, row + nrows)))
		return false;
	for (int c = 0; c < store->natts; c++)
	{
		memcpy(column_store_at(store, c, row), values[c], nrows * store->type[c].width);
		if (isnull[c] == NULL || memchr(isnull[c], true, nrows) == NULL)
		{
			if (store->isnull[c])
				memset(store->isnull[c] + row, 0, nrows);
			continue;
		}
		if (store->isnull[c] == NULL && !start_null_flags(store, c))
			return false;
		memcpy(store->isnull[c] + row, isnull[c], nrows);
	}
	store->nrows += nrows;
	return true;
}
