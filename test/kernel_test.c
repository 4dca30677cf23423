/*
 * kernel_test.c -- the GPU sorts (radix, quicksort, bitonic and the automatic
 * choice) against a CPU reference, through the plain-C kernel interface only.
 *
 * Fresh random keys of every distribution and many sizes (below, at and
 * above one tile, powers of two and not); output buffers poisoned before
 * every download; 32-bit keys (one key word), 64-bit keys (two words;
 * also a constant high word) and three-word keys; the permutation checked to be the unique stable one
 * (so every output element was written and payloads kept their order), and
 * compared with the CPU radix sort for sizes up to 2^22.  Keys of every
 * range width (1 to 64 bits above a random base) for every shape of radix
 * pass plan.  Multi-word keys and caller payloads too; columns put into sorted order on the device
 * (gpusort_job_permute_fixed).  Device memory must be back where it started.
 *
 * Usage: kernel_test [option...] [max_n [min_n [nwords]]]
 *   sizes min_n..max_n (default 0..2^26; up to 2^30), keys of nwords words
 *   (default: 1, 2 and 3).  The options steer the library through its
 *   test hooks (kernels/gpusort_test_hooks.h), to run the paths of other
 *   devices and the forced variants:
 *     --block-smem=BYTES      as on a device that gives a block at most that
 *                             much shared memory (49152: the compact policies)
 *     --pairs=apart|packed    radix pairs apart or packed whatever the data
 *     --records=off|always    radix records never, or at every size
 *     --first-read-copy       the first read's summary by a copy, not mapped memory
 *     --bitonic-stride-kernels  the bitonic network a kernel per stride
 *     --quicksort-no-split    quicksort's two-way phase one only
 *     --lock-copies           every copy page-locks its host range (not only from 4 MB)
 *     --seed=N                the keys of an earlier run (it prints its seed)
 * Beyond 2^26 the 32- and 64-bit keys of every distribution (three-word keys
 * and the constant high word only up to 2^26); the rows of a large case are
 * filled and checked on all CPU cores at once.
 * Prints "skipped: no GPU" and exits 0 where there is no GPU.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "auto_config.h"
#include "cpu_radix.h"
#include "gpusort_kernels.h"
#include "gpusort_test_hooks.h"
#include "test_check.h"
#include "test_data.h"

#define POISON 0xdeadbeefu


static void
check_status(gpusort_status st, const char *what)
{
	CHECK(st == GPUSORT_OK, "%s: %s (%s)", what, gpusort_status_message(st),
		  gpusort_error_detail());
}

/*
 * One case's rows, filled and checked in parts at once on the CPU's cores
 * when they are many (the sizes up to 2^30 would take minutes a case on one).
 */
typedef struct case_rows
{
	size_t		n;
	int			nwords;
	int			high_constant;
	test_distribution d;
	test_fill_params params[TEST_MAX_WORDS];	/* a word's draws, shared by its parts */
	uint32_t   *words;			/* nwords * n, word-major */
	uint32_t   *perm;			/* downloaded permutation */
	uint32_t   *keys;			/* downloaded sorted first words */
	int			stable;
	uint64_t   *seen;			/* a bit per row, for the check */
} case_rows;

typedef struct case_part
{
	const case_rows *rows;
	size_t		lo,
				hi;
	uint64_t	rng;			/* the part's own */
	void		(*work) (struct case_part *);
	const char *err;			/* the check's first defect in this part */
	size_t		where;
	int			keys_ok;
} case_part;

#define PARTS_MAX		32
#define PARTS_MIN_ROWS	((size_t) 1 << 20)	/* fewer rows: one part */

/*
 * One case's words of distribution d.  One word: 32-bit keys.  Two words
 * (64-bit keys on the GPU): both words of distribution d, or a constant high
 * word over d (an int8 column of small values: the plan relative to the
 * minimum).  Three words or more: few values in the leading words, so
 * that ties reach the last one.  The outputs are poisoned.
 */
static void
fill_part(case_part *p)
{
	const case_rows *r = p->rows;

	for (int w = 0; w < r->nwords; w++)
	{
		uint32_t   *col = r->words + (size_t) w * r->n;

		test_fill_range(col, r->n, p->lo, p->hi,
						r->nwords >= 3 && w == r->nwords - 1 ? DIST_UNIFORM : r->d,
						&r->params[w], &p->rng);
		if (r->nwords >= 3 && w < r->nwords - 1)
			for (size_t i = p->lo; i < p->hi; i++)
				col[i] &= 0x7;
		if (r->nwords == 2 && w == 0 && r->high_constant)
			for (size_t i = p->lo; i < p->hi; i++)
				col[i] = 0x80000000u;
	}
	for (size_t i = p->lo; i < p->hi; i++)
		r->perm[i] = r->keys[i] = POISON;
}

