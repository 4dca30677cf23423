/*
 * node_explain.c -- EXPLAIN output of the GpuSort node.
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/typcache.h"

#include "node_state.h"
#include "pg_compat.h"

/*
 * What the GPU sorts by, where a key is not encoded whole: the keys up to
 * the first such key and how that one is encoded ("s (first 8 bytes)");
 * the CPU orders rows that tie on it by it and the keys after it.
 */
static const char *
key_prefix_text(GpuSortState *state, List *keys)
{
	StringInfoData buf;
	int			f = state->finish_from;

	initStringInfo(&buf);
	for (int k = 0; k < f; k++)
		appendStringInfo(&buf, "%s, ", (const char *) list_nth(keys, k));
	switch (state->codes[f])
	{
		case GPUSORT_CODE_BYTES:
			/* the bytes encoded, or once sorted the bytes the sort took */
			appendStringInfo(&buf, "%s (first %d bytes)", (const char *) list_nth(keys, f),
							 4 * (state->finish_words ? state->finish_words :
								  gpusort_code_words(state->codes[f], state->types[f])));
			break;
		case GPUSORT_CODE_ABBREV:
			appendStringInfo(&buf, "%s (abbreviated)", (const char *) list_nth(keys, f));
			break;
		case GPUSORT_CODE_ICU:
		case GPUSORT_CODE_LIBC:
			appendStringInfo(&buf, "%s (%s sort key, first %d bytes)", (const char *) list_nth(keys, f),
							 state->codes[f] == GPUSORT_CODE_ICU ? "ICU" : "strxfrm",
							 4 * gpusort_code_words(state->codes[f], state->types[f]));
			break;
		default:
			if (buf.len >= 2)
				buf.data[buf.len -= 2] = '\0';
			break;
	}
	return buf.data;
}

/*
 * A sort key's options as the native Sort's EXPLAIN prints them: COLLATE
 * where the collation is not the type's own, DESC for the type's ">"
 * ordering, USING for an operator of another class, and NULLS FIRST/LAST
 * where they are not the direction's default.
 */
/* ", in N threads" where threads sorted the tied rows, else "" */
static const char *
finish_threads_text(GpuSortState *state)
{
	return state->finish_threads > 0 ? psprintf(" in %d threads", state->finish_threads) : "";
}

static void
append_key_options(StringInfo buf, Oid type, Oid sortop, Oid collation, bool nulls_first)
{
	TypeCacheEntry *tc = lookup_type_cache(type, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	bool		reverse = false;

	if (OidIsValid(collation) && collation != get_typcollation(type))
	{
		char	   *name = get_collation_name(collation);

		if (name == NULL)
			elog(ERROR, "cache lookup failed for collation %u", collation);
		appendStringInfo(buf, " COLLATE %s", quote_identifier(name));
	}
	if (sortop == tc->gt_opr)
	{
		appendStringInfoString(buf, " DESC");
		reverse = true;
	}
	else if (sortop != tc->lt_opr)
	{
		appendStringInfo(buf, " USING %s", get_opname(sortop));
		/* the operator's own direction decides the NULLS default */
		(void) get_equality_op_for_ordering_op(sortop, &reverse);
	}
	if (nulls_first && !reverse)
		appendStringInfoString(buf, " NULLS FIRST");
	else if (!nulls_first && reverse)
		appendStringInfoString(buf, " NULLS LAST");
}

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
		append_key_options(&buf, var->vartype, state->sortops[k], state->collations[k],
						   state->nulls_first[k]);
		keys = lappend(keys, buf.data);
	}
	ExplainPropertyList("Sort Key", keys, es);
	if (state->bound >= 0)
		ExplainPropertyInteger("Sort Bound", NULL, state->bound, es);
	if (state->finish_from < state->nkeys)
		ExplainPropertyText("GPU Key Prefix", key_prefix_text(state, keys), es);

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
							psprintf("%s, algorithm: %s, rows: %zu%s",
									 state->run.device_name, state->run.algorithm,
									 state->rows_in,
									 state->run.pieces > 1 ?
									 psprintf(", %d pieces", state->run.pieces) : ""), es);
		ExplainPropertyText("Device Reason", state->run.device_reason, es);
		if (state->run.via_service)
			ExplainPropertyText("GPU Service",
								show_times ?
								psprintf("GPU %d, queue wait %.3f ms",
										 state->run.service_device, state->run.queue_ms) :
								psprintf("GPU %d", state->run.service_device), es);
		if (state->has_fill)
			ExplainPropertyInteger("Rows Stored by Workers", NULL, (int64) state->fill_rows, es);
		if (state->run.algorithm_reason[0])
			ExplainPropertyText("Algorithm Reason", state->run.algorithm_reason, es);
		if (state->finish_from < state->nkeys)
			ExplainPropertyText("Finished on CPU",
								show_times ?
								psprintf("%zu rows%s, %d refinement sorts, %.3f ms",
										 state->rows_finished, finish_threads_text(state),
										 state->refine_sorts, state->finish_ms) :
								psprintf("%zu rows%s, %d refinement sorts",
										 state->rows_finished, finish_threads_text(state),
										 state->refine_sorts), es);
		if (state->spill)
			spill_explain(state, es, show_times);
		if (state->rows_checked > 0)
			ExplainPropertyText("Order Checked",
								show_times ?
								psprintf("%zu rows, %.3f ms", state->rows_checked, state->check_ms) :
								psprintf("%zu rows", state->rows_checked), es);
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
		if (state->run.via_service)
		{
			ExplainPropertyInteger("GPU Service Device", NULL, state->run.service_device, es);
			if (show_times)
				ExplainPropertyFloat("GPU Service Queue Wait", "ms", state->run.queue_ms, 3, es);
		}
		if (state->run.pieces > 1)
			ExplainPropertyInteger("GPU Pieces", NULL, state->run.pieces, es);
		if (state->has_fill)
			ExplainPropertyInteger("Rows Stored by Workers", NULL, (int64) state->fill_rows, es);
		if (state->finish_from < state->nkeys)
		{
			ExplainPropertyInteger("Rows Finished on CPU", NULL, (int64) state->rows_finished, es);
			ExplainPropertyInteger("Refinement Sorts", NULL, state->refine_sorts, es);
			if (state->finish_threads > 0)
				ExplainPropertyInteger("Finish Threads", NULL, state->finish_threads, es);
			if (show_times)
				ExplainPropertyFloat("Finish Time", "ms", state->finish_ms, 3, es);
		}
		if (state->spill)
			spill_explain(state, es, show_times);
		if (state->rows_checked > 0)
		{
			ExplainPropertyInteger("Rows Order Checked", NULL, (int64) state->rows_checked, es);
			if (show_times)
				ExplainPropertyFloat("Order Check Time", "ms", state->check_ms, 3, es);
		}
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
