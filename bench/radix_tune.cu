/*
 * radix_tune.cu -- onesweep policies side by side, to choose the constants
 * of kernels/radix_config.cuh on a new architecture: 100M pairs, uniform
 * keys for the 8-bit policies and banded 20-bit keys for the 10-bit ones,
 * median of 7 runs each, with CUB in the same run.
 *   radix_tune [n]
 *   radix_tune n hist   the histogram read with the one-value vote every
 *                       round, never and adaptive, and with twice the
 *                       vectors in flight, on every distribution
 *   radix_tune n sweep  more tile shapes for 32-bit keys
 *   radix_tune n blocks narrow policies with 2 to 4 blocks per SM
 *   radix_tune n early  counts before the ranking or after it
 *   radix_tune n starts early counts per warp made the warps' starts
 *                       before the ranking (CUB's order) or not
 *   radix_tune n wide   10-bit policies with two resident blocks
 *                       per SM (and the ranking by ballots or match.any,
 *                       which need no match words), both key widths
 *   radix_tune n leader the match word cleared by the digit's leader lane
 *                       or by all its lanes, both key widths
 *   radix_tune n ballots narrow policies ranking by ballots or by the
 *                       atomic OR, both key widths
 *   radix_tune n look   auto's look (the first read of every 8-bit place
 *                       with its sample) beside quicksort's range read, in
 *                       microseconds with the host's wait, every distribution;
 *                       then keys in order but the smallest last: how often
 *                       the lazy first read left keys uncounted, and the
 *                       look's time
 *   radix_tune n once [distribution]  one sort by the project's policies
 *                       and one by CUB, untimed, for a profiler
 *   radix_tune n place  tile shapes again, both key widths
 *   radix_tune n packed pairs packed between passes or kept apart, and
 *                       the packed passes' tile shapes (32-bit keys)
 *   radix_tune n rows   records tile shapes on banded 20-bit keys sorted as
 *                       the extension sorts them (row positions made,
 *                       records between the passes), 32-bit keys
 *   radix_tune n gap    a whole sort beside its first read and its passes
 *                       timed apart: what the host's wait, plan and
 *                       launches leave the device idle (32-bit keys)
 * Every section of a policy mode times the project's policies ("N, W")
 * first and last, and between them the pairs it tries, each spelt out
 * with every parameter of its P(...) (N or W where a pair keeps the
 * project's narrow or wide policy).  Every policy's output is compared
 * with CUB's (keys and, both sorts being stable, payloads); the exit
 * status is 1 if any differed.
 */
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cub/device/device_radix_sort.cuh>

#include "bench_data.cuh"
#include "auto_config.h"
#include "onesweep.cuh"

#define CK(call) \
	do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
		fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_)); exit(2); } } while (0)

template <typename K>
struct bufs
{
	K		   *src,
			   *keys[2];
	uint32_t   *vals[2];
	void	   *temp;
	size_t		n;
	bool		joint;			/* each buffer's payloads after its keys (bufs_alloc) */
};

template <typename K>
static void
fill(bufs<K> &b, int dist)
{
	bench_fill_kernel<K><<<4096, 256>>>(b.src, b.n, dist, 12345);
	CK(cudaDeviceSynchronize());
}

/*
 * The buffers for n keys, with temp_bytes of scratch.  joint: each buffer
 * holds its n keys, then their n payloads, as the sort job lays them out, so
 * that the sort may pack its pairs (onesweep_can_pack); else apart.
 */
template <typename K>
static void
bufs_alloc(bufs<K> &b, size_t n, size_t temp_bytes, bool joint = false)
{
	b.n = n;
	b.joint = joint;
	CK(cudaMalloc(&b.src, n * sizeof(K)));
	for (int i = 0; i < 2; i++)
		if (joint)
		{
			CK(cudaMalloc(&b.keys[i], n * (sizeof(K) + sizeof(uint32_t))));
			b.vals[i] = (uint32_t *) (b.keys[i] + n);
		}
		else
		{
			CK(cudaMalloc(&b.keys[i], n * sizeof(K)));
			CK(cudaMalloc(&b.vals[i], n * sizeof(uint32_t)));
		}
	CK(cudaMalloc(&b.temp, temp_bytes));
}

template <typename K>
static void
bufs_free(bufs<K> &b)
{
	cudaFree(b.src);
	for (int i = 0; i < 2; i++)
	{
		cudaFree(b.keys[i]);
		if (!b.joint)
			cudaFree(b.vals[i]);
	}
	cudaFree(b.temp);
}


template <typename K, typename F>
static double time_it(bufs<K> &b, F sort, bool rows = false);

static int	failures = 0;		/* policies whose output differed from CUB's */

/*
 * The histogram read of every 8-bit place with UNROLL loads a thread,
 * blocks_per_sm * 132 blocks, with or without the one-value warp count.
 */
template <typename K, int UNROLL, int VOTE = radix_hist_vote<K>>
static double
time_histogram(bufs<K> &b, const digit_plan &plan, unsigned long long *range, int blocks_per_sm)
{
	/* range: a first read's head (the range, the block counters) */
	return time_it(b, [&] {
		CK(cudaMemsetAsync(range, 0, sizeof(first_read_head)));
		histogram_kernel<K, UNROLL, VOTE><<<132 * blocks_per_sm, RADIX_HIST_THREADS>>>(
			b.src, b.n, (K) 0, plan, (uint32_t *) b.temp, (first_read_head *) range);
	});
}

static __global__ void rows_iota_kernel(uint32_t *v, size_t n);

/*
 * Median of 7 timed runs of sort (after one untimed), each on the keys
 * copied in and payloads the keys (rows: 0 .. n-1, which a rows sort makes
 * and CUB reads).
 */
