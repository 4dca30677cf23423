/*
 * plan_build.h -- helpers for building plan nodes (plan_build.c).
 */
#ifndef GPUSORT_PLAN_BUILD_H
#define GPUSORT_PLAN_BUILD_H

#include "postgres.h"

#include "nodes/pg_list.h"
#include "nodes/plannodes.h"

/*
 * A targetlist of Vars (varno: OUTER_VAR, INDEX_VAR, ...) that passes every
 * column of targetlist on, with its name.
 */
extern List *gpusort_column_vars(List *targetlist, int varno);

/* Before a plan is rewritten: note the highest plan_node_id it (and its subplans) use. */
extern void gpusort_plan_ids_start(PlannedStmt *stmt);

/* A plan node id no node of the plan being rewritten has. */
extern int	gpusort_new_plan_node_id(void);

#endif
