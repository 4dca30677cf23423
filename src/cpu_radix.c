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
 *
 * Keys of more than two words whose first two words (8 bytes) rarely tie,
 * as a sample of the rows shows (uuids, most text), are sorted by those two
 * words only, and each run of rows tied on them is then ordered by the
 * remaining words with a stable merge sort: half the passes of sorting all
 * of them, for a scan of the sorted first words.
 *
 * With several threads (at least PARALLEL_MIN_ROWS rows), each pass is cut
 * into one block of rows per thread: every thread counts its block's
 * digits, the counts give each (thread, digit) its place in the output in
 * block order, and every thread scatters its block -- the same stable
 * order as one thread's pass.  The histograms, the gathering of a word's
 * keys and the identity permutation are shared out the same way.  The
 * threads (run_threads.h) only read and write these arrays; the interrupt
 * check runs between the steps.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_radix.h"
#include "run_threads.h"

#define RADIX 256

/* fewest rows sorted with more than one thread */
#define PARALLEL_MIN_ROWS ((size_t) 1 << 18)

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

/* What one thread does in one step of a parallel LSD sort, on rows [from, to). */
typedef enum RadixStep
{
	STEP_IDENTITY,				/* perm[i] = i */
	STEP_HISTOGRAMS,			/* count4: the four digits of word[i] */
	STEP_GATHER,				/* kout[i] = word[vin[i]] */
	STEP_COUNT,					/* count: digit at shift of kin[i] */
	STEP_SCATTER				/* (kin, vin)[i] to (kout, vout) at count (the block's places) */
} RadixStep;

typedef struct RadixPart
{
	RadixStep	step;
	size_t		from;
	size_t		to;
	const uint32_t *word;
	const uint32_t *kin;
	const uint32_t *vin;
	uint32_t   *kout;
	uint32_t   *vout;
	int			shift;
	size_t		count[RADIX];
	size_t		count4[4][RADIX];
} RadixPart;

static void
radix_step(void *arg)
{
	RadixPart  *p = (RadixPart *) arg;

	switch (p->step)
	{
		case STEP_IDENTITY:
			for (size_t i = p->from; i < p->to; i++)
				p->vout[i] = (uint32_t) i;
			break;
		case STEP_HISTOGRAMS:
			memset(p->count4, 0, sizeof(p->count4));
			for (size_t i = p->from; i < p->to; i++)
			{
				uint32_t	k = p->word[i];

				p->count4[0][k & 0xff]++;
				p->count4[1][(k >> 8) & 0xff]++;
				p->count4[2][(k >> 16) & 0xff]++;
				p->count4[3][k >> 24]++;
			}
			break;
		case STEP_GATHER:
			for (size_t i = p->from; i < p->to; i++)
				p->kout[i] = p->word[p->vin[i]];
			break;
		case STEP_COUNT:
			memset(p->count, 0, sizeof(p->count));
			for (size_t i = p->from; i < p->to; i++)
				p->count[(p->kin[i] >> p->shift) & (RADIX - 1)]++;
			break;
		case STEP_SCATTER:
			for (size_t i = p->from; i < p->to; i++)
			{
				uint32_t	k = p->kin[i];
				size_t		pos = p->count[(k >> p->shift) & (RADIX - 1)]++;

				p->kout[pos] = k;
				p->vout[pos] = p->vin[i];
			}
			break;
	}
}

/* One step on rows [0, n) cut into nparts blocks (parts' other fields set). */
static void
run_step(RadixPart *parts, int nparts, RadixStep step, size_t n)
{
	for (int t = 0; t < nparts; t++)
	{
		parts[t].step = step;
		parts[t].from = n * t / nparts;
		parts[t].to = n * (t + 1) / nparts;
	}
	run_thread_parts(radix_step, parts, sizeof(RadixPart), nparts);
}

/*
 * The parallel LSD sort: lsd_sort's contract, with nparts threads.  The
 * parts (RUN_THREADS_MAX of them, about 10 kB each) are the caller's.
 */
