/*
 * cpu_radix.h -- the CPU path: stable LSD radix sort of encoded keys.
 *
 * Same contract as the GPU job (kernels/gpusort_kernels.h): rows whose keys
 * are nwords 32-bit words each (words[w][i]: word w of row i, word 0 most
 * significant), sorted
 * stably; the result is the sorting permutation.  Plain C; the caller owns
 * all memory.
 */
#ifndef GPUSORT_CPU_RADIX_H
#define GPUSORT_CPU_RADIX_H

#include <stddef.h>
#include <stdint.h>

/* Number of uint32_t words of scratch space cpu_radix_sort_rows needs. */
static inline size_t
cpu_radix_scratch_words(size_t n)
{
	return 3 * n;
}

/*
 * Write into perm (n entries) the stable permutation that sorts the rows by
 * their key words; keys_out (may be NULL) receives word 0 in sorted order.
 * Returns the number of 8-bit digit passes run (constant places are skipped).
 * interrupt_check, if not NULL, is called between passes.  nthreads
 * threads share each pass out where the rows are many (run_threads.h);
 * the result is the same with any number.
 */
int			cpu_radix_sort_rows(const uint32_t *const *words, int nwords, size_t n,
								uint32_t *perm, uint32_t *keys_out,
								uint32_t *scratch,
								void (*interrupt_check) (void), int nthreads);

#endif
