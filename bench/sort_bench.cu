/*
 * sort_bench.cu -- the project's GPU sorts beside CUB, Thrust and one CPU
 * core, in one run on one device.
 *
 * For 32-bit keys (n = 2^16, 2^20, 10M, 100M, 10^9) and 64-bit keys (up to
 * 500M), each with 32-bit payloads, and every distribution of
 * bench_data.cuh, the median of RUNS timed runs (CUDA events around the
 * sort call alone; inputs restored untimed before every run; the GPU sorts
 * take turns, run by run, so that a slow stretch falls on all of them, and
 * each timed run follows an untimed one of the same sort) of
 *   gpusort radix     - the onesweep radix sort (kernels/onesweep.cuh),
 *                       payloads read like CUB's;
 *   gpusort quicksort - GPU-Quicksort (kernels/quicksort.cuh);
 *   gpusort bitonic   - the bitonic network (kernels/bitonic.cuh), n <= 2^22;
 *   gpusort auto      - gpusort.algorithm = auto: its look at the keys
 *                       (kernels/sort_choice.cuh) and the sort it picks;
 *   cub       - cub::DeviceRadixSort::SortPairs, temp storage allocated once;
 *   thrust    - thrust::sort_by_key on device pointers, as a user calls it;
 *   gpusort radix rows - the radix sort as the extension calls it: the
 *                       payloads made as the row positions, not read (the
 *                       same output here, where the payloads are 0 .. n-1);
 *   radix rows, no records - the same with its records between two passes
 *                       over key - min turned off (gpusort_test_hooks.records);
 *   cpu       - the project's CPU radix sort on one core (n <= CPU_MAX_N;
 *               wall clock), the sort of the GPU-less path.
 * Every GPU result is checked on the device: keys non-decreasing, each
 * output key equal to the input key its payload names, payloads a
 * permutation, and ties in payload order for the stable sorts.
 *
 * Writes sort_bench.csv and sort_bench.md into the output directory
 * (bench/plot_sort_bench.py draws sort_bench.png from the CSV).
 *
 *   sort_bench [-o DIR] [-r RUNS] [-n MAX_N32] [-m MAX_N64] [-c CPU_MAX_N]
 *              [-d DIST,...] [-s N,...] [-t TAG]
 * -s replaces the list of sizes; -t names the output files sort_bench-TAG.*
 */
#include <algorithm>
#include <string>
#include <vector>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cub/device/device_radix_sort.cuh>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include "bench_clock.h"
#include "bench_data.cuh"
#include "bitonic.cuh"
#include "onesweep.cuh"
#include "quicksort.cuh"
#include "sort_choice.cuh"

extern "C"
{
#include "cpu_radix.h"
}

#define CK(call) \
	do { \
		cudaError_t e_ = (call); \
		if (e_ != cudaSuccess) { \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
					cudaGetErrorString(e_)); \
			exit(2); \
		} \
	} while (0)

#define GS(call) \
	do { \
		gpusort_status s_ = (call); \
		if (s_ != GPUSORT_OK) { \
			fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, \
					gpusort_status_message(s_), gpusort_error_detail()); \
			exit(2); \
		} \
	} while (0)

enum sort_kind
{
	SORT_GPUSORT,
	SORT_QUICKSORT,
	SORT_BITONIC,
	SORT_AUTO,
	SORT_CUB,
	SORT_THRUST,
	SORT_ROWS,					/* radix, payloads made as the row positions */
	SORT_ROWS_PACKED,			/* the same with records off (gpusort_test_hooks.records off) */
	SORT_CPU,
	SORT_KINDS
};
static const char *const sort_names[SORT_KINDS] = {
	"gpusort radix", "gpusort quicksort", "gpusort bitonic", "gpusort auto",
	"cub", "thrust", "gpusort radix rows", "radix rows, no records", "cpu 1 core"
};
static const bool sort_stable[SORT_KINDS] = {true, false, true, false, true, true, true, true, true};

/* the bitonic network beyond one block is O(n log^2 n): measured up to here */
#define BITONIC_BENCH_MAX_N (1u << 22)

