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

/*
 * Sort each run of tied text values under an ICU or libc collation as
 * PostgreSQL's comparator orders them (ICU's comparison or strcoll, then,
 * for a deterministic collation, their bytes), ascending or descending,
 * equal values in entry order, with nthreads threads (run_threads.h): run
 * r is entries [run_start[r], run_start[r + 1]), entry e's value values[e]
 * (NULL where isnull[e]: a run of NULLs keeps its order).  On return
 * order[run_start[r] + q] is the q-th entry of run r.  False where this
 * cannot be done so (another collation, ICU outside a UTF-8 database, a
 * value compressed or stored out of line, an error): the caller then sorts
 * by the comparators.  May raise a cancel between slices of the runs.
 */
extern bool gpusort_collation_sort_runs(Oid collation, bool descending, int nthreads,
										const Datum *values, const bool *isnull,
										Size nruns, const uint32 *run_start, uint32 *order);

#endif
