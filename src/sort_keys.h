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

#endif