struct result
{
	int			key_bits;
	size_t		n;
	int			dist;
	double		ms[SORT_KINDS];	/* median; < 0: not run */
	char		plan[64];		/* gpusort's pass plan */
	char		rows_plan[16];	/* what the rows radix sort carried between passes */
	char		choice[96];		/* what auto picked, and why */
};

static std::vector<result> results;
static int	runs = 5;
static uint64_t seed_base;		/* -S, else the time: the keys of every row derive from it */

/*
 * Timed runs at n: RUNS, and at least SMALL_RUNS up to SMALL_N keys, whose
 * sorts take tens of microseconds and scatter by several percent.
 */
#define SMALL_N		((size_t) 10000000)
#define SMALL_RUNS	25
static int
runs_at(size_t n)
{
	return n <= SMALL_N && runs < SMALL_RUNS ? SMALL_RUNS : runs;
}
static int	failures = 0;

static double
median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

/* errors[0]: order/content defects; seen: n bits, zeroed */
template <typename K>
__global__ void
check_kernel(const K *src, const K *keys, const uint32_t *vals, size_t n, bool stable,
			 unsigned int *seen, unsigned long long *errors)
{
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
		 i += (size_t) gridDim.x * blockDim.x)
	{
		uint32_t	v = vals[i];
		bool		bad = v >= n || keys[i] != src[v];

		if (!bad && i > 0)
			bad = keys[i - 1] > keys[i] ||
				(stable && keys[i - 1] == keys[i] && vals[i - 1] >= v);
		if (!bad && (atomicOr(&seen[v / 32], 1u << (v % 32)) & (1u << (v % 32))))
			bad = true;			/* payload twice */
		if (bad)
			atomicAdd(errors, 1ull);
	}
}

static unsigned
grid_for(size_t n)
{
	size_t		b = (n + 255) / 256;

	return (unsigned) std::min<size_t>(b ? b : 1, 16384);
}

template <typename K>
static void
check_result(const char *what, const K *src, const K *keys, const uint32_t *vals,
			 size_t n, bool stable, unsigned int *seen, unsigned long long *d_err,
			 int dist)
{
	unsigned long long errors = 0;

	CK(cudaMemset(seen, 0, (n + 31) / 32 * 4));
	CK(cudaMemset(d_err, 0, sizeof(*d_err)));
	check_kernel<K><<<grid_for(n), 256>>>(src, keys, vals, n, stable, seen, d_err);
	CK(cudaGetLastError());
	CK(cudaMemcpy(&errors, d_err, sizeof(errors), cudaMemcpyDeviceToHost));
	if (errors)
	{
		failures++;
		fprintf(stderr, "FAILED: %s %d-bit n=%zu %s: %llu bad positions\n", what,
				(int) sizeof(K) * 8, n, test_distribution_names[dist], errors);
	}
}

