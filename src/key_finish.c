/*
 * key_finish.c -- ordering the runs of rows whose GPU words tie
 * (key_finish.h).
 *
 * 0. Before the first sort: how many of a BYTES string key's words it
 *    takes (gpusort_finish_first_words), from a sample of the rows.
 * 1. The runs: consecutive rows of the sorted order with equal words (the
 *    GPU marks them, or a scan in sorted order finds them).  A run of text
 *    values that all end within the words is of equal values and needs
 *    nothing more when they are the only key to finish.  The rows of the
 *    other runs ("tied rows") are gathered with the values of the keys
 *    still to compare, fetched once.
 * 2. Refinement, where the first such key is BYTES: the tied rows are
 *    sorted by (run, their next bytes) through the sort engine, which
 *    splits runs of values that share a prefix without any comparison.
 *    Each run's next bytes start after the prefix all its values share
 *    (so a long common prefix costs one pass, not a round per word), and a
 *    run of identical values is settled without a sort.  Rounds go on
 *    while some tied value has bytes left, taking more bytes a round when
 *    one splits nothing, and stop when the tied rows are few or a round of
 *    REFINE_MAX_WORDS words splits nothing.
 * 3. Each run left is sorted on the CPU by the full comparators (with the
 *    presorted check of qsort, so a run of equal values costs one pass).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "portability/instr_time.h"

#include "big_alloc.h"
#include "collation_keys.h"
#include "key_finish.h"
#include "phase_hook.h"
#include "sort_engine.h"

/* Tied rows below this are not refined (the CPU orders them faster). */
#define REFINE_MIN_ROWS 16384

/* Words of further bytes a refinement round takes: from 2, doubling to this. */
#define REFINE_MAX_WORDS GPUSORT_BYTES_WORDS_MAX

/* how far ahead in the sorted order the tie scan prefetches a row's words */
#define TIE_PREFETCH 16

/* how far ahead the refinement prefetches a tied value */
#define VALUE_PREFETCH 16

/* Bytes of a BYTES value after the first sort's the finish keeps per tied row. */
#define CACHE_BYTES 16

/*
 * gpusort_finish_first_words: rows sampled, and tied pairs among them (of
 * values the words do not hold whole) that make the first sort take more.
 */
#define WIDTH_SAMPLE_ROWS 16384
#define WIDTH_SAMPLE_TIES 2

/* fewest tied rows of an ICU or libc text key that threads sort (sort_collation_runs) */
#define THREADED_FINISH_MIN_ROWS 16384

/* rows handled between two interrupt checks */
#define ROWS_PER_CHECK 65536

/* The tied rows: entry t is row row[t] at position pos[t] of perm. */
typedef struct Tied
{
	Size		n;				/* entries */
	uint32	   *pos;
	uint32	   *row;
	Datum	   *values;			/* n * nkeys */
	bool	   *isnull;			/* n * nkeys */
	Size		nruns;
	uint32	   *run_start;		/* nruns + 1 entries: run r is [run_start[r], run_start[r + 1]) */
	uint32	   *run_from;		/* BYTES: the byte its values' unsorted bytes start at */
	bool		refine;			/* some run's values may differ in the first key */

	/*
	 * BYTES: bytes [cache_from, cache_from + CACHE_BYTES) of each value (zero
	 * past its end) and its length, copied when the values are fetched in
	 * row order, so that the refinement reads them in sorted order from
	 * here instead of at random from the rows.  NULL: none.
	 */
	uint8	   *cache;
	uint32	   *len;
} Tied;

/* Bytes the finish takes per tied row at most, with the byte cache or not. */
static Size
finish_row_bytes(int nkeys, bool cache)
{
	/* Tied arrays, (up to half) a run's start and first byte, a refinement's words (run + words) and permutation */
	return 2 * sizeof(uint32) + nkeys * (sizeof(Datum) + sizeof(bool)) + sizeof(uint32) +
		(cache ? CACHE_BYTES + sizeof(uint32) : 0) + (2 + REFINE_MAX_WORDS) * sizeof(uint32);
}

Size
gpusort_finish_row_bytes(int nkeys)
{
	return finish_row_bytes(nkeys, false);
}

