/*
 * test_data.h -- random key distributions for the test and benchmark
 * programs: Cederman and Tsigas's uniform, sorted, reverse, zero, bucket,
 * gaussian and staggered, plus reduced-entropy, banded and few-distinct (16 or 4 values) keys.
 * Header-only, plain C.
 */
#ifndef GPUSORT_TEST_DATA_H
#define GPUSORT_TEST_DATA_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Column pointers (cols[w] = word w of every row) of word-major key words. */
/* the widest keys: a text key's NULL word and its 32 bytes (src/sort_keys.h) */
#define TEST_MAX_WORDS 9
static inline const uint32_t *const *
test_word_columns(const uint32_t *words, int nwords, size_t n,
				  const uint32_t *cols[TEST_MAX_WORDS])
{
	for (int w = 0; w < nwords && w < TEST_MAX_WORDS; w++)
		cols[w] = words + (size_t) w * n;
	return cols;
}

typedef enum test_distribution
{
	DIST_UNIFORM,
	DIST_SORTED,
	DIST_REVERSE,
	DIST_ZERO,
	DIST_BUCKET,
	DIST_GAUSSIAN,
	DIST_STAGGERED,
	DIST_ENTROPY_AND2,			/* AND of 2 random words */
	DIST_ENTROPY_AND4,			/* AND of 4 random words */
	DIST_BANDED20,				/* 20 significant bits */
	DIST_FEW16,					/* 16 distinct values */
	DIST_FEW4,					/* 4 distinct values */
	DIST_COUNT
} test_distribution;

static const char *const test_distribution_names[DIST_COUNT] = {
	"uniform", "sorted", "reverse", "zero", "bucket", "gaussian",
	"staggered", "entropy-and2", "entropy-and4", "banded20", "few16", "few4"
};

/* xorshift64* */
static inline uint64_t
test_rand64(uint64_t *state)
{
	uint64_t	x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(2685821657736338717);
}

static inline uint32_t
test_rand32(uint64_t *state)
{
	return (uint32_t) (test_rand64(state) >> 32);
}

/* What a distribution draws once for all of its keys. */
typedef struct test_fill_params
{
	uint32_t	zero;			/* DIST_ZERO's one value */
	uint32_t	base;			/* DIST_BANDED20's lowest key */
	uint32_t	values[16];		/* DIST_FEW16 and DIST_FEW4 */
} test_fill_params;

static inline void
test_fill_draw(test_fill_params *p, uint64_t *rng)
{
	p->zero = test_rand32(rng);
	p->base = test_rand32(rng) & 0x7ff00000u;
	for (int k = 0; k < 16; k++)
		p->values[k] = test_rand32(rng);
}

/*
 * Fill keys[lo..hi) of n keys with distribution d (p drawn once for all n
 * keys; rng may be a part's own, so that parts can be filled at once).
 */