/* The permutation's part checked, and the downloaded keys against it. */
static void
check_part(case_part *p)
{
	const case_rows *r = p->rows;

	p->err = test_check_sorted_range(r->words, r->nwords, r->n, r->perm, r->stable,
									 p->lo, p->hi, r->seen, &p->where);
	p->keys_ok = 1;
	for (size_t i = p->lo; i < p->hi && p->keys_ok; i++)
		p->keys_ok = r->perm[i] < r->n && r->keys[i] == r->words[r->perm[i]];
}

static void *
part_thread(void *arg)
{
	case_part  *p = (case_part *) arg;

	p->work(p);
	return NULL;
}

/* Split the rows into parts and run `work` on each, at once; returns how many. */
static int
run_parts(const case_rows *r, case_part *parts, void (*work) (case_part *), uint64_t *rng)
{
	long		cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int			nparts = r->n < PARTS_MIN_ROWS || cpus < 2 ? 1 : (int) (cpus < PARTS_MAX ? cpus : PARTS_MAX);
	pthread_t	threads[PARTS_MAX];
	int			started[PARTS_MAX];

	for (int k = 0; k < nparts; k++)
	{
		parts[k].rows = r;
		parts[k].lo = r->n * k / nparts;
		parts[k].hi = r->n * (k + 1) / nparts;
		parts[k].rng = test_rand64(rng) | 1;
		parts[k].work = work;
		parts[k].err = NULL;
		parts[k].where = 0;
	}
	for (int k = 1; k < nparts; k++)
		started[k] = pthread_create(&threads[k], NULL, part_thread, &parts[k]) == 0;
	work(&parts[0]);
	for (int k = 1; k < nparts; k++)
	{
		if (started[k])
			pthread_join(threads[k], NULL);
		else
			work(&parts[k]);
	}
	return nparts;
}

/*
 * The job API's chain for n rows of nwords columns: create, upload, sort
 * with alg, download the permutation into perm (and, keys not NULL, the
 * sorted first words).  timing not NULL: the job's timing.  jobp not NULL:
 * the job is left there for more calls (destroyed by the caller), else
 * destroyed here.
 */
static gpusort_status
job_sort(size_t n, int nwords, const uint32_t *const *cols, gpusort_algorithm alg,
		 uint32_t *perm, uint32_t *keys, gpusort_timing *timing, gpusort_job **jobp)
{
	gpusort_job *job = NULL;
	gpusort_status st = gpusort_job_create(n, nwords, &job);

	if (st == GPUSORT_OK)
		st = gpusort_job_upload(job, cols);
	if (st == GPUSORT_OK)
		st = gpusort_job_sort_with(job, alg);
	if (st == GPUSORT_OK)
		st = gpusort_job_download(job, perm, keys);
	if (job && timing)
		gpusort_job_timing(job, timing);
	if (jobp)
		*jobp = job;
	else
		gpusort_job_destroy(job);
	return st;
}

