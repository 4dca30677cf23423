/*
 * onesweep.cu -- the onesweep radix sort with the project's policies
 * (radix_config.cuh) for 32- and 64-bit keys: the measured ones where the
 * device lets a block have their shared memory, else the mid ones where it
 * lets a block have theirs, the compact ones elsewhere.
 * See onesweep.cuh.
 */
#include <algorithm>
#include <stdlib.h>
#include <string.h>
#include <type_traits>

#include "device_smem.cuh"
#include "onesweep.cuh"

template <typename POL, typename K>
static constexpr size_t
policies_smem()
{
	return std::max(onesweep_smem_bytes<typename POL::packed, K>(),
					std::max(onesweep_smem_bytes<typename POL::narrow, K>(),
							 onesweep_smem_bytes<typename POL::wide, K>()));
}

static_assert(policies_smem<onesweep_policies_compact_u32, uint32_t>() <= DEVICE_SMEM_DEFAULT &&
			  policies_smem<onesweep_policies_compact_u64, uint64_t>() <= DEVICE_SMEM_DEFAULT,
			  "the compact policies fit any device");

/*
 * Can a block of the current device have the shared memory the measured
 * policies need?  (GPUSORT_COMPACT_SMEM=1 in the environment says no: see
 * device_smem.cuh.)
 */
template <typename POL, typename K>
static bool
device_fits()
{
	return device_block_smem() >= policies_smem<POL, K>();
}

size_t
onesweep_temp_bytes(size_t n, int key_bytes)
{
	size_t		a = key_bytes == 8 ? onesweep_temp_bytes_t<onesweep_policies_u64, uint64_t>(n)
		: onesweep_temp_bytes_t<onesweep_policies_u32, uint32_t>(n);
	size_t		m = key_bytes == 8 ? onesweep_temp_bytes_t<onesweep_policies_mid_u64, uint64_t>(n)
		: onesweep_temp_bytes_t<onesweep_policies_mid_u32, uint32_t>(n);
	size_t		b = key_bytes == 8 ? onesweep_temp_bytes_t<onesweep_policies_compact_u64, uint64_t>(n)
		: onesweep_temp_bytes_t<onesweep_policies_compact_u32, uint32_t>(n);

	return std::max(a, std::max(m, b));
}

/* The mapped summary, kept for the process's life (onesweep_release_host_summary). */
static first_read_summary *summary_mapped = NULL,
		   *summary_mapped_dev = NULL;
static bool summary_tried = false;

void
onesweep_release_host_summary(void)
{
	if (summary_mapped != NULL)
		(void) cudaFreeHost(summary_mapped);
	summary_mapped = summary_mapped_dev = NULL;
	summary_tried = false;
}

