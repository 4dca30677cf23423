/*
 * gpusort_plan.h -- what a GpuSort plan node carries, shared by the planner
 * (gpusort_planner.c, which builds it), the node (gpusort_node.c and its
 * node_*.c files, which run it) and the parallel fill (parallel_fill.c,
 * which reads its keys).  It includes none of their headers, so none of
 * them depends on another's through it.
 */
#ifndef GPUSORT_PLAN_H
#define GPUSORT_PLAN_H

#include "postgres.h"

#include "nodes/pg_list.h"
#include "nodes/plannodes.h"

/* Bounds up to this use the CPU top-k heap instead of a full sort. */
#define GPUSORT_TOPK_MAX_BOUND 65536

/*
 * GPUSORT_PRIVATE_BOUND of a GpuSort under a Limit whose count or offset
 * is known only at run time (a parameter of a generic plan): the node
 * evaluates its custom_exprs, (count, offset), before it reads its input,
 * as the Limit does.
 */
#define GPUSORT_BOUND_AT_RUN_TIME (-2)

/*
 * What a GpuSort's custom_private holds, by index (as postgres_fdw packs
 * its fdw_private): one List per entry, a list element per sort key.
 */
enum GpuSortPrivateIndex
{
	GPUSORT_PRIVATE_ATTNOS,		/* ints: scan-tuple column of each key */
	GPUSORT_PRIVATE_TYPES,		/* OIDs: key type (a domain's base type) */
	GPUSORT_PRIVATE_SORTOPS,	/* OIDs: ordering operator */
	GPUSORT_PRIVATE_COLLATIONS, /* OIDs */
	GPUSORT_PRIVATE_NULLS_FIRST,	/* ints (booleans) */
	GPUSORT_PRIVATE_DESCENDING, /* ints (booleans) */
	GPUSORT_PRIVATE_BOUND,		/* one int: LIMIT + OFFSET, -1 if none, or
								 * GPUSORT_BOUND_AT_RUN_TIME */
	GPUSORT_PRIVATE_CODES,		/* ints: GpuSortKeyCode of each key (sort_keys.h) */
	GPUSORT_PRIVATE_COUNT
};

#define gpusort_private(cscan, index) \
	((List *) list_nth((cscan)->custom_private, (index)))

extern List *gpusort_pack_private(List *attnos, List *types, List *sortops,
								  List *collations, List *nulls_first,
								  List *descending, int bound, List *codes);

#endif