/* One sort of n rows of nwords words; returns 0 if the GPU call failed. */
static int
run_case(test_distribution d, size_t n, int nwords, int high_constant, gpusort_algorithm alg,
		 uint64_t *rng)
{
	gpusort_timing timing;
	case_rows	r = {.n = n,.nwords = nwords,.high_constant = high_constant,.d = d};
	case_part	parts[PARTS_MAX];
	int			nparts;
	gpusort_status st;
	const char *err = NULL;
	size_t		where = 0;
	int			ok = 1;
	const uint32_t *cols[TEST_MAX_WORDS];

	r.words = malloc((nwords * n + 1) * sizeof(uint32_t));
	r.perm = malloc((n + 1) * sizeof(uint32_t));
	r.keys = malloc((n + 1) * sizeof(uint32_t));
	if (!r.words || !r.perm || !r.keys)
	{
		CHECK(0, "%s n=%zu nwords=%d: out of host memory", test_distribution_names[d], n, nwords);
		free(r.words);
		free(r.perm);
		free(r.keys);
		return 0;
	}
	for (int w = 0; w < nwords; w++)
		test_fill_draw(&r.params[w], rng);
	run_parts(&r, parts, fill_part, rng);

	st = job_sort(n, nwords, test_word_columns(r.words, nwords, n, cols), alg, r.perm, r.keys,
				  &timing, NULL);
	check_status(st, "gpu sort");
	if (st != GPUSORT_OK)
		ok = 0;
	else
	{
		/* quicksort is not stable: any order of equal keys will do */
		r.stable = n == 0 || timing.algorithm != GPUSORT_ALGO_QUICKSORT;
		CHECK(alg == GPUSORT_ALGO_AUTO || n == 0 || timing.algorithm == alg || nwords > 2,
			  "%s n=%zu: asked for %s, ran %s", test_distribution_names[d], n,
			  gpusort_algorithm_name(alg), gpusort_algorithm_name(timing.algorithm));
		r.seen = test_seen_bits(n);
		nparts = run_parts(&r, parts, check_part, rng);
		free(r.seen);
		for (int k = 0; k < nparts; k++)
		{
			if (!err && parts[k].err)
			{
				err = parts[k].err;
				where = parts[k].where;
			}
			ok = ok && parts[k].keys_ok;
		}
		CHECK(err == NULL, "%s %s n=%zu nwords=%d%s: %s at %zu",
			  gpusort_algorithm_name(timing.algorithm), test_distribution_names[d], n, nwords,
			  high_constant ? " (constant high word)" : "", err, where);
		CHECK(ok, "%s %s n=%zu nwords=%d: sorted keys do not match the permutation",
			  gpusort_algorithm_name(timing.algorithm), test_distribution_names[d], n, nwords);

		if (n <= (1u << 22) && r.stable)
		{
			uint32_t   *ref = malloc((n + 1) * sizeof(uint32_t));
			uint32_t   *scratch = malloc((cpu_radix_scratch_words(n) + 1) * sizeof(uint32_t));
			int			same = 1;

			cpu_radix_sort_rows(cols, nwords, n, ref, NULL, scratch, NULL, 1);
			for (size_t i = 0; i < n && same; i++)
				same = ref[i] == r.perm[i];
			CHECK(same, "%s %s n=%zu nwords=%d: differs from the CPU reference",
				  gpusort_algorithm_name(timing.algorithm), test_distribution_names[d], n, nwords);
			free(ref);
			free(scratch);
		}
	}
	free(r.words);
	free(r.perm);
	free(r.keys);
	return ok;
}

/*
 * The radix sort of n keys of nwords words (1: 32-bit, 2: 64-bit) that span
 * `bits` bits above a random base, so that every shape of pass plan runs
 * (one digit pass or several, 8- or 10-bit digits, relative to the minimum
 * or by 8-bit places): the permutation against the CPU radix sort's.
 */
static void
run_range_case(size_t n, int nwords, int bits, int skew, uint64_t *rng)
{
	const int	key_bits = 32 * nwords;
	const uint64_t mask = bits >= 64 ? ~(uint64_t) 0 : ((uint64_t) 1 << bits) - 1;
	const uint64_t top = key_bits == 64 ? ~(uint64_t) 0 : 0xffffffffull;
	const uint64_t base = bits >= key_bits ? 0 : test_rand64(rng) % (top - mask + 1);
	uint32_t   *words = malloc((nwords * n + 1) * sizeof(uint32_t));
	uint32_t   *perm = malloc((n + 1) * sizeof(uint32_t));
	uint32_t   *ref = malloc((n + 1) * sizeof(uint32_t));
	uint32_t   *scratch = malloc((cpu_radix_scratch_words(n) + 1) * sizeof(uint32_t));
	const uint32_t *cols[TEST_MAX_WORDS];
	gpusort_status st;
	int			same = 1;

	for (size_t i = 0; i < n; i++)
	{
		uint64_t	k = base + (test_rand64(rng) & mask);

		/* skew: all but every 4096th key with low 10 bits of 0 (one huge digit, many tiny) */
		if (skew && i % 4096 != 0)
			k = base + (test_rand64(rng) & mask & ~(uint64_t) 0x3ff);

		if (nwords == 2)
		{
			words[i] = (uint32_t) (k >> 32);
			words[n + i] = (uint32_t) k;
		}
		else
			words[i] = (uint32_t) k;
		perm[i] = POISON;
	}
	st = job_sort(n, nwords, test_word_columns(words, nwords, n, cols), GPUSORT_ALGO_RADIX, perm,
				  NULL, NULL, NULL);
	check_status(st, "range sort");
	if (st == GPUSORT_OK)
	{
		cpu_radix_sort_rows(cols, nwords, n, ref, NULL, scratch, NULL, 1);
		for (size_t i = 0; i < n && same; i++)
			same = ref[i] == perm[i];
		CHECK(same, "radix, %d-bit keys over %d bits%s, n=%zu: differs from the CPU reference",
			  key_bits, bits, skew ? " (skewed low digit)" : "", n);
	}
	free(words);
	free(perm);
	free(ref);
	free(scratch);
}

