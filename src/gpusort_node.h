/*
 * gpusort_node.h -- the GpuSort custom scan node: its methods and their
 * registration, and the planner hook that places it.  What its plan
 * carries is in gpusort_plan.h.
 */
#ifndef GPUSORT_NODE_H
#define GPUSORT_NODE_H

#include "postgres.h"

#include "nodes/extensible.h"

extern CustomScanMethods gpusort_scan_methods;

extern void gpusort_register_node(void);
extern void gpusort_install_planner_hook(void);

#endif