template <typename K>
static void
bench_size(size_t n, const std::vector<int> &dists, size_t cpu_max_n)
{
	K		   *src,
			   *keys[2];
	uint32_t   *vals[2];
	void	   *temp,
			   *cub_temp = NULL;
	size_t		temp_bytes = onesweep_temp_bytes(n, sizeof(K)),
				cub_bytes = 0;
	unsigned int *seen;
	unsigned long long *d_err;
	cudaEvent_t e0,
				e1;

	CK(cudaMalloc(&src, n * sizeof(K)));
	/* each buffer's payloads right after its keys, as the sort job lays them out */
	for (int i = 0; i < 2; i++)
	{
		CK(cudaMalloc(&keys[i], n * (sizeof(K) + sizeof(uint32_t))));
		vals[i] = (uint32_t *) (keys[i] + n);
	}
	temp_bytes = std::max(temp_bytes, quicksort_temp_bytes(n, sizeof(K)));
	CK(cudaMalloc(&temp, temp_bytes));

	void	   *bitonic_temp = NULL;
	static sort_look look;	/* auto's look at the keys */

	if (n <= BITONIC_BENCH_MAX_N && bitonic_temp_bytes(n, sizeof(K)))
	{
		CK(cudaMalloc(&bitonic_temp, bitonic_temp_bytes(n, sizeof(K))));
		GS(bitonic_temp_clear(bitonic_temp, bitonic_temp_bytes(n, sizeof(K)), 0));
	}
	CK(cub::DeviceRadixSort::SortPairs(NULL, cub_bytes, keys[0], keys[1], vals[0], vals[1],
									   (int64_t) n));
	CK(cudaMalloc(&cub_temp, cub_bytes));
	CK(cudaMalloc(&seen, (n + 31) / 32 * 4));
	CK(cudaMalloc(&d_err, sizeof(unsigned long long)));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));

	for (int dist : dists)
	{
		result		res = {};
		uint64_t	seed = (seed_base << 20) ^ (n * 31 + dist);

		res.key_bits = sizeof(K) * 8;
		res.n = n;
		res.dist = dist;
		bench_fill_kernel<K><<<grid_for(n), 256>>>(src, n, dist, seed);
		CK(cudaGetLastError());

		std::vector<double> t[SORT_KINDS];
		const int	nruns = runs_at(n);

		for (int s = 0; s < SORT_KINDS; s++)
			res.ms[s] = -1;
		/* the CPU first, on its own */
		if (n <= cpu_max_n)
		{
			const int	s = SORT_CPU;

			/* the CPU path's layout: 32-bit words, most significant first */
			std::vector<K> host(n);
			int			nw = sizeof(K) / 4;
			std::vector<uint32_t> words(nw * n), perm(n),
						scratch(cpu_radix_scratch_words(n));

			CK(cudaMemcpy(host.data(), src, n * sizeof(K), cudaMemcpyDeviceToHost));
			for (size_t i = 0; i < n; i++)
				for (int w = 0; w < nw; w++)
					words[(size_t) w * n + i] =
						(uint32_t) ((uint64_t) host[i] >> (32 * (nw - 1 - w)));
			for (int r = 0; r < runs; r++)
			{
				double		t0 = now_ms();

				const uint32_t *cols[2] = {words.data(), words.data() + (nw - 1) * n};

				cpu_radix_sort_rows(cols, nw, n, perm.data(), NULL,
									scratch.data(), NULL, 1);
				t[s].push_back(now_ms() - t0);
			}
			for (size_t i = 1; i < n; i++)
				if (host[perm[i - 1]] > host[perm[i]] ||
					(host[perm[i - 1]] == host[perm[i]] && perm[i - 1] > perm[i]))
				{
					failures++;
					fprintf(stderr, "FAILED: cpu n=%zu at %zu\n", n, i);
					break;
				}
			res.ms[s] = median(t[s]);
		}

		/*
		 * The GPU sorts round-robin: run r of every sort before run r + 1 of
		 * any, so that a slow stretch of the machine falls on all of them.
		 * Each timed run follows an untimed one of the same sort: right after
		 * another sort (thrust frees its temporary memory every call) the
		 * first run is slower.
		 */
		for (int r = 0; r < nruns + 1; r++)	/* round 0 warms up */
			for (int s = 0; s < SORT_KINDS; s++)
				for (int w = r == 0 ? 1 : 0; w < 2; w++)	/* w 0: untimed, after the last sort */
				{
					K		   *out_k = NULL;
					uint32_t   *out_v = NULL;
					float		ms = 0;

					if (s == SORT_CPU || (s == SORT_BITONIC && n > BITONIC_BENCH_MAX_N))
						continue;

					CK(cudaMemcpy(keys[0], src, n * sizeof(K), cudaMemcpyDeviceToDevice));
					onesweep_iota_kernel<<<grid_for(n), 256>>>(vals[0], n);
					CK(cudaDeviceSynchronize());
					CK(cudaEventRecord(e0));
					if (s == SORT_AUTO)
					{
						gpusort_algorithm a = GPUSORT_ALGO_RADIX;
						char		why[80];

						GS(choose_algorithm<K>(keys[0], n, temp, sizeof(K) / 4,
											   GPUSORT_ALGO_AUTO, &a, why, sizeof(why), &look));
						snprintf(res.choice, sizeof(res.choice), "%s: %s",
								 gpusort_algorithm_name(a), why);
						/* bitonic (its scratch above one block's pairs); else the sort picked */
						if (a == GPUSORT_ALGO_BITONIC)
						{
							GS(bitonic_sort_pairs<K>(keys, vals, n, false, bitonic_temp, 0));
							out_k = keys[1];
							out_v = vals[1];
						}
						else if (a == GPUSORT_ALGO_RADIX && look.counted)
						{
							onesweep_stats st;
							int			o;

							/* the radix sort goes on from the look's first read */
							GS(onesweep_sort_counted<K>(keys, vals, n, false, temp, temp_bytes, 0,
														&look.summary, &o, &st, look.precleared));
							out_k = keys[o];
							out_v = vals[o];
						}
					}
					if (s == SORT_AUTO && out_k != NULL)
						;
					else if (s == SORT_GPUSORT || (s == SORT_AUTO && res.choice[0] == 'r'))
					{
						onesweep_stats st;
						int			o;

						GS(onesweep_sort_pairs((void **) keys, vals, n, sizeof(K), false, temp,
											   temp_bytes, 0, &o, &st));
						out_k = keys[o];
						out_v = vals[o];
						if (r == 0 && s == SORT_GPUSORT)
						{
							int			len = snprintf(res.plan, sizeof(res.plan), "%s",
												   st.from_min ? "min+" : "");

							for (int p = 0; p < st.passes; p++)
								len += snprintf(res.plan + len, sizeof(res.plan) - len, "%s%d",
												p ? "," : "", st.bits[p]);
							if (st.passes == 0)
								snprintf(res.plan + len, sizeof(res.plan) - len, "none");
							else if (st.packed)
								snprintf(res.plan + len, sizeof(res.plan) - len, " packed");
						}
					}
					else if (s == SORT_ROWS || s == SORT_ROWS_PACKED)
					{
						/* as the extension sorts: the payloads made as the row positions */
						onesweep_stats st;
						int			o;

						gpusort_test_hooks.records = s == SORT_ROWS ? GPUSORT_TEST_RECORDS_BY_SIZE
							: GPUSORT_TEST_RECORDS_OFF;
						GS(onesweep_sort_pairs((void **) keys, vals, n, sizeof(K), true, temp,
											   temp_bytes, 0, &o, &st));
						out_k = keys[o];
						out_v = vals[o];
						if (r == 0 && s == SORT_ROWS)
							snprintf(res.rows_plan, sizeof(res.rows_plan), "%s",
									 st.records ? "records" : st.packed ? "packed" : "apart");
					}
					else if (s == SORT_QUICKSORT ||
							 (s == SORT_AUTO && res.choice[0] == 'q'))
					{
						quicksort_stats qs;
						int			out = 1;

						GS(quicksort_sort_pairs<K>(keys, vals, n, false, temp, temp_bytes, 0, &qs, &out,
												   s == SORT_AUTO && look.counted
												   ? look.summary.range : NULL));
						out_k = keys[out];
						out_v = vals[out];
					}
					else if (s == SORT_BITONIC)
					{
						GS(bitonic_sort_pairs<K>(keys, vals, n, false, bitonic_temp, 0));
						out_k = keys[1];
						out_v = vals[1];
					}
					else if (s == SORT_CUB)
					{
						CK(cub::DeviceRadixSort::SortPairs(cub_temp, cub_bytes, keys[0], keys[1],
														   vals[0], vals[1], (int64_t) n));
						out_k = keys[1];
						out_v = vals[1];
					}
					else if (s == SORT_THRUST)
					{
						thrust::sort_by_key(thrust::device, keys[0], keys[0] + n, vals[0]);
						out_k = keys[0];
						out_v = vals[0];
					}
					CK(cudaEventRecord(e1));
					CK(cudaEventSynchronize(e1));
					CK(cudaGetLastError());
					CK(cudaEventElapsedTime(&ms, e0, e1));
					if (r > 0 && w == 1)
						t[s].push_back(ms);
					if (r == nruns && w == 1)
						check_result<K>(sort_names[s], src, out_k, out_v, n, sort_stable[s], seen,
										d_err, dist);
				}
		for (int s = 0; s < SORT_KINDS; s++)
			if (s != SORT_CPU && !t[s].empty())
				res.ms[s] = median(t[s]);
		results.push_back(res);
		printf("%2d-bit n=%-11zu %-13s", res.key_bits, n, test_distribution_names[dist]);
		for (int s = 0; s < SORT_KINDS; s++)
			if (res.ms[s] >= 0)
				printf("  %s %.3f ms (%.2f G/s)", sort_names[s], res.ms[s], n / res.ms[s] / 1e6);
		printf("  plan %s (rows: %s)  auto %s\n", res.plan, res.rows_plan, res.choice);
		fflush(stdout);
	}
	cudaFree(src);
	for (int i = 0; i < 2; i++)
		cudaFree(keys[i]);		/* vals[i] lies in the same allocation */
	cudaFree(temp);
	cudaFree(bitonic_temp);
	cudaFree(cub_temp);
	cudaFree(seen);
	cudaFree(d_err);
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
}