static int
lsd_sort_parallel(const uint32_t *const *words, int nwords, size_t n, uint32_t *perm,
				  uint32_t *scratch, const uint32_t **sorted_w0,
				  void (*interrupt_check) (void), RadixPart *parts, int nparts)
{
	uint32_t   *ka = scratch;
	uint32_t   *kb = scratch + n;
	uint32_t   *vb = scratch + 2 * n;
	uint32_t   *keys = ka;
	uint32_t   *vals = perm;
	int			passes = 0;
	bool		gathered_w0 = false;

	for (int t = 0; t < nparts; t++)
		parts[t].vout = perm;
	run_step(parts, nparts, STEP_IDENTITY, n);
	for (int w = nwords - 1; w >= 0; w--)
	{
		const uint32_t *word = words[w];
		size_t		count[4][RADIX];
		bool		constant = true;

		if (interrupt_check)
			interrupt_check();
		for (int t = 0; t < nparts; t++)
			parts[t].word = word;
		run_step(parts, nparts, STEP_HISTOGRAMS, n);
		memset(count, 0, sizeof(count));
		for (int t = 0; t < nparts; t++)
			for (int pl = 0; pl < 4; pl++)
				for (int d = 0; d < RADIX; d++)
					count[pl][d] += parts[t].count4[pl][d];
		for (int pl = 0; pl < 4; pl++)
			constant = constant && count[pl][(word[0] >> (8 * pl)) & 0xff] == n;
		if (constant)
			continue;
		for (int t = 0; t < nparts; t++)
		{
			parts[t].vin = vals;
			parts[t].kout = keys;
		}
		run_step(parts, nparts, STEP_GATHER, n);
		gathered_w0 = w == 0;
		for (int pl = 0; pl < 4; pl++)
		{
			uint32_t   *kout,
					   *vout;
			size_t		sum = 0;

			if (count[pl][(keys[0] >> (8 * pl)) & 0xff] == n)
				continue;
			if (interrupt_check)
				interrupt_check();
			kout = keys == ka ? kb : ka;
			vout = vals == perm ? vb : perm;
			for (int t = 0; t < nparts; t++)
			{
				parts[t].kin = keys;
				parts[t].vin = vals;
				parts[t].kout = kout;
				parts[t].vout = vout;
				parts[t].shift = 8 * pl;
			}
			run_step(parts, nparts, STEP_COUNT, n);
			/* block t's rows of digit d go after every earlier block's and digit's */
			for (int d = 0; d < RADIX; d++)
				for (int t = 0; t < nparts; t++)
				{
					size_t		c = parts[t].count[d];

					parts[t].count[d] = sum;
					sum += c;
				}
			run_step(parts, nparts, STEP_SCATTER, n);
			keys = kout;
			vals = vout;
			passes++;
		}
	}
	if (vals != perm)
		memcpy(perm, vals, n * sizeof(uint32_t));
	*sorted_w0 = gathered_w0 ? keys : NULL;
	return passes;
}

/*
 * The LSD sort of the rows by words 0 .. nwords-1 into perm (scratch: 3n
 * words); *sorted_w0 is word 0 in sorted order (in scratch) where the last
 * pass gathered it, NULL where every row has the same word 0.  Returns the
 * digit passes run.
 */
static int
lsd_sort(const uint32_t *const *words, int nwords, size_t n, uint32_t *perm,
		 uint32_t *scratch, const uint32_t **sorted_w0, void (*interrupt_check) (void),
		 int nthreads)
{
	uint32_t   *ka = scratch;
	uint32_t   *kb = scratch + n;
	uint32_t   *vb = scratch + 2 * n;
	uint32_t   *keys = ka;		/* current keys, in the order of perm */
	uint32_t   *vals = perm;
	int			passes = 0;
	bool		gathered_w0 = false;	/* keys holds word 0 */
	size_t		count[4][RADIX];

	*sorted_w0 = NULL;
	if (nthreads > 1 && n >= PARALLEL_MIN_ROWS)
	{
		RadixPart	parts[RUN_THREADS_MAX];

		return lsd_sort_parallel(words, nwords, n, perm, scratch, sorted_w0, interrupt_check,
								 parts, nthreads < RUN_THREADS_MAX ? nthreads : RUN_THREADS_MAX);
	}
	for (size_t i = 0; i < n; i++)
	{
		maybe_check(i, interrupt_check);
		perm[i] = (uint32_t) i;
	}
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
		gathered_w0 = w == 0;
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
	*sorted_w0 = gathered_w0 ? keys : NULL;
	return passes;
}

/* words sorted by the LSD before the remaining ones order the ties */
#define PREFIX_WORDS 2
/* fewer rows than this are sorted by all their words at once */
#define PREFIX_MIN_ROWS ((size_t) 1 << 16)
/* rows sampled to see whether the first words rarely tie */
#define PREFIX_SAMPLE 4096

