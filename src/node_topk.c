/*
 * node_topk.c -- the GpuSort node's top-k heap: under a small constant
 * bound (LIMIT, up to GPUSORT_TOPK_MAX_BOUND) the node keeps only the best
 * rows seen so far in a CPU max-heap, ordered by the rows' encoded key
 * words and then by arrival (so the result is the stable order).
 */
#include "postgres.h"

#include "executor/tuptable.h"
#include "utils/memutils.h"

#include "key_encoding.h"
#include "node_state.h"
#include "sort_keys.h"

/* words per key in the top-k heap: NULL flag, high word, low word */
#define TOPK_WORDS_PER_KEY 3

/* Start the top-k heap: room for bound rows. */
void
node_topk_start(GpuSortState *state, TopKEntry *probe)
{
	int			nwords = state->nkeys * TOPK_WORDS_PER_KEY;
	MemoryContext old = MemoryContextSwitchTo(state->sortcxt);

	state->heap = palloc((state->bound + 1) * sizeof(TopKEntry));
	for (int64 i = 0; i < state->bound; i++)
		state->heap[i].words = palloc(nwords * sizeof(uint32));
	probe->words = palloc(nwords * sizeof(uint32));
	state->heap_bytes = (state->bound + 1) * (sizeof(TopKEntry) + nwords * sizeof(uint32));
	MemoryContextSwitchTo(old);
}

static void
topk_words(GpuSortState *state, TupleTableSlot *slot, uint32 *words)
{
	for (int k = 0; k < state->nkeys; k++)
	{
		bool		isnull;
		Datum		d = slot_getattr(slot, state->attnos[k], &isnull);
		uint64		code = gpusort_key_code(state->types[k], d, isnull, state->descending[k]);
		uint32	   *w = words + k * TOPK_WORDS_PER_KEY;

		w[0] = gpusort_null_word(isnull, state->nulls_first[k]);
		w[1] = (uint32) (code >> 32);
		w[2] = (uint32) code;
	}
}

static int
topk_cmp(const TopKEntry *a, const TopKEntry *b, int nwords)
{
	for (int i = 0; i < nwords; i++)
		if (a->words[i] != b->words[i])
			return a->words[i] < b->words[i] ? -1 : 1;
	return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

static int	topk_qsort_nwords;

static int
topk_qsort_cmp(const void *a, const void *b)
{
	return topk_cmp((const TopKEntry *) a, (const TopKEntry *) b, topk_qsort_nwords);
}

/* Max-heap of the best `bound` rows seen so far: add the row in slot. */
void
node_topk_add(GpuSortState *state, TupleTableSlot *slot, TopKEntry *probe)
{
	int			nwords = state->nkeys * TOPK_WORDS_PER_KEY;
	Size		k = (Size) state->bound;
	TopKEntry  *heap = state->heap;
	Size		i;

	if (k == 0)
		return;
	topk_words(state, slot, probe->words);
	if (state->heap_n == k)
	{
		if (topk_cmp(probe, &heap[0], nwords) >= 0)
			return;				/* not among the best */
		/* drop the root, sift the probe down from the top */
		state->heap_bytes -= GetMemoryChunkSpace(heap[0].tuple);
		pfree(heap[0].tuple);
		{
			uint32	   *spare = heap[0].words;

			i = 0;
			for (;;)
			{
				Size		l = 2 * i + 1,
							r = l + 1,
							big = i;
				const TopKEntry *bigger = probe;

				if (l < k && topk_cmp(&heap[l], bigger, nwords) > 0)
					big = l, bigger = &heap[l];
				if (r < k && topk_cmp(&heap[r], bigger, nwords) > 0)
					big = r;
				if (big == i)
					break;
				heap[i] = heap[big];
				i = big;
			}
			heap[i].words = spare;
		}
	}
	else
	{
		i = state->heap_n++;
		while (i > 0 && topk_cmp(&heap[(i - 1) / 2], probe, nwords) < 0)
		{
			uint32	   *spare = heap[i].words;

			heap[i] = heap[(i - 1) / 2];
			heap[(i - 1) / 2].words = spare;
			i = (i - 1) / 2;
		}
	}
	memcpy(heap[i].words, probe->words, nwords * sizeof(uint32));
	heap[i].seq = probe->seq;
	heap[i].tuple = ExecCopySlotMinimalTuple(slot);
	state->heap_bytes += GetMemoryChunkSpace(heap[i].tuple);
}

/* Put the heap's rows into sorted order, for emission. */
void
node_topk_finish(GpuSortState *state)
{
	topk_qsort_nwords = state->nkeys * TOPK_WORDS_PER_KEY;
	qsort(state->heap, state->heap_n, sizeof(TopKEntry), topk_qsort_cmp);
	state->nresult = state->heap_n;
	state->run.algorithm = "top-k heap";
	state->run.device_name = "CPU";
	state->run.device_reason = "small LIMIT";
}
