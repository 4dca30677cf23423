/*
 * sort_keys.c -- the codes of GpuSort's sort keys (sort_keys.h) and their
 * encoding from Datums into words that sort as unsigned integers.
 *
 * WHOLE types are encoded by key_encoding.h.  A key is WHOLE only under
 * the "<" or ">" of its type's default btree operator class (a domain is
 * given as its base type); under another operator class it is ordered by
 * that class's comparator, on the CPU (NONE) or through its abbreviated
 * key (ABBREV).
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_am.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_database.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "common/int128.h"
#include "datatype/timestamp.h"
#include "port/pg_bswap.h"
#include "utils/lsyscache.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "collation_keys.h"
#include "key_encoding.h"
#include "pg_compat.h"
#include "sort_keys.h"

#if SIZEOF_DATUM != 8
#error "gpusort needs 8-byte Datums (abbreviated keys are taken as 64-bit codes)"
#endif

int
gpusort_key_words(Oid type)
{
	switch (type)
	{
		case BOOLOID:
		case INT2OID:
		case INT4OID:
		case DATEOID:
		case OIDOID:
		case FLOAT4OID:
			return 1;
		case INT8OID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case FLOAT8OID:
			return 2;
		default:
			return 0;
	}
}

/* Is opfamily the family of type's default btree operator class? */
static bool
is_default_family(Oid type, Oid opfamily)
{
	Oid			opclass = GetDefaultOpClass(type, BTREE_AM_OID);

	return OidIsValid(opclass) && get_opclass_family(opclass) == opfamily;
}

/*
 * Does the collation order strings as memcmp does: libc's "C" or "POSIX",
 * or any of the builtin provider's (17's C and C.UTF-8, 18's
 * PG_UNICODE_FAST: code point order, which is byte order in UTF-8), also
 * as the database's default?  Read from the catalogs, not through
 * pg_locale.h, whose ICU headers a server without libicu-dev lacks.  A
 * collation not recognised here is only sorted by its abbreviated key.
 */
static bool
collation_is_c(Oid collation)
{
	HeapTuple	tp;
	char		provider;
	Datum		d;
	bool		isnull;
	bool		is_c = false;

	if (collation == C_COLLATION_OID)
		return true;
	if (collation == DEFAULT_COLLATION_OID)
	{
		tp = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(MyDatabaseId));
		if (!HeapTupleIsValid(tp))
			return false;
		provider = ((Form_pg_database) GETSTRUCT(tp))->datlocprovider;
		d = SysCacheGetAttr(DATABASEOID, tp, Anum_pg_database_datcollate, &isnull);
	}
	else
	{
		tp = SearchSysCache1(COLLOID, ObjectIdGetDatum(collation));
		if (!HeapTupleIsValid(tp))
			return false;
		provider = ((Form_pg_collation) GETSTRUCT(tp))->collprovider;
		d = SysCacheGetAttr(COLLOID, tp, Anum_pg_collation_collcollate, &isnull);
	}
#ifdef COLLPROVIDER_BUILTIN
	if (provider == COLLPROVIDER_BUILTIN)
		is_c = true;
#endif
	if (provider == COLLPROVIDER_LIBC && !isnull)
	{
		char	   *name = TextDatumGetCString(d);

		is_c = strcmp(name, "C") == 0 || strcmp(name, "POSIX") == 0;
		pfree(name);
	}
	ReleaseSysCache(tp);
	return is_c;
}

/* Does a key of this type, family and collation sort as its bytes do? */
static bool
sorts_as_bytes(Oid type, Oid opfamily, Oid collation)
{
	switch (type)
	{
		case TEXTOID:
		case VARCHAROID:
			if (opfamily == TEXT_PATTERN_BTREE_FAM_OID)
				return true;
			return is_default_family(TEXTOID, opfamily) && collation_is_c(collation);
		case BYTEAOID:
		case UUIDOID:
		case INTERVALOID:
			return is_default_family(type, opfamily);
		default:
			return false;
	}
}

void
gpusort_key_sort_support(const GpuSortKeySpec *key, bool abbreviate, SortSupport ssup)
{
	memset(ssup, 0, sizeof(SortSupportData));
	ssup->ssup_cxt = CurrentMemoryContext;
	ssup->ssup_collation = key->collation;
	ssup->ssup_nulls_first = key->nulls_first;
	ssup->abbreviate = abbreviate;
	PrepareSortSupportFromOrderingOp(key->sortop, ssup);
}

void
gpusort_settle_abbrev(const GpuSortKeySpec *key, GpuSortKeyCode *code, SortSupport ssup)
{
	if (*code == GPUSORT_CODE_ICU || *code == GPUSORT_CODE_LIBC)
	{
		memset(ssup, 0, sizeof(SortSupportData));
		ssup->ssup_collation = key->collation;
		return;
	}
	if (*code != GPUSORT_CODE_ABBREV)
		return;
	gpusort_key_sort_support(key, true, ssup);
	if (ssup->abbrev_converter == NULL)
		*code = GPUSORT_CODE_NONE;
}

