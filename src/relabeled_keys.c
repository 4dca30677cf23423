/*
 * relabeled_keys.c -- sort keys that relabel a column the row already has
 * (relabeled_keys.h).
 *
 * ORDER BY t COLLATE "C" (or a varchar column sorted as text) makes the
 * planner add a column to the rows below the Sort: (t)::text, the same
 * value under another collation or type.  The node that computes the rows
 * (a scan) must then project every row instead of handing its tuples up as
 * they lie, the rows carry the value twice, and the node above the Sort
 * reads it back.  A GpuSort needs none of it: it keys on t itself (a key's
 * collation is the sort clause's, not the column's) and gives the nodes
 * above the relabeled value from t as it hands each row up.
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/lsyscache.h"

#include "relabeled_keys.h"

/* The Var under expr's RelabelTypes, NULL if expr is no relabeled Var. */
static Var *
relabeled_var(Expr *expr)
{
	if (expr == NULL || !IsA(expr, RelabelType))
		return NULL;
	while (IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	return IsA(expr, Var) && ((Var *) expr)->varlevelsup == 0 ? (Var *) expr : NULL;
}

/* Is plan's targetlist its child's columns in order, as a Gather's is? */
static bool
passes_columns_on(Plan *plan)
{
	ListCell   *lc;
	AttrNumber	resno = 0;

	if (plan->lefttree == NULL ||
		list_length(plan->targetlist) != list_length(plan->lefttree->targetlist))
		return false;
	foreach(lc, plan->targetlist)
	{
		Var		   *var = (Var *) lfirst_node(TargetEntry, lc)->expr;

		resno++;
		if (!IsA(var, Var) || var->varno != OUTER_VAR || var->varattno != resno ||
			var->varlevelsup != 0)
			return false;
	}
	return true;
}

/*
 * The node that computes child's rows: child itself, or the node below the
 * Gathers that pass them on; NULL if it is of a kind not known here (one
 * whose columns must match its child's, or an extension's).
 */
static Plan *
computing_node(Plan *child)
{
	Plan	   *plan = child;

	while (IsA(plan, Gather))
	{
		if (!passes_columns_on(plan))
			return NULL;
		plan = plan->lefttree;
	}
	switch (nodeTag(plan))
	{
		case T_SeqScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_NestLoop:
		case T_MergeJoin:
		case T_HashJoin:
			return plan;
		default:
			return NULL;
	}
}

/* The first column of tlist that is var itself, 0 if none. */
static AttrNumber
column_of(List *tlist, Var *var)
{
	ListCell   *lc;
	AttrNumber	resno = 0;

	foreach(lc, tlist)
	{
		Expr	   *expr = lfirst_node(TargetEntry, lc)->expr;

		resno++;
		if (IsA(expr, Var) && equal(expr, var))
			return resno;
	}
	return 0;
}

typedef struct OutputContext
{
	List	   *old_columns;	/* the computing node's targetlist, not yet truncated */
	AttrNumber	ncols;			/* columns kept */
	AttrNumber *same_as;		/* [p - 1]: the kept column relabeled by dropped column p */
} OutputContext;

/* Var of kept column q standing for var (a Var of the node that computes the rows) */
static Node *
relabel_from_kept_mutator(Node *node, void *arg)
{
	AttrNumber	q = *(AttrNumber *) arg;

	if (node == NULL)
		return NULL;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;

		return (Node *) makeVar(INDEX_VAR, q, var->vartype, var->vartypmod, var->varcollid, 0);
	}
	return expression_tree_mutator(node, relabel_from_kept_mutator, arg);
}

static Node *
output_mutator(Node *node, OutputContext *cxt)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varno == INDEX_VAR &&
		((Var *) node)->varattno > cxt->ncols)
	{
		AttrNumber	p = ((Var *) node)->varattno;
		Expr	   *relabel = list_nth_node(TargetEntry, cxt->old_columns, p - 1)->expr;

		/* the column's RelabelTypes over the kept column's value */
		return relabel_from_kept_mutator((Node *) copyObject(relabel), &cxt->same_as[p - 1]);
	}
	return expression_tree_mutator(node, output_mutator, (void *) cxt);
}

void
gpusort_drop_relabeled_columns(Plan *child, List *attnos, List **tlist)
{
	Plan	   *computing = computing_node(child);
	List	   *columns;
	int			ncols,
				keep;
	AttrNumber *same_as;
	OutputContext cxt;
	ListCell   *lc;

	if (computing == NULL)
		return;
	columns = computing->targetlist;
	ncols = list_length(columns);
	same_as = palloc0(Max(ncols, 1) * sizeof(AttrNumber));
	/* the trailing columns that relabel a column of plain Var before them */
	for (keep = ncols; keep > 0; keep--)
	{
		Var		   *var = relabeled_var(list_nth_node(TargetEntry, columns, keep - 1)->expr);
		AttrNumber	q = var ? column_of(columns, var) : 0;

		if (q == 0 || q >= keep)
			break;
		same_as[keep - 1] = q;
	}
	if (keep == ncols || keep == 0)
	{
		pfree(same_as);
		return;
	}

	/* keys on the columns relabeled; the output from them */
	foreach(lc, attnos)
		if (lfirst_int(lc) > keep)
			lfirst_int(lc) = same_as[lfirst_int(lc) - 1];
	cxt.old_columns = columns;
	cxt.ncols = keep;
	cxt.same_as = same_as;
	*tlist = (List *) output_mutator((Node *) *tlist, &cxt);

	/*
	 * the columns dropped where they are computed and on the way up, each
	 * node's width less theirs (as the planner estimates an expression's)
	 */
	for (Plan *plan = child;; plan = plan->lefttree)
	{
		int			width = plan->plan_width;

		for_each_from(lc, plan->targetlist, keep)
		{
			Node	   *expr = (Node *) lfirst_node(TargetEntry, lc)->expr;

			width -= get_typavgwidth(exprType(expr), exprTypmod(expr));
		}
		plan->plan_width = Max(width, 0);
		plan->targetlist = list_truncate(plan->targetlist, keep);
		if (plan == computing)
			break;
	}
}
