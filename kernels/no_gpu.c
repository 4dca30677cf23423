/*
 * no_gpu.c -- the kernel interface for builds without nvcc: every entry
 * point reports that there is no device, so callers take the CPU path.
 */
#include <string.h>

#include "gpusort_kernels.h"
#include "gpusort_test_hooks.h"

/* no CUDA call to fail here; defined for test modules that look it up */
gpusort_test_hooks_t gpusort_test_hooks;

const char *
gpusort_status_message(gpusort_status status)
{
	return status == GPUSORT_OK ? "success" :
		"gpusort was built without CUDA support (no nvcc at build time)";
}

const char *
gpusort_error_detail(void)
{
	return "built without CUDA";
}

gpusort_status
gpusort_device_count(int *count)
{
	*count = 0;
	return GPUSORT_ERR_NO_DEVICE;
}

gpusort_status
gpusort_device_get_info(int ordinal, gpusort_device_info *info)
{
	(void) ordinal;
	memset(info, 0, sizeof(*info));
	return GPUSORT_ERR_NO_DEVICE;
}

gpusort_status
gpusort_device_open(int ordinal)
{
	(void) ordinal;
	return GPUSORT_ERR_NO_DEVICE;
}

gpusort_status
gpusort_device_memory(size_t *free_bytes, size_t *total_bytes)
{
	*free_bytes = *total_bytes = 0;
	return GPUSORT_ERR_NO_DEVICE;
}

size_t
gpusort_job_device_bytes(size_t n, int nwords)
{
	(void) n;
	(void) nwords;
	return 0;
}

gpusort_status
gpusort_job_create(size_t n, int nwords, gpusort_job **job)
{
	(void) n;
	(void) nwords;
	*job = NULL;
	return GPUSORT_ERR_NO_DEVICE;
}

gpusort_status
gpusort_job_upload(gpusort_job *job, const uint32_t *const *words)
{
	(void) job;
	(void) words;
	return GPUSORT_ERR_NO_DEVICE;
}

gpusort_status
gpusort_job_sort(gpusort_job *job)
{
	(void) job;
	return GPUSORT_ERR_NO_DEVICE;
}

gpusort_status
gpusort_job_sort_with(gpusort_job *job, gpusort_algorithm algorithm)
{
	(void) job;
	(void) algorithm;
	return GPUSORT_ERR_NO_DEVICE;
}

gpusort_status
gpusort_job_download(gpusort_job *job, uint32_t *perm, uint32_t *keys)
{
	(void) job;
	(void) perm;
	(void) keys;
	return GPUSORT_ERR_NO_DEVICE;
}

gpusort_status
gpusort_job_download_ties(gpusort_job *job, uint32_t *bits)
{
	(void) job;
	(void) bits;
	return GPUSORT_ERR_NO_DEVICE;
}

gpusort_status
gpusort_job_permute_fixed(gpusort_job *job, const void *in, void *out, size_t elem_size,
						  size_t m)
{
	(void) job;
	(void) in;
	(void) out;
	(void) elem_size;
	(void) m;
	return GPUSORT_ERR_NO_DEVICE;
}

void
gpusort_job_timing(const gpusort_job *job, gpusort_timing *timing)
{
	(void) job;
	memset(timing, 0, sizeof(*timing));
}

void
gpusort_job_destroy(gpusort_job *job)
{
	(void) job;
}

gpusort_status
gpusort_sort_pairs_u32(uint32_t *keys, uint32_t *payloads, size_t n,
					   gpusort_timing *timing)
{
	(void) keys;
	(void) payloads;
	(void) n;
	memset(timing, 0, sizeof(*timing));
	return GPUSORT_ERR_NO_DEVICE;
}

size_t
gpusort_job_max_rows(void)
{
	return 0;
}

void
gpusort_release_host_buffers(void)
{
}
