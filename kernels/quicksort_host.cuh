/*
 * quicksort_host.cuh -- GPU-Quicksort's host-side helpers: its tuning
 * constants as the tests may set them, the sizes of its scratch, the
 * pinned host buffers it keeps, the multi-pivot round's launch, the tests'
 * stage timing and the split rounds' sizes.  Included by quicksort.cu only.
 */
#ifndef GPUSORT_QUICKSORT_HOST_CUH
#define GPUSORT_QUICKSORT_HOST_CUH

#include <algorithm>
#include <time.h>
#include <vector>
#include <cuda_runtime.h>

#include "cuda_check.cuh"
#include "first_read.cuh"
#include "quicksort.cuh"
#include "quicksort_config.cuh"
#include "quicksort_multi.cuh"
#include "quicksort_partition.cuh"
#include "quicksort_split.cuh"

/* A tuning constant: the tests' value where they set one, else dflt; within [lo, hi]. */
static long
qs_tuning(long test_value, long dflt, long lo, long hi)
{
	return std::min(std::max(test_value != 0 ? test_value : dflt, lo), hi);
}

/* Leaves sent to the device at a time (see qs_leaf_queue). */
static size_t
qs_leaf_batch(void)
{
	return (size_t) qs_tuning(gpusort_test_hooks.quicksort_leaf_batch, QS_LEAF_BATCH, 64,
							  QS_LEAF_BATCH_LIMIT);
}

/*
 * Sequences phase one may split in a round for n keys: QS_MAXSEQ, and no
 * more than n's leaves; a multiple of 64, so that the parts of temp stay
 * 8-byte aligned.
 */
static size_t
qs_max_sequences(size_t n)
{
	const size_t limit = (size_t) qs_tuning(gpusort_test_hooks.quicksort_max_sequences,
											QS_MAXSEQ, 16, QS_MAXSEQ_LIMIT);

	return (std::min(limit, n / QS_LEAF + 16) + 63) / 64 * 64;
}

/*
 * Sections (tasks) per SM a phase-one round splits its pairs into:
 * QS_TASKS_PER_SM.  More sections than the SM holds blocks at once balance
 * the blocks' uneven pace.
 */
static int
qs_tasks_per_sm(void)
{
	return (int) qs_tuning(gpusort_test_hooks.quicksort_tasks_per_sm, QS_TASKS_PER_SM, 1,
						   QS_TASKS_PER_SM_LIMIT);
}

/* A round's tasks: every sequence's sections of at most one chunk each. */
static size_t
qs_max_tasks(size_t n)
{
	return qs_max_sequences(n) + QS_EXTRA_TASKS;
}

static size_t qs_split_temp_bytes(size_t n, int key_bytes);

/*
 * Leaves the device's leaf array holds (the leaf queue's ring): twice the
 * sequences phase one leaves, and room for the split rounds' (two joined
 * buckets hold more than QS_LEAF pairs, so fewer than 2n / QS_LEAF of
 * them, plus the long ones).
 */
static size_t
qs_leaf_capacity(size_t n)
{
	return 2 * qs_max_sequences(n) + 4 * (n / QS_LEAF);
}


struct qs_work
{
	uint32_t	start,
				end;
	int			buf;
	uint64_t	min,
				max;
	bool		nosplit = false;	/* a split round barely shortened it: two-way rounds */
};

/*
 * Pinned host buffers kept between sorts for the process's life (freed by
 * quicksort_release_host_buffers): the multi-pivot round's results, and
 * qs_pinned's slots.
 */
static qs_multi *multi_pinned = NULL;
static bool multi_tried = false;
static void *pinned_buf[3];
static size_t pinned_cap[3];
static bool pinned_failed = false;


/* The host's copy of the multi-pivot round's results (pinned where it can be). */
static qs_multi *
qs_host_multi(void)
{
	qs_multi *&pinned = multi_pinned;
	static qs_multi pageable;
	bool	   &tried = multi_tried;

	if (!tried)
	{
		tried = true;
		if (cudaMallocHost((void **) &pinned, sizeof(qs_multi)) != cudaSuccess)
		{
			(void) cudaGetLastError();
			pinned = NULL;
		}
	}
	return pinned != NULL ? pinned : &pageable;
}