first_read_summary *
onesweep_host_summary(first_read_summary **dev)
{
	first_read_summary *&mapped = summary_mapped;
	first_read_summary *&mapped_dev = summary_mapped_dev;
	static first_read_summary pageable;
	bool	   &tried = summary_tried;

	if (!tried)
	{
		/* the tests may take the copy, as without mapped memory */
		const bool	map = !gpusort_test_hooks.first_read_by_copy;

		tried = true;
		if (map && (cudaHostAlloc((void **) &mapped, sizeof(first_read_summary),
								  cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess ||
					cudaHostGetDevicePointer((void **) &mapped_dev, mapped, 0) != cudaSuccess))
		{
			(void) cudaGetLastError();
			if (mapped != NULL)
				(void) cudaFreeHost(mapped);
			mapped = mapped_dev = NULL;
		}
	}
	*dev = mapped_dev;
	return mapped != NULL ? mapped : &pageable;
}

unsigned int
onesweep_summary_seq(bool next)
{
	static unsigned int seq = 0;

	if (next && ++seq == 0)
		seq = 1;				/* 0 is what a fresh summary holds */
	return seq;
}

bool
onesweep_early_launch(void)
{
	static int	early = -1;		/* the device of the first sort decides */
	int			dev,
				major = 0;

	if (early < 0)
		early = cudaGetDevice(&dev) == cudaSuccess &&
			cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
			major >= 9 ? 1 : 0;
	return early == 1;
}

/* Do the policies POL fit the device (the device of the first sort decides)? */
template <typename POL, typename K>
static bool
policies_fit()
{
	static int	fits = -1;

	if (fits < 0)
		fits = device_fits<POL, K>() ? 1 : 0;
	return fits == 1;
}

/*
 * f(POL()) for the first of the measured, mid and compact policies of K
 * (radix_config.cuh) that the device has the shared memory for.
 */
template <typename K, typename F>
static gpusort_status
with_policies(F &&f)
{
	typedef typename std::conditional<sizeof(K) == 8, onesweep_policies_u64,
									  onesweep_policies_u32>::type POL;
	typedef typename std::conditional<sizeof(K) == 8, onesweep_policies_mid_u64,
									  onesweep_policies_mid_u32>::type MID;
	typedef typename std::conditional<sizeof(K) == 8, onesweep_policies_compact_u64,
									  onesweep_policies_compact_u32>::type COMPACT;

	if (policies_fit<POL, K>())
		return f(POL());
	if constexpr (!std::is_same<POL, MID>::value)
		if (policies_fit<MID, K>())
			return f(MID());
	return f(COMPACT());
}

template <typename K>
static gpusort_status
sort_pairs(void *keys[2], uint32_t *vals[2], size_t n, bool positions, void *temp,
		   cudaStream_t stream, int *out, onesweep_stats *stats)
{
	return with_policies<K>([&](auto pol) {
		return onesweep_sort_pairs_t<decltype(pol), K>(reinterpret_cast<K **>(keys), vals, n,
														positions, temp, stream, out, stats);
	});
}

gpusort_status
onesweep_sort_pairs(void *keys[2], uint32_t *vals[2], size_t n, int key_bytes,
					bool vals_are_positions, void *temp, size_t temp_bytes,
					cudaStream_t stream, int *out, onesweep_stats *stats)
{
	if (temp_bytes < onesweep_temp_bytes(n, key_bytes))
		return GPUSORT_ERR_INVALID_ARGUMENT;
	if (key_bytes == 8)
		return sort_pairs<uint64_t>(keys, vals, n, vals_are_positions, temp, stream, out, stats);
	if (key_bytes == 4)
		return sort_pairs<uint32_t>(keys, vals, n, vals_are_positions, temp, stream, out, stats);
	return GPUSORT_ERR_INVALID_ARGUMENT;
}

template <typename K>
gpusort_status
onesweep_sort_counted(K *keys[2], uint32_t *vals[2], size_t n, bool vals_are_positions,
					  void *temp, size_t temp_bytes, cudaStream_t stream,
					  const first_read_summary *look, int *out, onesweep_stats *stats,
					  bool precleared)
{
	if (temp_bytes < onesweep_temp_bytes(n, sizeof(K)) || n < 2 || n > ONESWEEP_MAX_N)
		return GPUSORT_ERR_INVALID_ARGUMENT;
	return with_policies<K>([&](auto pol) {
		return onesweep_sort_counted_t<decltype(pol), K>(keys, vals, n, vals_are_positions, temp,
														  stream, look, out, stats, -1,
														  precleared);
	});
}

template gpusort_status onesweep_sort_counted<uint32_t>(uint32_t *[2], uint32_t *[2], size_t,
														 bool, void *, size_t, cudaStream_t,
														 const first_read_summary *,
														 int *, onesweep_stats *, bool);
template gpusort_status onesweep_sort_counted<uint64_t>(uint64_t *[2], uint32_t *[2], size_t,
														 bool, void *, size_t, cudaStream_t,
														 const first_read_summary *,
														 int *, onesweep_stats *, bool);

template <typename K>
static size_t
preclear_bytes_t(size_t n)
{
	size_t		bytes = 0;

	/* the policies onesweep_sort_counted will take (with_policies chooses alike) */
	(void) with_policies<K>([&](auto pol) {
		bytes = onesweep_status_bytes_t<decltype(pol), K>(n);
		return GPUSORT_OK;
	});
	return bytes;
}

size_t
onesweep_preclear_bytes(size_t n, int key_bytes)
{
	return key_bytes == 8 ? preclear_bytes_t<uint64_t>(n) : preclear_bytes_t<uint32_t>(n);
}