static inline void
test_fill_range(uint32_t *keys, size_t n, size_t lo, size_t hi, test_distribution d,
				const test_fill_params *p, uint64_t *rng)
{
	const uint64_t parts = 128;	/* blocks for bucket and staggered */

	switch (d)
	{
		case DIST_UNIFORM:
			for (size_t i = lo; i < hi; i++)
				keys[i] = test_rand32(rng);
			break;
		case DIST_SORTED:
		case DIST_REVERSE:
			{
				/* non-decreasing random keys spread over the whole range */
				uint64_t	step = n ? (UINT64_C(1) << 32) / n : 0;

				for (size_t i = lo; i < hi; i++)
				{
					uint64_t	rank = d == DIST_SORTED ? i : n - 1 - i;

					keys[i] = (uint32_t) (rank * step + (step > 1 ? test_rand64(rng) % step : 0));
				}
			}
			break;
		case DIST_ZERO:
			for (size_t i = lo; i < hi; i++)
				keys[i] = p->zero;
			break;
		case DIST_BUCKET:
			{
				/* `parts` blocks of `parts` sections; section j holds [j, j+1) * 2^32/parts */
				size_t		block = n / parts + 1;
				size_t		section = block / parts + 1;
				uint64_t	width = (UINT64_C(1) << 32) / parts;

				for (size_t i = lo; i < hi; i++)
				{
					uint64_t	j = ((i % block) / section) % parts;

					keys[i] = (uint32_t) (j * width + test_rand64(rng) % width);
				}
			}
			break;
		case DIST_GAUSSIAN:
			for (size_t i = lo; i < hi; i++)
			{
				uint64_t	s = 0;

				for (int k = 0; k < 4; k++)
					s += test_rand32(rng);
				keys[i] = (uint32_t) (s / 4);
			}
			break;
		case DIST_STAGGERED:
			{
				size_t		block = n / parts + 1;
				uint64_t	width = (UINT64_C(1) << 32) / parts;

				for (size_t i = lo; i < hi; i++)
				{
					uint64_t	b = i / block;
					uint64_t	first = b < parts / 2 ? 2 * b + 1 : 2 * b - parts;

					keys[i] = (uint32_t) ((first % parts) * width + test_rand64(rng) % width);
				}
			}
			break;
		case DIST_ENTROPY_AND2:
		case DIST_ENTROPY_AND4:
			for (size_t i = lo; i < hi; i++)
			{
				uint32_t	v = test_rand32(rng) & test_rand32(rng);

				if (d == DIST_ENTROPY_AND4)
					v &= test_rand32(rng) & test_rand32(rng);
				keys[i] = v;
			}
			break;
		case DIST_BANDED20:
			for (size_t i = lo; i < hi; i++)
				keys[i] = p->base + (test_rand32(rng) & 0xfffffu);
			break;
		case DIST_FEW16:
		case DIST_FEW4:
			{
				int			shift = d == DIST_FEW16 ? 28 : 30;

				for (size_t i = lo; i < hi; i++)
					keys[i] = p->values[test_rand32(rng) >> shift];
			}
			break;
		case DIST_COUNT:
			break;
	}
}

/* Fill keys[0..n) with distribution d. */
static inline void
test_fill(uint32_t *keys, size_t n, test_distribution d, uint64_t *rng)
{
	test_fill_params p;

	test_fill_draw(&p, rng);
	test_fill_range(keys, n, 0, n, d, &p, rng);
}

/*
 * Check that perm is a sorting permutation of the rows whose keys are
 * nwords words each (word-major): every entry in range and used once (every
 * output element written), rows in key order, and with `stable` ties in row
 * order.  A stable sort's permutation is unique, so that check is complete.
 * test_check_sorted_range checks the entries lo..hi-1 (each against the one
 * before it), marking rows in `seen` (a bit per row, zeroed by the caller
 * and shared by the parts of one check: atomic); it returns NULL or a
 * description of its first defect, with its place in *where.
 */
static inline const char *
test_check_sorted_range(const uint32_t *words, int nwords, size_t n, const uint32_t *perm,
						int stable, size_t lo, size_t hi, uint64_t *seen, size_t *where)
{
	for (size_t i = lo; i < hi; i++)
	{
		uint64_t	bit;

		*where = i;
		if (perm[i] >= n)
			return "row position out of range (unwritten output?)";
		bit = UINT64_C(1) << (perm[i] & 63);
		if (__atomic_fetch_or(&seen[perm[i] >> 6], bit, __ATOMIC_RELAXED) & bit)
			return "row position appears twice";
		if (i > 0 && perm[i - 1] < n)
		{
			int			c = 0;

			for (int w = 0; w < nwords && c == 0; w++)
			{
				uint32_t	a = words[(size_t) w * n + perm[i - 1]];
				uint32_t	b = words[(size_t) w * n + perm[i]];

				c = (a > b) - (a < b);
			}
			if (c > 0)
				return "keys out of order";
			if (stable && c == 0 && perm[i - 1] > perm[i])
				return "equal keys out of row order (not stable)";
		}
	}
	return NULL;
}

static inline uint64_t *
test_seen_bits(size_t n)
{
	return (uint64_t *) calloc(n / 64 + 1, sizeof(uint64_t));
}

static inline const char *
test_check_sorted(const uint32_t *words, int nwords, size_t n,
				  const uint32_t *perm, int stable, size_t *where)
{
	uint64_t   *seen = test_seen_bits(n);
	const char *err = test_check_sorted_range(words, nwords, n, perm, stable, 0, n, seen, where);

	free(seen);
	return err;
}

static inline const char *
test_check_permutation(const uint32_t *words, int nwords, size_t n,
					   const uint32_t *perm, size_t *where)
{
	return test_check_sorted(words, nwords, n, perm, 1, where);
}

#endif