/*
 * The multi-pivot round: the sample's pivots (qs_sample_pivots_kernel),
 * and where it has at most QS_PIVOTS_MAX distinct keys every pair from
 * buffer 0 into its bucket in buffer 1 (the kernels see the pivot count on
 * the device: no round trip before them); the buckets become the work of
 * the rounds after (those of one pivot finished).  Moves nothing, and
 * leaves *work empty, where the sample has more distinct keys.
 */
template <typename K>
static gpusort_status
qs_multi_round(K *keys[2], uint32_t *vals[2], size_t n, const unsigned long long range[2],
			   qs_multi *d_m, qs_multi *h, int sms, cudaStream_t stream,
			   std::vector<qs_work> *work, quicksort_stats *stats)
{
	const unsigned grid = (unsigned) std::min<size_t>((n + QS_MULTI_STEP - 1) / QS_MULTI_STEP,
													  (size_t) sms * QS_MULTI_BLOCKS_PER_SM);
	uint32_t	at = 0;
	int			k;

	qs_sample_pivots_kernel<K><<<1, FIRST_READ_SAMPLE, 0, stream>>>(keys[0], n, d_m, NULL);
	CUDA_TRY_LAUNCH("qs_sample_pivots_kernel");
	qs_multi_count_kernel<K><<<grid, QS_THREADS, 0, stream>>>(keys[0], n, d_m);
	CUDA_TRY_LAUNCH("qs_multi_count_kernel");
	qs_multi_scatter_kernel<K><<<grid, QS_THREADS, 0, stream>>>(keys[0], vals[0], n, d_m,
																keys[1], vals[1]);
	CUDA_TRY_LAUNCH("qs_multi_scatter_kernel");
	CUDA_TRY(cudaMemcpyAsync(h, d_m, sizeof(qs_multi), cudaMemcpyDeviceToHost, stream));
	CUDA_TRY(cudaStreamSynchronize(stream));
	if ((k = h->pivots) == 0)
		return GPUSORT_OK;		/* the sample had more distinct keys: nothing moved */
	stats->phase_one_rounds++;
	for (int b = 0; b < 2 * k + 1; b++)
	{
		const uint32_t c = h->count[b];
		const int	j = b >> 1;

		if (c == 0)
			continue;
		if (h->cursor[b] != c)	/* every counted pair placed, or the kernels went wrong */
			return gpusort_from_cuda(cudaErrorUnknown, "qs_multi_round: pairs placed != counted");
		if (b & 1)
			work->push_back({at, at + c, 1, h->pivot[j], h->pivot[j]});
		else
			/* keys strictly between the pivots around the bucket */
			work->push_back({at, at + c, 1,
							 j == 0 ? range[0] : (unsigned long long) (K) (h->pivot[j - 1] + 1),
							 j == k ? range[1] : (unsigned long long) (K) (h->pivot[j] - 1)});
		at += c;
	}
	return at == n ? GPUSORT_OK
		: gpusort_from_cuda(cudaErrorUnknown, "qs_multi_round: buckets do not add up to n");
}

/*
 * The tests' stage timing (gpusort_test_hooks.quicksort_stage): each stage's
 * time, the stream synchronised after it.
 */
static void
qs_trace(cudaStream_t stream, const char *what, size_t count)
{
	static struct timespec last;
	struct timespec now;

	if (gpusort_test_hooks.quicksort_stage == NULL)
		return;
	(void) cudaStreamSynchronize(stream);
	clock_gettime(CLOCK_MONOTONIC, &now);
	gpusort_test_hooks.quicksort_stage(what, count, what == NULL ? 0.0
									   : (now.tv_sec - last.tv_sec) * 1e3 +
									   (now.tv_nsec - last.tv_nsec) / 1e6);
	last = now;
}

