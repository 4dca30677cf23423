/*
 * sort_keys.h -- GpuSort's supported sort keys and their Datum encoding.
 */
#ifndef GPUSORT_SORT_KEYS_H
#define GPUSORT_SORT_KEYS_H

#include "postgres.h"

/* 32-bit words of a type's code (1 or 2), 0 if the type is unsupported. */
extern int	gpusort_key_words(Oid type);

/*
 * Is sortop the default btree "<" (ascending) or ">" (descending) of type,
 * and the type one GpuSort encodes?
 */
extern bool gpusort_key_supported(Oid type, Oid sortop, bool *descending);

/*
 * Code of a non-NULL value in the low gpusort_key_words() words: ascending,
 * or complemented within those words when descending.
 */
extern uint64 gpusort_encode_key(Oid type, Datum value, bool descending);

/*
 * The words one key value sorts by: its NULL-order word (0 sorts first:
 * NULLs under NULLS FIRST, values under NULLS LAST) and its code (0 for
 * NULL).  Every producer of key words -- the GpuSort's reading loop, its
 * top-k heap, the parallel workers' fill -- goes through these, so that
 * they agree.
 */
static inline uint32
gpusort_null_word(bool isnull, bool nulls_first)
{
	return nulls_first ? !isnull : isnull;
}

static inline uint64
gpusort_key_code(Oid type, Datum value, bool isnull, bool descending)
{
	return isnull ? 0 : gpusort_encode_key(type, value, descending);
}

#endif
