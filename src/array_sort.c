/*
 * array_sort.c -- the SQL functions gpu_sort(int4[]) and gpu_sort(float4[]).
 *
 * Non-NULL elements are encoded (src/key_encoding.h), sorted with their
 * positions as payloads, and copied out in sorted order, so the result holds
 * the original values (-0 stays -0, NaN payloads survive).  NULLs are
 * counted and placed first or last.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"

#include "guc.h"
#include "sort_engine.h"
#include "big_alloc.h"
#include "key_encoding.h"

/* elements copied between two interrupt checks */
#define ELEMENTS_PER_INTERRUPT_CHECK (1 << 20)

PG_FUNCTION_INFO_V1(gpu_sort_int4);
PG_FUNCTION_INFO_V1(gpu_sort_float4);

/* Is element i of an array with this null bitmap NULL? */
static inline bool
element_is_null(const bits8 *bitmap, size_t i)
{
	return bitmap != NULL && (bitmap[i / 8] & (1 << (i % 8))) == 0;
}

static Datum
sort_array(FunctionCallInfo fcinfo, Oid elemtype)
{
	ArrayType  *in;
	bool		descending;
	bool		nulls_first;
	size_t		nelems,
				nvalues = 0,
				nnulls;
	const bits8 *bitmap;
	const uint32 *data;
	uint32	   *values;
	uint32	   *codes;
	uint32	   *perm;
	ArrayType  *out;
	size_t		outsize;
	uint32	   *outdata;
	GpuSortRun	run;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	in = PG_GETARG_ARRAYTYPE_P(0);
	descending = PG_ARGISNULL(1) ? false : PG_GETARG_BOOL(1);
	/* NULL means ORDER BY's default: NULLS LAST ascending, FIRST descending */
	nulls_first = PG_ARGISNULL(2) ? descending : PG_GETARG_BOOL(2);

	if (ARR_NDIM(in) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("gpu_sort() sorts only one-dimensional arrays"),
				 errdetail("The array has %d dimensions.", ARR_NDIM(in)),
				 errhint("Flatten it first, e.g. gpu_sort(ARRAY(SELECT unnest(a))).")));
	if (ARR_NDIM(in) == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(elemtype));

	nelems = (size_t) ARR_DIMS(in)[0];
	bitmap = ARR_NULLBITMAP(in);
	data = (const uint32 *) ARR_DATA_PTR(in);

	/* compact copy of the non-NULL values (4-byte, int-aligned, by value) */
	values = gpusort_alloc_huge(nelems * sizeof(uint32));
	for (size_t i = 0; i < nelems; i++)
	{
		if (i % ELEMENTS_PER_INTERRUPT_CHECK == 0)
			CHECK_FOR_INTERRUPTS();
		if (!element_is_null(bitmap, i))
		{
			/* NULLs take no space in the data area */
			values[nvalues] = data[nvalues];
			nvalues++;
		}
	}
	nnulls = nelems - nvalues;

	codes = gpusort_alloc_huge(nvalues * sizeof(uint32));
	for (size_t i = 0; i < nvalues; i += ELEMENTS_PER_INTERRUPT_CHECK)
	{
		size_t		m = Min(nvalues - i, ELEMENTS_PER_INTERRUPT_CHECK);

		CHECK_FOR_INTERRUPTS();
		if (elemtype == INT4OID)
			gpusort_encode_int4_array((const int32 *) values + i, m, descending, codes + i);
		else
			gpusort_encode_float4_array((const float4 *) values + i, m, descending, codes + i);
	}

	perm = gpusort_alloc_huge(nvalues * sizeof(uint32));
	if (!gpusort_sort_rows((const uint32 *const *) &codes, 1, nvalues, perm, &run, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("gpu_sort() could not get scratch memory to sort %zu elements.",
						   nvalues)));
	pfree(codes);
	CHECK_FOR_INTERRUPTS();

	/* the result: lower bound 1, NULLs as a block at one end */
	outsize = (nnulls ? ARR_OVERHEAD_WITHNULLS(1, nelems) : ARR_OVERHEAD_NONULLS(1)) +
		nvalues * sizeof(uint32);
	out = (ArrayType *) gpusort_alloc_huge(outsize);
	memset(out, 0, outsize);
	SET_VARSIZE(out, outsize);
	out->ndim = 1;
	out->dataoffset = nnulls ? ARR_OVERHEAD_WITHNULLS(1, nelems) : 0;
	out->elemtype = elemtype;
	ARR_DIMS(out)[0] = (int) nelems;
	ARR_LBOUND(out)[0] = 1;
	if (nnulls)
	{
		bits8	   *outbitmap = ARR_NULLBITMAP(out);
		size_t		first_value = nulls_first ? nnulls : 0;

		for (size_t i = first_value; i < first_value + nvalues; i++)
			outbitmap[i / 8] |= (bits8) (1 << (i % 8));
	}
	outdata = (uint32 *) ARR_DATA_PTR(out);
	for (size_t i = 0; i < nvalues; i++)
	{
		if (i % ELEMENTS_PER_INTERRUPT_CHECK == 0)
			CHECK_FOR_INTERRUPTS();
		outdata[i] = values[perm[i]];
	}

	pfree(values);
	pfree(perm);
	PG_RETURN_ARRAYTYPE_P(out);
}

Datum
gpu_sort_int4(PG_FUNCTION_ARGS)
{
	return sort_array(fcinfo, INT4OID);
}

Datum
gpu_sort_float4(PG_FUNCTION_ARGS)
{
	return sort_array(fcinfo, FLOAT4OID);
}
