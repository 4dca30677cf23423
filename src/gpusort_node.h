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

extern void gpusort_register_node(void);
extern void gpusort_install_planner_hook(void);

#endif
