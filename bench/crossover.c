/*
 * crossover.c -- where the GPU starts to beat the CPU radix sort for one
 * gpu_sort() call: for n = 2^10 .. 2^24, the median time of
 *   cpu   - the project's CPU radix sort (one core), keys + row positions;
 *   gpu   - upload keys, sort, download the permutation (what gpu_sort()
 *           pays once the GPU is open: job create, to device, sort, back).
 * Uniform 32-bit keys, fresh per run.  The smallest n from which the GPU is
 * faster at every larger size is the suggested gpusort.gpu_min_elements.
 * Prints a markdown table.  Usage: crossover [runs]   (default 7)
 */
#include <stdio.h>
#include <time.h>

#include "bench_clock.h"
#include "cpu_radix.h"
#include "gpusort_kernels.h"
#include "test_data.h"

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

static double
median(double *v, int k)
{
	qsort(v, k, sizeof(double), cmp_double);
	return v[k / 2];
}

int
main(int argc, char **argv)
{
	int			runs = argc > 1 ? atoi(argv[1]) : 7;
	size_t		max_n = (size_t) 1 << 24;
	uint32_t   *keys = malloc(max_n * sizeof(uint32_t));
	uint32_t   *perm = malloc(max_n * sizeof(uint32_t));
	uint32_t   *scratch = malloc(cpu_radix_scratch_words(max_n) * sizeof(uint32_t));
	double	   *tc = malloc(runs * sizeof(double)),
			   *tg = malloc(runs * sizeof(double));
	uint64_t	rng = (uint64_t) time(NULL) | 1;
	gpusort_device_info info;
	int			count;
	size_t		crossover = 0;

	if (gpusort_device_count(&count) != GPUSORT_OK ||
		gpusort_device_open(0) != GPUSORT_OK ||
		gpusort_device_get_info(0, &info) != GPUSORT_OK)
	{
		printf("skipped: no GPU (%s)\n", gpusort_error_detail());
		return 0;
	}
	printf("# gpu_sort() crossover: CPU radix (1 core) vs GPU round trip, %s, median of %d\n\n",
		   info.name, runs);
	printf("| n | CPU radix ms | GPU ms (create+upload+sort+download) | GPU/CPU |\n|---:|---:|---:|---:|\n");
	for (size_t n = 1024; n <= max_n; n *= 2)
	{
		for (int r = 0; r < runs + 1; r++)
		{
			gpusort_job *job = NULL;
			double		t0;
			gpusort_status st;

			test_fill(keys, n, DIST_UNIFORM, &rng);
			t0 = now_ms();
			cpu_radix_sort_rows((const uint32_t *const *) &keys, 1, n, perm, NULL, scratch, NULL, 1);
			if (r > 0)
				tc[r - 1] = now_ms() - t0;

			t0 = now_ms();
			st = gpusort_job_create(n, 1, &job);
			if (st == GPUSORT_OK)
				st = gpusort_job_upload(job, (const uint32_t *const *) &keys);
			if (st == GPUSORT_OK)
				st = gpusort_job_sort(job);
			if (st == GPUSORT_OK)
				st = gpusort_job_download(job, perm, NULL);
			gpusort_job_destroy(job);
			if (st != GPUSORT_OK)
			{
				printf("GPU sort failed: %s (%s)\n", gpusort_status_message(st), gpusort_error_detail());
				return 1;
			}
			if (r > 0)			/* the first run is a warm-up */
				tg[r - 1] = now_ms() - t0;
		}
		{
			double		c = median(tc, runs),
						g = median(tg, runs);

			printf("| %zu | %.3f | %.3f | %.2f |\n", n, c, g, g / c);
			if (g < c && crossover == 0)
				crossover = n;
			else if (g >= c)
				crossover = 0;
		}
	}
	printf("\nsuggested gpusort.gpu_min_elements: %zu\n", crossover);
	return 0;
}