/* gpusort_sort_pairs_u32 with caller payloads: stable, payloads kept. */
static void
run_pairs_case(size_t n, uint64_t *rng)
{
	uint32_t   *keys = malloc((n + 1) * sizeof(uint32_t));
	uint32_t   *orig = malloc((n + 1) * sizeof(uint32_t));
	uint32_t   *vals = malloc((n + 1) * sizeof(uint32_t));
	gpusort_timing t;
	gpusort_status st;
	int			ok = 1;

	for (size_t i = 0; i < n; i++)
	{
		orig[i] = keys[i] = test_rand32(rng) & 0xff;	/* many ties */
		vals[i] = (uint32_t) i ^ 0x5a5a5a5au;
	}
	st = gpusort_sort_pairs_u32(keys, vals, n, &t);
	check_status(st, "gpusort_sort_pairs_u32");
	for (size_t i = 0; i < n && ok; i++)
	{
		uint32_t	row = vals[i] ^ 0x5a5a5a5au;

		ok = row < n && orig[row] == keys[i] &&
			(i == 0 || keys[i - 1] < keys[i] ||
			 (keys[i - 1] == keys[i] && (vals[i - 1] ^ 0x5a5a5a5au) < row));
	}
	CHECK(ok, "sort_pairs n=%zu: payloads wrong or unstable", n);
	free(keys);
	free(orig);
	free(vals);
}

/*
 * gpusort_job_permute_fixed after a sort of n random 32-bit keys (the
 * first m rows), for elements of every unit (1 to 8 bytes) and of several
 * units (6, 12, 16 as uuids and intervals, 64 as names, the largest),
 * against the elements gathered through the downloaded permutation on the
 * CPU; outputs poisoned.
 */
static void
run_permute_case(size_t n, size_t m, uint64_t *rng)
{
	static const size_t sizes[] = {1, 2, 4, 6, 8, 12, 16, 24, 64, GPUSORT_PERMUTE_MAX_ELEM};
	uint32_t   *keys = malloc((n + 1) * sizeof(uint32_t));
	uint32_t   *perm = malloc((n + 1) * sizeof(uint32_t));
	gpusort_job *job = NULL;
	gpusort_status st;

	for (size_t i = 0; i < n; i++)
		keys[i] = test_rand32(rng) & 0xfffff;
	st = job_sort(n, 1, (const uint32_t *const *) &keys, GPUSORT_ALGO_RADIX, perm, NULL, NULL,
				  &job);
	check_status(st, "permute: sort");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]) && st == GPUSORT_OK; s++)
	{
		size_t		e = sizes[s];
		uint8_t    *in,
				   *out;
		int			ok = 1;

		/* the biggest element only at sizes that stay small */
		if (n * e > ((size_t) 1 << 28))
			continue;
		in = malloc(n * e + 1);
		out = malloc(m * e + 1);
		for (size_t i = 0; i < n * e; i++)
			in[i] = (uint8_t) test_rand32(rng);
		memset(out, 0xee, m * e);
		st = gpusort_job_permute_fixed(job, in, out, e, m);
		check_status(st, "permute");
		for (size_t i = 0; i < m && ok && st == GPUSORT_OK; i++)
			ok = memcmp(out + i * e, in + (size_t) perm[i] * e, e) == 0;
		CHECK(ok, "permute n=%zu m=%zu, %zu-byte elements: not in sorted order", n, m, e);
		free(in);
		free(out);
	}
	if (st == GPUSORT_OK)
	{
		/* an element of no size, or wider than the largest, is refused */
		uint8_t		dummy[1];

		CHECK(gpusort_job_permute_fixed(job, dummy, dummy, 0, m) == GPUSORT_ERR_INVALID_ARGUMENT &&
			  gpusort_job_permute_fixed(job, dummy, dummy, GPUSORT_PERMUTE_MAX_ELEM + 1, m) ==
			  GPUSORT_ERR_INVALID_ARGUMENT,
			  "permute n=%zu: a bad element size accepted", n);
	}
	gpusort_job_destroy(job);
	free(keys);
	free(perm);
}

/*
 * gpusort_job_download_ties after a sort of n rows of nwords words, each
 * word drawn from `distinct` values (so rows tie): every bit against the
 * rows' words through the downloaded permutation; the bits past n clear.
 */
