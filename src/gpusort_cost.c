/*
 * gpusort_cost.c -- what a GpuSort is expected to cost.
 *
 * Every figure is a multiple of cpu_operator_cost, as PostgreSQL's own
 * sort estimate is (a comparison costs 2 of them), so that the estimate
 * scales with the session's cost settings as the native Sort's does.  The
 * figures were measured on the CPU path of a 2-core Debian 12 machine
 * (PostgreSQL 18), where the native in-memory Sort of 1M rows of 12
 * bytes (two columns) took about 400 ns a row against an estimate of 41
 * cpu_operator_costs a row: one cpu_operator_cost is taken as 10 ns of
 * sorting work, 1 ms as 100,000 of them.  The GPU's part comes from the
 * H100/H200 benchmarks in bench/results.  doc/cost_model.md gives the
 * measurements behind each.
 *
 * The native side is the replaced nodes' own estimate (their total cost
 * less their input's) plus what cost_sort leaves out, the bytes a Sort
 * moves (gpusort_native_sort_extra).
 *
 * A GpuSort of n rows of w bytes, k key words a row:
 *
 *   intake  n * (INTAKE_ROW + INTAKE_BYTE * w + encoding of the keys)
 *   sort    GPU: GPU_JOB + n * k * GPU_SORT_WORD + n * (4k + 4) * TRANSFER_BYTE
 *           CPU: n * k * CPU_SORT_WORD
 *   finish  n * TIE_SHARE * FINISH_ROW where a key is sorted by a prefix
 *           (a share of at least 1 - groups / n under a sorted GROUP BY),
 *           plus n * CHECK_ROW where a libc key's order is checked
 *   emit    n * (EMIT_ROW + EMIT_BYTE * w)
 *   plus    STARTUP once
 *   runs    where the rows are expected to outgrow the memory budget
 *           (node_spill.h): SPILL_ROW per row stored and SPILL_BYTE per
 *           byte of the runs, written and read back, and MERGE_COMPARE per
 *           row and log2(runs) levels of the merge's heap
 *
 * Under a bound b <= GPUSORT_TOPK_MAX_BOUND the rows go through a CPU
 * top-k heap: n * TOPK_ROW, plus the rows that enter the heap,
 * b * (1 + ln(n / b)), each stored and sifted (INTAKE_ROW + INTAKE_BYTE * w
 * + log2(b) comparisons); b rows are emitted.  Under a larger bound every
 * row is read and compared with the cut (CUT_ROW), and about CUT_KEEP * b
 * rows are stored and sorted.
 */
#include "postgres.h"

#include <math.h>

#include "optimizer/cost.h"
#include "optimizer/optimizer.h"

#include "guc.h"
#include "gpusort_cost.h"
#include "gpusort_plan.h"
#include "sort_engine.h"

/*
 * Once per GpuSort: the node's start (memory contexts, the first rows'
 * store) and end, about 20 us: sorting 100 rows of 109 bytes took 0.095-
 * 0.112 ms a query with GpuSort, 0.082-0.085 ms natively (CPU path).
 */
#define STARTUP_OPS				2000.0

/*
 * Storing one row: copying the tuple into the row store with its pointer,
 * per row and per byte.  CPU path, 1M rows: fill less the scan below was
 * about 25 ns a row of 12 bytes and 75-120 ns a row of 109 bytes.
 */
#define INTAKE_ROW_OPS			2.5
#define INTAKE_BYTE_OPS			0.08

/*
 * Encoding one key of a row, by code: a WHOLE key's value is read; BYTES
 * copies up to 32 bytes; an abbreviated key calls the type's abbreviation
 * (numeric, about 25 ns); ICU builds a sort key (about 400 ns for a short
 * name: shape 6 of shapes-1000000-h200.md stored 1M rows in 442 ms, 2/3 of
 * them in 2 workers); libc calls strxfrm (about 1 us, shape 7 against 6).
 */
#define ENCODE_WHOLE_OPS		0.2
#define ENCODE_BYTES_OPS		0.8
#define ENCODE_ABBREV_OPS		2.5
#define ENCODE_ICU_OPS			40.0
#define ENCODE_LIBC_OPS			100.0

/*
 * The CPU radix sort, per row and 32-bit key word: 1M int4 keys in 16-22
 * ms (CPU path here; 28 ms on the H100 host's CPU, crossover-h100.md).
 */
#define CPU_SORT_WORD_OPS		2.0

