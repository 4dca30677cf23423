/*
 * gpusort_kernels.h -- the only interface between the PostgreSQL side (src/)
 * and the CUDA side (kernels/).
 *
 * Plain C, no PostgreSQL and no CUDA headers.  Every function returns a
 * status code; the kernel side never exits, aborts or prints.  A build
 * without nvcc links kernels/no_gpu.c instead, whose functions all report
 * GPUSORT_ERR_NO_DEVICE.
 *
 * Keys are 32-bit unsigned words whose unsigned order is the wanted order
 * (src/key_encoding.c makes them).  A row's key may span several words
 * (word 0 most significant); words are passed word-major:
 * words[w * n + i] is word w of row i.
 */
#ifndef GPUSORT_KERNELS_H
#define GPUSORT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gpusort_status
{
	GPUSORT_OK = 0,
	GPUSORT_ERR_NO_DEVICE,		/* no CUDA driver or no CUDA device */
	GPUSORT_ERR_OUT_OF_MEMORY,	/* device memory exhausted; retry smaller
								 * or fall back */
	GPUSORT_ERR_INVALID_ARGUMENT,	/* caller error (size, device ordinal) */
	GPUSORT_ERR_CUDA,			/* a CUDA call failed; see detail */
	GPUSORT_ERR_CUDA_STICKY		/* the context is unusable for this process */
} gpusort_status;

/* Static text for a status code. */
const char *gpusort_status_message(gpusort_status status);

/* Text of the last CUDA error seen by this thread ("" if none). */
const char *gpusort_error_detail(void);

typedef struct gpusort_device_info
{
	int			ordinal;
	char		name[256];
	int			cc_major;
	int			cc_minor;
	size_t		total_memory;	/* bytes */
	int			multiprocessors;
} gpusort_device_info;

/* Number of CUDA devices; 0 with GPUSORT_ERR_NO_DEVICE when there is none. */
gpusort_status gpusort_device_count(int *count);

gpusort_status gpusort_device_get_info(int ordinal, gpusort_device_info *info);

/*
 * Select the device and create its context (the expensive part of opening a
 * GPU: 0.2-0.3 s).  Idempotent; call lazily, never in a postmaster.
 */
gpusort_status gpusort_device_open(int ordinal);

/* Free and available device memory of the opened device, in bytes. */
gpusort_status gpusort_device_memory(size_t *free_bytes, size_t *total_bytes);

/*
 * Free the pinned host buffers the sorts keep between calls for the
 * process's life (a process that exits need not call it; the next sort
 * allocates them again).
 */
void		gpusort_release_host_buffers(void);

/* The GPU sorts a job can run (gpusort.algorithm names them). */
typedef enum gpusort_algorithm
{
	GPUSORT_ALGO_AUTO = 0,		/* chosen by key width, n and a sample of the keys */
	GPUSORT_ALGO_RADIX,			/* onesweep LSD radix sort; stable */
	GPUSORT_ALGO_QUICKSORT,		/* GPU-Quicksort, bitonic leaves; keys up to 64 bits */
	GPUSORT_ALGO_BITONIC		/* bitonic sorting network; keys up to 64 bits */
} gpusort_algorithm;

static inline const char *
gpusort_algorithm_name(gpusort_algorithm algorithm)
{
	switch (algorithm)
	{
		case GPUSORT_ALGO_AUTO:
			return "auto";
		case GPUSORT_ALGO_RADIX:
			return "radix";
		case GPUSORT_ALGO_QUICKSORT:
			return "quicksort";
		case GPUSORT_ALGO_BITONIC:
			return "bitonic";
	}
	return "?";
}

/* Wall times of the phases of one job, in milliseconds, and what ran. */
typedef struct gpusort_timing
{
	double		to_device_ms;
	double		sort_ms;
	double		from_device_ms;
	int			digit_passes;	/* radix passes actually run */
	gpusort_algorithm algorithm;	/* the algorithm that ran */
	char		algorithm_reason[128];	/* why it was chosen */
} gpusort_timing;

/*
 * A job owns the device buffers of one sort.  Create it, upload the keys,
 * sort, download the permutation, destroy it.  Destroy is safe on any job
 * in any state (including NULL) and frees all its device memory; the
 * caller arranges for it to run on error paths too.
 */
typedef struct gpusort_job gpusort_job;

/* The most rows one job sorts. */
size_t		gpusort_job_max_rows(void);

/* Device memory a job of n rows and nwords key words will allocate. */
size_t		gpusort_job_device_bytes(size_t n, int nwords);

gpusort_status gpusort_job_create(size_t n, int nwords, gpusort_job **job);

/* Copy the key words to the device: words[w][i] is word w of row i. */
gpusort_status gpusort_job_upload(gpusort_job *job, const uint32_t *const *words);

/*
 * Sort by the key words.  The payload of row i is i (made on the device,
 * not uploaded), so afterwards the payloads are the sorting permutation.
 * Radix and bitonic sorts are stable; quicksort is not (rows with equal
 * keys may come in any order).  Quicksort and bitonic take keys of one or
 * two words; wider keys are radix sorted even when they are asked for
 * (timing.algorithm_reason says so).  gpusort_job_sort is
 * gpusort_job_sort_with AUTO.
 */
gpusort_status gpusort_job_sort(gpusort_job *job);
gpusort_status gpusort_job_sort_with(gpusort_job *job, gpusort_algorithm algorithm);

/*
 * Copy results to the host.  perm (n entries) receives the row positions in
 * sorted order; keys (may be NULL) receives word 0 of the sorted keys.
 */
gpusort_status gpusort_job_download(gpusort_job *job, uint32_t *perm,
									uint32_t *keys);

/*
 * After a sort: which rows of the sorted order have the same key words as
 * the row before.  bits, (n + 31) / 32 entries, receives bit i % 32 of
 * bits[i / 32] set where the row at position i ties with the one at i - 1
 * (bit 0 and the bits past n clear).  Counts as from-device time.
 */
gpusort_status gpusort_job_download_ties(gpusort_job *job, uint32_t *bits);

/*
 * After a sort: put the first m rows' data into sorted order through the
 * device (row data goes up, is gathered there, and comes back in order):
 * gpusort_job_permute_fixed: in holds n elements of elem_size bytes (1 to
 * GPUSORT_PERMUTE_MAX_ELEM); out[i] (i < m) receives in[perm[i]].  The
 * upload counts as to-device time, the rest as from-device time.
 */
#define GPUSORT_PERMUTE_MAX_ELEM 256
gpusort_status gpusort_job_permute_fixed(gpusort_job *job, const void *in, void *out,
										 size_t elem_size, size_t m);
void		gpusort_job_timing(const gpusort_job *job, gpusort_timing *timing);

void		gpusort_job_destroy(gpusort_job *job);

#ifdef __cplusplus
}
#endif

#endif							/* GPUSORT_KERNELS_H */