static void
run_ties_case(size_t n, int nwords, uint32_t distinct, gpusort_algorithm alg, uint64_t *rng)
{
	size_t		nbits = (n + 31) / 32;
	uint32_t   *words = malloc((nwords * n + 1) * sizeof(uint32_t));
	uint32_t   *perm = malloc((n + 1) * sizeof(uint32_t));
	uint32_t   *bits = malloc((nbits + 1) * sizeof(uint32_t));
	const uint32_t *cols[TEST_MAX_WORDS];
	gpusort_job *job = NULL;
	gpusort_status st;
	size_t		bad = n;

	for (size_t i = 0; i < nwords * n; i++)
		words[i] = test_rand32(rng) % distinct;
	for (size_t i = 0; i < nbits; i++)
		bits[i] = 0xa5a5a5a5u;	/* poisoned */
	st = job_sort(n, nwords, test_word_columns(words, nwords, n, cols), alg, perm, NULL, NULL,
				  &job);
	if (st == GPUSORT_OK)
		st = gpusort_job_download_ties(job, bits);
	gpusort_job_destroy(job);
	check_status(st, "download ties");
	for (size_t i = 0; st == GPUSORT_OK && i < nbits * 32 && bad == n; i++)
	{
		int			want = i > 0 && i < n;

		for (int w = 0; w < nwords && want; w++)
			want = cols[w][perm[i]] == cols[w][perm[i - 1]];
		if ((int) ((bits[i / 32] >> (i % 32)) & 1) != want)
			bad = i;
	}
	CHECK(bad == n, "ties %s n=%zu nwords=%d distinct=%u: wrong bit at %zu",
		  gpusort_algorithm_name(alg), n, nwords, distinct, bad);
	free(words);
	free(perm);
	free(bits);
}

/*
 * auto on n 64-bit keys (two words) whose leading word ascends (order 1),
 * descends (-1) or is random (0): quicksort where an even sample descends
 * and n is in the window where it measured faster, else radix (ascending
 * keys: the first read finds them in order, so nothing moves); and
 * the sort checked (the leading words are distinct where in order, so the
 * permutation is known; random keys: in order, every row once).
 */
static void
run_ordered_choice_case(size_t n, int order, uint64_t *rng)
{
	uint32_t   *w = malloc(2 * n * sizeof(uint32_t)),
			   *perm = malloc(n * sizeof(uint32_t)),
			   *keys = malloc(n * sizeof(uint32_t));
	const uint32_t *cols[TEST_MAX_WORDS];
	gpusort_timing timing;
	gpusort_status st;
	const int	window = n >= GPUSORT_AUTO_ORDERED_QUICKSORT_MIN_N_64 &&
		n <= GPUSORT_AUTO_ORDERED_QUICKSORT_MAX_N_64;

	if (!w || !perm || !keys)
	{
		CHECK(0, "ordered choice n=%zu: out of host memory", n);
		free(w);
		free(perm);
		free(keys);
		return;
	}
	for (size_t i = 0; i < n; i++)
	{
		w[i] = order > 0 ? (uint32_t) i : order < 0 ? (uint32_t) (n - 1 - i) : test_rand32(rng);
		w[n + i] = test_rand32(rng);
		perm[i] = keys[i] = POISON;
	}
	st = job_sort(n, 2, test_word_columns(w, 2, n, cols), GPUSORT_ALGO_AUTO, perm, keys,
				  &timing, NULL);
	check_status(st, "ordered choice sort");
	if (st == GPUSORT_OK)
	{
		/* ascending keys: the first read finds them in order, nothing moves (radix) */
		const gpusort_algorithm want = order < 0 && window ? GPUSORT_ALGO_QUICKSORT
			: GPUSORT_ALGO_RADIX;
		uint64_t   *seen = test_seen_bits(n);
		size_t		bad = n;

		CHECK(timing.algorithm == want, "ordered choice n=%zu order %d: auto ran %s (%s), not %s",
			  n, order, gpusort_algorithm_name(timing.algorithm), timing.algorithm_reason,
			  gpusort_algorithm_name(want));
		for (size_t i = 0; i < n && bad == n; i++)
		{
			const uint32_t p = perm[i];

			if (p >= n || (seen[p >> 6] >> (p & 63) & 1) ||
				(order > 0 && p != i) || (order < 0 && p != n - 1 - i) || keys[i] != w[p])
				bad = i;
			else if (i > 0)
			{
				const uint32_t q = perm[i - 1];
				const uint64_t a = (uint64_t) w[q] << 32 | w[n + q],
							b = (uint64_t) w[p] << 32 | w[n + p];

				if (a > b)
					bad = i;
			}
			if (p < n)
				seen[p >> 6] |= (uint64_t) 1 << (p & 63);
		}
		CHECK(bad == n, "ordered choice n=%zu order %d (%s): wrong row at %zu", n, order,
			  gpusort_algorithm_name(timing.algorithm), bad);
		free(seen);
	}
	free(w);
	free(perm);
	free(keys);
}

/*
 * Keys in order but for one descent (where: 0 the first pair swapped, 1 a
 * pair in the middle, 2 the smallest key last), nwords words, distinct:
 * the first read's lazy count passes over keys in order and must count
 * them after all (its blocks' count of what they passed over, or the
 * radix plan over key - min that counts again: onesweep_plan_from_look).
 * Sorted by alg; the permutation is known.
 */