/* Does the key have an abbreviated key whose order gpusort_abbrev_code knows? */
static bool
has_known_abbreviation(const GpuSortKeySpec *key, Oid opfamily)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext, "gpusort key",
											  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	SortSupportData ssup;
	bool		known;

	gpusort_key_sort_support(key, true, &ssup);
	known = ssup.abbrev_converter != NULL &&
		(ssup.comparator == ssup_datum_unsigned_cmp ||
		 ssup.comparator == ssup_datum_signed_cmp ||
		 ssup.comparator == ssup_datum_int32_cmp ||
		 (key->type == NUMERICOID && is_default_family(NUMERICOID, opfamily)));
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	return known;
}

bool
gpusort_key_codes(const GpuSortKeySpec *keys, int nkeys, GpuSortKeyCode *codes,
				  bool *descending)
{
	bool		lossy = false;	/* a key before this one is not encoded whole */

	for (int k = 0; k < nkeys; k++)
	{
		Oid			opfamily,
					opcintype;

		if (!gpusort_ordering_op_properties(keys[k].sortop, &opfamily, &opcintype,
											&descending[k]))
			return false;
		/* the CPU compares with the family's comparison function: it must exist */
		if (!OidIsValid(get_opfamily_proc(opfamily, opcintype, opcintype, BTORDER_PROC)))
			return false;
		if (lossy)
			codes[k] = GPUSORT_CODE_NONE;
		else if (gpusort_key_words(keys[k].type) > 0 && opcintype == keys[k].type &&
				 is_default_family(keys[k].type, opfamily))
			codes[k] = GPUSORT_CODE_WHOLE;
		else if (sorts_as_bytes(keys[k].type, opfamily, keys[k].collation))
			codes[k] = GPUSORT_CODE_BYTES;
		else if ((keys[k].type == TEXTOID || keys[k].type == VARCHAROID) &&
				 is_default_family(TEXTOID, opfamily) &&
				 gpusort_icu_keys_usable(keys[k].collation))
			codes[k] = GPUSORT_CODE_ICU;
		else if ((keys[k].type == TEXTOID || keys[k].type == VARCHAROID) &&
				 is_default_family(TEXTOID, opfamily) &&
				 gpusort_libc_keys_usable(keys[k].collation))
			codes[k] = GPUSORT_CODE_LIBC;
		else if (has_known_abbreviation(&keys[k], opfamily))
			codes[k] = GPUSORT_CODE_ABBREV;
		else
			codes[k] = GPUSORT_CODE_NONE;
		lossy = lossy || !gpusort_code_lossless(codes[k], keys[k].type);
	}
	return true;
}

bool
gpusort_keys_whole(const GpuSortKeyCode *codes, int nkeys)
{
	for (int k = 0; k < nkeys; k++)
		if (codes[k] != GPUSORT_CODE_WHOLE)
			return false;
	return true;
}

bool
gpusort_code_lossless(GpuSortKeyCode code, Oid type)
{
	/* the 16 bytes of a uuid or an interval's span are its whole value */
	return code == GPUSORT_CODE_WHOLE ||
		(code == GPUSORT_CODE_BYTES && (type == UUIDOID || type == INTERVALOID));
}

int
gpusort_code_words(GpuSortKeyCode code, Oid type)
{
	switch (code)
	{
		case GPUSORT_CODE_WHOLE:
			return gpusort_key_words(type);
		case GPUSORT_CODE_BYTES:
			/* fixed-size values of 16 bytes whole, strings their first bytes */
			return (type == UUIDOID || type == INTERVALOID) ? 4 : GPUSORT_FIRST_BYTES / 4;
		case GPUSORT_CODE_ABBREV:
			return 2;
		case GPUSORT_CODE_ICU:
		case GPUSORT_CODE_LIBC:
			return GPUSORT_FIRST_BYTES / 4;
		case GPUSORT_CODE_NONE:
			break;
	}
	return 0;
}

static uint64
encode_ascending(Oid type, Datum value)
{
	switch (type)
	{
		case BOOLOID:
			return DatumGetBool(value) ? 1 : 0;
		case INT2OID:
			return gpusort_encode_int4((int32) DatumGetInt16(value));
		case INT4OID:
		case DATEOID:
			return gpusort_encode_int4(DatumGetInt32(value));
		case OIDOID:
			return DatumGetObjectId(value);
		case FLOAT4OID:
			return gpusort_encode_float4(DatumGetFloat4(value));
		case INT8OID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return gpusort_encode_int8(DatumGetInt64(value));
		case FLOAT8OID:
			return gpusort_encode_float8(DatumGetFloat8(value));
	}
	elog(ERROR, "gpusort: no key encoding for type %u", type);
	return 0;					/* keep compiler quiet */
}

uint64
gpusort_encode_key(Oid type, Datum value, bool descending)
{
	uint64		code = encode_ascending(type, value);

	if (!descending)
		return code;
	return ~code & (gpusort_key_words(type) == 1 ? (uint64) PG_UINT32_MAX : PG_UINT64_MAX);
}

