/*
 * sort_choice.cuh -- gpusort.algorithm = auto: which GPU sort runs, by key
 * width, n and a cheap look at the keys, with the thresholds of
 * auto_config.h.  Shared by the job API and the benchmark.
 *
 * The look is the radix sort's own first read (onesweep_count_t: every
 * 8-bit place's digit counts and the key range), so it costs the radix
 * sort nothing, whichever sort runs.  All keys equal, or more distinct
 * digits in one byte than quicksort's limit for the size (so more distinct
 * keys): radix, which goes on from that read.  Only when every byte takes
 * few values does the read's summary kernel also count the distinct keys of a
 * sample of FIRST_READ_SAMPLE, which tells few distinct keys (quicksort,
 * which takes its key range from the read) from many combinations of few
 * digits (radix).  Up to GPUSORT_AUTO_BITONIC_LOOKED_MAX_N_64 64-bit keys
 * the look is quicksort's range read and its sample instead (no digit
 * counts), and keys that radix would sort in at least
 * GPUSORT_AUTO_BITONIC_LOOKED_MIN_PASSES passes (onesweep_plan_from_look,
 * the plan over key - min the radix sort would take after such a read)
 * take the bitonic network.
 */
#ifndef GPUSORT_SORT_CHOICE_CUH
#define GPUSORT_SORT_CHOICE_CUH

#include <stdio.h>

#include "auto_config.h"
#include "cuda_check.cuh"
#include "onesweep.cuh"
#include "quicksort.cuh"

static_assert(GPUSORT_AUTO_SAMPLE == FIRST_READ_SAMPLE, "the sample the first read takes");

/* What auto's look found, for the sort it picked. */
struct sort_look
{
	bool		counted;		/* temp holds the radix sort's first read, summary its result */
	bool		precleared;		/* and its look-back regions zeroed (onesweep_look_t: clear_bytes) */
	first_read_summary summary;
};

/*
 * The most distinct keys (of the sample) auto sends to quicksort: no more
 * than its multi-pivot round takes as pivots, so that the round sorts them.
 */
static_assert(GPUSORT_AUTO_QUICKSORT_MAX_DISTINCT_32 <= QS_PIVOTS_MAX &&
			  GPUSORT_AUTO_QUICKSORT_MAX_DISTINCT_64 <= QS_PIVOTS_MAX,
			  "auto's quicksort limit within the multi-pivot round's pivots");

static inline int
auto_quicksort_limit(bool wide)
{
	return wide ? GPUSORT_AUTO_QUICKSORT_MAX_DISTINCT_64 : GPUSORT_AUTO_QUICKSORT_MAX_DISTINCT_32;
}

/*
 * The choices made before any look at the keys: a forced algorithm (kept
 * unless the keys are too wide for it), keys wider than 64 bits (radix),
 * and few keys (the bitonic network).  True where one was made.
 */
static inline bool
choose_without_look(size_t n, int key_words, gpusort_algorithm requested,
					gpusort_algorithm *chosen, char *reason, size_t len)
{
	const bool	wide = key_words == 2;

	if (requested != GPUSORT_ALGO_AUTO)
	{
		*chosen = requested;
		if (requested != GPUSORT_ALGO_RADIX && key_words > 2)
		{
			*chosen = GPUSORT_ALGO_RADIX;
			snprintf(reason, len, "%s takes keys of up to 64 bits",
					 gpusort_algorithm_name(requested));
		}
		else
			snprintf(reason, len, "gpusort.algorithm = %s", gpusort_algorithm_name(requested));
		return true;
	}
	if (key_words > 2)
	{
		*chosen = GPUSORT_ALGO_RADIX;
		snprintf(reason, len, "keys wider than 64 bits");
		return true;
	}
	if (n <= (size_t) (wide ? GPUSORT_AUTO_BITONIC_MAX_N_64 : GPUSORT_AUTO_BITONIC_MAX_N_32))
	{
		*chosen = GPUSORT_ALGO_BITONIC;
		snprintf(reason, len, "%zu rows, at most %d: one bitonic network", n,
				 wide ? GPUSORT_AUTO_BITONIC_MAX_N_64 : GPUSORT_AUTO_BITONIC_MAX_N_32);
		return true;
	}

	return false;
}

