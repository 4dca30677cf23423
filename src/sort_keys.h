/*
 * sort_keys.h -- how GpuSort turns sort keys into 32-bit words the GPU
 * sorts (sort_keys.c).
 *
 * A key list is sorted in two steps.  The GPU sorts every row by a prefix
 * of words; then the CPU orders each run of rows whose words are all equal
 * with the keys' full comparators (key_finish.c).  How a key becomes words
 * is its code:
 *
 *   WHOLE   a fixed-width type encoded whole (int2/4/8, float4/8, bool,
 *           date, timestamp(tz), oid): equal words, equal values.
 *   BYTES   a value that sorts as a string of bytes (text and varchar under
 *           the C collation or text_pattern_ops, bytea, uuid, interval):
 *           its leading bytes; runs that still tie are refined with the
 *           next bytes, then finished on the CPU.  A uuid's or an
 *           interval's 16 bytes are its whole value: lossless, as WHOLE.
 *   ICU     text under an ICU collation: the first GPUSORT_FIRST_BYTES
 *           bytes of its ICU sort key (collation_keys.h): lossy, ties
 *           finished on the CPU by the collation's comparator.
 *   LIBC    text under a libc collation other than C: the first
 *           GPUSORT_FIRST_BYTES bytes of its strxfrm key, as ICU; since
 *           strxfrm is not trusted to order as strcoll does, the sorted
 *           rows are checked pair by pair and go to the tuplesort if any
 *           pair is out of order (gpusort_code_checked).
 *   ABBREV  PostgreSQL's abbreviated key (sort support): numeric, inet,
 *           macaddr, text under other collations, ...: lossy, ties
 *           finished on the CPU.
 *   NONE    no words; rows are ordered by this key on the CPU, within the
 *           runs the keys before it leave.
 *
 * Every key up to the first lossy one (gpusort_code_lossless: any but WHOLE
 * and a uuid's or interval's BYTES) gets its code; every key after it is
 * NONE, and the finish starts at it.  A key list whose first key is NONE
 * gives the GPU nothing to do and keeps the native Sort.
 */
#ifndef GPUSORT_SORT_KEYS_H
#define GPUSORT_SORT_KEYS_H

#include "postgres.h"

#include "utils/sortsupport.h"

typedef enum GpuSortKeyCode
{
	GPUSORT_CODE_WHOLE,
	GPUSORT_CODE_BYTES,
	GPUSORT_CODE_ABBREV,
	GPUSORT_CODE_NONE,
	GPUSORT_CODE_ICU,
	GPUSORT_CODE_LIBC
} GpuSortKeyCode;

/* One sort key as the planner gives it. */
typedef struct GpuSortKeySpec
{
	Oid			type;			/* a domain's base type */
	Oid			sortop;
	Oid			collation;
	bool		nulls_first;
} GpuSortKeySpec;

/* Most words one key's code takes (gpusort_code_words). */
#define GPUSORT_MAX_KEY_WORDS 8

/*
 * Bytes of a BYTES string's value encoded up front.  The first sort takes
 * 8, 16, 24 or all 32 of them, as a sample of the rows shows they are needed
 * (gpusort_finish_first_words in key_finish.h).
 */
#define GPUSORT_FIRST_BYTES 32

/*
 * The codes of a key list (codes[k], descending[k] set for every key);
 * false if a key has no btree ordering at all.  The caller decides what
 * a first key of GPUSORT_CODE_NONE means.
 */
extern bool gpusort_key_codes(const GpuSortKeySpec *keys, int nkeys,
							  GpuSortKeyCode *codes, bool *descending);

/* Must a sort by this code be checked pair by pair (LIBC)? */
static inline bool
gpusort_code_checked(GpuSortKeyCode code)
{
	return code == GPUSORT_CODE_LIBC;
}

/* Is every key WHOLE (so that a 64-bit code orders each, as the top-k heap needs)? */
extern bool gpusort_keys_whole(const GpuSortKeyCode *codes, int nkeys);

/*
 * Does a key's code hold its whole value, so that rows whose words tie
 * are equal by that key: WHOLE, and BYTES of a uuid or an interval (16
 * bytes, all of them sorted)?  Ties on a lossy key are finished on the CPU.
 */
extern bool gpusort_code_lossless(GpuSortKeyCode code, Oid type);

