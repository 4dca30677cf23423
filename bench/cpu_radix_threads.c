/*
 * bench/cpu_radix_threads.c -- the CPU path's radix sort with 1 to 16
 * threads: 10M rows of uniform random keys of 1 and 2 words, best of 3
 * (ms), each result checked sorted.  No PostgreSQL needed:
 *   make bench/cpu_radix_threads && bench/cpu_radix_threads
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>

#include "bench_clock.h"
#include "cpu_radix.h"

int
main(void)
{
	size_t		n = 10000000;
	uint32_t   *w = malloc(2 * n * sizeof(uint32_t));
	uint32_t   *perm = malloc(n * sizeof(uint32_t));
	uint32_t   *scratch = malloc(cpu_radix_scratch_words(n) * sizeof(uint32_t));
	uint64_t	x = 88172645463325252ull;

	if (!w || !perm || !scratch)
		return 1;
	for (size_t i = 0; i < 2 * n; i++)
	{
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = (uint32_t) x;
	}
	printf("rows\twords\tthreads\tbest_ms\n");
	for (int nwords = 1; nwords <= 2; nwords++)
	{
		const uint32_t *cols[2] = {w, w + n};

		for (int t = 1; t <= 16; t *= 2)
		{
			double		best = 1e30;

			for (int r = 0; r < 3; r++)
			{
				double		t0 = now_ms();

				cpu_radix_sort_rows(cols, nwords, n, perm, NULL, scratch, NULL, t);
				if (now_ms() - t0 < best)
					best = now_ms() - t0;
			}
			for (size_t i = 1; i < n; i++)
				if (cols[0][perm[i - 1]] > cols[0][perm[i]])
				{
					printf("NOT SORTED at %zu\n", i);
					return 1;
				}
			printf("%zu\t%d\t%d\t%.1f\n", n, nwords, t, best);
		}
	}
	return 0;
}
