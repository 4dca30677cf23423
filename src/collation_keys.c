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
#include "utils/builtins.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

#include "collation_keys.h"
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

#else							/* !HAVE_COLLATION_KEYS */

bool
gpusort_libc_keys_usable(Oid collation)
{
	return false;
}

void
gpusort_libc_key_words(Oid collation, Datum value, bool descending, int nw, uint32 *out)
{
	elog(ERROR, "gpusort was built without collation keys");
}

#endif