static void
run_late_descent_case(size_t n, int nwords, int where, gpusort_algorithm alg)
{
	uint32_t   *w = malloc(nwords * n * sizeof(uint32_t)),
			   *perm = malloc(n * sizeof(uint32_t)),
			   *want = malloc(n * sizeof(uint32_t));
	const uint32_t *cols[TEST_MAX_WORDS];
	gpusort_timing timing;
	gpusort_status st;
	const size_t p = where == 0 ? 0 : n / 2;
	size_t		bad = n;

	if (!w || !perm || !want)
	{
		CHECK(0, "late descent n=%zu: out of host memory", n);
		free(w);
		free(perm);
		free(want);
		return;
	}
	for (size_t i = 0; i < n; i++)
	{
		/* key i + 1 (64-bit: its high and low halves over the words), in row order */
		const uint64_t k = where == 2 ? (i + 1 < n ? i + 1 : 0) : i + 1;
		size_t		row = i;

		if (where < 2 && (i == p || i == p + 1))
			row = i == p ? p + 1 : p;	/* the pair swapped */
		w[row] = nwords == 1 ? (uint32_t) k : (uint32_t) (k >> 20);
		if (nwords == 2)
			w[n + row] = (uint32_t) (k << 12);
		perm[i] = POISON;
	}
	for (size_t i = 0; i < n; i++)
		want[i] = where == 2 ? (uint32_t) (i == 0 ? n - 1 : i - 1)
			: (uint32_t) (i == p ? p + 1 : i == p + 1 ? p : i);
	st = job_sort(n, nwords, test_word_columns(w, nwords, n, cols), alg, perm, NULL, &timing,
				  NULL);
	check_status(st, "late descent sort");
	for (size_t i = 0; st == GPUSORT_OK && i < n && bad == n; i++)
		if (perm[i] != want[i])
			bad = i;
	CHECK(st != GPUSORT_OK || bad == n, "late descent n=%zu nwords=%d where %d (%s): wrong row at %zu",
		  n, nwords, where, gpusort_algorithm_name(timing.algorithm), bad);
	free(w);
	free(perm);
	free(want);
}

/* --seed=N, or 0: a seed from the clock */
static uint64_t given_seed;

/* The options (see the usage above) into the test hooks; returns the first positional index. */
static int
set_hooks(int argc, char **argv)
{
	int			i;

	for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++)
	{
		const char *a = argv[i];

		if (strncmp(a, "--block-smem=", 13) == 0)
			gpusort_test_hooks.block_smem_limit = (size_t) strtoull(a + 13, NULL, 10);
		else if (strcmp(a, "--pairs=apart") == 0)
			gpusort_test_hooks.pairs = GPUSORT_TEST_PAIRS_APART;
		else if (strcmp(a, "--pairs=packed") == 0)
			gpusort_test_hooks.pairs = GPUSORT_TEST_PAIRS_PACKED;
		else if (strcmp(a, "--records=off") == 0)
			gpusort_test_hooks.records = GPUSORT_TEST_RECORDS_OFF;
		else if (strcmp(a, "--records=always") == 0)
			gpusort_test_hooks.records = GPUSORT_TEST_RECORDS_ALWAYS;
		else if (strcmp(a, "--first-read-copy") == 0)
			gpusort_test_hooks.first_read_by_copy = 1;
		else if (strcmp(a, "--bitonic-stride-kernels") == 0)
			gpusort_test_hooks.bitonic_stride_kernels = 1;
		else if (strcmp(a, "--quicksort-no-split") == 0)
			gpusort_test_hooks.quicksort_no_split = 1;
		else if (strcmp(a, "--lock-copies") == 0)
			gpusort_test_hooks.lock_min_bytes = 1;
		else if (strncmp(a, "--seed=", 7) == 0)
			given_seed = strtoull(a + 7, NULL, 10);
		else
		{
			fprintf(stderr, "kernel_test: unknown option %s\n", a);
			exit(2);
		}
	}
	return i;
}

