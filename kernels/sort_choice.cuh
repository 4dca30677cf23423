/*
 * sort_choice.cuh -- gpusort.algorithm = auto: which GPU sort runs, by key
 * width, n and a cheap look at the keys (the distinct values in a sample
 * of GPUSORT_AUTO_SAMPLE keys spread over the input), with the thresholds
 * of gpusort_kernels.h.  Shared by the job API and the benchmark.
 */
#ifndef GPUSORT_SORT_CHOICE_CUH
#define GPUSORT_SORT_CHOICE_CUH

#include <algorithm>
#include <stdio.h>

#include "cuda_check.cuh"

/* out[i] = keys[i * n / SAMPLE] */
template <typename K>
__global__ void
sample_kernel(const K *keys, size_t n, K *out)
{
	for (int i = threadIdx.x; i < GPUSORT_AUTO_SAMPLE; i += blockDim.x)
		out[i] = keys[(size_t) i * n / GPUSORT_AUTO_SAMPLE];
}

/* Distinct keys in a sample spread over the input (scratch: SAMPLE keys). */
template <typename K>
static gpusort_status
sample_distinct(const K *keys, size_t n, K *scratch, int *distinct)
{
	K			h[GPUSORT_AUTO_SAMPLE];

	sample_kernel<K><<<1, 256>>>(keys, n, scratch);
	CUDA_TRY_LAUNCH("sample_kernel");
	CUDA_TRY(cudaMemcpy(h, scratch, sizeof(h), cudaMemcpyDeviceToHost));
	std::sort(h, h + GPUSORT_AUTO_SAMPLE);
	*distinct = (int) (std::unique(h, h + GPUSORT_AUTO_SAMPLE) - h);
	return GPUSORT_OK;
}

/*
 * The algorithm for n keys (key_words 32-bit words each; keys holds them as
 * K when key_words <= 2) and the reason, into why.  A forced choice is kept
 * unless the keys are too wide for it.
 */
template <typename K>
static gpusort_status
choose_algorithm(const K *keys, size_t n, K *scratch, int key_words,
				 gpusort_algorithm requested, gpusort_algorithm *chosen,
				 char *why, size_t len)
{
	int			distinct = 0;
	gpusort_status st;

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
	if (n < (key_words == 2 ? GPUSORT_AUTO_QUICKSORT_MIN_N_64 : GPUSORT_AUTO_QUICKSORT_MIN_N_32))
	{
		*chosen = GPUSORT_ALGO_RADIX;
		snprintf(why, len, "%zu rows: below the quicksort threshold for %d-bit keys", n,
				 32 * key_words);
		return GPUSORT_OK;
	}
	if ((st = sample_distinct(keys, n, scratch, &distinct)) != GPUSORT_OK)
		return st;
	if (distinct >= 2 && distinct <= GPUSORT_AUTO_QUICKSORT_MAX_DISTINCT)
	{
		*chosen = GPUSORT_ALGO_QUICKSORT;
		snprintf(why, len, "few distinct keys (%d in a sample of %d)", distinct,
				 GPUSORT_AUTO_SAMPLE);
	}
	else
	{
		*chosen = GPUSORT_ALGO_RADIX;
		snprintf(why, len, "%d distinct key%s in a sample of %d", distinct,
				 distinct == 1 ? "" : "s", GPUSORT_AUTO_SAMPLE);
	}
	return GPUSORT_OK;
}

#endif