static int
compare_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return (x > y) - (x < y);
}

/*
 * Do rows rarely tie on their first two words?  At most one in 64 of an
 * evenly spread sample has a sampled neighbour with the same two words.
 * sample: room for PREFIX_SAMPLE entries.
 */
static bool
prefix_ties_rare(const uint32_t *const *words, size_t n, uint64_t *sample)
{
	size_t		s = n < PREFIX_SAMPLE ? n : PREFIX_SAMPLE,
				tied = 0;

	for (size_t i = 0; i < s; i++)
	{
		size_t		row = i * (n / s);

		sample[i] = (uint64_t) words[0][row] << 32 | words[1][row];
	}
	qsort(sample, s, sizeof(uint64_t), compare_u64);
	for (size_t i = 1; i < s; i++)
		tied += sample[i] == sample[i - 1];
	return tied * 64 <= s;
}

/* Rows a and b by words PREFIX_WORDS .. nwords-1: -1, 0 or 1. */
static inline int
compare_rest(const uint32_t *const *words, int nwords, uint32_t a, uint32_t b)
{
	for (int w = PREFIX_WORDS; w < nwords; w++)
		if (words[w][a] != words[w][b])
			return words[w][a] < words[w][b] ? -1 : 1;
	return 0;
}

/* Stable bottom-up merge sort of the m rows at run by their remaining words. */
static void
sort_run(const uint32_t *const *words, int nwords, uint32_t *run, size_t m, uint32_t *buf)
{
	for (size_t width = 1; width < m; width *= 2)
	{
		for (size_t lo = 0; lo < m; lo += 2 * width)
		{
			size_t		mid = lo + width < m ? lo + width : m,
						hi = lo + 2 * width < m ? lo + 2 * width : m,
						i = lo,
						j = mid,
						k = lo;

			/* the left row first unless the right one sorts strictly before it */
			while (i < mid && j < hi)
				buf[k++] = compare_rest(words, nwords, run[j], run[i]) < 0 ? run[j++] : run[i++];
			while (i < mid)
				buf[k++] = run[i++];
			while (j < hi)
				buf[k++] = run[j++];
		}
		memcpy(run, buf, m * sizeof(uint32_t));
	}
}

/*
 * perm is sorted by the first two words; order each run of rows tied on
 * them by the remaining words.  sorted_w0: word 0 in sorted order, or NULL;
 * buf: n words.
 */
static void
order_prefix_ties(const uint32_t *const *words, int nwords, size_t n, uint32_t *perm,
				  const uint32_t *sorted_w0, uint32_t *buf, void (*interrupt_check) (void))
{
	size_t		start = 0;

	for (size_t i = 1; i <= n; i++)
	{
		bool		tied;

		maybe_check(i, interrupt_check);
		/* word 0 from the sorted copy: word 1 is only read where word 0 ties */
		tied = i < n &&
			(sorted_w0 ? sorted_w0[i] == sorted_w0[i - 1] :
			 words[0][perm[i]] == words[0][perm[i - 1]]) &&
			words[1][perm[i]] == words[1][perm[i - 1]];
		if (tied)
			continue;
		if (i - start > 1)
			sort_run(words, nwords, perm + start, i - start, buf);
		start = i;
	}
}

int
cpu_radix_sort_rows(const uint32_t *const *words, int nwords, size_t n,
					uint32_t *perm, uint32_t *keys_out, uint32_t *scratch,
					void (*interrupt_check) (void), int nthreads)
{
	const uint32_t *sorted_w0;
	int			passes;

	if (nwords > PREFIX_WORDS && n >= PREFIX_MIN_ROWS &&
		prefix_ties_rare(words, n, (uint64_t *) scratch))
	{
		passes = lsd_sort(words, PREFIX_WORDS, n, perm, scratch, &sorted_w0, interrupt_check,
						  nthreads);
		/* the LSD's third buffer is free once perm holds its result */
		order_prefix_ties(words, nwords, n, perm, sorted_w0, scratch + 2 * n, interrupt_check);
	}
	else
		passes = lsd_sort(words, nwords, n, perm, scratch, &sorted_w0, interrupt_check,
						  nthreads);
	if (keys_out && nwords > 0)
		for (size_t i = 0; i < n; i++)
			keys_out[i] = words[0][perm[i]];
	return passes;
}