/*
 * Many 64-bit keys (from GPUSORT_AUTO_SAMPLE_FIRST_MIN_N_64): the sample
 * first (one small kernel and a round trip), since their radix first read
 * costs more than quicksort's range read by more than that -- few distinct keys go to quicksort without
 * it, and so do keys whose sample descends, where n is in the window
 * that quicksort measured faster on such keys; an ascending sample
 * there waits for the first read, which finds keys truly in order.
 * *decided: a choice was made; *ascending_sample: the sample ascends in
 * that window.
 */
template <typename K>
static gpusort_status
choose_by_sample(const K *keys, size_t n, void *temp, int limit, gpusort_algorithm *chosen,
				 char *reason, size_t len, bool *decided, bool *ascending_sample)
{
	static_assert(GPUSORT_AUTO_ORDERED_QUICKSORT_MIN_N_64 >= GPUSORT_AUTO_SAMPLE_FIRST_MIN_N_64,
				  "the ordered-keys rule reads the sample taken first");
	gpusort_status st;

	int			distinct,
				order;

	*decided = false;
	if ((st = quicksort_sample_distinct<K>(keys, n, temp, 0, &distinct, &order)) != GPUSORT_OK)
		return st;
	if (distinct <= limit)
	{
		*chosen = GPUSORT_ALGO_QUICKSORT;
		snprintf(reason, len, "few distinct keys (%d in a sample of %d, looked at first)",
				 distinct, FIRST_READ_SAMPLE);
		*decided = true;
		return GPUSORT_OK;
	}
	/*
	 * an ascending sample: the first read first, which tells keys in
	 * order (nothing to move) from keys that only look it
	 */
	const bool	ordered_window = n >= GPUSORT_AUTO_ORDERED_QUICKSORT_MIN_N_64 &&
		n <= GPUSORT_AUTO_ORDERED_QUICKSORT_MAX_N_64;

	if (order > 0 && ordered_window)
		*ascending_sample = true;
	else if (order < 0 && ordered_window)
	{
		*chosen = GPUSORT_ALGO_QUICKSORT;
		snprintf(reason, len, "64-bit keys in descending order (an even sample of %d, looked at first)",
				 FIRST_READ_SAMPLE);
		*decided = true;
	}
	return GPUSORT_OK;
}

/*
 * The look.  Up to GPUSORT_AUTO_BITONIC_LOOKED_MAX_N_64 64-bit keys it
 * is quicksort's read (the range and the sample, no digit counts):
 * every choice there but a radix sort of a short plan needs no counts --
 * keys in order, few distinct keys (quicksort goes on from the read),
 * and the bitonic network where radix would take many passes -- and
 * eight places' counts cost several microseconds on sorts of 50-100.
 * The radix sort of a short plan (banded keys) counts the digits of key
 * - min after it, as after a lazy read that left keys uncounted (a plan
 * over key - min, the one it takes for such keys anyway).  Otherwise
 * the look is the radix sort's own first read, with a sample where
 * asked.  The look goes into *look (look->counted); ascending_sample:
 * the sample-first rule saw an ascending sample in its window; wide: 64-bit
 * keys.
 */
