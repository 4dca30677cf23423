/*
 * key_finish.h -- ordering the rows whose GPU words tie (key_finish.c).
 *
 * After the sort engine has sorted rows by their key words, rows whose
 * words are all equal form runs.  Where a key is not encoded whole
 * (sort_keys.h: BYTES of strings, ABBREV, NONE), such rows may still differ; the
 * finish orders each run by the keys from the first such key on, with the
 * keys' full comparators.  A BYTES key is first refined: the tied rows are
 * sorted again by their next bytes (the sort engine, GPU or CPU), as long
 * as that splits runs.
 */
#ifndef GPUSORT_KEY_FINISH_H
#define GPUSORT_KEY_FINISH_H

#include "postgres.h"

#include "utils/sortsupport.h"

#include "sort_keys.h"

typedef struct KeyFinish
{
	/* the keys to finish by: the key list's keys first .. first + nkeys - 1 */
	int			nkeys;
	SortSupport ssup;			/* full sort support of each (not abbreviated) */
	GpuSortKeyCode first_code;	/* the first one's code */
	Oid			first_type;
	bool		first_descending;
	int			first_words;	/* words of it the first sort had (BYTES) */

	/*
	 * Where the sort engine made them (the GPU path), which sorted rows tie
	 * with the row before: bit i % 32 of tie_bits[i / 32] for position i.
	 * NULL: the finish compares the rows' words itself.
	 */
	const uint32 *tie_bits;

	/* the values of those keys of row `row` (Datums stay valid until the end) */
	void		(*fetch) (void *arg, uint32 row, Datum *values, bool *isnull);
	void	   *arg;
	Size		max_bytes;		/* memory the finish may take */
	int			threads;		/* threads that may sort ICU runs (run_threads.h); 0 or 1: none */

	/* what the finish did */
	bool		over_budget;	/* it would have needed more than max_bytes */
	Size		rows_finished;	/* rows in runs ordered on the CPU */
	int			refine_sorts;	/* sorts of tied rows by further bytes */
	bool		refine_on_gpu;	/* the last of them ran on the GPU */
	int			finish_threads; /* threads that sorted the runs (0: the comparators here) */
	double		ms;
} KeyFinish;

/*
 * Start kf for finishing by keys[0..nkeys) (keys[0]: the first key not
 * sorted whole, of code first_code): zeroed, with the keys' full sort
 * support; the caller sets fetch, arg and max_bytes.
 */
/*
 * The memory the finish needs for each row that ties, of nkeys keys,
 * without its optional byte cache: a node keeps that much room in its
 * budget for every row it holds.
 */
extern Size gpusort_finish_row_bytes(int nkeys);

extern void gpusort_finish_setup(KeyFinish *kf, const GpuSortKeySpec *keys, int nkeys,
								 GpuSortKeyCode first_code, bool first_descending);

/*
 * Where the first key to finish is a BYTES string, its kf->first_words
 * words end words[0..nwords) (keys after it have none): how many of the n
 * rows' words the first sort should take.  The key's words are taken 2, 4,
 * 6 or all 8 at a time: the fewest with which a sample of the rows has almost
 * no ties other than of values held whole by the words (those need no
 * finish).  Sets kf->first_words to the key's words taken.
 */
extern int	gpusort_finish_first_words(KeyFinish *kf, const uint32 *const *words, int nwords,
									   Size n);

/*
 * Order the runs of equal words (words[w][row], nwords of them, n rows)
 * in perm (the sorted order of the rows) that begin before position m.
 * False, with perm still sorted by the words, where memory ran out or
 * the tied rows would need more than kf->max_bytes (kf->over_budget).
 */
extern bool gpusort_finish_ties(KeyFinish *kf, const uint32 *const *words, int nwords,
								Size n, uint32 *perm, Size m);


#endif