static bool
rows_equal(const uint32 *const *words, int nwords, uint32 a, uint32 b)
{
	for (int w = 0; w < nwords; w++)
		if (words[w][a] != words[w][b])
			return false;
	return true;
}

/*
 * Allocate the tied arrays for n entries (and up to n / 2 runs), with a
 * byte cache or not; false if out of memory.
 */
static bool
tied_alloc(Tied *t, Size n, int nkeys, bool cache)
{
	memset(t, 0, sizeof(*t));
	t->pos = gpusort_alloc_big(CurrentMemoryContext, Max(n, 1) * sizeof(uint32));
	t->row = gpusort_alloc_big(CurrentMemoryContext, Max(n, 1) * sizeof(uint32));
	t->values = gpusort_alloc_big(CurrentMemoryContext, Max(n, 1) * nkeys * sizeof(Datum));
	t->isnull = gpusort_alloc_big(CurrentMemoryContext, Max(n, 1) * nkeys * sizeof(bool));
	t->run_start = gpusort_alloc_big(CurrentMemoryContext, (n / 2 + 2) * sizeof(uint32));
	t->run_from = gpusort_alloc_big(CurrentMemoryContext, (n / 2 + 2) * sizeof(uint32));
	if (cache)
	{
		t->cache = gpusort_alloc_big(CurrentMemoryContext, Max(n, 1) * CACHE_BYTES);
		t->len = gpusort_alloc_big(CurrentMemoryContext, Max(n, 1) * sizeof(uint32));
		if (!t->cache || !t->len)
			return false;
	}
	return t->pos && t->row && t->values && t->isnull && t->run_start && t->run_from;
}

/*
 * Entry `from` of src as entry `to` of dst: its row, values and cached
 * bytes (dst may be src, to <= from).  The position is the caller's.
 */
static inline void
copy_entry(Tied *dst, Size to, const Tied *src, Size from, int nkeys)
{
	dst->row[to] = src->row[from];
	memmove(dst->values + to * nkeys, src->values + from * nkeys, nkeys * sizeof(Datum));
	memmove(dst->isnull + to * nkeys, src->isnull + from * nkeys, nkeys * sizeof(bool));
	if (src->cache)
	{
		memmove(dst->cache + to * CACHE_BYTES, src->cache + from * CACHE_BYTES, CACHE_BYTES);
		dst->len[to] = src->len[from];
	}
}

static void
tied_free(Tied *t)
{
	if (t->pos)
		pfree(t->pos);
	if (t->row)
		pfree(t->row);
	if (t->values)
		pfree(t->values);
	if (t->isnull)
		pfree(t->isnull);
	if (t->run_start)
		pfree(t->run_start);
	if (t->run_from)
		pfree(t->run_from);
	if (t->cache)
		pfree(t->cache);
	if (t->len)
		pfree(t->len);
	memset(t, 0, sizeof(*t));
}

/*
 * The first position from `from` on (n if none) whose tie bit (same: bit
 * i % 32 of same[i / 32] for position i) is `set`.
 */
static inline Size
next_bit(const uint32 *same, Size n, Size from, bool set)
{
	Size		w = from / 32,
				nw = (n + 31) / 32;
	uint32		word;

	if (from >= n)
		return n;
	word = (set ? same[w] : ~same[w]) & (~(uint32) 0 << (from % 32));
	while (word == 0)
	{
		if (++w >= nw)
			return n;
		word = set ? same[w] : ~same[w];
	}
	return Min(n, w * 32 + pg_rightmost_one_pos32(word));
}

/* The end of the run that begins at position i. */
static inline Size
run_end(const uint32 *same, Size n, Size i)
{
	return next_bit(same, n, i + 1, false);
}

/* The first run of two rows or more beginning at i or later: its start (n if none). */
static inline Size
next_run(const uint32 *same, Size n, Size i)
{
	Size		j = next_bit(same, n, i + 1, true);

	return j < n ? j - 1 : n;
}

/* Is the first key to finish refined by its bytes (and so cached)? */
static bool
refines(const KeyFinish *kf)
{
	return kf->first_code == GPUSORT_CODE_BYTES;
}

