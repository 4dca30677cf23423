/*
 * first_read.cuh -- the first read of the keys, host side: launching it
 * (histogram_kernel and first_read_summary_kernel, first_read_kernels.cuh)
 * and waiting for its summary.  Shared by the radix sort (whose digit
 * counts it takes), quicksort (whose key range it takes: a range read,
 * with no digit places) and the auto choice (its look).  The scratch it
 * writes is the head of the radix sort's temp (the layout below).
 */
#ifndef GPUSORT_FIRST_READ_CUH
#define GPUSORT_FIRST_READ_CUH

#include <stdint.h>
#include <cuda_runtime.h>

#include "cuda_check.cuh"
#include "first_read_kernels.cuh"
#include "radix_config.cuh"

/*
 * temp layout: first-read head (range and block counters, 32 bytes) |
 * histogram | summary (where the host's is not mapped) | look-back
 * regions (onesweep_region_bytes: a pass's tile counter, 16 bytes, and
 * its tiles' status; one a pass up to ONESWEEP_ONE_CLEAR_MAX_N keys, else
 * one for all).
 */
#define ONESWEEP_HEAD_BYTES		32
/* a place's counters each, and the low wide counts' slot (RADIX_LOW_WIDE_SLOT) */
#define ONESWEEP_HIST_BYTES		((RADIX_MAX_PASSES + 1) * RADIX_HIST_STRIDE * sizeof(uint32_t))
#define ONESWEEP_SUMMARY_OFFSET	(ONESWEEP_HEAD_BYTES + ONESWEEP_HIST_BYTES)
#define ONESWEEP_SUMMARY_BYTES	128
#define ONESWEEP_STATUS_OFFSET	(ONESWEEP_SUMMARY_OFFSET + ONESWEEP_SUMMARY_BYTES + 16)

static_assert(sizeof(first_read_head) == ONESWEEP_HEAD_BYTES, "the first read's head");
static_assert(sizeof(first_read_summary) <= ONESWEEP_SUMMARY_BYTES, "the summary's slot");

static __global__ void
onesweep_iota_kernel(uint32_t *vals, size_t n)
{
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
		 i += (size_t) gridDim.x * blockDim.x)
		vals[i] = (uint32_t) i;
}