int
main(int argc, char **argv)
{
	const int	a0 = set_hooks(argc, argv);	/* the first positional argument */
	size_t		max_n = argc > a0 ? strtoull(argv[a0], NULL, 10) : ((size_t) 1 << 26);
	size_t		min_n = argc > a0 + 1 ? strtoull(argv[a0 + 1], NULL, 10) : 0;
	int			only_words = argc > a0 + 2 ? atoi(argv[a0 + 2]) : 0;	/* 0: 1 to 3 words */
	size_t		sizes[] = {0, 1, 2, 3, 31, 32, 33, 255, 256, 257, 1000, 2047, 2048,
		2049, 3071, 3072, 3073, 4095, 4096, 4097, 6143, 6145, 8191, 8193, 12289,
		65536, 100003, 1u << 20, 3000017, 6000011, 1u << 24, (1u << 26) + 5, 1u << 28,
		(1u << 30)};
	uint64_t	seed = given_seed ? given_seed :
		(uint64_t) time(NULL) * 2654435761u + (uint64_t) clock();
	uint64_t	rng = seed | 1;
	gpusort_device_info info;
	size_t		free0,
				free1,
				total;
	int			count;
	gpusort_status st = gpusort_device_count(&count);

	if (st == GPUSORT_ERR_NO_DEVICE)
	{
		printf("skipped: no GPU (%s)\n", gpusort_error_detail());
		return 0;
	}
	check_status(st, "device count");
	check_status(gpusort_device_open(0), "device open");
	check_status(gpusort_device_get_info(0, &info), "device info");
	if (failures)
		return 1;
	printf("kernel_test: %s (cc %d.%d, %d SMs, %zu MB), seed %llu, sizes %zu to %zu\n",
		   info.name, info.cc_major, info.cc_minor, info.multiprocessors,
		   info.total_memory >> 20, (unsigned long long) seed, min_n, max_n);
	check_status(gpusort_device_memory(&free0, &total), "memory info");

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
	{
		size_t		n = sizes[s];
		int			before = failures;
		time_t		began = time(NULL);

		if (n > max_n || n < min_n)
			continue;
		for (int d = 0; d < DIST_COUNT; d++)
			for (int nwords = 1; nwords <= 3; nwords++)
				for (int hc = 0; hc <= (nwords == 2); hc++)
					for (int a = GPUSORT_ALGO_AUTO; a <= GPUSORT_ALGO_BITONIC; a++)
					{
						if (only_words && nwords != only_words)
							continue;
						/*
						 * beyond 2^26: 32- and 64-bit keys of every distribution;
						 * the constant high word on uniform keys only; no 3 words
						 */
						if (n > (1u << 26) && (nwords == 3 || (hc && d != DIST_UNIFORM)))
							continue;
						/* quicksort and bitonic: keys up to 64 bits (wider: radix, checked once) */
						if (a >= GPUSORT_ALGO_QUICKSORT && nwords == 3 && n > 4096)
							continue;
						/* the bitonic network beyond one block is slow: up to 2^22 */
						if (a == GPUSORT_ALGO_BITONIC && n > (1u << 22))
							continue;
						/* auto is one of the others: its own run up to 2^24 */
						if (a == GPUSORT_ALGO_AUTO && n > (1u << 24))
							continue;
						run_case((test_distribution) d, n, nwords, hc, (gpusort_algorithm) a, &rng);
					}
		printf("n=%-11zu %s (%.0f s)\n", n, failures == before ? "ok" : "FAILED",
			   difftime(time(NULL), began));
		fflush(stdout);
	}
	{
		/* the widest keys (a text key's 32 bytes and its NULL word): radix, and auto's choice */
		const size_t wide_n[] = {1000, 100003, 3000017};
		const int	wide_words[] = {5, TEST_MAX_WORDS};
		int			before = failures,
					ran = 0;

		for (size_t s = 0; s < sizeof(wide_n) / sizeof(wide_n[0]); s++)
			for (size_t w = 0; w < sizeof(wide_words) / sizeof(wide_words[0]); w++)
				for (int d = 0; d < DIST_COUNT; d++)
					for (int a = GPUSORT_ALGO_AUTO; a <= GPUSORT_ALGO_RADIX; a++)
						if (wide_n[s] <= max_n && wide_n[s] >= min_n &&
							(!only_words || wide_words[w] == only_words))
						{
							run_case((test_distribution) d, wide_n[s], wide_words[w], 0,
									 (gpusort_algorithm) a, &rng);
							ran++;
						}
		if (ran)
			printf("keys of 5 and %d words: %s\n", TEST_MAX_WORDS, failures == before ? "ok" : "FAILED");
	}
	{
		/* key ranges of every width: each shape of pass plan */
		const int	range_bits[] = {1, 5, 8, 9, 10, 11, 16, 17, 19, 20, 21, 24, 27, 30, 31, 32,
			33, 40, 41, 45, 50, 51, 56, 60, 64};
		const size_t range_n[] = {3073, 100003, 3000017};
		int			before = failures;

		for (size_t s = 0; s < sizeof(range_n) / sizeof(range_n[0]); s++)
			for (size_t b = 0; b < sizeof(range_bits) / sizeof(range_bits[0]); b++)
				for (int nwords = 1; nwords <= 2; nwords++)
					if (range_n[s] <= max_n && range_n[s] >= min_n &&
						range_bits[b] <= 32 * nwords && (!only_words || nwords == only_words))
						run_range_case(range_n[s], nwords, range_bits[b], 0, &rng);
		printf("key ranges: %s\n", failures == before ? "ok" : "FAILED");
	}
	{
		/*
		 * 32-bit keys of 17-20 bits above a random base from 2^22 keys:
		 * the records between the two passes (onesweep_records), across
		 * epochs, and with one huge low digit and many tiny ones, so that
		 * a tile of the second pass needs more table entries than shared
		 * memory holds
		 */
		const int	rec_bits[] = {17, 18, 19, 20};
		const size_t rec_n[] = {4194304 + 12345, 9000011, 33554467};
		int			before = failures;

		for (size_t s = 0; s < sizeof(rec_n) / sizeof(rec_n[0]); s++)
			for (size_t b = 0; b < sizeof(rec_bits) / sizeof(rec_bits[0]); b++)
				for (int skew = 0; skew <= 1; skew++)
					if (rec_n[s] <= max_n && rec_n[s] >= min_n && (!only_words || only_words == 1))
						run_range_case(rec_n[s], 1, rec_bits[b], skew, &rng);
		printf("records key ranges: %s\n", failures == before ? "ok" : "FAILED");
	}
	run_pairs_case(12345, &rng);
	run_pairs_case(1000003, &rng);
	run_permute_case(1, 1, &rng);
	run_permute_case(1000, 1000, &rng);
	run_permute_case(300007, 300007, &rng);
	run_permute_case(300007, 1234, &rng);
	if (max_n >= 3000017)
		run_permute_case(3000017, 3000017, &rng);
	printf("permute: %s\n", failures ? "FAILED" : "ok");
	{
		/* tie bits: sizes around whole words of bits and blocks, each algorithm */
		const size_t tie_n[] = {1, 2, 31, 32, 33, 1000, 65537, 1000003};
		const uint32_t tie_distinct[] = {1, 3, 1000, 0xffffffffu};
		int			before = failures;

		for (size_t s = 0; s < sizeof(tie_n) / sizeof(tie_n[0]); s++)
			for (size_t d = 0; d < sizeof(tie_distinct) / sizeof(tie_distinct[0]); d++)
				for (int nwords = 1; nwords <= 3; nwords++)
					for (int a = GPUSORT_ALGO_AUTO; a <= GPUSORT_ALGO_BITONIC; a++)
						if (tie_n[s] <= max_n && tie_n[s] >= min_n &&
							(!only_words || nwords == only_words) &&
							(a < GPUSORT_ALGO_QUICKSORT || nwords <= 2))
							run_ties_case(tie_n[s], nwords, tie_distinct[d], (gpusort_algorithm) a,
										  &rng);
		printf("tie bits: %s\n", failures == before ? "ok" : "FAILED");
	}
	{
		/* auto's ordered-keys rule: just inside its window of n (both ends) and just below it */
		const size_t ordered_n[] = {GPUSORT_AUTO_ORDERED_QUICKSORT_MIN_N_64 - 1,
			GPUSORT_AUTO_ORDERED_QUICKSORT_MIN_N_64 + 17, GPUSORT_AUTO_ORDERED_QUICKSORT_MAX_N_64};
		int			before = failures,
					ran = 0;

		for (size_t s = 0; s < sizeof(ordered_n) / sizeof(ordered_n[0]); s++)
			if (ordered_n[s] <= max_n && ordered_n[s] >= min_n && only_words != 1 && only_words != 3)
				for (int order = -1; order <= 1; order++, ran++)
					run_ordered_choice_case(ordered_n[s], order, &rng);
		if (ran)
			printf("auto on 64-bit keys in order: %s\n", failures == before ? "ok" : "FAILED");
	}

	{
		/* keys in order but for one descent: the first read's lazy count */
		const size_t late_n[] = {4097, 100003, 1u << 20, 3000017};
		int			before = failures,
					ran = 0;

		for (size_t s = 0; s < sizeof(late_n) / sizeof(late_n[0]); s++)
			for (int nwords = 1; nwords <= 2; nwords++)
				for (int where = 0; where < 3; where++)
					for (int a = GPUSORT_ALGO_AUTO; a <= GPUSORT_ALGO_QUICKSORT; a++)
						if (late_n[s] <= max_n && late_n[s] >= min_n &&
							(!only_words || nwords == only_words))
						{
							run_late_descent_case(late_n[s], nwords, where, (gpusort_algorithm) a);
							ran++;
						}
		if (ran)
			printf("keys in order but for one descent: %s\n", failures == before ? "ok" : "FAILED");
	}

	/* the pinned buffers kept between sorts, so that a leak checker sees none */
	gpusort_release_host_buffers();
	check_status(gpusort_device_memory(&free1, &total), "memory info");
	CHECK(free1 + (4u << 20) >= free0, "device memory leaked: %zu MB free before, %zu after",
		  free0 >> 20, free1 >> 20);
	printf("kernel_test: %d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
