/*
 * collation_keys.c -- text under a collation other than C encoded by the
 * collation's own sort key (see collation_keys.h).
 *
 * utils/pg_locale.h includes ICU's headers in a server built with ICU.
 * Built without them (GPUSORT_NO_ICU, set by the Makefile where
 * <unicode/ucol.h> is missing), no collation is usable here, and such keys
 * keep PostgreSQL's abbreviated key (ICU) or are ordered on the CPU (libc).
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

#include "collation_keys.h"
#include "run_threads.h"
#include "sort_keys.h"

#ifndef GPUSORT_NO_ICU
#define HAVE_COLLATION_KEYS 1
#include "utils/pg_locale.h"
#if defined(USE_ICU)
#define HAVE_ICU_KEYS 1
#if PG_VERSION_NUM < 170000
#include <unicode/uiter.h>
#endif
#endif
#endif

#ifdef HAVE_COLLATION_KEYS

/* a text value's bytes, NUL-terminated, in small or palloc'd memory */
#define SMALL_TEXT 256

static char *
text_cstring(Datum value, char *small, size_t *len)
{
	text	   *t = DatumGetTextPP(value);
	char	   *s;

	*len = VARSIZE_ANY_EXHDR(t);
	s = *len < SMALL_TEXT ? small : palloc(*len + 1);
	memcpy(s, VARDATA_ANY(t), *len);
	s[*len] = '\0';
	if ((Pointer) t != DatumGetPointer(value))
		pfree(t);
	return s;
}

/* the collation last looked up, and its locale (read for every row) */
static Oid	cached_collation = InvalidOid;
static pg_locale_t cached_locale = NULL;

/*
 * The locale of a collation (NULL where PostgreSQL keeps none: the
 * database's default libc collation before PostgreSQL 17).
 */
static pg_locale_t
collation_locale(Oid collation)
{
	if (collation != cached_collation)
	{
		cached_locale = pg_newlocale_from_collation(collation);
		cached_collation = collation;
	}
	return cached_locale;
}

/*
 * How the threads of sort_text_runs compare text under one collation:
 * begin makes a thread's state (NULL: none could be made), compare orders
 * two values as the collation does (*failed on an error), end frees the
 * state.  None may call PostgreSQL (run_threads.h).
 */
typedef struct TextCompareMethods
{
	void	   *(*begin) (const void *collator);
	int			(*compare) (void *state, const char *a, uint32 la, const char *b, uint32 lb,
							bool *failed);
	void		(*end) (void *state);
} TextCompareMethods;

/* entries of tied runs a slice of sort_text_runs hands to its threads */
#define TEXT_RUNS_SLICE 262144

/* One thread's share of the runs of a slice. */
typedef struct TextRunsPart
{
	const TextCompareMethods *methods;
	const void *collator;
	void	   *state;			/* the thread's, from methods->begin */
	bool		deterministic;
	bool		descending;
	const Datum *values;
	const bool *isnull;
	const uint32 *run_start;
	Size		run_from;
	Size		run_to;
	uint32	   *order;
	const char **s;				/* the values' bytes and lengths, this part's entries */
	uint32	   *len;
	bool		failed;
} TextRunsPart;

/* PostgreSQL's comparison of two text values (varlena.c), then entry order */
static int
compare_text_entries(const void *a, const void *b, void *arg)
{
	TextRunsPart *p = (TextRunsPart *) arg;
	uint32		i = *(const uint32 *) a,
				j = *(const uint32 *) b;
	const char *si = p->s[i],
			   *sj = p->s[j];
	uint32		li = p->len[i],
				lj = p->len[j];
	int			r;

	if (li == lj && memcmp(si, sj, li) == 0)
		r = 0;
	else
	{
		r = p->methods->compare(p->state, si, li, sj, lj, &p->failed);
		/* a deterministic collation breaks ties by the bytes, as strcmp does */
		if (r == 0 && p->deterministic)
		{
			r = memcmp(si, sj, Min(li, lj));
			if (r == 0)
				r = (li > lj) - (li < lj);
		}
		r = (r > 0) - (r < 0);
	}
	if (p->descending)
		r = -r;
	return r != 0 ? r : (i > j) - (i < j);
}

