/*
 * key_encoding.h -- order-preserving unsigned encodings of PostgreSQL's
 * fixed-width sort keys.
 *
 * encode(a) < encode(b) (as unsigned integers) exactly when a sorts before
 * b under the type's default btree order; equal values get equal codes.
 * Descending order complements the code.  NULLs are never encoded: callers
 * count them and place them first or last.  Plain C, no PostgreSQL headers,
 * so the unit tests can use it standalone.
 */
#ifndef GPUSORT_KEY_ENCODING_H
#define GPUSORT_KEY_ENCODING_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* int4: flip the sign bit. */
static inline uint32_t
gpusort_encode_int4(int32_t v)
{
	return (uint32_t) v ^ UINT32_C(0x80000000);
}

/*
 * float4: negative values have all bits flipped, non-negative values the
 * sign bit.  -0 is first turned into +0 (PostgreSQL treats them as equal)
 * and every NaN becomes one code above +Infinity (PostgreSQL sorts all NaNs
 * equal and after every other value).
 */
static inline uint32_t
gpusort_encode_float4(float f)
{
	uint32_t	bits;

	if (f != f)
		return UINT32_MAX;
	if (f == 0.0f)
		f = 0.0f;
	memcpy(&bits, &f, sizeof(bits));
	return (bits & UINT32_C(0x80000000)) ? ~bits : bits | UINT32_C(0x80000000);
}

/* int8: flip the sign bit of the 64-bit value. */
static inline uint64_t
gpusort_encode_int8(int64_t v)
{
	return (uint64_t) v ^ UINT64_C(0x8000000000000000);
}

/* float8: as float4, on 64 bits. */
static inline uint64_t
gpusort_encode_float8(double f)
{
	uint64_t	bits;

	if (f != f)
		return UINT64_MAX;
	if (f == 0.0)
		f = 0.0;
	memcpy(&bits, &f, sizeof(bits));
	return (bits & UINT64_C(0x8000000000000000)) ? ~bits : bits | UINT64_C(0x8000000000000000);
}

/* The descending code of an ascending one. */
static inline uint32_t
gpusort_descending32(uint32_t code, bool descending)
{
	return descending ? ~code : code;
}

static inline uint64_t
gpusort_descending64(uint64_t code, bool descending)
{
	return descending ? ~code : code;
}

/* Encode arrays (used by the SQL functions and the tests). */
void		gpusort_encode_int4_array(const int32_t *values, size_t n,
									  bool descending, uint32_t *codes);
void		gpusort_encode_float4_array(const float *values, size_t n,
										bool descending, uint32_t *codes);

#endif
