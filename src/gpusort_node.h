/*
 * gpusort_node.h -- the GpuSort custom scan node.
 */
#ifndef GPUSORT_NODE_H
#define GPUSORT_NODE_H

#include "postgres.h"

#include "nodes/extensible.h"

/* Bounds up to this use the CPU top-k heap instead of a full sort. */
#define GPUSORT_TOPK_MAX_BOUND 65536

extern CustomScanMethods gpusort_scan_methods;

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
	GPUSORT_PRIVATE_BOUND,		/* one int: LIMIT + OFFSET, -1 if none */
	GPUSORT_PRIVATE_CODES,		/* ints: GpuSortKeyCode of each key (sort_keys.h) */
	GPUSORT_PRIVATE_COUNT
};

#define gpusort_private(cscan, index) \
	((List *) list_nth((cscan)->custom_private, (index)))

extern List *gpusort_pack_private(List *attnos, List *types, List *sortops,
								  List *collations, List *nulls_first,
								  List *descending, int bound, List *codes);

extern void gpusort_register_node(void);
extern void gpusort_install_planner_hook(void);

#endif