static void
sort_text_part(void *arg)
{
	TextRunsPart *p = (TextRunsPart *) arg;

	p->state = p->methods->begin(p->collator);
	if (p->state == NULL)
	{
		p->failed = true;
		return;
	}
	for (Size r = p->run_from; r < p->run_to && !p->failed; r++)
	{
		uint32		from = p->run_start[r],
					to = p->run_start[r + 1];

		for (uint32 e = from; e < to; e++)
		{
			Datum		v = p->values[e];

			p->order[e] = e;
			if (p->isnull[e])
				continue;
			/* inline and uncompressed only: detoasting needs the backend */
			if (VARATT_IS_EXTENDED(DatumGetPointer(v)) && !VARATT_IS_SHORT(DatumGetPointer(v)))
			{
				p->failed = true;
				break;
			}
			p->s[e] = VARDATA_ANY(DatumGetPointer(v));
			p->len[e] = VARSIZE_ANY_EXHDR(DatumGetPointer(v));
		}
		if (!p->failed && !p->isnull[from])
			qsort_arg(p->order + from, to - from, sizeof(uint32), compare_text_entries, p);
	}
	p->methods->end(p->state);
}

/*
 * gpusort_collation_sort_runs with the collation's methods: slices of
 * about TEXT_RUNS_SLICE entries, each shared out to the threads by
 * entries, an interrupt check between slices.
 */