/* v's 8 bytes, big-endian, at out */
static void
put_be64(uint8 *out, uint64 v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		out[i] = (uint8) v;
}

/*
 * An interval as 16 bytes that sort as interval_cmp does: its span in
 * microseconds (months as 30 days, days as 24 hours; infinities are the
 * extreme fields and so the extreme spans), a 128-bit signed integer,
 * sign-flipped and big-endian.
 */
static void
interval_bytes(const Interval *iv, uint8 *out)
{
	INT128		span = int64_to_int128(iv->time);
	int64		days = iv->month * INT64CONST(30) + iv->day;
	uint64		hi,
				lo;

	int128_add_int64_mul_int64(&span, days, USECS_PER_DAY);
#ifdef USE_NATIVE_INT128
	hi = (uint64) (span >> 64);
	lo = (uint64) span;
#else
	hi = (uint64) span.hi;
	lo = span.lo;
#endif
	put_be64(out, hi ^ UINT64CONST(0x8000000000000000));
	put_be64(out + 8, lo);
}

const uint8 *
gpusort_key_bytes(Oid type, Datum value, uint8 *buf, Size *len, void **to_free)
{
	*to_free = NULL;
	switch (type)
	{
		case UUIDOID:
			*len = UUID_LEN;
			return DatumGetUUIDP(value)->data;
		case INTERVALOID:
			interval_bytes(DatumGetIntervalP(value), buf);
			*len = 16;
			return buf;
		default:
			{
				/* text, varchar, bytea: the data of the varlena */
				struct varlena *raw = (struct varlena *) DatumGetPointer(value);
				struct varlena *v = pg_detoast_datum_packed(raw);

				if (v != raw)
					*to_free = v;
				*len = VARSIZE_ANY_EXHDR(v);
				return (const uint8 *) VARDATA_ANY(v);
			}
	}
}

bool
gpusort_bytes_words(const uint8 *bytes, Size len, Size from, int nwords, bool descending,
					uint32 *out)
{
	uint8		tail[4 * GPUSORT_BYTES_WORDS_MAX];
	Size		want = (Size) nwords * 4;
	bool		more = len > from + want;

	Assert(nwords <= GPUSORT_BYTES_WORDS_MAX);
	/* a value that ends within the words: its bytes, zero past the end */
	if (len < from + want)
	{
		memset(tail, 0, want);
		if (len > from)
			memcpy(tail, bytes + from, len - from);
		bytes = tail;
		from = 0;
	}
	for (int w = 0; w < nwords; w++)
	{
		uint32		word;

		memcpy(&word, bytes + from + 4 * w, 4);
		word = pg_ntoh32(word);
		out[w] = descending ? ~word : word;
	}
	return more;
}

uint64
gpusort_abbrev_code(Oid type, SortSupport ssup, Datum value, bool descending)
{
	Datum		abbrev = ssup->abbrev_converter(value, ssup);
	uint64		code;

	if (ssup->comparator == ssup_datum_unsigned_cmp)
		code = (uint64) abbrev;
	else if (ssup->comparator == ssup_datum_int32_cmp)
		code = (uint64) ((uint32) DatumGetInt32(abbrev) ^ UINT32_C(0x80000000));
	else if (ssup->comparator == ssup_datum_signed_cmp)
		code = (uint64) abbrev ^ UINT64CONST(0x8000000000000000);
	else
	{
		/* numeric: a signed code, negated (numeric_cmp_abbrev compares backwards) */
		Assert(type == NUMERICOID);
		code = ~((uint64) abbrev ^ UINT64CONST(0x8000000000000000));
	}
	return descending ? ~code : code;
}

void
gpusort_encode_words(GpuSortKeyCode code, Oid type, SortSupport abbrev, Datum value,
					 bool descending, int nw, uint32 *out)
{
	uint64		c;

	switch (code)
	{
		case GPUSORT_CODE_WHOLE:
			c = gpusort_encode_key(type, value, descending);
			break;
		case GPUSORT_CODE_ABBREV:
			c = gpusort_abbrev_code(type, abbrev, value, descending);
			break;
		case GPUSORT_CODE_ICU:
			gpusort_icu_key_words(abbrev->ssup_collation, value, descending, nw, out);
			return;
		case GPUSORT_CODE_LIBC:
			gpusort_libc_key_words(abbrev->ssup_collation, value, descending, nw, out);
			return;
		case GPUSORT_CODE_BYTES:
			{
				uint8		buf[16];
				Size		len;
				void	   *to_free;
				const uint8 *bytes = gpusort_key_bytes(type, value, buf, &len, &to_free);

				(void) gpusort_bytes_words(bytes, len, 0, nw, descending, out);
				if (to_free)
					pfree(to_free);
				return;
			}
		default:
			return;				/* NONE: no words */
	}
	if (nw == 2)
		out[0] = (uint32) (c >> 32);
	out[nw - 1] = (uint32) c;
}
