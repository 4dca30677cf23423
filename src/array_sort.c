/*
 * array_sort.c -- the SQL functions gpu_sort(int4[]) and gpu_sort(float4[]).
 *
 * Non-NULL elements are encoded (src/key_encoding.h), sorted with their
 * positions as payloads, and copied out in sorted order, so the result holds
 * the original values (-0 stays -0, NaN payloads survive).  NULLs are
 * counted and placed first or last.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/arrayaccess.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "guc.h"
#include "sort_engine.h"
#include "big_alloc.h"
#include "key_encoding.h"
#include "key_finish.h"
#include "phase_hook.h"
#include "sort_keys.h"

/* elements copied between two interrupt checks */
#define ELEMENTS_PER_INTERRUPT_CHECK (1 << 20)
/* bytes of an array fetched from its TOAST table between two interrupt checks */
#define DETOAST_SLICE_BYTES ((Size) 8 * 1024 * 1024)

PG_FUNCTION_INFO_V1(gpu_sort_int4);
PG_FUNCTION_INFO_V1(gpu_sort_float4);
PG_FUNCTION_INFO_V1(gpu_sort_any);

/* Is element i of an array with this null bitmap NULL? */
static inline bool
element_is_null(const bits8 *bitmap, size_t i)
{
	return bitmap != NULL && (bitmap[i / 8] & (1 << (i % 8))) == 0;
}

/* gpu_sort() takes one-dimensional arrays: an ERROR for any other. */
static void
require_one_dimension(ArrayType *in)
{
	if (ARR_NDIM(in) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("gpu_sort() sorts only one-dimensional arrays"),
				 errdetail("The array has %d dimensions.", ARR_NDIM(in)),
				 errhint("Flatten it first, e.g. gpu_sort(ARRAY(SELECT unnest(a))).")));
}

/*
 * Argument 0 as a plain array.  An array stored out of line uncompressed is
 * fetched from its TOAST table a slice at a time, answering a cancel
 * between slices (PostgreSQL's detoasting of a whole value checks for none:
 * 80 MB take about 0.1 s).  A compressed one is decompressed whole, as
 * PostgreSQL does it.
 */
static ArrayType *
array_argument(FunctionCallInfo fcinfo)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(PG_GETARG_DATUM(0));
	struct varatt_external toast;
	Size		size;
	struct varlena *whole;

	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		return PG_GETARG_ARRAYTYPE_P(0);
	VARATT_EXTERNAL_GET_POINTER(toast, raw);
	if (VARATT_EXTERNAL_IS_COMPRESSED(toast))
		return PG_GETARG_ARRAYTYPE_P(0);
	size = VARATT_EXTERNAL_GET_EXTSIZE(toast);
	whole = gpusort_alloc_huge(size + VARHDRSZ);
	SET_VARSIZE(whole, size + VARHDRSZ);
	for (Size off = 0; off < size; off += DETOAST_SLICE_BYTES)
	{
		Size		len = Min(DETOAST_SLICE_BYTES, size - off);
		struct varlena *slice;

		CHECK_FOR_INTERRUPTS();
		slice = detoast_attr_slice(raw, (int32) off, (int32) len);
		if (VARSIZE_ANY_EXHDR(slice) != len)
			elog(ERROR, "gpusort: TOAST slice of %zu bytes at %zu came back with %zu",
				 len, off, (Size) VARSIZE_ANY_EXHDR(slice));
		memcpy(VARDATA(whole) + off, VARDATA_ANY(slice), len);
		pfree(slice);
	}
	return (ArrayType *) whole;
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
	gpusort_phase_begin("copy");
	in = array_argument(fcinfo);
	descending = PG_ARGISNULL(1) ? false : PG_GETARG_BOOL(1);
	/* NULL means ORDER BY's default: NULLS LAST ascending, FIRST descending */
	nulls_first = PG_ARGISNULL(2) ? descending : PG_GETARG_BOOL(2);

	require_one_dimension(in);
	if (ARR_NDIM(in) == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(elemtype));

	nelems = (size_t) ARR_DIMS(in)[0];
	gpusort_gpu_prepare(nelems);	/* opened while the values are copied */
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

	gpusort_phase_begin("encode");
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
	if (!gpusort_sort_rows((const uint32 *const *) &codes, 1, nvalues, perm, &run, NULL, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("gpu_sort() could not get scratch memory to sort %zu elements.",
						   nvalues)));
	pfree(codes);
	CHECK_FOR_INTERRUPTS();

	/* the result: lower bound 1, NULLs as a block at one end */
	gpusort_phase_begin("decode");
	outsize = (nnulls ? ARR_OVERHEAD_WITHNULLS(1, nelems) : ARR_OVERHEAD_NONULLS(1)) +
		nvalues * sizeof(uint32);
	out = (ArrayType *) gpusort_alloc_huge(outsize);
	/* header and NULL bitmap; the loop below writes every value */
	memset(out, 0, outsize - nvalues * sizeof(uint32));
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

	gpusort_phase_begin("free");
	pfree(values);
	pfree(perm);
	PG_FREE_IF_COPY(in, 0);
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