/*
 * Does a text value whose last word in the first sort is `last` end within
 * those words, so that equal words mean equal values?  The zero byte past
 * its end (complemented when descending) is no byte of any text value;
 * other types (bytea) may hold zero bytes, so they never tell.
 */
static inline bool
held_whole(const KeyFinish *kf, uint32 last)
{
	return kf->first_code == GPUSORT_CODE_BYTES &&
		(kf->first_type == TEXTOID || kf->first_type == VARCHAROID) &&
		(last & 0xff) == (kf->first_descending ? 0xff : 0);
}

/*
 * Are the values of the run beginning at sorted position i held whole by
 * its words (the key's words are the last of words[0..nwords); a key that
 * is not BYTES has none, and never tells)?
 */
static inline bool
run_held_whole(const KeyFinish *kf, const uint32 *const *words, int nwords,
			   const uint32 *perm, Size i)
{
	return kf->first_code == GPUSORT_CODE_BYTES && held_whole(kf, words[nwords - 1][perm[i]]);
}

static int
compare_sample_rows(const void *a, const void *b, void *arg)
{
	int			nwords = *(const int *) arg;
	const uint32 *x = a,
			   *y = b;

	for (int w = 0; w < nwords; w++)
		if (x[w] != y[w])
			return x[w] < y[w] ? -1 : 1;
	return 0;
}

int
gpusort_finish_first_words(KeyFinish *kf, const uint32 *const *words, int nwords, Size n)
{
	int			key_words = kf->first_words;
	int			before = nwords - key_words;	/* words of the keys before, NULL flags */
	Size		s = Min(n, WIDTH_SAMPLE_ROWS);
	uint32	   *rows;
	int			take;

	if (!refines(kf) || key_words <= 2 || s < 2)
		return nwords;
	/* rows spread evenly over the input, sorted by all their words */
	rows = palloc(s * nwords * sizeof(uint32));
	for (Size i = 0; i < s; i++)
		for (int w = 0; w < nwords; w++)
			rows[i * nwords + w] = words[w][i * n / s];
	qsort_arg(rows, s, nwords * sizeof(uint32), compare_sample_rows, &nwords);
	for (take = 2; take < key_words; take += 2)
	{
		int			ties = 0;

		for (Size i = 1; i < s && ties < WIDTH_SAMPLE_TIES; i++)
		{
			const uint32 *b = rows + i * nwords;

			if (memcmp(b - nwords, b, (before + take) * sizeof(uint32)) == 0 &&
				!held_whole(kf, b[before + take - 1]))
				ties++;
		}
		if (ties < WIDTH_SAMPLE_TIES)
			break;
	}
	take = Min(take, key_words);
	pfree(rows);
	kf->first_words = take;
	return before + take;
}

/* The bytes of the value of entry e (just fetched) that the cache keeps. */
static void
cache_value(KeyFinish *kf, Tied *t, Size e)
{
	uint8	   *c = t->cache + e * CACHE_BYTES;
	Size		from = (Size) kf->first_words * 4;
	uint8		tmp[16];
	Size		len;
	void	   *to_free;
	const uint8 *b;

	memset(c, 0, CACHE_BYTES);
	t->len[e] = 0;
	if (t->isnull[e * kf->nkeys])
		return;
	b = gpusort_key_bytes(kf->first_type, t->values[e * kf->nkeys], tmp, &len, &to_free);
	if (len > from)
		memcpy(c, b + from, Min(len - from, CACHE_BYTES));
	t->len[e] = (uint32) Min(len, PG_UINT32_MAX);
	if (to_free)
		pfree(to_free);
}

/*
 * The values of the tied rows.  Where many of the n rows tie, they are
 * fetched in row order -- the order the rows were stored in, so memory is
 * read forward -- through a map from row to entry; else in sorted order.
 */
