/*
 * sort_keys.c -- which sort keys GpuSort can take, and their encoding from
 * Datums into order-preserving unsigned codes (src/key_encoding.h).
 *
 * A key is supported when its type is one of the fixed-width types below
 * and its sort operator is the "<" or ">" of the type's default btree
 * operator class (a domain is given as its base type); anything else
 * (text, numeric, a non-default opclass) leaves PostgreSQL's own Sort in
 * place.
 */
#include "postgres.h"

#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "utils/lsyscache.h"

#include "key_encoding.h"
#include "pg_compat.h"
#include "sort_keys.h"

int
gpusort_key_words(Oid type)
{
	switch (type)
	{
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

bool
gpusort_key_supported(Oid type, Oid sortop, bool *descending)
{
	Oid			opfamily,
				opcintype,
				opclass;

	if (gpusort_key_words(type) == 0)
		return false;
	if (!gpusort_ordering_op_properties(sortop, &opfamily, &opcintype, descending))
		return false;
	opclass = GetDefaultOpClass(type, BTREE_AM_OID);
	if (!OidIsValid(opclass) || get_opclass_family(opclass) != opfamily ||
		opcintype != type)
		return false;
	return true;
}

static uint64
encode_ascending(Oid type, Datum value)
{
	switch (type)
	{
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