static bool
sort_text_runs(const TextCompareMethods *methods, const void *collator, bool deterministic,
			   bool descending, int nthreads, const Datum *values, const bool *isnull,
			   Size nruns, const uint32 *run_start, uint32 *order)
{
	TextRunsPart parts[RUN_THREADS_MAX];
	Size		n = run_start[nruns];
	const char **s;
	uint32	   *len;
	bool		failed = false;

	if (n == 0)
		return false;
	nthreads = Max(1, Min(nthreads, RUN_THREADS_MAX));
	s = palloc_extended(n * sizeof(char *), MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	len = palloc_extended(n * sizeof(uint32), MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (s == NULL || len == NULL)
	{
		if (s != NULL)
			pfree(s);
		return false;
	}
	for (Size r0 = 0; r0 < nruns && !failed;)
	{
		Size		r1 = r0 + 1;
		int			nparts = 0;
		Size		from,
					per;

		while (r1 < nruns && run_start[r1 + 1] - run_start[r0] <= TEXT_RUNS_SLICE)
			r1++;
		from = r0;
		per = (run_start[r1] - run_start[r0] + nthreads - 1) / nthreads;
		while (from < r1)
		{
			Size		to = from + 1;
			TextRunsPart *p = &parts[nparts++];

			while (to < r1 && (nparts == nthreads ||
							   run_start[to + 1] - run_start[from] <= per))
				to++;
			memset(p, 0, sizeof(*p));
			p->methods = methods;
			p->collator = collator;
			p->deterministic = deterministic;
			p->descending = descending;
			p->values = values;
			p->isnull = isnull;
			p->run_start = run_start;
			p->run_from = from;
			p->run_to = to;
			p->order = order;
			p->s = s;
			p->len = len;
			from = to;
		}
		run_thread_parts(sort_text_part, parts, sizeof(TextRunsPart), nparts);
		for (int i = 0; i < nparts; i++)
			failed |= parts[i].failed;
		CHECK_FOR_INTERRUPTS();
		r0 = r1;
	}
	pfree(s);
	pfree(len);
	return !failed;
}

#endif

#ifdef HAVE_ICU_KEYS

/* The ICU locale of a collation; NULL if it is not an ICU collation. */
static pg_locale_t
icu_locale(Oid collation)
{
	pg_locale_t loc;

	if (!OidIsValid(collation))
		return NULL;
	loc = collation_locale(collation);
	if (loc == NULL || loc->provider != COLLPROVIDER_ICU)
		return NULL;
#if PG_VERSION_NUM >= 170000
	if (!pg_strxfrm_prefix_enabled(loc))
		return NULL;
#else
	/* ucol_nextSortKeyPart reads UTF-8 through its iterator */
	if (GetDatabaseEncoding() != PG_UTF8)
		return NULL;
#endif
	return loc;
}

/*
 * The first `size` bytes (fewer if the key is shorter) of the ICU sort key
 * of s (len bytes, NUL-terminated) into dest; the bytes written.
 */
static size_t
icu_key_prefix(pg_locale_t loc, const char *s, size_t len, uint8 *dest, size_t size)
{
#if PG_VERSION_NUM >= 170000
	return pg_strnxfrm_prefix((char *) dest, size, s, len, loc);
#else
	UCharIterator iter;
	uint32_t	state[2] = {0, 0};
	UErrorCode	status = U_ZERO_ERROR;
	int32_t		n;

	uiter_setUTF8(&iter, s, (int32_t) len);
	n = ucol_nextSortKeyPart(loc->info.icu.ucol, &iter, state, dest, (int32_t) size, &status);
	if (U_FAILURE(status))
		ereport(ERROR,
				(errmsg("sort key generation failed: %s", u_errorName(status))));
	return (size_t) n;
#endif
}

bool
gpusort_icu_keys_usable(Oid collation)
{
	return icu_locale(collation) != NULL;
}

void
gpusort_icu_key_words(Oid collation, Datum value, bool descending, int nw, uint32 *out)
{
	pg_locale_t loc = icu_locale(collation);
	char		small[SMALL_TEXT];
	size_t		len;
	char	   *s = text_cstring(value, small, &len);
	uint8		key[4 * GPUSORT_BYTES_WORDS_MAX];
	size_t		n;

	Assert(loc != NULL && nw <= GPUSORT_BYTES_WORDS_MAX);
	/* (some versions read the string up to its NUL, whatever its length) */
	n = icu_key_prefix(loc, s, len, key, (size_t) nw * 4);
	(void) gpusort_bytes_words(key, n, 0, nw, descending, out);
	if (s != small)
		pfree(s);
}

/* ICU for sort_text_runs: each thread compares with a clone of the collator. */
static void *
icu_compare_begin(const void *collator)
{
	UErrorCode	status = U_ZERO_ERROR;
	UCollator  *clone;

#if U_ICU_VERSION_MAJOR_NUM >= 71
	clone = ucol_clone((const UCollator *) collator, &status);
#else
	clone = ucol_safeClone((const UCollator *) collator, NULL, NULL, &status);
#endif
	return U_FAILURE(status) ? NULL : clone;
}

static int
icu_compare(void *state, const char *a, uint32 la, const char *b, uint32 lb, bool *failed)
{
	UErrorCode	status = U_ZERO_ERROR;
	int			r = (int) ucol_strcollUTF8((UCollator *) state, a, (int32_t) la, b,
										   (int32_t) lb, &status);

	if (U_FAILURE(status))
		*failed = true;
	return r;
}

static void
icu_compare_end(void *state)
{
	ucol_close((UCollator *) state);
}

static const TextCompareMethods icu_compare_methods = {
	icu_compare_begin, icu_compare, icu_compare_end
};

#else							/* !HAVE_ICU_KEYS */

bool
gpusort_icu_keys_usable(Oid collation)
{
	return false;
}


void
gpusort_icu_key_words(Oid collation, Datum value, bool descending, int nw, uint32 *out)
{
	elog(ERROR, "gpusort was built without ICU sort keys");
}

#endif

#ifdef HAVE_COLLATION_KEYS

/*
 * Is the collation a libc one: its locale (NULL where PostgreSQL keeps
 * none, the database's default libc collation before PostgreSQL 17) in
 * *loc?  A C or POSIX collation never gets here (it sorts as bytes).
 */
static bool
libc_locale(Oid collation, pg_locale_t *loc)
{
	if (!OidIsValid(collation))
		return false;
	*loc = collation_locale(collation);
	if (*loc == NULL)
		return collation == DEFAULT_COLLATION_OID;
	return (*loc)->provider == COLLPROVIDER_LIBC;
}

bool
gpusort_libc_keys_usable(Oid collation)
{
	pg_locale_t loc;

	return libc_locale(collation, &loc);
}

/* strxfrm of s (len bytes, NUL-terminated) into dest of size bytes: the key's full length */
static size_t
libc_strxfrm(pg_locale_t loc, const char *s, size_t len, char *dest, size_t size)
{
#if PG_VERSION_NUM >= 160000
	return pg_strnxfrm(dest, size, s, len, loc);
#else
	if (loc == NULL)
		return strxfrm(dest, s, size);
	return strxfrm_l(dest, s, size, loc->info.lt);
#endif
}

void
gpusort_libc_key_words(Oid collation, Datum value, bool descending, int nw, uint32 *out)
{
	pg_locale_t loc = NULL;
	char		small[SMALL_TEXT];
	size_t		len;
	char	   *s;
	char		keybuf[1024];
	char	   *key = keybuf;
	size_t		n;

	if (!libc_locale(collation, &loc))
		elog(ERROR, "collation %u is not a libc collation", collation);
	s = text_cstring(value, small, &len);
	/* strxfrm leaves the key undefined unless it fits whole */
	n = libc_strxfrm(loc, s, len, key, sizeof(keybuf));
	if (n >= sizeof(keybuf))
	{
		key = palloc(n + 1);
		n = libc_strxfrm(loc, s, len, key, n + 1);
	}
	(void) gpusort_bytes_words((const uint8 *) key, n, 0, nw, descending, out);
	if (key != keybuf)
		pfree(key);
	if (s != small)
		pfree(s);
}

/* libc for sort_text_runs: strcoll_l of NUL-terminated copies in the thread's buffers */
typedef struct LibcCompareState
{
	pg_locale_t loc;			/* NULL: the process's LC_COLLATE (strcoll) */
	char	   *buf[2];
	size_t		cap[2];
} LibcCompareState;

static void *
libc_compare_begin(const void *collator)
{
	LibcCompareState *st = calloc(1, sizeof(LibcCompareState));

	if (st != NULL)
		st->loc = (pg_locale_t) collator;
	return st;
}

/* s (len bytes) NUL-terminated in buffer k of st; NULL if memory ran out */
static const char *
libc_cstring(LibcCompareState *st, int k, const char *s, uint32 len)
{
	if ((size_t) len + 1 > st->cap[k])
	{
		size_t		cap = Max((size_t) len + 1, 2 * st->cap[k]);
		char	   *buf = realloc(st->buf[k], Max(cap, 256));

		if (buf == NULL)
			return NULL;
		st->buf[k] = buf;
		st->cap[k] = Max(cap, 256);
	}
	memcpy(st->buf[k], s, len);
	st->buf[k][len] = '\0';
	return st->buf[k];
}

static int
libc_compare(void *state, const char *a, uint32 la, const char *b, uint32 lb, bool *failed)
{
	LibcCompareState *st = (LibcCompareState *) state;
	const char *ca = libc_cstring(st, 0, a, la);
	const char *cb = libc_cstring(st, 1, b, lb);

	if (ca == NULL || cb == NULL)
	{
		*failed = true;
		return 0;
	}
	return st->loc != NULL ? strcoll_l(ca, cb, st->loc->info.lt) : strcoll(ca, cb);
}

static void
libc_compare_end(void *state)
{
	LibcCompareState *st = (LibcCompareState *) state;

	free(st->buf[0]);
	free(st->buf[1]);
	free(st);
}

static const TextCompareMethods libc_compare_methods = {
	libc_compare_begin, libc_compare, libc_compare_end
};

bool
gpusort_collation_sort_runs(Oid collation, bool descending, int nthreads, const Datum *values,
							const bool *isnull, Size nruns, const uint32 *run_start,
							uint32 *order)
{
	pg_locale_t loc = NULL;

#ifdef HAVE_ICU_KEYS
	loc = icu_locale(collation);
	if (loc != NULL)
		/* ucol_strcollUTF8 reads UTF-8, as PostgreSQL's comparator does there */
		return GetDatabaseEncoding() == PG_UTF8 &&
			sort_text_runs(&icu_compare_methods, loc->info.icu.ucol, loc->deterministic,
						   descending, nthreads, values, isnull, nruns, run_start, order);
#endif
	if (libc_locale(collation, &loc))
		return sort_text_runs(&libc_compare_methods, loc, loc == NULL || loc->deterministic,
							  descending, nthreads, values, isnull, nruns, run_start, order);
	return false;
}

#else							/* !HAVE_COLLATION_KEYS */

bool
gpusort_libc_keys_usable(Oid collation)
{
	return false;
}

bool
gpusort_collation_sort_runs(Oid collation, bool descending, int nthreads, const Datum *values,
							const bool *isnull, Size nruns, const uint32 *run_start,
							uint32 *order)
{
	return false;
}

void
gpusort_libc_key_words(Oid collation, Datum value, bool descending, int nw, uint32 *out)
{
	elog(ERROR, "gpusort was built without collation keys");
}

#endif