static void
write_outputs(const std::string &dir, const std::string &tag, const char *device,
			  const char *cmdline)
{
	std::string csv = dir + "/" + tag + ".csv",
				md = dir + "/" + tag + ".md";
	FILE	   *f = fopen(csv.c_str(), "w");
	char		date[32];
	time_t		now = time(NULL);

	strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&now));
	if (!f)
	{
		perror(csv.c_str());
		exit(2);
	}
	fprintf(f, "key_bits,n,distribution,sort,median_ms,gpairs_per_s\n");
	for (const result &r : results)
		for (int s = 0; s < SORT_KINDS; s++)
			if (r.ms[s] >= 0)
				fprintf(f, "%d,%zu,%s,\"%s\",%.4f,%.4f\n", r.key_bits, r.n,	/* names hold commas */
						test_distribution_names[r.dist], sort_names[s], r.ms[s],
						r.n / r.ms[s] / 1e6);
	fclose(f);

	f = fopen(md.c_str(), "w");
	if (!f)
	{
		perror(md.c_str());
		exit(2);
	}
	fprintf(f, "# Sorting (key, 32-bit payload) pairs — %s, %s\n\n", device, date);
	fprintf(f, "`%s`: G pairs/s, median of %d runs (GPU sorts up to 10^7 keys: %d; "
			"CUDA events around the sort call; the GPU sorts take turns run by run, each timed run after an untimed one of the same sort; CPU: wall clock, one core). `radix plan`: the radix sort's digit passes (bits "
			"each; `min+`: digits of key − min; `packed`: each pair packed in a 64-bit word between passes). `gpusort radix rows`: the radix sort as the extension calls it, "
			"its payloads made as the row positions instead of read (the same output as the others here, whose payloads are 0 … n − 1); "
			"`records`: one 32-bit word a pair between its passes (kernels/onesweep_kernels.cuh, onesweep_records); `radix rows, no records`: the same sort without them. `auto / best`: gpusort auto's time over the "
			"faster of gpusort radix and quicksort (1.00 = as fast as the best). Bitonic only "
			"up to 2^22; the CPU only up to the -c size.\n\n", cmdline, runs, runs_at(1));
	for (int bits = 32; bits <= 64; bits += 32)
	{
		bool		any = false;

		for (const result &r : results)
			any |= r.key_bits == bits;
		if (!any)
			continue;
		fprintf(f, "## %d-bit keys\n\n| n | distribution |", bits);
		for (int s = 0; s < SORT_KINDS; s++)
			fprintf(f, " %s |", sort_names[s]);
		fprintf(f, " radix / cub | radix rows / cub | quicksort / cub | auto / best of radix, quicksort | radix plan | rows between passes | auto's choice |\n|---:|---|");
		for (int s = 0; s < SORT_KINDS + 7; s++)
			fprintf(f, "---:|");
		fprintf(f, "\n");
		for (const result &r : results)
		{
			if (r.key_bits != bits)
				continue;
			fprintf(f, "| %zu | %s |", r.n, test_distribution_names[r.dist]);
			for (int s = 0; s < SORT_KINDS; s++)
				if (r.ms[s] >= 0)
					fprintf(f, " %.2f |", r.n / r.ms[s] / 1e6);
				else
					fprintf(f, " — |");
			fprintf(f, " %.2f× | %.2f× | %.2f× | %.2f | %s | %s | %s |\n",
					r.ms[SORT_CUB] / r.ms[SORT_GPUSORT], r.ms[SORT_CUB] / r.ms[SORT_ROWS],
					r.ms[SORT_CUB] / r.ms[SORT_QUICKSORT],
					r.ms[SORT_AUTO] / std::min(r.ms[SORT_GPUSORT], r.ms[SORT_QUICKSORT]),
					r.plan, r.rows_plan, r.choice);
		}
		fprintf(f, "\n");
	}
	fclose(f);
	printf("written: %s %s\n", csv.c_str(), md.c_str());
}

