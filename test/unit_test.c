/*
 * unit_test.c -- tests of the key encodings and the CPU radix sort, with no
 * PostgreSQL and no GPU.  Exit status 0 when everything passed.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "cpu_radix.h"
#include "key_encoding.h"
#include "test_check.h"
#include "test_data.h"


/* PostgreSQL's float4 order: NaNs equal and above all, -0 == +0. */
static int
pg_float4_cmp(float a, float b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return (a > b) - (a < b);
}

static int
pg_float8_cmp(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return (a > b) - (a < b);
}

static int
sign32(uint32_t a, uint32_t b)
{
	return (a > b) - (a < b);
}

static int
sign64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static float
float_from_bits(uint32_t bits)
{
	float		f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

static void
test_float4_encoding(uint64_t *rng)
{
	float		special[] = {
		-INFINITY, -FLT_MAX, -1e20f, -1.5f, -1.0f, -FLT_MIN,
		-float_from_bits(1), -0.0f, 0.0f, float_from_bits(1),
		float_from_bits(0x007fffff), FLT_MIN, 1.0f, 1.5f, 1e20f, FLT_MAX,
		INFINITY, NAN, -NAN, float_from_bits(0x7fc00001), float_from_bits(0xffffffff)
	};
	int			ns = sizeof(special) / sizeof(special[0]);

	for (int i = 0; i < ns; i++)
		for (int j = 0; j < ns; j++)
			CHECK(sign32(gpusort_encode_float4(special[i]), gpusort_encode_float4(special[j])) ==
				  pg_float4_cmp(special[i], special[j]),
				  "float4 order of %g vs %g", special[i], special[j]);
	CHECK(gpusort_encode_float4(-0.0f) == gpusort_encode_float4(0.0f), "-0 and +0 share a code");
	CHECK(gpusort_encode_float4(NAN) > gpusort_encode_float4(INFINITY), "NaN above +Infinity");

	/* random bit patterns, NaNs and denormals included */
	for (int i = 0; i < 200000; i++)
	{
		float		a = float_from_bits(test_rand32(rng));
		float		b = i % 3 ? float_from_bits(test_rand32(rng)) : a;
		uint32_t	ea = gpusort_encode_float4(a),
					eb = gpusort_encode_float4(b);

		CHECK(sign32(ea, eb) == pg_float4_cmp(a, b), "float4 %a vs %a", a, b);
		CHECK(sign32(gpusort_descending32(ea, true), gpusort_descending32(eb, true)) ==
			  -pg_float4_cmp(a, b), "descending float4 %a vs %a", a, b);
	}
}

static void
test_int_encodings(uint64_t *rng)
{
	int32_t		special[] = {INT_MIN, INT_MIN + 1, -1000, -1, 0, 1, 1000, INT_MAX - 1, INT_MAX};
	int			ns = sizeof(special) / sizeof(special[0]);

	for (int i = 0; i < ns; i++)
		for (int j = 0; j < ns; j++)
			CHECK(sign32(gpusort_encode_int4(special[i]), gpusort_encode_int4(special[j])) ==
				  (special[i] > special[j]) - (special[i] < special[j]),
				  "int4 order of %d vs %d", special[i], special[j]);
	for (int i = 0; i < 200000; i++)
	{
		int32_t		a = (int32_t) test_rand32(rng),
					b = (int32_t) test_rand32(rng);
		int64_t		c = (int64_t) test_rand64(rng),
					d = i % 2 ? (int64_t) test_rand64(rng) : -c;
		double		x,
					y;
		uint64_t	bx = test_rand64(rng),
					by = i % 3 ? test_rand64(rng) : bx ^ 1;

		CHECK(sign32(gpusort_encode_int4(a), gpusort_encode_int4(b)) == (a > b) - (a < b),
			  "int4 %d vs %d", a, b);
		CHECK(sign64(gpusort_encode_int8(c), gpusort_encode_int8(d)) == (c > d) - (c < d),
			  "int8 %lld vs %lld", (long long) c, (long long) d);
		memcpy(&x, &bx, sizeof(x));
		memcpy(&y, &by, sizeof(y));
		CHECK(sign64(gpusort_encode_float8(x), gpusort_encode_float8(y)) == pg_float8_cmp(x, y),
			  "float8 %a vs %a", x, y);
	}
	CHECK(gpusort_encode_float8(-0.0) == gpusort_encode_float8(0.0), "float8 -0 == +0");
	CHECK(gpusort_encode_float8(NAN) == gpusort_encode_float8(-NAN), "float8 NaNs equal");
}

/* The array encoders agree with the scalar ones, descending complemented. */
static void
test_array_encoders(uint64_t *rng)
{
	enum {N = 1000};
	int32_t		iv[N];
	float		fv[N];
	uint32_t	codes[N];

	for (int i = 0; i < N; i++)
	{
		iv[i] = (int32_t) test_rand32(rng);
		fv[i] = float_from_bits(test_rand32(rng));
	}
	gpusort_encode_int4_array(iv, N, true, codes);
	for (int i = 0; i < N; i++)
		CHECK(codes[i] == ~gpusort_encode_int4(iv[i]), "int4 array encoder at %d", i);
	gpusort_encode_float4_array(fv, N, false, codes);
	for (int i = 0; i < N; i++)
		CHECK(codes[i] == gpusort_encode_float4(fv[i]), "float4 array encoder at %d", i);
}

/* reference: stable sort of row indices by multi-word keys */
static const uint32_t *ref_words;
static int	ref_nwords;
static size_t ref_n;

static int
ref_cmp(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *) a,
				y = *(const uint32_t *) b;

	for (int w = 0; w < ref_nwords; w++)
	{
		uint32_t	kx = ref_words[(size_t) w * ref_n + x],
					ky = ref_words[(size_t) w * ref_n + y];

		if (kx != ky)
			return kx < ky ? -1 : 1;
	}
	return (x > y) - (x < y);
}