static inline int
onesweep_bit_length(unsigned long long x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

/* The histogram counts in temp (after the head). */
static inline uint32_t *
onesweep_temp_hist(void *temp)
{
	return (uint32_t *) ((unsigned char *) temp + ONESWEEP_HEAD_BYTES);
}

/*
 * The process's host copy of a first read's summary (onesweep.cu),
 * allocated on first use and kept: pinned and mapped, so that the read's
 * summary kernel writes it directly and the host only waits for the stream
 * (*dev is its device address); pageable with *dev NULL if that fails, and
 * then the summary comes over in a copy.
 */
first_read_summary *onesweep_host_summary(first_read_summary **dev);

/* Free that copy (the next first read allocates it again). */
void		onesweep_release_host_summary(void);

/*
 * The number of the latest first read's summary (onesweep.cu): next true
 * takes a new one for a read being launched; false, the one it took.
 */
unsigned int onesweep_summary_seq(bool next);

/* Can the current device launch a kernel while the one before it runs (onesweep.cu)? */
bool		onesweep_early_launch(void);

/*
 * Blocks of a histogram read over n keys on this device: enough for one
 * round of loads a thread (radix_hist_unroll vectors), at most
 * RADIX_HIST_BLOCKS_PER_SM a multiprocessor.  Fewer, fuller blocks at small
 * n: each block's atomics on the first read's head and on the counts cost
 * more than the loads they would spread (bench/results/auto_look-h100.txt).
 */
template <typename K>
static gpusort_status
onesweep_hist_blocks(size_t n, int *blocks)
{
	constexpr int UNROLL = radix_hist_unroll<K>;
	size_t		want = (n / (16 / sizeof(K)) + UNROLL * RADIX_HIST_THREADS - 1) /
		(UNROLL * RADIX_HIST_THREADS);
	int			dev,
				sms;

	CUDA_TRY(cudaGetDevice(&dev));
	CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	*blocks = want < (size_t) sms * RADIX_HIST_BLOCKS_PER_SM ? (int) want + 1
		: sms * RADIX_HIST_BLOCKS_PER_SM;
	return GPUSORT_OK;
}

/*
 * Launch a first read of n >= 2 keys, asynchronous on the stream: the key
 * range, the digit counts of the plan's places (none for a range read)
 * into the histogram after head, and the summary (with a sample where no
 * place has more than sample_limit digits), valid after
 * onesweep_first_read_wait.  head: ONESWEEP_HEAD_BYTES and the plan's
 * counts, then, at ONESWEEP_SUMMARY_OFFSET, room for the summary -- the
 * layout of the radix sort's temp.
 */
template <typename K>
gpusort_status
onesweep_first_read(const K *keys, size_t n, const digit_plan &plan, void *head,
					int sample_limit, cudaStream_t stream)
{
	first_read_summary *dev = NULL,
			   *host = onesweep_host_summary(&dev);
	first_read_summary *slot = (first_read_summary *) ((unsigned char *) head +
													   ONESWEEP_SUMMARY_OFFSET);
	first_read_head *h = (first_read_head *) head;
	int			hist_blocks = 1;
	gpusort_status st;

	if ((st = onesweep_hist_blocks<K>(n, &hist_blocks)) != GPUSORT_OK)
		return st;
	/* the range and the block counters (the kernel zeroes the counts) */
	CUDA_TRY(cudaMemsetAsync(head, 0, sizeof(first_read_head), stream));
	/* below RADIX_LAZY_COUNT_MAX_N keys a plan with places counts lazily */
	if (plan.passes > 0 && n < RADIX_LAZY_COUNT_MAX_N)
		histogram_kernel<K, radix_hist_unroll<K>, radix_hist_vote<K>, true>
			<<<hist_blocks, RADIX_HIST_THREADS, 0, stream>>>(
				keys, n, (K) 0, plan, onesweep_temp_hist(head), h);
	else
		histogram_kernel<K><<<hist_blocks, RADIX_HIST_THREADS, 0, stream>>>(
			keys, n, (K) 0, plan, onesweep_temp_hist(head), h);
	CUDA_TRY_LAUNCH("histogram_kernel");
	{
		/* launched early where the device can (compute capability 9.0 and up) */
		cudaLaunchConfig_t cfg = {};
		cudaLaunchAttribute early;

		cfg.gridDim = dim3(1);
		cfg.blockDim = dim3(FIRST_READ_SAMPLE);
		cfg.stream = stream;
		early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
		early.val.programmaticStreamSerializationAllowed = 1;
		cfg.attrs = &early;
		cfg.numAttrs = onesweep_early_launch() ? 1 : 0;
		CUDA_TRY(cudaLaunchKernelEx(&cfg, first_read_summary_kernel<K>, keys, n, plan,
									onesweep_temp_hist(head),
									(const first_read_head *) h, sample_limit,
									dev != NULL ? dev : slot, onesweep_summary_seq(true)));
	}
	if (dev == NULL)
		CUDA_TRY(cudaMemcpyAsync(host, slot, sizeof(*host), cudaMemcpyDeviceToHost, stream));
	return GPUSORT_OK;
}

/*
 * The radix sort's first read of n >= 2 keys: every 8-bit place and the key
 * range, into temp; the auto choice passes the most distinct keys it sends
 * to quicksort as sample_limit, so that the same read is its look.
 */
template <typename K>
static inline digit_plan
onesweep_places_plan(void)		/* every 8-bit place of K: the first read's plan */
{
	constexpr int PLACES = (int) sizeof(K) * 8 / RADIX_NARROW_BITS;
	digit_plan	plan;

	plan.passes = PLACES;
	for (int p = 0; p < PLACES; p++)
	{
		plan.shift[p] = p * RADIX_NARROW_BITS;
		plan.bits[p] = RADIX_NARROW_BITS;
	}
	return plan;
}

/*
 * The first read's plan: every 8-bit place of K, the lowest counted
 * RADIX_WIDE_BITS wide (first_read_low_wide: no more counts, and a plan
 * over key - min of at most two passes needs no read of its own).
 */
template <typename K>
static inline digit_plan
onesweep_first_read_plan(void)
{
	digit_plan	plan = onesweep_places_plan<K>();

	plan.bits[0] = RADIX_WIDE_BITS;
	return plan;
}

template <typename K>
gpusort_status
onesweep_count_t(const K *keys, size_t n, void *temp, cudaStream_t stream, int sample_limit = 0)
{
	return onesweep_first_read<K>(keys, n, onesweep_first_read_plan<K>(), temp, sample_limit,
								  stream);
}

/*
 * Wait for the first read launched on the stream; its summary.  In mapped
 * memory the summary is ready once its number (seq, written last) is this
 * read's: the host watches for it instead of waiting for the stream, so
 * that it plans and launches the sort's next kernels while the summary
 * kernel ends (the device idles less between the read and the passes).
 * The stream is asked now and then, so that an error (or a stream done
 * without the number, which would be a bug) ends the wait.
 */
static inline gpusort_status
onesweep_first_read_wait(cudaStream_t stream, const first_read_summary **summary)
{
	first_read_summary *dev;
	first_read_summary *host = onesweep_host_summary(&dev);
	const unsigned int seq = onesweep_summary_seq(false);

	*summary = host;
	if (dev == NULL)
	{
		CUDA_TRY(cudaStreamSynchronize(stream));
		return GPUSORT_OK;
	}
	for (unsigned int polls = 1;; polls++)
	{
		if (*(volatile unsigned int *) &host->seq == seq)
			break;
		if (polls % 64 == 0)
		{
			cudaError_t e = injected_fault("cudaStreamQuery(first read)");

			if (e == cudaSuccess)
				e = cudaStreamQuery(stream);

			if (e == cudaSuccess)
			{
				if (*(volatile unsigned int *) &host->seq == seq)
					break;
				return gpusort_from_cuda(cudaErrorUnknown,
										 "onesweep_first_read_wait: stream done, summary not written");
			}
			if (e != cudaErrorNotReady)
				CUDA_TRY(e);
		}
	}
	/* the fields after the number (the kernel fenced them before it) */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return GPUSORT_OK;
}

/*
 * The radix sort's first read of n >= 2 keys (onesweep_count_t) and the
 * wait for it: *summary, its counts in temp.  A lazy read (fewer than
 * RADIX_LAZY_COUNT_MAX_N keys) may leave keys uncounted where they are not
 * in order after all (summary->complete 0): its counts are then a part of
 * the keys' (each place's distinct digits a lower bound), and the sort
 * makes its plan from the key range and counts again for it
 * (onesweep_plan_from_look).  clear_bytes (a radix sort's look-back
 * regions, onesweep_status_bytes_t, or 0): zeroed by a memset launched
 * behind the read, before the host waits, so that the device clears them
 * while the host wakes, plans and launches, and the sort (precleared) runs
 * no memset between the wait and its first pass.
 */
template <typename K>
gpusort_status
onesweep_look_t(const K *keys, size_t n, void *temp, cudaStream_t stream, int sample_limit,
				const first_read_summary **summary, size_t clear_bytes = 0)
{
	gpusort_status st;

	if ((st = onesweep_count_t<K>(keys, n, temp, stream, sample_limit)) != GPUSORT_OK)
		return st;
	if (clear_bytes > 0)
		CUDA_TRY(cudaMemsetAsync((unsigned char *) temp + ONESWEEP_STATUS_OFFSET - 16, 0,
								 clear_bytes, stream));
	return onesweep_first_read_wait(stream, summary);
}

#endif
