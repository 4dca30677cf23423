/*
 * collation_keys.h -- text under a collation other than C encoded by the
 * collation's own sort key (collation_keys.c).
 *
 * A collation's sort key (ICU's ucol_getSortKey, libc's strxfrm) compares
 * with memcmp as the collation compares the strings.  Its first bytes are
 * words the GPU can sort by: rows whose words differ are in order, and
 * rows whose words tie are finished on the CPU by the collation's
 * comparator, which also breaks ties between strings whose keys are equal
 * (a deterministic collation's byte order).  Where PostgreSQL abbreviates
 * an ICU key to 8 bytes, these take GPUSORT_FIRST_BYTES, so that strings
 * sharing a prefix still part on the GPU.
 *
 * ICU: a prefix of its sort key is a prefix of the full key, and the key
 * orders as the comparator does (PostgreSQL's abbreviated keys rely on it).
 *
 * libc: PostgreSQL does not trust strxfrm to order as strcoll does (some
 * C libraries' did not), so a sort by libc keys is checked: every adjacent
 * pair of the sorted rows is compared with the full comparators, and on
 * the first pair out of order the rows go to the tuplesort
 * (gpusort_code_checked).
 */
#ifndef GPUSORT_COLLATION_KEYS_H
#define GPUSORT_COLLATION_KEYS_H

#include "postgres.h"

/*
 * Can text under this collation be encoded by its ICU sort key: an ICU
 * collation, in a server built with ICU (and, before PostgreSQL 17, a UTF-8
 * database)?
 */
extern bool gpusort_icu_keys_usable(Oid collation);

/* Can text under this collation be encoded by strxfrm: a libc collation? */
extern bool gpusort_libc_keys_usable(Oid collation);

/*
 * The nw words of a non-NULL text value's sort key under collation (one
 * the matching _usable function accepted): its first 4 * nw bytes,
 * big-endian, zero past the key's end, complemented when descending.
 */
extern void gpusort_icu_key_words(Oid collation, Datum value, bool descending, int nw,
								  uint32 *out);
extern void gpusort_libc_key_words(Oid collation, Datum value, bool descending, int nw,
								   uint32 *out);

#endif
