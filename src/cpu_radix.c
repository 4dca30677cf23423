/*
 * cpu_radix.c -- stable LSD radix sort (8-bit digits) of encoded 32-bit key
 * words carrying row positions, for machines without a usable GPU and for
 * inputs too small to be worth a GPU round trip.
 *
 * One read of a key word counts all four digit places; a place where every
 * key has the same digit is skipped.  Multi-word keys are sorted word by
 * word from the least significant, gathering each word in the order the
 * previous words left; the digits are counted in row order first (counts
 * need no order), so a word that is the same in every row (a shared
 * prefix, the zero bytes past short strings) is never gathered at all.
 */
#include <stdbool.h>
#include <string.h>

#include "cpu_radix.h"

#define RADIX 256

/* elements a loop handles between two calls of the interrupt check */
#define CHECK_EVERY ((size_t) 1 << 20)

/* Calls check (if any) when i starts a new block of CHECK_EVERY elements. */
static inline void
maybe_check(size_t i, void (*check) (void))
{
	if (check && (i & (CHECK_EVERY - 1)) == 0)
		check();
}

/* One stable counting pass: (kin, vin) -> (kout, vout) by digit at shift. */
static void
radix_pass(const uint32_t *kin, const uint32_t *vin, uint32_t *kout,
		   uint32_t *vout, size_t n, int shift, const size_t *count,
		   void (*interrupt_check) (void))
{
	size_t		offset[RADIX];
	size_t		sum = 0;

	for (int d = 0; d < RADIX; d++)
	{
		offset[d] = sum;
		sum += count[d];
	}
	for (size_t i = 0; i < n; i++)
	{
		uint32_t	k = kin[i];
		size_t		pos;

		maybe_check(i, interrupt_check);
		pos = offset[(k >> shift) & (RADIX - 1)]++;
		kout[pos] = k;
		vout[pos] = vin[i];
	}
}

int
cpu_radix_sort_rows(const uint32_t *const *words, int nwords, size_t n,
					uint32_t *perm, uint32_t *keys_out, uint32_t *scratch,
					void (*interrupt_check) (void))
{
	uint32_t   *ka = scratch;
	uint32_t   *kb = scratch + n;
	uint32_t   *vb = scratch + 2 * n;
	uint32_t   *keys = ka;		/* current keys, in the order of perm */
	uint32_t   *vals = perm;
	int			passes = 0;
	size_t		count[4][RADIX];

	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t) i;
	if (n == 0)
		return 0;

	for (int w = nwords - 1; w >= 0; w--)
	{
		const uint32_t *word = words[w];

		bool		constant = true;

		/* all four histograms, read in row order */
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
		{
			uint32_t	k = word[i];

			maybe_check(i, interrupt_check);
			count[0][k & 0xff]++;
			count[1][(k >> 8) & 0xff]++;
			count[2][(k >> 16) & 0xff]++;
			count[3][k >> 24]++;
		}
		for (int p = 0; p < 4; p++)
			constant = constant && count[p][(word[0] >> (8 * p)) & 0xff] == n;
		if (constant)
			continue;			/* every key has this word: nothing to gather */
		/* the keys of this word in the current order */
		for (size_t i = 0; i < n; i++)
		{
			maybe_check(i, interrupt_check);
			keys[i] = word[vals[i]];
		}
		for (int p = 0; p < 4; p++)
		{
			uint32_t   *kout,
					   *vout;

			if (count[p][(keys[0] >> (8 * p)) & 0xff] == n)
				continue;		/* every key has this digit */
			kout = keys == ka ? kb : ka;
			vout = vals == perm ? vb : perm;
			radix_pass(keys, vals, kout, vout, n, 8 * p, count[p], interrupt_check);
			keys = kout;
			vals = vout;
			passes++;
		}
	}
	if (vals != perm)
		memcpy(perm, vals, n * sizeof(uint32_t));
	/* (keys holds word 0 in order only where word 0 was gathered) */
	if (keys_out && nwords > 0)
		for (size_t i = 0; i < n; i++)
			keys_out[i] = words[0][perm[i]];
	return passes;
}
