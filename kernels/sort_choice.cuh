/*
 * sort_choice.cuh -- gpusort.algorithm = auto: which GPU sort runs, by key
 * width, n and a cheap look at the keys, with the thresholds of
 * gpusort_kernels.h.  Shared by the job API and the benchmark.
 *
 * The look is the radix sort's own first read (every 8-bit place's digit
 * counts and the key range, onesweep_count_t).  All keys equal, or more
 * distinct digits in one byte than quicksort's limit (so more distinct
 * keys): radix, which goes on from that read, so the look costs it
 * nothing.  Only when every byte takes few values does a sample of
 * GPUSORT_AUTO_SAMPLE keys, counted on the device, tell few distinct keys
 * (quicksort, which takes its key range from the first read) from many
 * combinations of few digits (radix).
 */
#ifndef GPUSORT_SORT_CHOICE_CUH
#define GPUSORT_SORT_CHOICE_CUH

#include <stdio.h>

#include "cuda_check.cuh"
#include "onesweep.cuh"

static_assert(GPUSORT_AUTO_SAMPLE <= 1024, "the sample is one block, a key a thread");

/* What auto's look found, for the sort it picked. */
struct sort_look
{
	bool		counted;		/* *counts holds the radix sort's first read */
	int			distinct;		/* distinct keys in the sample */
	onesweep_counts *counts;
};

/*
 * *distinct = the distinct values among keys[i * n / SAMPLE]: a thread
 * counts its key unless an earlier sample key equals it (SAMPLE^2 / 2
 * comparisons of shared memory, cheaper than sorting the sample).
 */
template <typename K>
__global__ void __launch_bounds__(GPUSORT_AUTO_SAMPLE)
sample_distinct_kernel(const K *__restrict__ keys, size_t n, int *distinct)
{
	__shared__ K s[GPUSORT_AUTO_SAMPLE];
	const int	t = threadIdx.x;
	bool		first = true;

	s[t] = keys[(size_t) t * n / GPUSORT_AUTO_SAMPLE];
	__syncthreads();
	for (int j = 0; j < t; j++)
		first &= s[j] != s[t];

	int			count = __syncthreads_count(first);

	if (t == 0)
		*distinct = count;
}

/*
 * The algorithm for n keys (key_words 32-bit words each; keys holds them as
 * K when key_words <= 2) and the reason, into why.  A forced choice is kept
 * unless the keys are too wide for it.  An auto choice that looks at the
 * keys leaves look->counted set: temp (the radix sort's scratch, at least
 * onesweep_temp_bytes) then holds the first read and *look->counts its host
 * copy, for onesweep_sort_counted or quicksort's known range.
 */
template <typename K>
static gpusort_status
choose_algorithm(const K *keys, size_t n, void *temp, int key_words,
				 gpusort_algorithm requested, gpusort_algorithm *chosen, char *why,
				 size_t len, sort_look *look)
{
	const bool	wide = key_words == 2;
	gpusort_status st;

	look->counted = false;
	look->distinct = 0;
	look->counts = onesweep_host_counts();
	if (requested != GPUSORT_ALGO_AUTO)
	{
		*chosen = requested;
		if (requested != GPUSORT_ALGO_RADIX && key_words > 2)
		{
			*chosen = GPUSORT_ALGO_RADIX;
			snprintf(why, len, "%s takes keys of up to 64 bits",
					 gpusort_algorithm_name(requested));
		}
		else
			snprintf(why, len, "gpusort.algorithm = %s", gpusort_algorithm_name(requested));
		return GPUSORT_OK;
	}
	if (key_words > 2)
	{
		*chosen = GPUSORT_ALGO_RADIX;
		snprintf(why, len, "keys wider than 64 bits");
		return GPUSORT_OK;
	}
	if (n <= GPUSORT_AUTO_BITONIC_MAX_N)
	{
		*chosen = GPUSORT_ALGO_BITONIC;
		snprintf(why, len, "%zu rows fit one block", n);
		return GPUSORT_OK;
	}
	if (n < (wide ? GPUSORT_AUTO_QUICKSORT_MIN_N_64 : GPUSORT_AUTO_QUICKSORT_MIN_N_32))
	{
		*chosen = GPUSORT_ALGO_RADIX;
		snprintf(why, len, "%zu rows: below the quicksort threshold for %d-bit keys", n,
				 32 * key_words);
		return GPUSORT_OK;
	}

	/* the look: first the radix sort's own first read */
	const int	limit = wide ? GPUSORT_AUTO_QUICKSORT_MAX_DISTINCT_64
		: GPUSORT_AUTO_QUICKSORT_MAX_DISTINCT_32;
	int			most = 0;		/* most distinct digits of one 8-bit place */

	if ((st = onesweep_count_t<K>(keys, n, temp, 0, look->counts)) != GPUSORT_OK ||
		(st = onesweep_range_wait(0, look->counts->range)) != GPUSORT_OK)
		return st;
	look->counted = true;
	if (look->counts->range[0] == look->counts->range[1])
	{
		*chosen = GPUSORT_ALGO_RADIX;
		snprintf(why, len, "all keys equal (the first read shows it)");
		return GPUSORT_OK;
	}
	for (int p = 0; p < (int) sizeof(K) * 8 / RADIX_NARROW_BITS; p++)
	{
		const uint32_t *h = look->counts->hist + p * RADIX_HIST_STRIDE;
		int			used = 0;

		for (int d = 0; d < (1 << RADIX_NARROW_BITS); d++)
			used += h[d] != 0;
		most = used > most ? used : most;
	}
	if (most > limit)
	{
		/* at least that many distinct keys: no sample needed */
		*chosen = GPUSORT_ALGO_RADIX;
		snprintf(why, len, "%d distinct digits in one byte of the keys", most);
		return GPUSORT_OK;
	}

	/* every byte takes few values: the sample tells few keys from many combinations */
	sample_distinct_kernel<K><<<1, GPUSORT_AUTO_SAMPLE>>>(
		keys, n, (int *) ((char *) temp + ONESWEEP_LOOK_OFFSET));
	CUDA_TRY_LAUNCH("sample_distinct_kernel");
	CUDA_TRY(cudaMemcpy(&look->distinct, (char *) temp + ONESWEEP_LOOK_OFFSET, sizeof(int),
						cudaMemcpyDeviceToHost));
	if (look->distinct <= limit)
	{
		*chosen = GPUSORT_ALGO_QUICKSORT;
		snprintf(why, len, "few distinct keys (%d in a sample of %d)", look->distinct,
				 GPUSORT_AUTO_SAMPLE);
	}
	else
	{
		*chosen = GPUSORT_ALGO_RADIX;
		snprintf(why, len, "%d distinct keys in a sample of %d", look->distinct,
				 GPUSORT_AUTO_SAMPLE);
	}
	return GPUSORT_OK;
}

#endif
