/*
 * icu_keys.h -- text under an ICU collation encoded by its ICU sort key
 * (icu_keys.c).
 *
 * An ICU sort key compares with memcmp as the collation compares the
 * strings, and a prefix of it is a prefix of the full key.  So the first
 * bytes of the key are words the GPU can sort by: rows whose words differ
 * are in order, and rows whose words tie are finished on the CPU by the
 * collation's comparator, which also breaks ties between strings whose
 * keys are equal (a deterministic collation's byte order).  Where PostgreSQL
 * abbreviates such a key to 8 bytes, these take GPUSORT_FIRST_BYTES, so
 * that strings sharing a prefix still part on the GPU.
 */
#ifndef GPUSORT_ICU_KEYS_H
#define GPUSORT_ICU_KEYS_H

#include "postgres.h"

/*
 * Can text under this collation be encoded by its ICU sort key: an ICU
 * collation, in a server built with ICU (and, before PostgreSQL 17, a UTF-8
 * database)?
 */
extern bool gpusort_icu_keys_usable(Oid collation);

/*
 * The nw words of a non-NULL text value's ICU sort key under collation
 * (one gpusort_icu_keys_usable accepted): its first 4 * nw bytes,
 * big-endian, zero past the key's end, complemented when descending.
 */
extern void gpusort_icu_key_words(Oid collation, Datum value, bool descending, int nw,
								  uint32 *out);

#endif
