/*
 * icu_keys.c -- text under an ICU collation encoded by its ICU sort key
 * (see icu_keys.h).
 *
 * Built without ICU's headers (GPUSORT_NO_ICU, set by the Makefile where
 * <unicode/ucol.h> is missing), or against a server built without ICU, no
 * collation is usable and such keys keep PostgreSQL's abbreviated key.
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

#include "icu_keys.h"
#include "sort_keys.h"

#if defined(USE_ICU) && !defined(GPUSORT_NO_ICU)
#define HAVE_ICU_KEYS 1
#include "utils/pg_locale.h"
#if PG_VERSION_NUM < 170000
#include <unicode/uiter.h>
#endif
#endif

#ifdef HAVE_ICU_KEYS

/* the collation last looked up, and its locale */
static Oid	cached_collation = InvalidOid;
static pg_locale_t cached_locale = NULL;

/* The ICU locale of a collation; NULL if it is not an ICU collation. */
static pg_locale_t
icu_locale(Oid collation)
{
	pg_locale_t loc;

	if (collation == cached_collation && OidIsValid(collation))
		return cached_locale;
	if (!OidIsValid(collation))
		return NULL;
	loc = pg_newlocale_from_collation(collation);
	if (loc == NULL || loc->provider != COLLPROVIDER_ICU)
		loc = NULL;
#if PG_VERSION_NUM >= 170000
	else if (!pg_strxfrm_prefix_enabled(loc))
		loc = NULL;
#else
	/* ucol_nextSortKeyPart reads UTF-8 through its iterator */
	else if (GetDatabaseEncoding() != PG_UTF8)
		loc = NULL;
#endif
	cached_collation = collation;
	cached_locale = loc;
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
	text	   *t = DatumGetTextPP(value);
	size_t		len = VARSIZE_ANY_EXHDR(t);
	char		small[256];
	char	   *s = len < sizeof(small) ? small : palloc(len + 1);
	uint8		key[4 * GPUSORT_BYTES_WORDS_MAX];
	size_t		n;

	Assert(loc != NULL && nw <= GPUSORT_BYTES_WORDS_MAX);
	/* some versions read the string up to its NUL, whatever its length */
	memcpy(s, VARDATA_ANY(t), len);
	s[len] = '\0';
	n = icu_key_prefix(loc, s, len, key, (size_t) nw * 4);
	(void) gpusort_bytes_words(key, n, 0, nw, descending, out);
	if (s != small)
		pfree(s);
	if ((Pointer) t != DatumGetPointer(value))
		pfree(t);
}

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