/*
 * The GPU sort: a job's fixed cost (create, launch, synchronise), 0.16 ms
 * (crossover-h100.md: 0.164 ms for 1024 keys); per row and key word, 0.5
 * ms for 10M rows of one word (order_by-10000000-h100-run6.md, sort); the
 * transfer of keys and permutation, and of reordered columns, 0.4 ns a
 * byte of key words and permutation (to device 4.3-10.5 ms and from device
 * 11.7-29.7 ms for 10M rows of one key word, order_by-10000000-h100-run6.md).
 */
#define GPU_JOB_OPS				16000.0
#define GPU_SORT_WORD_OPS		0.005
#define TRANSFER_BYTE_OPS		0.04

/*
 * Rows whose prefixes tie are ordered with PostgreSQL's comparators on the
 * CPU: a share of the rows (74,043 of 1M names under ICU in shape 6 of
 * shapes-1000000-h200.md), each about 400 ns (29.7 ms for those rows; 0.1-
 * 1.5 us in TPC-H Q12 and Q7); under a sorted GROUP BY of g groups at
 * least 1 - g / n of them.  A libc key's sorted rows are each compared
 * with the next by strcoll (about 150 ns).
 */
#define TIE_SHARE				0.10
#define FINISH_ROW_OPS			40.0
#define CHECK_ROW_OPS			15.0

/*
 * Handing one row up, per row and per byte.  CPU path, 1M rows: emit was
 * 53-66 ns a row of 12 bytes and 83-86 ns a row of 109 bytes; on the H100
 * host 28-39 ns a row of 93 bytes (order_by-10000000-h100-run6.md).
 */
#define EMIT_ROW_OPS			6.0
#define EMIT_BYTE_OPS			0.027

/*
 * The CPU top-k heap, per row read: its key encoded and compared with the
 * heap's top.  CPU path, 1M rows of 109 bytes under LIMIT 10: fill less
 * the scan was 31-37 ns a row (the native bounded Sort's 40 ns).
 */
#define TOPK_ROW_OPS			3.3

/*
 * A bound above GPUSORT_TOPK_MAX_BOUND: each row's key is compared with
 * the cut, and about 2.5 times the bound's rows are stored (514,274 of 1M
 * under LIMIT 200000, shape 13 of shapes-1000000-h200.md).
 */
#define CUT_ROW_OPS				1.2
#define CUT_KEEP				2.5

/*
 * The native Sort's work per byte of row that cost_sort leaves out: it
 * copies each row into its memory and hands it up, and compares rows
 * spread over that memory.  CPU path, 1M rows in memory at the same
 * estimate: 600 ns a row of 109 bytes, 400 ns a row of 12, 2 ns a byte.
 */
/*
 * Runs past the budget: a row written to a run and read back, beyond the
 * sort held in memory.  On the H200 host, build be29e05
 * (bench/results/external_sizes-*.md): 50M int4 rows (16-byte records) at
 * a 256 MB budget, 6 runs, took 55 ns a row more than in memory; 10M rows
 * of 81 bytes (93-byte records), 5 runs, 67 ns more; going from 3 runs to
 * 24 added 15-26 ns a row for each level of the merge's tournament, which
 * is priced as cost_sort prices a comparison (2 cpu_operator_costs, 20
 * ns).  What the merge's comparisons leave of the first two, 3 and 21 ns,
 * fits 0.23 ns a byte and nothing a row; a row is priced 5 ns as a floor
 * (each is read back and handed up) and a byte 0.25 ns, which gives 9 and
 * 28 ns.  (The first calibration, of build 8f501b5, before the runs were
 * gathered by threads into smaller records, was 5 and 0.18.)
 */
#define SPILL_ROW_OPS			0.5
#define SPILL_BYTE_OPS			0.025
#define MERGE_COMPARE_OPS		2.0

#define NATIVE_BYTE_OPS			0.2

/* Rows a heap of bound b keeps, of n read in random order: b (1 + ln(n / b)). */
static double
heap_entries(double n, double b)
{
	b = Max(b, 1.0);
	return Min(n, b * (1.0 + log(Max(n / b, 1.0))));
}

Cost
gpusort_native_sort_extra(double rows, int width, int64 bound)
{
	/* a bounded heap sort (cost_sort's, where 2 * bound rows fit work_mem) keeps few */
	if (bound >= 0 && 2.0 * bound < rows)
		rows = heap_entries(rows, (double) bound);
	return Max(rows, 0) * NATIVE_BYTE_OPS * Max(width, 0) * cpu_operator_cost;
}

