/*
 * onesweep.cu -- the onesweep radix sort with the project's policies
 * (radix_config.cuh) for 32- and 64-bit keys.  See onesweep.cuh.
 */
#include "onesweep.cuh"

size_t
onesweep_temp_bytes(size_t n, int key_bytes)
{
	return key_bytes == 8 ? onesweep_temp_bytes_t<onesweep_policies_u64, uint64_t>(n)
		: onesweep_temp_bytes_t<onesweep_policies_u32, uint32_t>(n);
}

gpusort_status
onesweep_sort_pairs(void *keys[2], uint32_t *vals[2], size_t n, int key_bytes,
					bool vals_are_positions, void *temp, size_t temp_bytes,
					cudaStream_t stream, int *out, onesweep_stats *stats)
{
	if (temp_bytes < onesweep_temp_bytes(n, key_bytes))
		return GPUSORT_ERR_INVALID_ARGUMENT;
	if (key_bytes == 8)
		return onesweep_sort_pairs_t<onesweep_policies_u64, uint64_t>(
			reinterpret_cast<uint64_t **>(keys), vals, n, vals_are_positions, temp, stream,
			out, stats);
	if (key_bytes == 4)
		return onesweep_sort_pairs_t<onesweep_policies_u32, uint32_t>(
			reinterpret_cast<uint32_t **>(keys), vals, n, vals_are_positions, temp, stream,
			out, stats);
	return GPUSORT_ERR_INVALID_ARGUMENT;
}