/* ---- any element type with a btree ordering ------------------------------ */

/* KeyFinish.fetch over the array's non-NULL values */
static void
fetch_element(void *arg, uint32 row, Datum *values, bool *isnull)
{
	values[0] = ((const Datum *) arg)[row];
	isnull[0] = false;
}

/*
 * The code words of values[0..n) (one key: key, its code and direction) in
 * nw word columns.
 */
static void
encode_elements(const GpuSortKeySpec *key, GpuSortKeyCode code, bool descending,
				const Datum *values, size_t n, int nw, uint32 **cols)
{
	SortSupportData abbrev;

	if (code == GPUSORT_CODE_ABBREV)
		gpusort_key_sort_support(key, true, &abbrev);
	else if (code == GPUSORT_CODE_ICU)
		gpusort_settle_abbrev(key, &code, &abbrev);
	for (size_t i = 0; i < n && nw > 0; i++)
	{
		uint32		w[GPUSORT_MAX_KEY_WORDS];

		if (i % ELEMENTS_PER_INTERRUPT_CHECK == 0)
			CHECK_FOR_INTERRUPTS();
		gpusort_encode_words(code, key->type, &abbrev, values[i], descending, nw, w);
		for (int j = 0; j < nw; j++)
			cols[j][i] = w[j];
	}
}

/*
 * deconstruct_array with an interrupt check every
 * ELEMENTS_PER_INTERRUPT_CHECK elements (PostgreSQL's checks for none:
 * about 0.3 s for 20M int8 here); elems and nulls are big allocations.
 */
static void
deconstruct_checked(ArrayType *in, int16 typlen, bool typbyval, char typalign,
					Datum **elems, bool **nulls, int *nelems)
{
	int			n = ArrayGetNItems(ARR_NDIM(in), ARR_DIMS(in));
	array_iter	it;

	*elems = gpusort_alloc_huge(Max(n, 1) * sizeof(Datum));
	*nulls = gpusort_alloc_huge(Max(n, 1) * sizeof(bool));
	array_iter_setup(&it, (AnyArrayType *) in);
	for (int i = 0; i < n; i++)
	{
		if (i % ELEMENTS_PER_INTERRUPT_CHECK == 0)
			CHECK_FOR_INTERRUPTS();
		(*elems)[i] = array_iter_next(&it, &(*nulls)[i], i, typlen, typbyval, typalign);
	}
	*nelems = n;
}

/*
 * gpu_sort(anyarray, descending, nulls_first): the array sorted by its
 * element type's default btree order under the call's collation, as
 * ORDER BY sorts: the GPU (or the CPU radix sort) by the elements' words
 * (sort_keys.h), the CPU orders elements whose words tie.
 */