/*
 * A pinned host buffer of at least bytes (slot 0: the split rounds'
 * results, 1: the leaves, 2: the split rounds' sequences and tasks going
 * in), kept and grown between calls; NULL where pinned memory cannot be
 * had (then pageable memory is copied, more slowly: a copy from it waits
 * for the stream's work so far, so the device idles while the host
 * launches what follows).
 */
static void *
qs_pinned(int slot, size_t bytes)
{
	void	  **buf = pinned_buf;
	size_t	   *cap = pinned_cap;
	bool	   &failed = pinned_failed;

	if (bytes <= cap[slot])
		return buf[slot];
	if (failed)
		return NULL;
	if (buf[slot] != NULL)
		(void) cudaFreeHost(buf[slot]);
	buf[slot] = NULL;
	cap[slot] = 0;
	bytes = std::max<size_t>(2 * bytes, (size_t) 1 << 20);
	if (cudaMallocHost(&buf[slot], bytes) != cudaSuccess)
	{
		(void) cudaGetLastError();
		buf[slot] = NULL;
		failed = true;
		return NULL;
	}
	cap[slot] = bytes;
	return buf[slot];
}

/* Room the split rounds need in temp for n pairs (none below QS_SPLIT_MIN). */
struct qs_split_caps
{
	size_t		seqs,
				tasks,
				pivots,
				buckets;
};

static qs_split_caps
qs_split_capacity(size_t n)
{
	qs_split_caps c = {0, 0, 0, 0};

	if (n <= QS_SPLIT_MIN)
		return c;
	/* the sequences of a round are disjoint and longer than QS_SPLIT_MIN */
	c.seqs = n / QS_SPLIT_MIN + 1;
	/* a round's tasks: up to 4 a SM of 1024 SMs, and one more per sequence (shorter steps: 64-bit keys) */
	c.tasks = std::min<size_t>(4096, n / qs_split_items<uint64_t>::STEP + 1) + c.seqs;
	/* kmax <= len / QS_SPLIT_TARGET */
	c.pivots = n / QS_SPLIT_TARGET + 64;
	c.buckets = 2 * c.pivots + c.seqs;
	return c;
}

static size_t
qs_split_temp_bytes(size_t n, int key_bytes)
{
	const qs_split_caps c = qs_split_capacity(n);

	if (c.seqs == 0)
		return 0;
	return 16 + c.seqs * sizeof(qs_split_seq) + c.tasks * sizeof(qs_split_task) +
		c.tasks * QS_SPLIT_BUCKETS * sizeof(uint32_t) +	/* counts */
		(c.seqs + c.buckets) * sizeof(uint32_t) +			/* npiv, totals */
		c.pivots * (size_t) key_bytes + 16 +
		n * sizeof(uint16_t) + 16;							/* each pair's bucket */
}

/*
 * Whether the split rounds run for n pairs (the tests may ask for the
 * paper's two-way phase one only: gpusort_test_hooks.quicksort_no_split).
 */
static bool
qs_split_applies(size_t n)
{
	return !gpusort_test_hooks.quicksort_no_split && n > QS_SPLIT_MIN;
}

/* The most pivots a sequence of len > QS_SPLIT_MIN pairs gets: buckets of about QS_SPLIT_TARGET. */
static uint32_t
qs_split_kmax(size_t len)
{
	return (uint32_t) std::min<size_t>(QS_SPLIT_PIVOTS, len / QS_SPLIT_TARGET - 1);
}

/* An event that is destroyed with its holder (on every return). */
struct qs_event
{
	cudaEvent_t ev = NULL;

	~qs_event()
	{
		if (ev != NULL)
			(void) cudaEventDestroy(ev);
	}
};

/* A stream that is destroyed with its holder (once its work is done). */
struct qs_stream
{
	cudaStream_t s = NULL;

	~qs_stream()
	{
		if (s != NULL)
			(void) cudaStreamDestroy(s);
	}
};

#endif