template <typename K, typename F>
static double
time_it(bufs<K> &b, F sort, bool rows)
{
	std::vector<float> t;
	cudaEvent_t e0, e1;

	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int r = 0; r < 8; r++)
	{
		float		ms;

		CK(cudaMemcpy(b.keys[0], b.src, b.n * sizeof(K), cudaMemcpyDeviceToDevice));
		if (rows)
		{
			rows_iota_kernel<<<4096, 256>>>(b.vals[0], b.n);
			CK(cudaGetLastError());
		}
		else
			CK(cudaMemcpy(b.vals[0], b.keys[0], b.n * sizeof(uint32_t), cudaMemcpyDeviceToDevice));
		CK(cudaEventRecord(e0));
		sort();
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		if (r)
			t.push_back(ms);
	}
	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(e1));
	std::sort(t.begin(), t.end());
	return t[t.size() / 2];
}

/*
 * CUB's result for the current keys (a stable sort: the payloads too), kept
 * to check each policy's output against; NULL until cub_line ran.
 */
static void *ref_keys = NULL;
static uint32_t *ref_vals = NULL;

/* Does the last sort's output (buffer o) equal CUB's, keys and payloads? */
template <typename K>
static bool
same_as_cub(bufs<K> &b, int o)
{
	std::vector<K> k(b.n), rk(b.n);
	std::vector<uint32_t> v(b.n), rv(b.n);

	if (ref_keys == NULL)
		return true;
	CK(cudaMemcpy(k.data(), b.keys[o], b.n * sizeof(K), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(rk.data(), ref_keys, b.n * sizeof(K), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(v.data(), b.vals[o], b.n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(rv.data(), ref_vals, b.n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
	return k == rk && v == rv;
}

template <typename POL, typename K>
static void
try_policy(bufs<K> &b, const char *name)
{
	onesweep_stats st;
	int			o;
	double		ms = time_it(b, [&] {
		gpusort_status s = onesweep_sort_pairs_t<POL, K>(b.keys, b.vals, b.n, false, b.temp, 0, &o, &st);
		if (s != GPUSORT_OK) { fprintf(stderr, "%s: %s\n", name, gpusort_status_message(s)); exit(2); }
	});
	bool		ok = same_as_cub(b, o);

	printf("  %-34s %8.3f ms %6.2f G/s  passes %d%s%s\n", name, ms, b.n / ms / 1e6, st.passes,
		   st.packed ? " packed" : "", ok ? "" : "  WRONG (differs from CUB)");
	if (!ok)
		failures++;
}

/* CUB's line, its output kept as the reference; rows: payloads 0 .. n-1 (time_it). */
template <typename K>
static void
cub_line(bufs<K> &b, bool rows = false)
{
	size_t		bytes = 0;
	void	   *t = NULL;

	CK(cub::DeviceRadixSort::SortPairs(t, bytes, b.keys[0], b.keys[1], b.vals[0], b.vals[1], (int64_t) b.n));
	CK(cudaMalloc(&t, bytes));
	double		ms = time_it(b, [&] {
		CK(cub::DeviceRadixSort::SortPairs(t, bytes, b.keys[0], b.keys[1], b.vals[0], b.vals[1], (int64_t) b.n));
	}, rows);
	printf("  %-34s %8.3f ms %6.2f G/s\n", "cub", ms, b.n / ms / 1e6);
	cudaFree(t);
	/* its output, the reference for the policies after it */
	cudaFree(ref_keys);
	cudaFree(ref_vals);
	CK(cudaMalloc(&ref_keys, b.n * sizeof(K)));
	CK(cudaMalloc(&ref_vals, b.n * sizeof(uint32_t)));
	CK(cudaMemcpy(ref_keys, b.keys[1], b.n * sizeof(K), cudaMemcpyDeviceToDevice));
	CK(cudaMemcpy(ref_vals, b.vals[1], b.n * sizeof(uint32_t), cudaMemcpyDeviceToDevice));
}

/* A sweep's section: its heading, the keys of dist, and CUB's line (the reference). */
template <typename K>
static void
sweep_section(bufs<K> &b, int dist, const char *policies)
{
	printf("%d-bit keys, n=%zu, %s: %s\n", (int) sizeof(K) * 8, b.n,
		   test_distribution_names[dist], policies);
	fill(b, dist);
	cub_line(b);
}

#define P(...) onesweep_policy<__VA_ARGS__>
#define GPUSORT_STR_(x) #x
#define GPUSORT_STR(x) GPUSORT_STR_(x)
#define OR RANK_ATOMIC_OR
#define ANY RANK_MATCH_ANY
#define BAL RANK_BALLOTS

/* A policy as the P(...) of this file spells it, every parameter given. */
template <typename POL>
static std::string
policy_name(void)
{
	static const char *const ranks[] = {"ANY", "BAL", "OR"};
	char		buf[160];

	snprintf(buf, sizeof(buf), "P(%d, %d, %d, %d, %s, %s, %s, %s, %s)", POL::THREADS, POL::ITEMS,
			 POL::BITS, POL::MIN_BLOCKS, POL::EARLY_COUNTS ? "true" : "false", ranks[POL::RANK],
			 POL::ASYNC_VALS ? "true" : "false", POL::LEADER_CLEARS ? "true" : "false",
			 POL::WARP_STARTS_FIRST ? "true" : "false");
	return buf;
}

/* A pair of policies; N and W where they are the project's (PROJECT). */
template <typename POLS, typename PROJECT>
static std::string
policies_name(void)
{
	return (std::is_same<typename POLS::narrow, typename PROJECT::narrow>::value
			? std::string("N") : policy_name<typename POLS::narrow>()) + ", " +
		(std::is_same<typename POLS::wide, typename PROJECT::wide>::value
		 ? std::string("W") : policy_name<typename POLS::wide>());
}

/* The pairs of policies (onesweep_policies) a section tries. */
template <typename... POLS>
struct tried
{
};

/* Narrow policies beside PROJECT's wide one, and wide ones beside its narrow one. */
template <typename PROJECT, typename... NARROW>
using with_narrow = tried<onesweep_policies<NARROW, typename PROJECT::wide>...>;
template <typename PROJECT, typename... WIDE>
using with_wide = tried<onesweep_policies<typename PROJECT::narrow, WIDE>...>;

/* The project's policies (PROJECT), each pair of POLS, and the project's again (drift shows). */
template <typename K, typename PROJECT, typename... POLS>
static void
try_all(bufs<K> &b, tried<POLS...>)
{
	try_policy<PROJECT, K>(b, "N, W");
	(try_policy<POLS, K>(b, policies_name<POLS, PROJECT>().c_str()), ...);
	try_policy<PROJECT, K>(b, "N, W");
}

/* A sweep's section: its heading, the keys of dist, CUB's line, then try_all. */
template <typename K, typename PROJECT, typename... POLS>
static void
run_section(bufs<K> &b, int dist, const char *heading, tried<POLS...> t)
{
	sweep_section(b, dist, heading);
	try_all<K, PROJECT>(b, t);
}

/* The buffers of a policy mode for n keys, with scratch enough for any policy it tries. */
template <typename K>
struct policy_bufs : bufs<K>
{
	explicit policy_bufs(size_t n)
	{
		bufs_alloc(*this, n, onesweep_temp_bytes_t<onesweep_policies<P(128, 8, 8), P(256, 8, 10)>, K>(n) * 2);
	}
	~policy_bufs()
	{
		bufs_free(*this);
	}
};

/* The project's policies, the first and last of every section. */
typedef onesweep_policies_u32 U32;
typedef onesweep_policies_u64 U64;

/* A mode's run on 32-bit keys, then 64-bit keys; the exit status. */
static int
run_both_widths(void (*run32) (size_t), void (*run64) (size_t), size_t n)
{
	run32(n);
	run64(n);
	printf("%d policies differed from CUB\n", failures);
	return failures ? 1 : 0;
}

/*
 * The default mode: uniform and banded 20-bit keys, the histogram read
 * alone (other grids and unrolls too), then the project's policies, the
 * compact ones and others.
 */
template <typename K>
static void
run(size_t n)
{
	policy_bufs<K> b(n);

	for (int dist : {DIST_UNIFORM, DIST_BANDED20})
	{
		printf("%d-bit keys, n=%zu, %s\n", (int) sizeof(K) * 8, n, test_distribution_names[dist]);
		fill(b, dist);
		cub_line(b);
		{
			/* the histogram read alone */
			const digit_plan plan = onesweep_places_plan<K>();
			unsigned long long *range;

			CK(cudaMalloc(&range, sizeof(first_read_head)));
			double		ms = time_histogram<K, radix_hist_unroll<K>>(b, plan, range,
															 RADIX_HIST_BLOCKS_PER_SM);
			printf("  %-34s %8.3f ms\n", "histogram of all places", ms);
			/* other grids and unrolls of the histogram read */
			for (int bps : {2, 3, 4, 6})
				printf("  histogram, %d blocks/SM: unroll 1 %.3f ms, 2 %.3f ms, 4 %.3f ms\n",
					   bps, time_histogram<K, 1>(b, plan, range, bps),
					   time_histogram<K, 2>(b, plan, range, bps),
					   time_histogram<K, 4>(b, plan, range, bps));
			cudaFree(range);
		}
		if constexpr (sizeof(K) == 4)
			try_all<K, U32>(b, tried<onesweep_policies_compact_u32,
							onesweep_policies<P(384, 16, 8, 2), P(512, 24, 10)>,
							onesweep_policies<P(384, 20, 8, 2, true, OR, true), P(1024, 16, 10, 1, true, OR)>,
							onesweep_policies<P(384, 20, 8, 2, false, OR), P(512, 24, 10, 1, false, OR)>>());
		else
			try_all<K, U64>(b, tried<onesweep_policies_compact_u64,
							onesweep_policies<P(384, 16, 8, 2), P(384, 24, 10)>,
							onesweep_policies<P(256, 24, 8, 2, true, OR), P(512, 24, 10, 1, false, OR)>>());
	}
}

/*
 * More tile shapes for 32-bit keys (`radix_tune N sweep`): narrow policies
 * on uniform keys (four 8-bit passes), wide ones on banded 20-bit keys (two
 * 10-bit passes).
 */
static void
run_sweep_32(size_t n)
{
	typedef uint32_t K;
	policy_bufs<K> b(n);

	run_section<K, U32>(b, DIST_UNIFORM, "narrow policies", with_narrow<U32,
						P(512, 18, 8, 2, true, OR, true), P(256, 36, 8, 2, true, OR, true),
						P(384, 24, 8, 2, true, ANY, true), P(384, 32, 8, 2, true, OR, false),
						P(512, 24, 8, 2, true, OR, false), P(256, 40, 8, 2, true, OR, false),
						P(384, 28, 8, 1, true, OR, true)>());
	run_section<K, U32>(b, DIST_BANDED20, "wide policies", with_wide<U32,
						P(1024, 16, 10, 1, false, OR), P(512, 32, 10, 1, false, OR),
						P(768, 20, 10, 1, false, OR), P(512, 28, 10, 1, true, OR),
						P(640, 24, 10, 1, false, OR)>());
}

/*
 * Narrow policies with more resident blocks per multiprocessor, on uniform
 * 32-bit keys (`radix_tune N blocks`).
 */
static void
run_blocks_32(size_t n)
{
	typedef uint32_t K;
	policy_bufs<K> b(n);

	run_section<K, U32>(b, DIST_UNIFORM, "narrow policies, 2 to 4 blocks per SM", with_narrow<U32,
						P(384, 16, 8, 3, true, OR, false), P(384, 17, 8, 3, true, OR, false),
						P(384, 20, 8, 3, true, OR, false), P(256, 24, 8, 3, true, OR, false),
						P(256, 24, 8, 3, true, OR, true), P(256, 20, 8, 4, true, OR, false),
						P(320, 20, 8, 3, true, OR, false), P(512, 16, 8, 2, true, OR, false),
						P(384, 17, 8, 2, true, OR, true)>());
}

/*
 * Digit counts published before the ranking (EARLY_COUNTS: a shared
 * histogram of the tile first) against counts after it, both key widths
 * (`radix_tune N early`): narrow policies on uniform keys, wide ones on
 * banded 20-bit keys.
 */
template <typename K>
static void
run_early(size_t n)
{
	policy_bufs<K> b(n);

	if constexpr (sizeof(K) == 4)
	{
		run_section<K, U32>(b, DIST_UNIFORM, "narrow policies", with_narrow<U32,
							P(384, 24, 8, 2, false, OR, true), P(384, 20, 8, 2, true, OR, true),
							P(384, 16, 8, 2, true, OR, true), P(256, 24, 8, 2, true, OR, true),
							P(512, 16, 8, 2, true, OR, true), P(384, 18, 8, 2, true, OR, false)>());
		run_section<K, U32>(b, DIST_BANDED20, "wide policies", with_wide<U32,
							P(1024, 16, 10, 1, true, OR), P(1024, 16, 10, 1, false, OR),
							P(768, 20, 10, 1, true, OR), P(512, 32, 10, 1, true, OR)>());
	}
	else
	{
		run_section<K, U64>(b, DIST_UNIFORM, "narrow policies", with_narrow<U64,
							P(256, 24, 8, 2, false, OR, true), P(256, 20, 8, 2, true, OR, true)>());
		run_section<K, U64>(b, DIST_BANDED20, "wide policies", with_wide<U64,
							P(512, 24, 10, 1, true, OR, true), P(512, 24, 10, 1, false, OR, true)>());
	}
}

/*
 * Early counts kept per warp and made the warps' starts before the ranking
 * (WARP_STARTS_FIRST, CUB's order) against the block's early counts and a
 * per-key read of the warp's start after it, both key widths (`radix_tune
 * N starts`): narrow policies on uniform keys, wide ones on banded 20-bit
 * keys.
 */
template <typename K>
static void
run_starts(size_t n)
{
	policy_bufs<K> b(n);

	if constexpr (sizeof(K) == 4)
	{
		run_section<K, U32>(b, DIST_UNIFORM, "narrow policies, warp starts first or not", with_narrow<U32,
							P(384, 24, 8, 2, true, OR, true), P(384, 24, 8, 2, true, OR, true, false, true),
							P(384, 20, 8, 2, true, OR, true, true, true),
							P(256, 24, 8, 2, true, OR, true, true, true),
							P(512, 18, 8, 2, true, OR, true, true, true)>());
		run_section<K, U32>(b, DIST_BANDED20, "wide policies, warp starts first or not", with_wide<U32,
							P(512, 32, 10, 1, true, OR, false, true, true),
							P(512, 32, 10, 1, true, OR, false, true)>());
	}
	else
	{
		run_section<K, U64>(b, DIST_UNIFORM, "narrow policies, warp starts first or not", with_narrow<U64,
							P(256, 24, 8, 2, true, OR, true, false, true),
							P(256, 24, 8, 2, true, OR, true, true, true),
							P(256, 20, 8, 2, true, OR, true, false, true)>());
		run_section<K, U64>(b, DIST_BANDED20, "wide policies, warp starts first or not", with_wide<U64,
							P(512, 24, 10, 1, true, OR, true, true, true)>());
	}
}

/*
 * Wide (10-bit) policies that leave room for two blocks per SM,
 * on banded 20-bit keys (two 10-bit passes), both key widths (`radix_tune
 * N wide`).
 */
template <typename K>
static void
run_wide(size_t n)
{
	policy_bufs<K> b(n);

	if constexpr (sizeof(K) == 4)
		run_section<K, U32>(b, DIST_BANDED20, "wide policies, 1 or 2 blocks per SM", with_wide<U32,
							P(512, 16, 10, 2, false, OR, false), P(512, 16, 10, 2, true, OR, false),
							P(512, 16, 10, 2, false, BAL, true), P(512, 16, 10, 2, true, BAL, true),
							P(256, 32, 10, 2, true, BAL, true), P(384, 20, 10, 2, true, OR, false)>());
	else
		run_section<K, U64>(b, DIST_BANDED20, "wide policies, 1 or 2 blocks per SM", with_wide<U64,
							P(384, 16, 10, 2, true, BAL, true), P(256, 24, 10, 2, true, BAL, true),
							P(256, 24, 10, 2, false, OR, false), P(512, 24, 10, 1, false, BAL, true),
							P(512, 24, 10, 1, true, OR, true)>());
}

/*
 * The match word of a digit cleared by its leader lane alone or by every
 * lane of the digit (LEADER_CLEARS), on the narrow policies (uniform keys)
 * and the wide ones (banded 20-bit keys), both key widths (`radix_tune N
 * leader`).
 */
template <typename K>
static void
run_leader(size_t n)
{
	policy_bufs<K> b(n);

	if constexpr (sizeof(K) == 4)
	{
		run_section<K, U32>(b, DIST_UNIFORM, "narrow policies, every lane or the leader clears",
							with_narrow<U32, P(384, 24, 8, 2, true, OR, true, false, true),
							P(384, 24, 8, 2, true, OR, true, true)>());
		run_section<K, U32>(b, DIST_BANDED20, "wide policies, every lane or the leader clears",
							with_wide<U32, P(1024, 20, 10, 1, false, OR, false, false)>());
	}
	else
	{
		run_section<K, U64>(b, DIST_UNIFORM, "narrow policies, every lane or the leader clears",
							with_narrow<U64, P(256, 24, 8, 2, true, OR, true, true)>());
		run_section<K, U64>(b, DIST_BANDED20, "wide policies, every lane or the leader clears",
							with_wide<U64, P(512, 24, 10, 1, false, OR, true, false)>());
	}
}

/*
 * Narrow policies ranking by ballots (one a digit bit, no shared memory)
 * against the atomic OR of lane bits into shared match words, on uniform
 * keys, both key widths (`radix_tune N ballots`).
 */
template <typename K>
static void
run_ballots(size_t n)
{
	policy_bufs<K> b(n);

	if constexpr (sizeof(K) == 4)
		run_section<K, U32>(b, DIST_UNIFORM, "narrow policies, ballots or atomic OR", with_narrow<U32,
							P(384, 24, 8, 2, true, BAL, true), P(384, 20, 8, 2, true, BAL, true),
							P(384, 22, 8, 2, true, BAL, true), P(384, 24, 8, 2, true, BAL, false)>());
	else
		run_section<K, U64>(b, DIST_UNIFORM, "narrow policies, ballots or atomic OR", with_narrow<U64,
							P(256, 24, 8, 2, true, BAL, true), P(256, 20, 8, 2, true, BAL, true),
							P(384, 16, 8, 2, true, BAL, true)>());
}

/*
 * Tile shapes again after a key's tile place became one shared read
 * (e58f67e), which moved the per-key shared-memory cost the shapes were
 * tuned against (`radix_tune N place`): narrow policies on uniform keys,
 * wide ones on banded 20-bit keys, both key widths
 * (bench/results/radix_place-h100.txt; shapes whose shared memory no block
 * may have, as 1024 x 24 wide 32-bit, are left out: their launch fails and
 * ends the run).
 */
template <typename K>
static void
run_place(size_t n)
{
	policy_bufs<K> b(n);

	if constexpr (sizeof(K) == 4)
	{
		run_section<K, U32>(b, DIST_UNIFORM, "narrow policies", with_narrow<U32,
							P(384, 24, 8, 2, true, OR, true, true), P(384, 20, 8, 2, true, OR, true),
							P(384, 28, 8, 2, true, OR, true), P(512, 18, 8, 2, true, OR, true),
							P(256, 36, 8, 2, true, OR, true), P(256, 24, 8, 3, true, OR, true)>());
		run_section<K, U32>(b, DIST_BANDED20, "wide policies", with_wide<U32,
							P(1024, 16, 10, 1, false, OR, false, true),
							P(1024, 12, 10, 1, false, OR, false, true),
							P(1024, 18, 10, 1, false, OR, false, true),
							P(1024, 22, 10, 1, false, OR, false, true),
							P(768, 20, 10, 1, false, OR, false, true),
							P(768, 28, 10, 1, false, OR, false, true)>());
	}
	else
	{
		run_section<K, U64>(b, DIST_UNIFORM, "narrow policies", with_narrow<U64,
							P(256, 20, 8, 2, true, OR, true), P(256, 28, 8, 2, true, OR, true),
							P(384, 16, 8, 2, true, OR, true)>());
		run_section<K, U64>(b, DIST_BANDED20, "wide policies", with_wide<U64,
							P(512, 20, 10, 1, false, OR, true, true),
							P(512, 16, 10, 1, false, OR, true, true),
							P(512, 24, 10, 1, false, OR, false, true)>());
	}
}

/*
 * One sort of 32-bit pairs (uniform, or the distribution named) by the
 * project's policies, then one by CUB, untimed (`radix_tune N once
 * [distribution]`): for a profiler to time each kernel.
 */
static void
run_once_32(size_t n, int dist)
{
	typedef uint32_t K;
	bufs<K>		b;
	onesweep_stats st;
	int			o;
	size_t		bytes = 0;
	void	   *t = NULL;

	bufs_alloc(b, n, onesweep_temp_bytes_t<onesweep_policies_u32, K>(n), true);
	fill(b, dist);
	CK(cudaMemcpy(b.keys[0], b.src, n * sizeof(K), cudaMemcpyDeviceToDevice));
	CK(cudaMemcpy(b.vals[0], b.src, n * sizeof(uint32_t), cudaMemcpyDeviceToDevice));
	if (onesweep_sort_pairs_t<onesweep_policies_u32, K>(b.keys, b.vals, n, false, b.temp, 0, &o,
														 &st) != GPUSORT_OK)
		exit(2);
	CK(cub::DeviceRadixSort::SortPairs(t, bytes, b.keys[0], b.keys[1], b.vals[0], b.vals[1], (int64_t) n));
	CK(cudaMalloc(&t, bytes));
	CK(cudaMemcpy(b.keys[0], b.src, n * sizeof(K), cudaMemcpyDeviceToDevice));
	CK(cub::DeviceRadixSort::SortPairs(t, bytes, b.keys[0], b.keys[1], b.vals[0], b.vals[1], (int64_t) n));
	CK(cudaDeviceSynchronize());
	cudaFree(t);
	bufs_free(b);
}

/*
 * The histogram read of every 8-bit place, with the one-value vote every
 * round, never and adaptive, and with twice the vectors in flight, on every
 * distribution (`radix_tune N hist`).
 */
template <typename K>
static void
run_histogram_one_value(size_t n)
{
	bufs<K>		b;
	const digit_plan plan = onesweep_places_plan<K>();
	unsigned long long *range;

	bufs_alloc(b, n, RADIX_MAX_PASSES * RADIX_HIST_STRIDE * sizeof(uint32_t));
	CK(cudaMalloc(&range, sizeof(first_read_head)));
	printf("%d-bit keys, n=%zu: histogram of all places, ms (the one-value vote every round / never / adaptive | the project's vote, UNROLL 8 (32-bit keys) or 4 (64-bit))\n",
		   (int) sizeof(K) * 8, n);
	for (int dist = 0; dist < DIST_COUNT; dist++)
	{
		fill(b, dist);
		const int	bps = RADIX_HIST_BLOCKS_PER_SM;
		double		always = time_histogram<K, radix_hist_unroll<K>, RADIX_HIST_VOTE_ALWAYS>(b, plan, range, bps);
		double		never = time_histogram<K, radix_hist_unroll<K>, RADIX_HIST_VOTE_NEVER>(b, plan, range, bps);
		double		adaptive = time_histogram<K, radix_hist_unroll<K>, RADIX_HIST_VOTE_ADAPTIVE>(b, plan, range, bps);
		/* the project's vote, twice the vectors in flight */
		double		twice = time_histogram<K, 2 * radix_hist_unroll<K>>(b, plan, range, bps);

		printf("  %-14s %8.3f  %8.3f  %8.3f  | %8.3f\n", test_distribution_names[dist], always,
			   never, adaptive, twice);
	}
	cudaFree(range);
	bufs_free(b);
}

/*
 * Auto's look at n keys (the radix first read of every 8-bit place, with
 * the sample for few distinct keys) beside quicksort's read for the same
 * keys (the range and the sample, no digit counts), each with the host's
 * wait for the summary: microseconds, median of 51 (`radix_tune N look`).
 */
template <typename K>
static void
run_look(size_t n)
{
	bufs<K>		b;
	digit_plan	none;
	const int	limit = sizeof(K) == 8 ? GPUSORT_AUTO_QUICKSORT_MAX_DISTINCT_64
		: GPUSORT_AUTO_QUICKSORT_MAX_DISTINCT_32;
	cudaEvent_t e0, e1;

	none.passes = 0;
	bufs_alloc(b, n, onesweep_temp_bytes_t<onesweep_policies_u32, K>(n) * 2);
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	printf("%d-bit keys, n=%zu: us, auto's look / quicksort's range read / ratio\n",
		   (int) sizeof(K) * 8, n);
	for (int dist = 0; dist < DIST_COUNT; dist++)
	{
		std::vector<float> t[2];

		fill(b, dist);
		for (int r = 0; r < 52; r++)
			for (int w = 0; w < 2; w++)
			{
				const first_read_summary *s;
				float		ms;

				CK(cudaEventRecord(e0));
				if (w == 0 ? onesweep_look_t<K>(b.src, n, b.temp, 0, limit, &s) != GPUSORT_OK
					: (onesweep_first_read<K>(b.src, n, none, b.temp, limit, 0) != GPUSORT_OK ||
					   onesweep_first_read_wait(0, &s) != GPUSORT_OK))
					exit(2);
				CK(cudaEventRecord(e1));
				CK(cudaEventSynchronize(e1));
				CK(cudaEventElapsedTime(&ms, e0, e1));
				if (r)
					t[w].push_back(ms * 1000);
			}
		for (int w = 0; w < 2; w++)
			std::sort(t[w].begin(), t[w].end());
		printf("  %-14s %8.2f %8.2f %6.2f\n", test_distribution_names[dist], t[0][25], t[1][25],
			   t[0][25] / t[1][25]);
	}
	{
		/*
		 * keys in order but the last, the smallest: how often the lazy first
		 * read left keys uncounted (the sort then plans from the range and
		 * counts again, with no second wait), and the look's median time
		 */
		std::vector<float> t;
		int			uncounted = 0;

		fill(b, DIST_SORTED);
		CK(cudaMemset(b.src + n - 1, 0, sizeof(K)));
		for (int r = 0; r < 51; r++)
		{
			const first_read_summary *s;
			float		ms;

			if (onesweep_count_t<K>(b.src, n, b.temp, 0, limit) != GPUSORT_OK ||
				onesweep_first_read_wait(0, &s) != GPUSORT_OK)
				exit(2);
			uncounted += !s->sorted && !s->complete;
			CK(cudaEventRecord(e0));
			if (onesweep_look_t<K>(b.src, n, b.temp, 0, limit, &s) != GPUSORT_OK)
				exit(2);
			CK(cudaEventRecord(e1));
			CK(cudaEventSynchronize(e1));
			CK(cudaEventElapsedTime(&ms, e0, e1));
			t.push_back(ms * 1000);
			if (s->sorted)
				failures++;
		}
		std::sort(t.begin(), t.end());
		printf("  %-14s %8.2f   (sorted, the smallest key last: %d of 51 first reads left keys uncounted)\n",
			   "late-descent", t[25], uncounted);
	}
	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(e1));
	bufs_free(b);
}

/*
 * Pairs packed between passes or kept apart (`radix_tune N packed`): the
 * project's sort with its pairs always apart, always packed and packed by
 * the data (onesweep_can_pack), on every distribution, with each 8-bit
 * place's commonest-digit share; on uniform keys also other tile shapes of
 * the packed passes.  32-bit keys; every output compared with CUB's.
 */
/* try_policy with the pairs' mode (onesweep_pairs) set to mode for the sort. */
template <typename POL>
static void
try_packed(bufs<uint32_t> &b, int mode, const char *name)
{
	gpusort_test_hooks.pairs = mode == ONESWEEP_PAIRS_APART ? GPUSORT_TEST_PAIRS_APART
		: mode == ONESWEEP_PAIRS_PACKED ? GPUSORT_TEST_PAIRS_PACKED : GPUSORT_TEST_PAIRS_BY_DATA;
	try_policy<POL, uint32_t>(b, name);
	gpusort_test_hooks.pairs = GPUSORT_TEST_PAIRS_BY_DATA;
}

static void
run_packed(size_t n)
{
	typedef uint32_t K;
	bufs<K>		b;
	const size_t temp_bytes = onesweep_temp_bytes_t<onesweep_policies<P(128, 8, 8), P(256, 8, 10)>, K>(n) * 2;

	bufs_alloc(b, n, temp_bytes, true);
	for (int dist = 0; dist < DIST_COUNT; dist++)
	{
		const first_read_summary *look;

		fill(b, dist);
		if (onesweep_look_t<K>(b.src, n, b.temp, 0, 0, &look) != GPUSORT_OK)
			exit(2);
		printf("32-bit keys, n=%zu, %s: pairs apart, packed, by the data; commonest digit's share of each 8-bit place:",
			   n, test_distribution_names[dist]);
		for (int p = 0; p < 4; p++)
			printf(" %.4f", (double) look->top[p] / n);
		printf("\n");
		cub_line(b);
		for (int rep = 0; rep < 2; rep++)
		{
			try_packed<U32>(b, ONESWEEP_PAIRS_APART, "apart");
			try_packed<U32>(b, ONESWEEP_PAIRS_PACKED, "packed");
			try_packed<U32>(b, ONESWEEP_PAIRS_BY_DATA, "by the data");
		}
		if (dist == DIST_BANDED20)
		{
			typedef onesweep_policies<U32::narrow, U32::wide, U32::packed, true> WIDE_PACKS;
			typedef onesweep_policies<U32::narrow, P(1024, 16, 10, 1, false, OR, false, true), U32::packed, true> WIDE16_PACKS;

			for (int rep = 0; rep < 2; rep++)
			{
				try_packed<WIDE_PACKS>(b, ONESWEEP_PAIRS_PACKED, "packed, 10-bit passes too");
				try_packed<WIDE16_PACKS>(b, ONESWEEP_PAIRS_PACKED, "packed, 10-bit passes too, W 1024 x 16");
				try_packed<U32>(b, ONESWEEP_PAIRS_APART, "apart");
			}
		}
		if (dist == DIST_UNIFORM)
		{
			try_packed<onesweep_policies<U32::narrow, U32::wide, P(256, 32, 8, 2, true, OR, true, true, true)>>(b, ONESWEEP_PAIRS_PACKED, "packed P(256, 32, 8, 2, t, OR, t, t, t)");
			try_packed<onesweep_policies<U32::narrow, U32::wide, P(256, 36, 8, 2, true, OR, false, true, true)>>(b, ONESWEEP_PAIRS_PACKED, "packed P(256, 36, 8, 2, t, OR, f, t, t)");
			try_packed<onesweep_policies<U32::narrow, U32::wide, P(384, 24, 8, 2, true, OR, true, true, true)>>(b, ONESWEEP_PAIRS_PACKED, "packed P(384, 24, 8, 2, t, OR, t, t, t)");
			try_packed<U32>(b, ONESWEEP_PAIRS_PACKED, "packed");
		}
	}
	bufs_free(b);
}

/*
 * Where a whole sort's time goes beyond its kernels (`radix_tune N gap`):
 * the whole sort (first read, the host's wait for its summary, the plan and
 * the passes), the first read alone (its kernels, no wait), and the passes
 * from a first read already waited for; whole less the other two is the
 * time the device idles while the host waits, plans and launches.  32-bit
 * pairs laid out as the sort job lays them, medians of 15.
 */
static void
run_gap(size_t n)
{
	typedef uint32_t K;
	typedef onesweep_policies_u32 POL;
	bufs<K>		b;
	cudaEvent_t e0, e1;

	bufs_alloc(b, n, onesweep_temp_bytes_t<POL, K>(n), true);
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int dist : {DIST_BANDED20, DIST_UNIFORM})
	{
		std::vector<float> whole, first, passes;
		onesweep_stats st;
		int			o;

		fill(b, dist);
		for (int r = 0; r < 16; r++)
		{
			const first_read_summary *look;
			float		ms;

			for (int part = 0; part < 3; part++)
			{
				CK(cudaMemcpy(b.keys[0], b.src, n * sizeof(K), cudaMemcpyDeviceToDevice));
				CK(cudaMemcpy(b.vals[0], b.src, n * sizeof(uint32_t), cudaMemcpyDeviceToDevice));
				if (part == 2 && onesweep_look_t<K>(b.keys[0], n, b.temp, 0, 0, &look) != GPUSORT_OK)
					exit(2);
				CK(cudaDeviceSynchronize());
				CK(cudaEventRecord(e0));
				if ((part == 0 && onesweep_sort_pairs_t<POL, K>(b.keys, b.vals, n, false, b.temp, 0,
																 &o, &st) != GPUSORT_OK) ||
					(part == 1 && onesweep_count_t<K>(b.keys[0], n, b.temp, 0) != GPUSORT_OK) ||
					(part == 2 && onesweep_sort_counted_t<POL, K>(b.keys, b.vals, n, false, b.temp, 0,
																   look, &o, &st) != GPUSORT_OK))
					exit(2);
				CK(cudaEventRecord(e1));
				CK(cudaEventSynchronize(e1));
				CK(cudaEventElapsedTime(&ms, e0, e1));
				if (r > 0)
					(part == 0 ? whole : part == 1 ? first : passes).push_back(ms);
			}
		}
		for (auto *v : {&whole, &first, &passes})
			std::sort(v->begin(), v->end());

		const double w = whole[whole.size() / 2],
					f = first[first.size() / 2],
					p = passes[passes.size() / 2];

		printf("32-bit keys, n=%zu, %s, %d passes%s: whole %.3f ms, first read %.3f, passes %.3f, "
			   "the rest (wait, plan, launches) %.3f ms\n", n, test_distribution_names[dist],
			   st.passes, st.packed ? " packed" : "", w, f, p, w - f - p);
	}
	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(e1));
	bufs_free(b);
}

/* Payload i = i: the row positions a rows sort makes, for CUB's reference. */
static __global__ void
rows_iota_kernel(uint32_t *v, size_t n)
{
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
		v[i] = (uint32_t) i;
}

/*
 * One wide policy on the extension's own sorts (payloads made as the row
 * positions, so that a two-pass plan over key - min carries records):
 * median of 7 timed runs, the output compared with CUB's on the same keys
 * with payloads 0 .. n-1.
 */
template <typename POL>
static void
try_rows(bufs<uint32_t> &b, const char *name)
{
	onesweep_stats st;
	int			o = 0;
	double		ms = time_it(b, [&] {
		gpusort_status s = onesweep_sort_pairs_t<POL, uint32_t>(b.keys, b.vals, b.n, true, b.temp, 0, &o, &st);
		if (s != GPUSORT_OK) { fprintf(stderr, "%s: %s\n", name, gpusort_status_message(s)); exit(2); }
	}, true);
	bool		ok = same_as_cub(b, o);

	printf("  %-42s %8.3f ms %6.2f G/s  passes %d%s%s\n", name, ms, b.n / ms / 1e6, st.passes,
		   st.records ? " records" : st.packed ? " packed" : "", ok ? "" : "  WRONG (differs from CUB)");
	if (!ok)
		failures++;
}

/*
 * The records' tile shapes on banded 20-bit keys as the extension sorts
 * them (`radix_tune N rows`): the project's policies but for the records
 * policy, each PAIRS_ONLY as the project's (fewer warps: fewer counters and
 * match words to clear and scan a tile, more registers a thread).
 */
template <typename R>
using rows_records = onesweep_policies<U32::narrow, U32::wide, U32::packed, U32::WIDE_PACKS, R>;

static void
run_rows(size_t n)
{
	policy_bufs<uint32_t> b(n);

	printf("32-bit keys, n=%zu, banded20, payloads made as the row positions: records tile shapes\n", n);
	fill(b, DIST_BANDED20);
	cub_line(b, true);
	for (int round = 0; round < 2; round++)
	{
		try_rows<U32>(b, "N, W, records 1024 x " GPUSORT_STR(RADIX_RECORDS_ITEMS));
		try_rows<rows_records<P(1024, 22, 10, 1, false, OR, false, true, false, true)>>(b, "records P(1024, 22, ..., PAIRS_ONLY)");
		try_rows<rows_records<P(768, 32, 10, 1, false, OR, false, true, false, true)>>(b, "records P(768, 32, ..., PAIRS_ONLY)");
		try_rows<rows_records<P(768, 34, 10, 1, false, OR, false, true, false, true)>>(b, "records P(768, 34, ..., PAIRS_ONLY)");
		try_rows<rows_records<P(512, 48, 10, 1, false, OR, false, true, false, true)>>(b, "records P(512, 48, ..., PAIRS_ONLY)");
		try_rows<rows_records<P(512, 52, 10, 1, false, OR, false, true, false, true)>>(b, "records P(512, 52, ..., PAIRS_ONLY)");
	}
}

int
main(int argc, char **argv)
{
	size_t		n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000000;
	cudaDeviceProp prop;

	CK(cudaGetDeviceProperties(&prop, 0));
	printf("radix_tune: %s\n", prop.name);
	if (argc > 2 && strcmp(argv[2], "hist") == 0)
	{
		run_histogram_one_value<uint32_t>(n);
		run_histogram_one_value<uint64_t>(n);
		return 0;
	}
	if (argc > 2 && strcmp(argv[2], "look") == 0)
	{
		run_look<uint32_t>(n);
		run_look<uint64_t>(n);
		return failures ? 1 : 0;
	}
	if (argc > 2 && strcmp(argv[2], "sweep") == 0)
	{
		run_sweep_32(n);
		return failures ? 1 : 0;
	}
	if (argc > 2 && strcmp(argv[2], "once") == 0)
	{
		int			dist = DIST_UNIFORM;

		for (int d = 0; argc > 3 && d < DIST_COUNT; d++)
			if (strcmp(argv[3], test_distribution_names[d]) == 0)
				dist = d;
		run_once_32(n, dist);
		return 0;
	}
	if (argc > 2 && strcmp(argv[2], "packed") == 0)
	{
		run_packed(n);
		printf("%d policies differed from CUB\n", failures);
		return failures ? 1 : 0;
	}
	if (argc > 2 && strcmp(argv[2], "gap") == 0)
	{
		run_gap(n);
		return 0;
	}
	if (argc > 2 && strcmp(argv[2], "blocks") == 0)
	{
		run_blocks_32(n);
		return failures ? 1 : 0;
	}
	if (argc > 2 && strcmp(argv[2], "rows") == 0)
	{
		run_rows(n);
		printf("%d policies differed from CUB\n", failures);
		return failures ? 1 : 0;
	}
	if (argc > 2 && strcmp(argv[2], "wide") == 0)
		return run_both_widths(run_wide<uint32_t>, run_wide<uint64_t>, n);
	if (argc > 2 && strcmp(argv[2], "ballots") == 0)
		return run_both_widths(run_ballots<uint32_t>, run_ballots<uint64_t>, n);
	if (argc > 2 && strcmp(argv[2], "leader") == 0)
		return run_both_widths(run_leader<uint32_t>, run_leader<uint64_t>, n);
	if (argc > 2 && strcmp(argv[2], "place") == 0)
		return run_both_widths(run_place<uint32_t>, run_place<uint64_t>, n);
	if (argc > 2 && strcmp(argv[2], "starts") == 0)
		return run_both_widths(run_starts<uint32_t>, run_starts<uint64_t>, n);
	if (argc > 2 && strcmp(argv[2], "early") == 0)
		return run_both_widths(run_early<uint32_t>, run_early<uint64_t>, n);
	run<uint32_t>(n);
	run<uint64_t>(n);
	return failures ? 1 : 0;
}
