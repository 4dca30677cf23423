/*
 * node_explain.c -- EXPLAIN output of the GpuSort node.
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/ruleutils.h"

#include "node_state.h"
#include "pg_compat.h"

/* EXPLAIN: the sort keys and bound; with ANALYZE what ran, why, and the phase times. */
void
node_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuSortState *state = (GpuSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
	List	   *keys = NIL;
	bool		useprefix = gpusort_explain_rtable_size(es) > 1 || es->verbose;
	bool		show_times;

	context = set_deparse_context_plan(es->deparse_cxt, (Plan *) cscan, ancestors);
	for (int k = 0; k < state->nkeys; k++)
	{
		TargetEntry *tle = list_nth_node(TargetEntry, cscan->custom_scan_tlist,
										 state->attnos[k] - 1);
		Var		   *var = makeVar(INDEX_VAR, state->attnos[k], exprType((Node *) tle->expr),
								  exprTypmod((Node *) tle->expr),
								  exprCollation((Node *) tle->expr), 0);
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfoString(&buf, deparse_expression((Node *) var, context, useprefix, true));
		/* as PostgreSQL's Sort prints them */
		if (state->descending[k])
			appendStringInfoString(&buf, " DESC");
		if (state->nulls_first[k] && !state->descending[k])
			appendStringInfoString(&buf, " NULLS FIRST");
		else if (!state->nulls_first[k] && state->descending[k])
			appendStringInfoString(&buf, " NULLS LAST");
		keys = lappend(keys, buf.data);
	}
	ExplainPropertyList("Sort Key", keys, es);
	if (state->bound >= 0)
		ExplainPropertyInteger("Sort Bound", NULL, state->bound, es);

	if (!es->analyze || !state->sorted)
		return;

	/*
	 * The phase times are the node's own clock readings (a few per sort, not
	 * per row), so they are shown with TIMING OFF too -- then they are not
	 * inflated by per-row timing of the plan below -- unless SUMMARY OFF asks
	 * for output without run-to-run variation.
	 */
	show_times = es->timing || es->summary;
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		ExplainPropertyText(state->run.on_gpu ? "GPU" : "Device",
							psprintf("%s, algorithm: %s, rows: %zu",
									 state->run.device_name, state->run.algorithm,
									 state->rows_in), es);
		ExplainPropertyText("Device Reason", state->run.device_reason, es);
		if (state->has_fill)
			ExplainPropertyInteger("Rows Stored by Workers", NULL, (int64) state->fill_rows, es);
		if (state->run.algorithm_reason[0])
			ExplainPropertyText("Algorithm Reason", state->run.algorithm_reason, es);
		if (show_times)
			ExplainPropertyText("Time",
								psprintf("fill %.3f ms, to device %.3f ms, sort %.3f ms, from device %.3f ms, emit %.3f ms",
										 state->fill_ms, state->run.to_device_ms,
										 state->run.sort_ms, state->run.from_device_ms,
										 state->emit_ms), es);
	}
	else
	{
		ExplainPropertyText("Device", state->run.device_name, es);
		ExplainPropertyBool("On GPU", state->run.on_gpu, es);
		ExplainPropertyText("Algorithm", state->run.algorithm, es);
		ExplainPropertyText("Device Reason", state->run.device_reason, es);
		ExplainPropertyText("Algorithm Reason", state->run.algorithm_reason, es);
		ExplainPropertyInteger("Rows Sorted", NULL, (int64) state->rows_in, es);
		if (state->has_fill)
			ExplainPropertyInteger("Rows Stored by Workers", NULL, (int64) state->fill_rows, es);
		if (show_times)
		{
			ExplainPropertyFloat("Fill Time", "ms", state->fill_ms, 3, es);
			ExplainPropertyFloat("To Device Time", "ms", state->run.to_device_ms, 3, es);
			ExplainPropertyFloat("Sort Time", "ms", state->run.sort_ms, 3, es);
			ExplainPropertyFloat("From Device Time", "ms", state->run.from_device_ms, 3, es);
			ExplainPropertyFloat("Emit Time", "ms", state->emit_ms, 3, es);
		}
	}
}
