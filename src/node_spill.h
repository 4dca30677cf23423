/*
 * node_spill.h -- a GpuSort past its memory budget: sorted runs written to
 * temporary files, and their merge (node_spill.c).
 *
 * When the rows outgrow the node's budget (gpusort.work_mem /
 * gpusort.max_memory), node_intake.c sorts the rows it holds (GPU or CPU,
 * ties finished as usual), writes them in order as one run, frees its
 * memory and reads on.  Each run row is written with the key words the
 * merge compares.  At the end the runs are merged: key words first, then
 * PostgreSQL's comparators for the keys the words do not decide, then the
 * run's number (so equal rows keep their input order).  Runs are BufFiles,
 * PostgreSQL's own temporary files, as the tuplesort's: temp_tablespaces,
 * temp_file_limit, log_temp_files and the cleanup at transaction end apply.
 *
 * A node read forward only merges as it hands the rows up.  A node that
 * may be read backward or marked (a cursor, a merge join's inner side)
 * merges once into one more file whose records carry their length at both
 * ends, and is read from there.
 */
#ifndef GPUSORT_NODE_SPILL_H
#define GPUSORT_NODE_SPILL_H

#include "postgres.h"

#include "executor/tuptable.h"
#include "utils/tuplesort.h"

#include "pg_compat.h"

struct GpuSortState;

typedef struct SpillState SpillState;

/*
 * Write the state->nresult rows of the node's store, in the order of
 * state->perm (NULL: the store's own order), as one run.  Row r's merge
 * words are words[j][r] (words[j] NULL: the constant consts[j]), j <
 * nwords; nwords is the same for every run of a sort.
 */
extern void spill_write_run(struct GpuSortState *state, int nwords,
							const uint32 *const *words, const uint32 *consts);

/* The sort's last run is written: start the merge (state->random_access: into one file). */
extern void spill_finish_input(struct GpuSortState *state);

/* The next row in the direction asked, or an empty slot at either end. */
extern TupleTableSlot *spill_fetch(struct GpuSortState *state, bool forward);

/* Back to before the first row. */
extern void spill_rescan(struct GpuSortState *state);

/* Mark and restore (random access only). */
extern void spill_mark(struct GpuSortState *state);
extern void spill_restore(struct GpuSortState *state);

/* Every row of the runs written so far into ts (the fallback to the tuplesort). */
extern void spill_to_tuplesort(struct GpuSortState *state, Tuplesortstate *ts);

/* Close the files and free the memory (state->spill NULL after); NULL: nothing. */
extern void spill_close(struct GpuSortState *state);

/* EXPLAIN ANALYZE: the runs, rows and bytes written, the write and merge times. */
extern void spill_explain(struct GpuSortState *state, ExplainState *es, bool show_times);

#endif