/* 32-bit words of a WHOLE type's code (1 or 2), 0 if the type is not WHOLE. */
extern int	gpusort_key_words(Oid type);

/* 32-bit words a key of this code and type takes in the GPU's first sort. */
extern int	gpusort_code_words(GpuSortKeyCode code, Oid type);

/*
 * Code of a non-NULL WHOLE value in the low gpusort_key_words() words:
 * ascending, or complemented within those words when descending.
 */
extern uint64 gpusort_encode_key(Oid type, Datum value, bool descending);

/*
 * Sort support of a key: full (abbreviate false) for comparing values,
 * abbreviated for an ABBREV key's code.  In CurrentMemoryContext.
 */
extern void gpusort_key_sort_support(const GpuSortKeySpec *key, bool abbreviate,
									 SortSupport ssup);

/*
 * The abbreviated sort support of an ABBREV key, made at execution: where
 * it has no abbreviation now (there was one at plan time), *code becomes
 * NONE and the CPU orders by the key.  The GpuSort and its parallel
 * workers both settle their codes this way, so that their words agree.
 * For an ICU key, ssup only carries the collation gpusort_encode_words
 * reads.
 */
extern void gpusort_settle_abbrev(const GpuSortKeySpec *key, GpuSortKeyCode *code,
								  SortSupport ssup);

/*
 * A BYTES key's value as the bytes it sorts by: *len bytes at the result.
 * buf (16 bytes) holds them for types encoded on the fly; *to_free is set
 * to a detoasted copy to pfree, or NULL.
 */
extern const uint8 *gpusort_key_bytes(Oid type, Datum value, uint8 *buf, Size *len,
									  void **to_free);

/* Most words one gpusort_bytes_words call makes. */
#define GPUSORT_BYTES_WORDS_MAX 8

/*
 * A string key's first words are made by one gpusort_bytes_words call into
 * buffers of GPUSORT_BYTES_WORDS_MAX words (sort_keys.c, collation_keys.c)
 * and stored as one key's code of at most GPUSORT_MAX_KEY_WORDS words.
 */
StaticAssertDecl(GPUSORT_FIRST_BYTES % 4 == 0 &&
				 GPUSORT_FIRST_BYTES / 4 <= GPUSORT_BYTES_WORDS_MAX &&
				 GPUSORT_FIRST_BYTES / 4 <= GPUSORT_MAX_KEY_WORDS,
				 "GPUSORT_FIRST_BYTES exceeds the words of a key's buffers");

/*
 * nwords words of a BYTES value of len bytes: its bytes from byte `from`
 * on, big-endian, zero past the end, complemented when descending.
 * Returns whether the value has bytes past those words.
 */
extern bool gpusort_bytes_words(const uint8 *bytes, Size len, Size from, int nwords,
								bool descending, uint32 *out);

/*
 * An ABBREV key's 64-bit code of a non-NULL value (ssup: abbreviated sort
 * support, type its key type), ascending, complemented when descending.
 */
extern uint64 gpusort_abbrev_code(Oid type, SortSupport ssup, Datum value, bool descending);

/*
 * The nw code words (gpusort_code_words) of a non-NULL value of a key of
 * this code and type, descending or not, most significant first; abbrev:
 * the key's sort support as gpusort_settle_abbrev made it (ABBREV and ICU
 * keys only).  NONE keys have no words.
 */
extern void gpusort_encode_words(GpuSortKeyCode code, Oid type, SortSupport abbrev,
								 Datum value, bool descending, int nw, uint32 *out);

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

/*
 * The nw code words of a NULL (its NULL-order word keeps it apart from the
 * values; NULLs tie among themselves): 0, but for a BYTES key sorted
 * descending the padding byte's complement, so that the finish sees NULLs
 * as values held whole by the words (key_finish.c) and settles their runs.
 */
static inline void
gpusort_null_code_words(GpuSortKeyCode code, bool descending, int nw, uint32 *out)
{
	for (int w = 0; w < nw; w++)
		out[w] = code == GPUSORT_CODE_BYTES && descending ? ~(uint32) 0 : 0;
}

static inline uint64
gpusort_key_code(Oid type, Datum value, bool isnull, bool descending)
{
	return isnull ? 0 : gpusort_encode_key(type, value, descending);
}

#endif
