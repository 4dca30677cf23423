/*
 * pg_compat.h -- the differences between the PostgreSQL major versions
 * gpusort builds against (15, 16, 17 and 18), in one place.
 *
 * Each entry names the version whose headers changed the API.  Everything
 * else gpusort uses (planner_hook, CustomScan and its methods, tuplesort with
 * sortopt, slots, shm_toc, DSM/DSA, LWLock tranches, custom GUCs) compiles
 * unchanged against the headers of 15, 17 and 18 (test/pg_headers_check.sh
 * for 17, whose source cannot be fetched to build it); dsa_create() became
 * a macro over dsa_create_ext() in 17, with the same arguments.
 */
#ifndef GPUSORT_PG_COMPAT_H
#define GPUSORT_PG_COMPAT_H

#include "postgres.h"

#if PG_VERSION_NUM < 150000
#error "gpusort needs PostgreSQL 15 or later"
#endif

#include "access/stratnum.h"
#include "miscadmin.h"
#include "nodes/plannodes.h"
#include "utils/lsyscache.h"

/*
 * EXPLAIN: 18 moved ExplainState to commands/explain_state.h and the
 * ExplainProperty* functions to commands/explain_format.h; before 18 both
 * are in commands/explain.h.  Include this header where either is used.
 */
#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif

/*
 * Whether EXPLAIN qualifies column names with their relation ("g.s"): when
 * the range table holds more than one relation.  18 adds an RTE_GROUP entry
 * for a query's GROUP BY and counts the range table without it
 * (ExplainState.rtable_size, new in 18); 15-17 have no such entry.
 */
static inline int
gpusort_explain_rtable_size(ExplainState *es)
{
#if PG_VERSION_NUM >= 180000
	return es->rtable_size;
#else
	return list_length(es->rtable);
#endif
}

/*
 * get_ordering_op_properties: 18 reports the operator's CompareType
 * (COMPARE_LT / COMPARE_GT); 15-17 its btree strategy number (int16).
 * Whether the ordering operator sorts descending, else as core's call.
 */
static inline bool
gpusort_ordering_op_properties(Oid opno, Oid *opfamily, Oid *opcintype, bool *descending)
{
#if PG_VERSION_NUM >= 180000
	CompareType cmptype;

	if (!get_ordering_op_properties(opno, opfamily, opcintype, &cmptype))
		return false;
	*descending = (cmptype == COMPARE_GT);
#else
	int16		strategy;

	if (!get_ordering_op_properties(opno, opfamily, opcintype, &strategy))
		return false;
	*descending = (strategy == BTGreaterStrategyNumber);
#endif
	return true;
}

/*
 * Plan.disabled_nodes (18): the count of enable_* = off nodes in a plan
 * tree, which EXPLAIN compares with the children's ("Disabled: true").
 * A node put in place of another takes over its count, so that the nodes
 * above it add up as the planner counted.  18's EXPLAIN adds up a custom
 * scan's custom_plans, not its outer plan: a GpuSort over a disabled node
 * shows "Disabled: true" itself.
 */
#if PG_VERSION_NUM >= 180000
#define gpusort_copy_disabled_nodes(dst, src) ((dst)->disabled_nodes = (src)->disabled_nodes)
#else
#define gpusort_copy_disabled_nodes(dst, src) ((void) 0)
#endif

/*
 * The client connection's socket, or PGINVALID_SOCKET (a standalone
 * backend, or closed).  Port's first member is sock in every version (15
 * to 18); libpq/libpq-be.h, which defines Port, needs GSSAPI's headers
 * where the server was built with GSSAPI, and PGXS does not bring them.
 */
static inline pgsocket
client_socket(void)
{
	return MyProcPort != NULL ? *(const pgsocket *) MyProcPort : PGINVALID_SOCKET;
}

#endif							/* GPUSORT_PG_COMPAT_H */