int
main(int argc, char **argv)
{
	std::string dir = ".";
	size_t		max32 = 1000000000,
				max64 = 500000000,
				cpu_max = 10000000;
	std::vector<int> dists;
	std::string cmdline = "sort_bench";
	int			opt;
	cudaDeviceProp prop;

	for (int i = 1; i < argc; i++)
		cmdline += std::string(" ") + argv[i];
	std::vector<size_t> sizes = {1u << 16, 1u << 20, 10000000, 100000000, 500000000, 1000000000};
	std::string tag = "sort_bench";
	bool		seed_set = false;

	while ((opt = getopt(argc, argv, "o:r:n:m:c:d:s:t:S:")) != -1)
	{
		switch (opt)
		{
			case 'o':
				dir = optarg;
				break;
			case 'r':
				runs = atoi(optarg);
				break;
			case 'n':
				max32 = strtoull(optarg, NULL, 10);
				break;
			case 'm':
				max64 = strtoull(optarg, NULL, 10);
				break;
			case 'c':
				cpu_max = strtoull(optarg, NULL, 10);
				break;
			case 'd':
				for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ","))
					for (int d = 0; d < DIST_COUNT; d++)
						if (strcmp(tok, test_distribution_names[d]) == 0)
							dists.push_back(d);
				break;
			case 's':
				sizes.clear();
				for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ","))
					sizes.push_back(strtoull(tok, NULL, 10));
				break;
			case 'S':
				seed_base = strtoull(optarg, NULL, 10);
				seed_set = true;
				break;
			case 't':
				tag = std::string("sort_bench-") + optarg;
				break;
			default:
				fprintf(stderr, "usage: sort_bench [-o DIR] [-r RUNS] [-n MAX_N32] "
						"[-m MAX_N64] [-c CPU_MAX_N] [-d DIST,...] [-s N,...] [-t TAG] [-S SEED]\n");
				return 2;
		}
	}
	if (dists.empty())
		for (int d = 0; d < DIST_COUNT; d++)
			dists.push_back(d);
	if (runs < 1)
		runs = 1;
	if (!seed_set)
		seed_base = (uint64_t) time(NULL);

	int			count = 0;

	if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
	{
		printf("skipped: no GPU\n");
		return 0;
	}
	CK(cudaGetDeviceProperties(&prop, 0));
	printf("sort_bench: %s, %d runs, seed %llu\n", prop.name, runs, (unsigned long long) seed_base);

	/*
	 * Warm-up, not in the tables: every sort of both widths once at 2^20
	 * (modules load lazily, clocks ramp up), so that the first row is
	 * measured like the others.
	 */
	printf("warm-up (not in the tables):\n");
	bench_size<uint32_t>((size_t) 1 << 20, {DIST_UNIFORM}, 0);
	bench_size<uint64_t>((size_t) 1 << 20, {DIST_UNIFORM}, 0);
	results.clear();

	for (size_t n : sizes)
		if (n <= max32 && n != 500000000)
			bench_size<uint32_t>(n, dists, cpu_max);
	for (size_t n : sizes)
		if (n <= max64 && n != 1000000000)
			bench_size<uint64_t>(n, dists, cpu_max);
	write_outputs(dir, tag, prop.name, cmdline.c_str());
	printf("sort_bench: %d failures\n", failures);
	return failures ? 1 : 0;
}
