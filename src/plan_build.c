/*
 * plan_build.c -- helpers for building plan nodes, shared by the planner
 * rewrite (gpusort_planner.c) and the parallel-fill node's plan
 * (parallel_fill.c).
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"

#include "plan_build.h"

List *
gpusort_column_vars(List *targetlist, int varno)
{
	List	   *vars = NIL;
	ListCell   *lc;
	AttrNumber	resno = 0;

	foreach(lc, targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		resno++;
		vars = lappend(vars,
					   makeTargetEntry((Expr *) makeVar(varno, resno, exprType((Node *) tle->expr),
														exprTypmod((Node *) tle->expr),
														exprCollation((Node *) tle->expr), 0),
									   resno, tle->resname, false));
	}
	return vars;
}

/* the highest plan_node_id of the plan being rewritten, then of nodes added */
static int	max_plan_node_id;

static void
find_max_plan_node_id(Plan *plan)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	max_plan_node_id = Max(max_plan_node_id, plan->plan_node_id);
	switch (nodeTag(plan))
	{
		case T_Append:
			foreach(lc, ((Append *) plan)->appendplans)
				find_max_plan_node_id(lfirst(lc));
			break;
		case T_MergeAppend:
			foreach(lc, ((MergeAppend *) plan)->mergeplans)
				find_max_plan_node_id(lfirst(lc));
			break;
		case T_BitmapAnd:
			foreach(lc, ((BitmapAnd *) plan)->bitmapplans)
				find_max_plan_node_id(lfirst(lc));
			break;
		case T_BitmapOr:
			foreach(lc, ((BitmapOr *) plan)->bitmapplans)
				find_max_plan_node_id(lfirst(lc));
			break;
		case T_SubqueryScan:
			find_max_plan_node_id(((SubqueryScan *) plan)->subplan);
			break;
		case T_CustomScan:
			foreach(lc, ((CustomScan *) plan)->custom_plans)
				find_max_plan_node_id(lfirst(lc));
			break;
		default:
			break;
	}
	find_max_plan_node_id(plan->lefttree);
	find_max_plan_node_id(plan->righttree);
}

void
gpusort_plan_ids_start(PlannedStmt *stmt)
{
	ListCell   *lc;

	max_plan_node_id = 0;
	find_max_plan_node_id(stmt->planTree);
	foreach(lc, stmt->subplans)
		find_max_plan_node_id(lfirst(lc));
}

int
gpusort_new_plan_node_id(void)
{
	return ++max_plan_node_id;
}