/*
 * cpu_radix_sort_rows on n rows of nwords words (word-major), with one
 * thread and with four (which share the passes out from 262,144 rows): a
 * permutation in key order, equal to the stable qsort reference, with
 * keys_out word 0 in that order.  `what` names the case in failures.
 */
static void
check_cpu_radix_threads(const uint32_t *words, int nwords, size_t n, const char *what,
						int nthreads)
{
	uint32_t   *perm = malloc((n + 1) * sizeof(uint32_t));
	uint32_t   *ref = malloc((n + 1) * sizeof(uint32_t));
	uint32_t   *keys = malloc((n + 1) * sizeof(uint32_t));
	uint32_t   *scratch = malloc((cpu_radix_scratch_words(n) + 1) * sizeof(uint32_t));
	const uint32_t *cols[TEST_MAX_WORDS];
	size_t		where = 0;
	const char *err;
	int			same = 1;

	for (size_t i = 0; i < n; i++)
		perm[i] = ref[i] = 0xdeadbeef;
	cpu_radix_sort_rows(test_word_columns(words, nwords, n, cols), nwords, n,
						perm, keys, scratch, NULL, nthreads);
	err = test_check_permutation(words, nwords, n, perm, &where);
	CHECK(err == NULL, "cpu radix %s n=%zu nwords=%d threads=%d: %s at %zu", what, n, nwords,
		  nthreads, err, where);

	for (size_t i = 0; i < n; i++)
		ref[i] = (uint32_t) i;
	ref_words = words;
	ref_nwords = nwords;
	ref_n = n;
	qsort(ref, n, sizeof(uint32_t), ref_cmp);
	for (size_t i = 0; i < n && same; i++)
		same = ref[i] == perm[i] && keys[i] == words[perm[i]];
	CHECK(same, "cpu radix %s n=%zu nwords=%d threads=%d differs from qsort reference", what, n,
		  nwords, nthreads);
	free(perm);
	free(ref);
	free(keys);
	free(scratch);
}

static void
check_cpu_radix(const uint32_t *words, int nwords, size_t n, const char *what)
{
	check_cpu_radix_threads(words, nwords, n, what, 1);
	check_cpu_radix_threads(words, nwords, n, what, 4);
}