static void
fetch_tied_values(KeyFinish *kf, Tied *t, Size n)
{
	int			nk = kf->nkeys;
	uint32	   *entry_of = NULL;

	if (t->n >= n / 8 && n * sizeof(uint32) <= kf->max_bytes)
		entry_of = gpusort_alloc_big(CurrentMemoryContext, n * sizeof(uint32));
	if (entry_of == NULL)
	{
		for (Size e = 0; e < t->n; e++)
		{
			kf->fetch(kf->arg, t->row[e], t->values + e * nk, t->isnull + e * nk);
			if (t->cache)
				cache_value(kf, t, e);
			if (e % ROWS_PER_CHECK == 0)
				CHECK_FOR_INTERRUPTS();
		}
		return;
	}
	memset(entry_of, 0xff, n * sizeof(uint32));
	for (Size e = 0; e < t->n; e++)
	{
		if (e % ROWS_PER_CHECK == 0)
			CHECK_FOR_INTERRUPTS();
		entry_of[t->row[e]] = (uint32) e;
	}
	for (Size r = 0; r < n; r++)
	{
		uint32		e = entry_of[r];

		if (e != PG_UINT32_MAX)
		{
			kf->fetch(kf->arg, (uint32) r, t->values + (Size) e * nk, t->isnull + (Size) e * nk);
			if (t->cache)
				cache_value(kf, t, e);
		}
		if (r % ROWS_PER_CHECK == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(entry_of);
}

/*
 * The tie bits of the sorted order (see KeyFinish.tie_bits), from the
 * rows' words: one pass in sorted order.  The words of each row are read
 * at random, so those of the row TIE_PREFETCH positions ahead are
 * prefetched.  NULL if out of memory.
 */
static uint32 *
scan_ties(const uint32 *const *words, int nwords, Size n, const uint32 *perm)
{
	Size		nbytes = GPUSORT_TIE_BITS_BYTES(n);
	uint32	   *same = gpusort_alloc_big(CurrentMemoryContext, nbytes);

	const uint32 **varied;		/* the words that differ between some rows */
	int			nvaried = 0;

	if (same == NULL)
		return NULL;
	memset(same, 0, nbytes);
	/* a word the same in every row (a shared prefix, zero bytes past the values) tells nothing */
	varied = palloc(Max(nwords, 1) * sizeof(uint32 *));
	for (int w = 0; w < nwords; w++)
	{
		Size		i = 1;

		while (i < n && words[w][i] == words[w][0])
		{
			if (i % ROWS_PER_CHECK == 0)
				CHECK_FOR_INTERRUPTS();
			i++;
		}
		if (i < n)
			varied[nvaried++] = words[w];
	}
	for (Size i = 1; i < n; i++)
	{
		if (i + TIE_PREFETCH < n)
			for (int w = 0; w < nvaried; w++)
				__builtin_prefetch(&varied[w][perm[i + TIE_PREFETCH]]);
		if (rows_equal(varied, nvaried, perm[i - 1], perm[i]))
			same[i / 32] |= (uint32) 1 << (i % 32);
		if (i % ROWS_PER_CHECK == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(varied);
	return same;
}

/*
 * Does the run beginning at position i need finishing?  Not where its text
 * values end within the words (so are equal) and are the only key.
 */
static inline bool
run_needs_finish(const KeyFinish *kf, const uint32 *const *words, int nwords,
				 const uint32 *perm, Size i)
{
	return !(kf->nkeys == 1 && run_held_whole(kf, words, nwords, perm, i));
}

/*
 * Step 1: the runs of perm[0..n) that begin before m and need finishing,
 * and their rows' values.  False if out of memory (or over kf->max_bytes).
 */
static bool
gather_tied(KeyFinish *kf, const uint32 *const *words, int nwords, Size n,
			const uint32 *perm, Size m, Tied *t)
{
	const uint32 *same = kf->tie_bits;
	uint32	   *scanned = NULL;
	Size		count = 0;
	bool		cache;
	bool		ok = true;

	memset(t, 0, sizeof(*t));
	if (n < 2)
		return true;
	if (same == NULL && (same = scanned = scan_ties(words, nwords, n, perm)) == NULL)
		return false;

	/* the tied rows of the runs that begin before m, counted, then gathered */
	for (Size i = next_run(same, n, 0); i < m; i = next_run(same, n, i))
	{
		Size		j = run_end(same, n, i);

		CHECK_FOR_INTERRUPTS();
		if (run_needs_finish(kf, words, nwords, perm, i))
			count += j - i;
		i = j;
	}
	if (count == 0)
		goto out;				/* nothing to finish */
	/* the byte cache where the budget has room for it */
	cache = refines(kf) && count * finish_row_bytes(kf->nkeys, true) <= kf->max_bytes;
	if (count * finish_row_bytes(kf->nkeys, cache) > kf->max_bytes)
	{
		kf->over_budget = true;
		ok = false;
		goto out;
	}
	if (!tied_alloc(t, count, kf->nkeys, cache))
	{
		tied_free(t);
		ok = false;
		goto out;
	}
	for (Size i = next_run(same, n, 0); i < m; i = next_run(same, n, i))
	{
		Size		j = run_end(same, n, i);

		if (run_needs_finish(kf, words, nwords, perm, i))
		{
			/* values held whole tie in the first key: only the keys after it split them */
			t->refine |= !run_held_whole(kf, words, nwords, perm, i);
			t->run_from[t->nruns] = (uint32) kf->first_words * 4;
			t->run_start[t->nruns++] = (uint32) t->n;
			for (Size q = i; q < j; q++, t->n++)
			{
				t->pos[t->n] = (uint32) q;
				t->row[t->n] = perm[q];
			}
		}
		i = j;
	}
	t->run_start[t->nruns] = (uint32) t->n;
	fetch_tied_values(kf, t, n);
out:
	if (scanned)
		pfree(scanned);
	return ok;
}

/*
 * The tied values are read in sorted order, their memory at random: the
 * value of the entry VALUE_PREFETCH ahead is prefetched (a varlena key's
 * header and first bytes).
 */
static inline void
prefetch_value(const KeyFinish *kf, const Tied *t, Size e)
{
	if (e < t->n && !t->isnull[e * kf->nkeys])
		__builtin_prefetch(DatumGetPointer(t->values[e * kf->nkeys]));
}

/*
 * Where the values of entries [s, e) stop being all the same, from the
 * values themselves: the end of the bytes they share from `from` on (the
 * bytes before are equal), at most `end`.  *identical: they are the same
 * value.
 */
static Size
values_shared_end(KeyFinish *kf, Tied *t, Size s, Size e, Size from, Size end,
				  bool *identical)
{
	int			nk = kf->nkeys;
	uint8		tmp0[16];
	Size		len0;
	void	   *free0;
	const uint8 *b0 = gpusort_key_bytes(kf->first_type, t->values[s * nk], tmp0, &len0, &free0);

	*identical = true;
	end = Min(end, len0);
	for (Size q = s + 1; q < e; q++)
	{
		uint8		tmp[16];
		Size		len,
					p,
					qend;
		void	   *to_free;
		const uint8 *b;

		prefetch_value(kf, t, q + VALUE_PREFETCH);
		b = gpusort_key_bytes(kf->first_type, t->values[q * nk], tmp, &len, &to_free);
		*identical = *identical && len == len0;
		qend = Min(end, len);
		p = Min(from, qend);
		while (p < qend && b[p] == b0[p])
			p++;
		end = Min(end, p);
		if (to_free)
			pfree(to_free);
	}
	if (free0)
		pfree(free0);
	/* (a value that ends before `from` equals the others: those bytes tied) */
	*identical = *identical && Max(end, from) >= len0;
	return Max(from, end);
}

/*
 * Where the values of entries [s, e) stop being all the same, looking from
 * byte `from` on (the bytes before are equal): from the byte cache where
 * it holds the bytes that differ.  *identical: they are the same value.
 */
static Size
shared_end(KeyFinish *kf, Tied *t, Size s, Size e, Size from, bool *identical)
{
	Size		c0 = (Size) kf->first_words * 4;
	Size		len0,
				stop,
				end;
	const uint8 *a;

	if (t->cache == NULL || from >= c0 + CACHE_BYTES)
		return values_shared_end(kf, t, s, e, from, SIZE_MAX, identical);

	/* each value's cached bytes against the first's, from `from` */
	len0 = t->len[s];
	stop = Min(len0, c0 + CACHE_BYTES);
	a = t->cache + s * CACHE_BYTES;
	*identical = true;
	for (Size q = s + 1; q < e; q++)
	{
		const uint8 *b = t->cache + q * CACHE_BYTES;
		Size		qstop = Min(stop, t->len[q]),
					p = Min(from, qstop);

		*identical = *identical && t->len[q] == len0;
		while (p < qstop && a[p - c0] == b[p - c0])
			p++;
		stop = p;
	}
	if (stop < c0 + CACHE_BYTES)
	{
		*identical = *identical && Max(stop, from) >= len0;
		return Max(from, stop);
	}
	/* every value has the cached bytes, all the same: the rest from the values */
	end = len0;
	for (Size q = s; q < e; q++)
		end = Min(end, t->len[q]);
	return values_shared_end(kf, t, s, e, c0 + CACHE_BYTES, end, identical);
}

/*
 * Step 2's look at each run before a round: the bytes all its values share
 * from run_from on are skipped (run_from moves past them), and a run of
 * identical values is settled -- dropped, where the first key is the only
 * one to finish (its rows are in place already).
 */
static void
skip_shared_bytes(KeyFinish *kf, Tied *t)
{
	int			nk = kf->nkeys;
	Size		out = 0,		/* entries kept */
				kept_runs = 0;

	for (Size r = 0; r < t->nruns; r++)
	{
		Size		s = t->run_start[r],
					e = t->run_start[r + 1];
		bool		identical = true;
		Size		from = t->run_from[r];

		/* a run's values all tie on NULL, or none is NULL */
		if (!t->isnull[s * nk])
			from = shared_end(kf, t, s, e, from, &identical);
		if (identical && nk == 1)
			continue;			/* settled */
		t->run_from[kept_runs] = (uint32) Min(from, PG_UINT32_MAX);
		t->run_start[kept_runs++] = (uint32) out;
		for (Size q = s; q < e; q++, out++)
		{
			t->pos[out] = t->pos[q];
			copy_entry(t, out, t, q, nk);
		}
		if (r % 1024 == 0)
			CHECK_FOR_INTERRUPTS();
	}
	t->nruns = kept_runs;
	t->run_start[kept_runs] = (uint32) out;
	t->n = out;
}

/*
 * One refinement round (step 2): sort the tied rows by run and then by nw
 * words of the first key's bytes from their run's run_from, split the
 * runs, and keep only the rows still tied in runs that begin before m.
 * *more: some tied value has bytes past those words.  False if out of
 * memory (t is unchanged then).
 */
static bool
refine_round(KeyFinish *kf, Tied *t, uint32 *perm, Size m, int nw, bool *more)
{
	int			nk = kf->nkeys;
	uint32	   *cols[1 + REFINE_MAX_WORDS];
	uint32	   *order;
	uint32	   *run_of;			/* entry -> its run */
	Size		c0 = (Size) kf->first_words * 4;	/* where the byte cache starts */
	uint32	   *buf;
	Tied		next;
	GpuSortRun	run;
	bool		ok = true;

	*more = false;
	memset(cols, 0, sizeof(cols));
	order = gpusort_alloc_big(CurrentMemoryContext, t->n * sizeof(uint32));
	buf = palloc(nw * sizeof(uint32));
	for (int w = 0; w <= nw; w++)
		if ((cols[w] = gpusort_alloc_big(CurrentMemoryContext, t->n * sizeof(uint32))) == NULL)
			ok = false;
	if (!ok || order == NULL)
		goto out_of_memory;
	run_of = cols[0];

	for (Size r = 0; r < t->nruns; r++)
		for (Size e = t->run_start[r]; e < t->run_start[r + 1]; e++)
		{
			Size		from = t->run_from[r];

			run_of[e] = (uint32) r;
			if (t->isnull[e * nk])
				memset(buf, 0, nw * sizeof(uint32));
			else if (t->cache && from + (Size) nw * 4 <= c0 + CACHE_BYTES)
			{
				/* the bytes are in the cache (zero past the value's end, as the words want) */
				*more |= gpusort_bytes_words(t->cache + e * CACHE_BYTES,
											 t->len[e] > c0 ? t->len[e] - c0 : 0,
											 from - c0, nw, kf->first_descending, buf);
			}
			else
			{
				uint8		tmp[16];
				Size		len;
				void	   *to_free;
				const uint8 *bytes;

				prefetch_value(kf, t, e + VALUE_PREFETCH);
				bytes = gpusort_key_bytes(kf->first_type, t->values[e * nk], tmp, &len, &to_free);
				*more |= gpusort_bytes_words(bytes, len, from, nw, kf->first_descending, buf);
				if (to_free)
					pfree(to_free);
			}
			for (int w = 0; w < nw; w++)
				cols[1 + w][e] = buf[w];
			if (e % ROWS_PER_CHECK == 0)
				CHECK_FOR_INTERRUPTS();
		}
	if (!gpusort_sort_rows((const uint32 *const *) cols, 1 + nw, t->n, order, &run, NULL, NULL))
		goto out_of_memory;
	kf->refine_sorts++;
	kf->refine_on_gpu = run.on_gpu;

	/* the rows in their new order, then those still tied */
	if (!tied_alloc(&next, t->n, nk, t->cache != NULL))
	{
		tied_free(&next);
		goto out_of_memory;
	}
	for (Size e = 0; e < t->n; e++)
	{
		if (e % ROWS_PER_CHECK == 0)
			CHECK_FOR_INTERRUPTS();
		perm[t->pos[e]] = t->row[order[e]];
	}
	for (Size i = 0; i < t->n;)
	{
		Size		j = i + 1;

		CHECK_FOR_INTERRUPTS();
		if (t->pos[i] >= m)
			break;
		while (j < t->n && rows_equal((const uint32 *const *) cols, 1 + nw, order[i], order[j]))
			j++;
		if (j - i > 1)
		{
			next.run_from[next.nruns] = (uint32) Min((Size) t->run_from[run_of[order[i]]] + nw * 4,
													 PG_UINT32_MAX);
			next.run_start[next.nruns++] = (uint32) next.n;
			for (Size q = i; q < j; q++, next.n++)
			{
				/* the positions stay, the entries come in their new order */
				next.pos[next.n] = t->pos[q];
				copy_entry(&next, next.n, t, order[q], nk);
			}
		}
		i = j;
	}
	next.run_start[next.nruns] = (uint32) next.n;
	tied_free(t);
	*t = next;
	pfree(order);
	pfree(buf);
	for (int w = 0; w <= nw; w++)
		pfree(cols[w]);
	return true;

out_of_memory:
	if (order)
		pfree(order);
	pfree(buf);
	for (int w = 0; w <= nw; w++)
		if (cols[w])
			pfree(cols[w]);
	return false;
}

/* The CPU comparison of two tied entries (step 3): the keys, then the earlier entry. */
typedef struct FinishCompare
{
	const Tied *t;
	int			nkeys;
	SortSupport ssup;
} FinishCompare;

static int
compare_entries(const void *a, const void *b, void *arg)
{
	const FinishCompare *c = (const FinishCompare *) arg;
	uint32		i = *(const uint32 *) a,
				j = *(const uint32 *) b;

	for (int k = 0; k < c->nkeys; k++)
	{
		int			r = ApplySortComparator(c->t->values[i * c->nkeys + k],
											c->t->isnull[i * c->nkeys + k],
											c->t->values[j * c->nkeys + k],
											c->t->isnull[j * c->nkeys + k],
											&c->ssup[k]);

		if (r != 0)
			return r;
	}
	return i < j ? -1 : (i > j);
}

/*
 * Step 3 for a single text key under an ICU or libc collation, with
 * threads: each thread sorts whole runs by the collation itself
 * (collation_keys.h), the comparator's order.  False where it cannot (then
 * the comparators sort every run).
 */
static bool
sort_collation_runs(KeyFinish *kf, Tied *t, uint32 *perm)
{
	uint32	   *order;

	if ((kf->first_code != GPUSORT_CODE_ICU && kf->first_code != GPUSORT_CODE_LIBC) ||
		kf->nkeys != 1 || kf->threads < 2 || t->n < THREADED_FINISH_MIN_ROWS)
		return false;
	order = palloc_extended(t->n * sizeof(uint32), MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (order == NULL)
		return false;
	if (!gpusort_collation_sort_runs(kf->ssup[0].ssup_collation, kf->ssup[0].ssup_reverse,
									 kf->threads, t->values, t->isnull, t->nruns,
									 t->run_start, order))
	{
		pfree(order);
		return false;
	}
	for (Size e = 0; e < t->n; e++)
		perm[t->pos[e]] = t->row[order[e]];
	pfree(order);
	kf->rows_finished += t->n;
	kf->finish_threads = kf->threads;
	return true;
}

/* Step 3: each run sorted by the full comparators.  False if out of memory. */
static bool
sort_runs(KeyFinish *kf, Tied *t, uint32 *perm)
{
	FinishCompare cmp = {t, kf->nkeys, kf->ssup};
	Size		longest = 0;
	uint32	   *idx;

	if (sort_collation_runs(kf, t, perm))
		return true;

	for (Size r = 0; r < t->nruns; r++)
		longest = Max(longest, t->run_start[r + 1] - t->run_start[r]);
	idx = gpusort_alloc_big(CurrentMemoryContext, Max(longest, 1) * sizeof(uint32));
	if (idx == NULL)
		return false;
	for (Size r = 0; r < t->nruns; r++)
	{
		Size		s = t->run_start[r],
					len = t->run_start[r + 1] - s;

		for (Size q = 0; q < len; q++)
			idx[q] = (uint32) (s + q);
		qsort_interruptible(idx, len, sizeof(uint32), compare_entries, &cmp);
		for (Size q = 0; q < len; q++)
			perm[t->pos[s + q]] = t->row[idx[q]];
		if (r % 1024 == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(idx);
	kf->rows_finished += t->n;
	return true;
}

void
gpusort_finish_setup(KeyFinish *kf, const GpuSortKeySpec *keys, int nkeys,
					 GpuSortKeyCode first_code, bool first_descending)
{
	/* rows that tie on a key encoded whole are equal by it: it needs no finish */
	Assert(!gpusort_code_lossless(first_code, keys[0].type));
	memset(kf, 0, sizeof(*kf));
	kf->nkeys = nkeys;
	kf->ssup = palloc(nkeys * sizeof(SortSupportData));
	for (int k = 0; k < nkeys; k++)
		gpusort_key_sort_support(&keys[k], false, &kf->ssup[k]);
	kf->first_code = first_code;
	kf->first_type = keys[0].type;
	kf->first_descending = first_descending;
	kf->first_words = gpusort_code_words(first_code, keys[0].type);
}

bool
gpusort_finish_ties(KeyFinish *kf, const uint32 *const *words, int nwords, Size n,
					uint32 *perm, Size m)
{
	Tied		t;
	instr_time	start;
	bool		ok;

	gpusort_phase_begin("finish");
	INSTR_TIME_SET_CURRENT(start);
	kf->rows_finished = 0;
	kf->refine_sorts = 0;
	kf->refine_on_gpu = false;
	kf->finish_threads = 0;
	kf->over_budget = false;
	if (!gather_tied(kf, words, nwords, n, perm, Min(m, n), &t))
		return false;

	if (refines(kf) && t.refine)
	{
		int			nw = 2;
		bool		more = true;

		while (more && t.n >= REFINE_MIN_ROWS)
		{
			Size		runs_before,
						tied_before;

			skip_shared_bytes(kf, &t);
			runs_before = t.nruns;
			tied_before = t.n;
			if (t.n < REFINE_MIN_ROWS ||
				!refine_round(kf, &t, perm, m, nw, &more))
				break;			/* the CPU finishes what is left */
			if (t.nruns == runs_before && t.n == tied_before)
			{
				/* nothing split: equal values (past the words), or a longer shared prefix */
				if (nw == REFINE_MAX_WORDS)
					break;
				nw *= 2;
			}
		}
		/* runs of identical values left need no comparison */
		if (kf->nkeys == 1 && t.n > 0)
			skip_shared_bytes(kf, &t);
	}
	ok = t.n == 0 || sort_runs(kf, &t, perm);
	tied_free(&t);
	{
		instr_time	now;

		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		kf->ms = INSTR_TIME_GET_MILLISEC(now);
	}
	return ok;
}