bool
gpusort_cost_gpu_path(double n)
{
	if (gpusort_device == GPUSORT_DEVICE_CPU ||
		gpusort_algorithm_choice == GPUSORT_ALGORITHM_CPU)
		return false;
	if (gpusort_device == GPUSORT_DEVICE_AUTO &&
		gpusort_algorithm_choice == GPUSORT_ALGORITHM_AUTO &&
		n < (double) gpusort_gpu_min_elements)
		return false;
	return !gpusort_gpu_known_unusable();
}

static double
encode_ops(GpuSortKeyCode code)
{
	switch (code)
	{
		case GPUSORT_CODE_BYTES:
			return ENCODE_BYTES_OPS;
		case GPUSORT_CODE_ABBREV:
			return ENCODE_ABBREV_OPS;
		case GPUSORT_CODE_ICU:
			return ENCODE_ICU_OPS;
		case GPUSORT_CODE_LIBC:
			return ENCODE_LIBC_OPS;
		default:
			return ENCODE_WHOLE_OPS;
	}
}

/* Sorting n rows of k key words: GPU or CPU path. */
static Cost
sort_ops(double n, int k, bool gpu)
{
	if (gpu)
		return GPU_JOB_OPS + n * k * GPU_SORT_WORD_OPS +
			n * (4.0 * k + 4.0) * TRANSFER_BYTE_OPS;
	return n * k * CPU_SORT_WORD_OPS;
}

void
gpusort_estimate(const GpuSortCostInput *in, GpuSortCost *est)
{
	double		n = Max(in->rows, 1.0);
	double		w = Max(in->width, 0);
	double		row_ops = INTAKE_ROW_OPS + INTAKE_BYTE_OPS * w;
	double		encode = encode_ops(in->prefix_code) + ENCODE_WHOLE_OPS * Max(in->key_words - 1, 0);
	double		stored = n;
	double		out = n;
	double		intake,
				sort,
				finish = 0,
				emit;

	memset(est, 0, sizeof(*est));
	if (in->bound >= 0 && in->bound <= GPUSORT_TOPK_MAX_BOUND)
	{
		/* the CPU top-k heap: every row compared, a few stored */
		double		b = Max((double) in->bound, 1.0);
		double		entered = heap_entries(n, b);

		intake = n * (TOPK_ROW_OPS + encode) +
			entered * (row_ops + 2.0 * log2(Max(b, 2.0)));
		sort = 0;
		out = Min(n, b);
		est->on_gpu = false;
	}
	else
	{
		if (in->bound >= 0)
		{
			/* candidates under the cut */
			stored = Min(n, CUT_KEEP * (double) in->bound);
			out = Min(n, (double) in->bound);
		}
		est->on_gpu = !in->in_workers && gpusort_cost_gpu_path(stored);
		/* the workers' and the leader's shares side by side, where they store the rows */
		intake = (n * (encode + (stored < n ? CUT_ROW_OPS : 0)) + stored * row_ops) /
			Max(in->intake_processes, 1.0);
		sort = sort_ops(stored, Max(in->key_words, 1), est->on_gpu);
		if (in->ties_finished)
		{
			/* a sorted GROUP BY's groups: the rows beyond one a group tie */
			double		ties = TIE_SHARE;

			if (in->groups > 0 && in->groups < stored)
				ties = Max(ties, 1.0 - in->groups / stored);
			finish = stored * ties * FINISH_ROW_OPS;
		}
		if (in->checked)
			finish += stored * CHECK_ROW_OPS;
	}
	emit = out * (EMIT_ROW_OPS + EMIT_BYTE_OPS * w);

	est->intake = intake * cpu_operator_cost;
	est->sort = sort * cpu_operator_cost;
	est->finish = finish * cpu_operator_cost;
	est->emit = emit * cpu_operator_cost;
	est->startup = STARTUP_OPS * cpu_operator_cost + est->intake + est->sort + est->finish;
	est->total = est->startup + est->emit;
	if (in->spill_bytes > 0 && !(in->bound >= 0 && in->bound <= GPUSORT_TOPK_MAX_BOUND))
	{
		/* written before the first row; read and merged as the rows are handed up */
		Cost		write = (stored * SPILL_ROW_OPS + in->spill_bytes * SPILL_BYTE_OPS) / 2 *
			cpu_operator_cost;

		est->runs = 2 * write + out * MERGE_COMPARE_OPS * log2(Max(in->runs, 2.0)) *
			cpu_operator_cost;
		est->startup += write;
		est->total += est->runs;
	}
}