static void
test_cpu_radix(uint64_t *rng)
{
	size_t		sizes[] = {0, 1, 2, 3, 255, 256, 257, 1000, 4099, 65536, 300007};

	for (int d = 0; d < DIST_COUNT; d++)
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			for (int nwords = 1; nwords <= 5; nwords++)
			{
				size_t		n = sizes[s];
				uint32_t   *words = malloc((nwords * n + 1) * sizeof(uint32_t));

				for (int w = 0; w < nwords; w++)
				{
					/* later words drawn from few values so that ties reach them */
					test_fill(words + (size_t) w * n, n, w == 0 ? (test_distribution) d : DIST_UNIFORM, rng);
					if (w + 1 < nwords)
						for (size_t i = 0; i < n; i++)
							words[(size_t) w * n + i] &= 0x3;
				}
				check_cpu_radix(words, nwords, n, test_distribution_names[d]);
				free(words);
			}
}

/*
 * Keys of 3 to TEST_MAX_WORDS words (up to a text key's NULL word and its
 * 8 words) whose first two words rarely tie, which the sort orders by
 * those two and then each tied run by the rest: unique prefixes;
 * 1% of rows sharing another row's prefix, and one prefix in 40 rows (a run
 * the merge sort takes in several rounds), with later words of few values
 * so that the ties reach every word; word 0 the same in every row.
 */
static void
test_cpu_radix_prefix_ties(uint64_t *rng)
{
	size_t		sizes[] = {65536, 300007};
	const char *cases[] = {"unique prefixes", "some prefixes tied", "word 0 constant"};

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int c = 0; c < 3; c++)
			for (int nwords = 3; nwords <= TEST_MAX_WORDS; nwords++)
			{
				size_t		n = sizes[s];
				uint32_t   *words = malloc((nwords * n + 1) * sizeof(uint32_t));

				for (int w = 0; w < nwords; w++)
					for (size_t i = 0; i < n; i++)
						words[(size_t) w * n + i] = w < 2 || c == 0 ? test_rand32(rng) :
							test_rand32(rng) & 0x3;
				if (c == 1)
					for (size_t i = 1; i < n; i++)
						if (i % 97 == 0 || (i >= 1000 && i < 1040))
						{
							size_t		from = i % 97 == 0 ? i / 2 : 999;

							words[i] = words[from];
							words[n + i] = words[n + from];
						}
				if (c == 2)
					for (size_t i = 0; i < n; i++)
						words[i] = 0x2a2a2a2a;
				check_cpu_radix(words, nwords, n, cases[c]);
				free(words);
			}
}

/*
 * Keys whose word c is the same in every row (a shared prefix, the padding
 * past short strings): the sort skips it without gathering it; the order
 * must still be the qsort reference's, and keys_out word 0 in that order.
 */
static void
test_cpu_radix_constant_words(uint64_t *rng)
{
	size_t		sizes[] = {1, 1000, 65537};

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int nwords = 1; nwords <= 4; nwords++)
			for (int c = 0; c < nwords; c++)
			{
				size_t		n = sizes[s];
				uint32_t   *words = malloc((nwords * n + 1) * sizeof(uint32_t));
				char		what[32];

				for (size_t i = 0; i < nwords * n; i++)
					words[i] = test_rand32(rng) & 0x30303;	/* few values: ties reach every word */
				for (size_t i = 0; i < n; i++)
					words[(size_t) c * n + i] = 0x12345678;
				snprintf(what, sizeof(what), "word %d constant", c);
				check_cpu_radix(words, nwords, n, what);
				free(words);
			}
}

/* unit_test [--seed=N]: the keys of an earlier run (it prints its seed) */
int
main(int argc, char **argv)
{
	uint64_t	seed = argc > 1 && strncmp(argv[1], "--seed=", 7) == 0 ?
		strtoull(argv[1] + 7, NULL, 10) :
		(uint64_t) time(NULL) * 2654435761u + (uint64_t) clock();
	uint64_t	rng = seed | 1;

	printf("unit_test: seed %llu\n", (unsigned long long) seed);
	test_float4_encoding(&rng);
	test_int_encodings(&rng);
	test_array_encoders(&rng);
	test_cpu_radix(&rng);
	test_cpu_radix_prefix_ties(&rng);
	test_cpu_radix_constant_words(&rng);
	printf("unit_test: %d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