template <typename K>
static gpusort_status
choose_by_look(const K *keys, size_t n, void *temp, int limit, bool ascending_sample, bool wide,
			   gpusort_algorithm *chosen, char *reason, size_t len, sort_look *look)
{
	static_assert(GPUSORT_AUTO_BITONIC_LOOKED_MAX_N_64 < GPUSORT_AUTO_SAMPLE_FIRST_MIN_N_64,
				  "the range look is never after the sample taken first");
	gpusort_status st;
	const bool	range_look = wide && n <= GPUSORT_AUTO_BITONIC_LOOKED_MAX_N_64;
	const char *read = range_look ? "the range read" : "the first read";
	const first_read_summary *s = NULL;
	int			most = 0;		/* most distinct digits of one 8-bit place (none counted: 0) */

	if (range_look)
	{
		digit_plan	none;

		none.passes = 0;
		if ((st = onesweep_first_read<K>(keys, n, none, temp, limit, 0)) != GPUSORT_OK ||
			(st = onesweep_first_read_wait(0, &s)) != GPUSORT_OK)
			return st;
	}
	else
	{
		/* the radix sort's look-back regions zeroed behind the read (it needs no memset then) */
		if ((st = onesweep_look_t<K>(keys, n, temp, 0, limit, &s,
									 onesweep_preclear_bytes(n, (int) sizeof(K)))) != GPUSORT_OK)
			return st;
		look->precleared = true;
	}
	look->counted = true;
	look->summary = *s;
	if (range_look)
		look->summary.complete = 0;	/* no digit counts taken */
	*chosen = GPUSORT_ALGO_RADIX;
	for (int p = 0; p < (int) sizeof(K) * 8 / RADIX_NARROW_BITS; p++)
		most = s->used[p] > most ? s->used[p] : most;
	if (s->range[0] == s->range[1])
		snprintf(reason, len, "all keys equal (%s shows it)", read);
	else if (s->sorted)
		snprintf(reason, len, "keys already in order (%s shows it)", read);
	else if (ascending_sample)
	{
		*chosen = GPUSORT_ALGO_QUICKSORT;
		snprintf(reason, len, "64-bit keys in ascending order (an even sample of %d, looked at first)",
				 FIRST_READ_SAMPLE);
	}
	else if (most > limit)
		/* at least that many distinct keys: no sample needed */
		snprintf(reason, len, "%d distinct digits in one byte of the keys", most);
	else if (s->distinct <= limit)
	{
		*chosen = GPUSORT_ALGO_QUICKSORT;
		snprintf(reason, len, "few distinct keys (%d in a sample of %d)", s->distinct,
				 FIRST_READ_SAMPLE);
	}
	else if (range_look)
	{
		digit_plan	plan;

		(void) onesweep_plan_from_look<K>(&look->summary, -1, &plan);
		if (plan.passes >= GPUSORT_AUTO_BITONIC_LOOKED_MIN_PASSES)
		{
			*chosen = GPUSORT_ALGO_BITONIC;
			snprintf(reason, len, "%zu 64-bit keys that radix would sort in %d passes", n,
					 plan.passes);
		}
		else
			snprintf(reason, len, "64-bit keys in a range of %d bits (%d passes)",
					 onesweep_bit_length(s->range[1] - s->range[0]), plan.passes);
	}
	else
		snprintf(reason, len, "%d distinct keys in a sample of %d", s->distinct,
				 FIRST_READ_SAMPLE);

	return GPUSORT_OK;
}

/*
 * The algorithm for n keys (key_words 32-bit words each; keys holds them as
 * K when key_words <= 2) and the reason, into reason.  A forced choice is kept
 * unless the keys are too wide for it.  An auto choice that looks at the
 * keys leaves look->counted set: temp (the radix sort's scratch, at least
 * onesweep_temp_bytes) then holds the first read and look->summary what
 * it found, for onesweep_sort_counted or quicksort's known range.
 */
template <typename K>
static gpusort_status
choose_algorithm(const K *keys, size_t n, void *temp, int key_words,
				 gpusort_algorithm requested, gpusort_algorithm *chosen, char *reason,
				 size_t len, sort_look *look)
{
	const bool	wide = key_words == 2;
	const int	limit = auto_quicksort_limit(wide);
	bool		ascending_sample = false;	/* the 64-bit ordered rule's */

	look->counted = false;
	look->precleared = false;
	if (choose_without_look(n, key_words, requested, chosen, reason, len))
		return GPUSORT_OK;
	if (wide && n >= GPUSORT_AUTO_SAMPLE_FIRST_MIN_N_64)
	{
		bool		decided;
		gpusort_status st = choose_by_sample<K>(keys, n, temp, limit, chosen, reason, len,
												&decided, &ascending_sample);

		if (st != GPUSORT_OK || decided)
			return st;
	}
	return choose_by_look<K>(keys, n, temp, limit, ascending_sample, wide, chosen, reason, len,
							 look);
}

#endif
