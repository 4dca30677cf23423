/*
 * relabeled_keys.h -- sort keys that relabel a column the row already has.
 *
 * ORDER BY t COLLATE "C" gives the rows below the Sort a column (t)::text
 * that only relabels t; a GpuSort keys on t and leaves that column out of
 * the rows it stores.
 */
#ifndef RELABELED_KEYS_H
#define RELABELED_KEYS_H

#include "nodes/plannodes.h"

/*
 * For a GpuSort over child, keyed on attnos (columns of child's rows) and
 * putting out *tlist (INDEX_VAR Vars over child's rows): drops the
 * trailing columns of child's rows that relabel another of its columns,
 * from the node that computes them (a scan or a join, under Gathers that
 * pass the columns on) and from those Gathers; the keys on them are then
 * on the columns they relabel, and *tlist gives the relabeled value from
 * there.  Does nothing where the rows are of another shape.
 */
extern void gpusort_drop_relabeled_columns(Plan *child, List *attnos, List **tlist);

#endif
