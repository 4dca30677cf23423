/*
 * device.cu -- CUDA device discovery, lazy opening and error reporting for
 * the gpusort kernel library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.cuh"
#include "device_smem.cuh"
#include "onesweep.cuh"
#include "quicksort.cuh"

/* Set by test programs only (gpusort_test_hooks.h). */
gpusort_test_hooks_t gpusort_test_hooks;

/*
 * Text of the last CUDA failure.  One thread of a backend calls the library
 * at a time: its own, or the thread that opens the device
 * (src/device_opener.c), which the backend waits for before any other call.
 */
static char last_detail[512];

const char *
gpusort_status_message(gpusort_status status)
{
	switch (status)
	{
		case GPUSORT_OK:
			return "success";
		case GPUSORT_ERR_NO_DEVICE:
			return "no CUDA device or driver available";
		case GPUSORT_ERR_OUT_OF_MEMORY:
			return "out of GPU memory";
		case GPUSORT_ERR_INVALID_ARGUMENT:
			return "invalid argument";
		case GPUSORT_ERR_CUDA:
			return "CUDA error";
		case GPUSORT_ERR_CUDA_STICKY:
			return "unrecoverable CUDA error";
	}
	return "unknown gpusort status";
}

const char *
gpusort_error_detail(void)
{
	return last_detail;
}

gpusort_status
gpusort_from_cuda(cudaError_t err, const char *what)
{
	snprintf(last_detail, sizeof(last_detail), "%s: %s (%s)",
			 what, cudaGetErrorString(err), cudaGetErrorName(err));
	/* clear the non-sticky error state so that later calls start clean */
	(void) cudaGetLastError();

	switch (err)
	{
		case cudaErrorInsufficientDriver:
		case cudaErrorNoDevice:
		case cudaErrorInitializationError:
		case cudaErrorCompatNotSupportedOnDevice:
		case cudaErrorSystemDriverMismatch:
			return GPUSORT_ERR_NO_DEVICE;
		case cudaErrorMemoryAllocation:
			return GPUSORT_ERR_OUT_OF_MEMORY;
		case cudaErrorInvalidValue:
		case cudaErrorInvalidDevice:
			return GPUSORT_ERR_INVALID_ARGUMENT;
		case cudaErrorIllegalAddress:
		case cudaErrorLaunchFailure:
		case cudaErrorHardwareStackError:
		case cudaErrorIllegalInstruction:
		case cudaErrorMisalignedAddress:
		case cudaErrorInvalidAddressSpace:
		case cudaErrorInvalidPc:
		case cudaErrorECCUncorrectable:
		case cudaErrorAssert:
		case cudaErrorLaunchTimeout:
		case cudaErrorDevicesUnavailable:
		case cudaErrorNoKernelImageForDevice:
			return GPUSORT_ERR_CUDA_STICKY;
		default:
			return GPUSORT_ERR_CUDA;
	}
}

gpusort_status
gpusort_device_count(int *count)
{
	*count = 0;
	CUDA_TRY(cudaGetDeviceCount(count));
	if (*count == 0)
	{
		snprintf(last_detail, sizeof(last_detail), "cudaGetDeviceCount found no device");
		return GPUSORT_ERR_NO_DEVICE;
	}
	return GPUSORT_OK;
}

gpusort_status
gpusort_device_get_info(int ordinal, gpusort_device_info *info)
{
	cudaDeviceProp prop;

	memset(info, 0, sizeof(*info));
	CUDA_TRY(cudaGetDeviceProperties(&prop, ordinal));
	info->ordinal = ordinal;
	snprintf(info->name, sizeof(info->name), "%s", prop.name);
	info->cc_major = prop.major;
	info->cc_minor = prop.minor;
	info->total_memory = prop.totalGlobalMem;
	info->multiprocessors = prop.multiProcessorCount;
	return GPUSORT_OK;
}

gpusort_status
gpusort_device_open(int ordinal)
{
	int			count;
	gpusort_status st = gpusort_device_count(&count);

	if (st != GPUSORT_OK)
		return st;
	if (ordinal < 0 || ordinal >= count)
	{
		snprintf(last_detail, sizeof(last_detail),
				 "device %d requested, %d present", ordinal, count);
		return GPUSORT_ERR_INVALID_ARGUMENT;
	}
	CUDA_TRY(cudaSetDevice(ordinal));
	/* force creation of the primary context now, not inside the first sort */
	CUDA_TRY(cudaFree(0));
	return GPUSORT_OK;
}

gpusort_status
gpusort_device_memory(size_t *free_bytes, size_t *total_bytes)
{
	CUDA_TRY(cudaMemGetInfo(free_bytes, total_bytes));
	return GPUSORT_OK;
}

size_t
device_block_smem(void)
{
	int			dev,
				optin = 0;
	const size_t cap_bytes = gpusort_test_hooks.block_smem_limit;
	size_t		bytes;

	if (cap_bytes != 0 && cap_bytes <= DEVICE_SMEM_DEFAULT)
		return DEVICE_SMEM_DEFAULT;
	if (cudaGetDevice(&dev) != cudaSuccess ||
		cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return DEVICE_SMEM_DEFAULT;
	}
	bytes = optin > DEVICE_SMEM_DEFAULT ? (size_t) optin : DEVICE_SMEM_DEFAULT;
	/* the tests: as on a device that gives a block at most that */
	if (cap_bytes != 0 && cap_bytes < bytes)
		bytes = cap_bytes;
	return bytes;
}

void
gpusort_release_host_buffers(void)
{
	quicksort_release_host_buffers();
	onesweep_release_host_summary();
}