Datum
gpu_sort_any(PG_FUNCTION_ARGS)
{
	ArrayType  *in;
	Oid			elemtype;
	TypeCacheEntry *tc;
	bool		descending,
				nulls_first,
				desc_code;
	int			nelems,
				nvalues = 0,
				nw;
	Datum	   *elems,
			   *values;
	bool	   *nulls;
	GpuSortKeySpec key;
	GpuSortKeyCode code;
	uint32	   *cols[GPUSORT_MAX_KEY_WORDS];
	uint32	   *perm;
	Datum	   *sorted;
	bool	   *sorted_nulls;
	GpuSortRun	run;
	KeyFinish	kf;
	bool		lossless;		/* equal words, equal elements: no finish */
	uint32	   *tie_bits = NULL;
	int			dims[1],
				lbs[1] = {1};

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	gpusort_phase_begin("copy");
	in = array_argument(fcinfo);
	descending = PG_ARGISNULL(1) ? false : PG_GETARG_BOOL(1);
	nulls_first = PG_ARGISNULL(2) ? descending : PG_GETARG_BOOL(2);
	elemtype = ARR_ELEMTYPE(in);
	require_one_dimension(in);
	tc = lookup_type_cache(elemtype, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	if (!OidIsValid(descending ? tc->gt_opr : tc->lt_opr))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("could not identify an ordering operator for type %s",
						format_type_be(elemtype)),
				 errhint("gpu_sort() sorts types with a default btree operator class.")));
	if (ARR_NDIM(in) == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(elemtype));

	gpusort_gpu_prepare((size_t) ArrayGetNItems(ARR_NDIM(in), ARR_DIMS(in)));
	deconstruct_checked(in, tc->typlen, tc->typbyval, tc->typalign, &elems, &nulls, &nelems);
	values = palloc(Max(nelems, 1) * sizeof(Datum));
	for (int i = 0; i < nelems; i++)
	{
		if (i % ELEMENTS_PER_INTERRUPT_CHECK == 0)
			CHECK_FOR_INTERRUPTS();
		if (!nulls[i])
			values[nvalues++] = elems[i];
	}

	key.type = getBaseType(elemtype);
	key.sortop = descending ? tc->gt_opr : tc->lt_opr;
	key.collation = PG_GET_COLLATION();
	key.nulls_first = nulls_first;
	if (!gpusort_key_codes(&key, 1, &code, &desc_code))
		elog(ERROR, "gpusort: no btree ordering for operator %u", key.sortop);
	/* strxfrm keys would need the order checked: the comparator sorts instead */
	if (gpusort_code_checked(code))
		code = GPUSORT_CODE_NONE;
	nw = gpusort_code_words(code, key.type);
	lossless = gpusort_code_lossless(code, key.type);

	/* the words' order, then the ties' */
	perm = gpusort_alloc_huge(Max(nvalues, 1) * sizeof(uint32));
	gpusort_phase_begin("encode");
	for (int j = 0; j < nw; j++)
		cols[j] = gpusort_alloc_huge(Max(nvalues, 1) * sizeof(uint32));
	encode_elements(&key, code, desc_code, values, nvalues, nw, cols);
	if (!lossless)
	{
		/* the sort may take fewer words; the GPU marks the ties */
		gpusort_finish_setup(&kf, &key, 1, code, desc_code);
		kf.fetch = fetch_element;
		kf.arg = values;
		kf.max_bytes = MaxAllocHugeSize;	/* an array has no budget but memory */
		nw = gpusort_finish_first_words(&kf, (const uint32 *const *) cols, nw, nvalues);
		tie_bits = gpusort_tie_bits_for(CurrentMemoryContext, nvalues);
	}
	if (nw == 0)
		for (int i = 0; i < nvalues; i++)
			perm[i] = i;
	else if (!gpusort_sort_rows((const uint32 *const *) cols, nw, nvalues, perm, &run, NULL,
								tie_bits))
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("gpu_sort() could not get scratch memory to sort %d elements.",
						   nvalues)));
	if (!lossless)
	{
		kf.tie_bits = nw > 0 && run.tie_bits_done ? tie_bits : NULL;
		if (!gpusort_finish_ties(&kf, (const uint32 *const *) cols, nw, nvalues, perm, nvalues))
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("gpu_sort() could not get memory to order %d elements with equal prefixes.",
							   nvalues)));
		if (tie_bits)
			pfree(tie_bits);
	}

	/* NULLs as a block at one end */
	gpusort_phase_begin("decode");
	sorted = palloc(Max(nelems, 1) * sizeof(Datum));
	sorted_nulls = palloc0(Max(nelems, 1) * sizeof(bool));
	for (int i = 0; i < nelems; i++)
	{
		bool		is_null = nulls_first ? i < nelems - nvalues : i >= nvalues;

		if (i % ELEMENTS_PER_INTERRUPT_CHECK == 0)
			CHECK_FOR_INTERRUPTS();
		sorted_nulls[i] = is_null;
		sorted[i] = is_null ? (Datum) 0 :
			values[perm[nulls_first ? i - (nelems - nvalues) : i]];
	}
	dims[0] = nelems;
	PG_RETURN_ARRAYTYPE_P(construct_md_array(sorted, sorted_nulls, 1, dims, lbs, elemtype,
											 tc->typlen, tc->typbyval, tc->typalign));
}
