/*
 * key_encoding.c -- array forms of the order-preserving key encodings.
 */
#include "key_encoding.h"

void
gpusort_encode_int4_array(const int32_t *values, size_t n, bool descending,
						  uint32_t *codes)
{
	uint32_t	flip = descending ? UINT32_MAX : 0;

	for (size_t i = 0; i < n; i++)
		codes[i] = gpusort_encode_int4(values[i]) ^ flip;
}

void
gpusort_encode_float4_array(const float *values, size_t n, bool descending,
							uint32_t *codes)
{
	uint32_t	flip = descending ? UINT32_MAX : 0;

	for (size_t i = 0; i < n; i++)
		codes[i] = gpusort_encode_float4(values[i]) ^ flip;
}
