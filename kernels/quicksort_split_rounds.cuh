/*
 * quicksort_split_rounds.cuh -- the host's side of GPU-Quicksort's split
 * rounds (their kernels are quicksort_split.cuh): how many blocks and
 * tasks a round takes, and the rounds themselves, which split every long
 * sequence around many pivots at once and hand the buckets on as leaves
 * or as the next round's work.  Included by quicksort.cu only.
 */
#ifndef GPUSORT_QUICKSORT_SPLIT_ROUNDS_CUH
#define GPUSORT_QUICKSORT_SPLIT_ROUNDS_CUH

#include <algorithm>
#include <vector>
#include <cuda_runtime.h>

#include "cuda_check.cuh"
#include "quicksort_host.cuh"
#include "quicksort_phase_two.cuh"
#include "quicksort_split.cuh"

/*
 * Blocks of kernel (threads threads, smem bytes of dynamic shared
 * memory) that a SM of the current device holds; cache: the device last
 * asked about and its answer (-1, 0 at first), so that a device is asked
 * once.
 */
template <typename F>
static int
qs_blocks_per_sm(F *kernel, int threads, size_t smem, int cache[2])
{
	int			device,
				blocks = 0;

	if (cudaGetDevice(&device) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return 1;
	}
	if (device == cache[0])
		return cache[1];
	if ((smem > 0 && cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
										  (int) smem) != cudaSuccess) ||
		cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem) !=
		cudaSuccess)
	{
		(void) cudaGetLastError();
		blocks = 0;
	}
	cache[0] = device;
	cache[1] = std::max(blocks, 1);
	return cache[1];
}

/* Blocks of the split scatter of shape SH that a SM of the current device holds. */
template <typename K, typename SH>
static int
qs_split_scatter_per_sm(void)
{
	static int	cache[2] = {-1, 0};

	return qs_blocks_per_sm(qs_split_scatter_kernel<K, SH>, SH::THREADS, SH::SMEM, cache);
}

/* Blocks of the split count that a SM of the current device holds. */
template <typename K>
static int
qs_split_count_per_sm(void)
{
	static int	cache[2] = {-1, 0};

	return qs_blocks_per_sm(qs_split_count_kernel<K>, QS_THREADS, 0, cache);
}

/* The length of each of m tasks of a sequence of len pairs: whole steps. */
static size_t
qs_split_task_len(size_t len, size_t m, size_t step)
{
	return ((len + m - 1) / m + step - 1) / step * step;
}

/*
 * The length of a round's tasks (a multiple of step).  A sequence of len
 * pairs is cut into ceil(len / chunk) tasks of equal length; the device
 * runs slots scatter blocks at once, each a task at a time, at about one
 * pace, so the round takes about waves = ceil(tasks / slots) tasks, the
 * last of them the longest, plus four steps a wave for the tasks' starts
 * (bucket offsets, zeroed counts).  Of the chunks
 * total / (slots * w), w = 1 .. 12, those that would finish within 3% of
 * the earliest are the candidates, and the one of fewest tasks is taken.
 * One sequence gets one wave of slots tasks; a fixed number of tasks a SM,
 * above the blocks a SM holds, left a second, partly idle wave.  At most
 * max_tasks tasks (> the sequences: the caller's room).
 */
static size_t
qs_split_chunk(const std::vector<qs_work> &split, size_t total, size_t slots, size_t step,
			   size_t max_tasks)
{
	const size_t least = (total + (max_tasks - split.size()) - 1) / (max_tasks - split.size());
	size_t		best = 0,
				best_span = SIZE_MAX,
				best_tasks = 0;
	struct
	{
		size_t		chunk,
					span,
					ntasks;
	}			cand[12];

	for (size_t w = 1; w <= 12; w++)
	{
		const size_t chunk = std::max({(total + slots * w - 1) / (slots * w), least, step});
		size_t		ntasks = 0,
					longest = 0;

		for (const qs_work &q : split)
		{
			const size_t len = q.end - q.start,
						m = (len + chunk - 1) / chunk;

			ntasks += m;
			longest = std::max(longest, qs_split_task_len(len, m, step));
		}
		const size_t waves = (ntasks + slots - 1) / slots;

		cand[w - 1] = {chunk, (waves - 1) * (total / ntasks) + longest + waves * 4 * step, ntasks};
		best_span = std::min(best_span, cand[w - 1].span);
	}
	for (const auto &c : cand)
		if (c.span <= best_span + best_span / 32 && (best == 0 || c.ntasks < best_tasks))
		{
			best = c.chunk;
			best_tasks = c.ntasks;
		}
	return best;
}

/*
 * A split round's sequences and tasks: each sequence of split gets
 * qs_split_kmax pivots and tasks of about chunk pairs (whole steps); the
 * pivots, buckets and bucket counters the round needs, into *npivots,
 * *nbuckets and *ncounts.
 */
static void
qs_split_plan_round(const std::vector<qs_work> &split, size_t chunk, size_t STEP,
					std::vector<qs_split_seq> *seqs, std::vector<qs_split_task> *tasks,
					size_t *npivots, size_t *nbuckets, size_t *ncounts)
{
	seqs->clear();
	tasks->clear();
	*npivots = *nbuckets = *ncounts = 0;
	for (size_t q = 0; q < split.size(); q++)
	{
		const qs_work &w = split[q];
		const size_t len = w.end - w.start;
		qs_split_seq sq;

		sq.start = w.start;
		sq.end = w.end;
		sq.kmax = qs_split_kmax(len);
		sq.pivot_base = (uint32_t) *npivots;
		sq.bucket_base = (uint32_t) *nbuckets;
		sq.first_task = (uint32_t) tasks->size();
		const size_t tlen = qs_split_task_len(len, (len + chunk - 1) / chunk, STEP);

		for (size_t b = w.start; b < w.end; b += tlen)
		{
			tasks->push_back({(uint32_t) q, (uint32_t) b,
							 (uint32_t) std::min<size_t>(b + tlen, w.end),
							 (uint32_t) *ncounts});
			*ncounts += 2 * sq.kmax + 1;
		}
		sq.ntasks = (uint32_t) tasks->size() - sq.first_task;
		sq.pad = 0;
		*npivots += sq.kmax;
		*nbuckets += 2 * sq.kmax + 1;
		seqs->push_back(sq);
	}
}

/*
 * After a split round: the buckets of each sequence (h_npiv pivots, h_totals
 * counts, h_pivots), in the other buffer now.  Buckets of one pivot's value
 * are done where they are short; small neighbours are joined into leaves
 * of up to QS_LEAF pairs; short ones of more than one value go to the leaf
 * queue, the rest to *rest (nosplit where a bucket holds more than half
 * its sequence).
 */
template <typename K>
static gpusort_status
qs_split_buckets(const std::vector<qs_work> &split, const std::vector<qs_split_seq> &seqs,
				 const uint32_t *h_npiv, const uint32_t *h_totals, const K *h_pivots, int src,
				 qs_leaf_queue<K> *queue, std::vector<qs_work> *rest)
{
	/* what is left of a sequence: short ones of more than one value are leaves */
	auto		keep = [&](const qs_work &w) -> gpusort_status {
		if (w.min != w.max && w.end - w.start <= QS_SPLIT_MIN)
			return queue->add(w.start, w.end, w.buf);
		rest->push_back(w);
		return GPUSORT_OK;
	};
	gpusort_status kst = GPUSORT_OK;

	for (size_t q = 0; q < split.size(); q++)
	{
		const qs_work &w = split[q];
		const qs_split_seq &sq = seqs[q];
		const uint32_t k = h_npiv[q];
		const K    *pv = &h_pivots[sq.pivot_base];
		const uint32_t len = w.end - w.start;
		uint32_t	at = w.start;
		qs_work		leaf;		/* small buckets joined so far */
		bool		joining = false;

		if (k < 1 || k > sq.kmax)
			return gpusort_from_cuda(cudaErrorUnknown, "qs_split_rounds: bad pivot count");
		for (uint32_t b = 0; b < 2 * k + 1; b++)
		{
			const uint32_t c = h_totals[sq.bucket_base + b],
						j = b >> 1;
			qs_work		bw;

			if (c == 0)
				continue;
			bw.start = at;
			bw.end = at + c;
			bw.buf = src ^ 1;
			bw.nosplit = false;
			if (b & 1)
				bw.min = bw.max = (uint64_t) pv[j];
			else
			{
				/* keys strictly between the pivots around the bucket */
				bw.min = j == 0 ? w.min : (uint64_t) (K) (pv[j - 1] + 1);
				bw.max = j == k ? w.max : (uint64_t) (K) (pv[j] - 1);
				bw.nosplit = c > len / 2;
			}
			at += c;
			if (joining && c <= QS_LEAF && leaf.end - leaf.start + c <= QS_LEAF)
			{
				leaf.end = bw.end;
				leaf.max = bw.max;
				continue;
			}
			if (joining && (kst = keep(leaf)) != GPUSORT_OK)
				return kst;
			joining = c <= QS_LEAF;
			if (joining)
				leaf = bw;
			else if ((kst = keep(bw)) != GPUSORT_OK)
				return kst;
		}
		if (joining && (kst = keep(leaf)) != GPUSORT_OK)
			return kst;
		if (at != w.end)
			return gpusort_from_cuda(cudaErrorUnknown, "qs_split_rounds: buckets do not add up");
	}
	return GPUSORT_OK;
}

/*
 * A split round's sequences and tasks to the device, through pinned memory
 * where it can be had (free again: the last round's copies were done
 * before its totals came back).
 */
static gpusort_status
qs_split_send_round(const std::vector<qs_split_seq> &seqs, const std::vector<qs_split_task> &tasks,
					qs_split_seq *d_seqs, qs_split_task *d_tasks, cudaStream_t stream)
{
	const size_t sbytes = seqs.size() * sizeof(qs_split_seq),
				tbytes = tasks.size() * sizeof(qs_split_task);
	unsigned char *in = (unsigned char *) qs_pinned(2, sbytes + tbytes);
	const void *hs = seqs.data(),
			   *ht = tasks.data();

	if (in != NULL)
	{
		memcpy(in, seqs.data(), sbytes);
		memcpy(in + sbytes, tasks.data(), tbytes);
		hs = in;
		ht = in + sbytes;
	}
	CUDA_TRY(cudaMemcpyAsync(d_seqs, hs, sbytes, cudaMemcpyHostToDevice, stream));
	CUDA_TRY(cudaMemcpyAsync(d_tasks, ht, tbytes, cudaMemcpyHostToDevice, stream));
	return GPUSORT_OK;
}

/*
 * A split round's pivot counts (nseqs), bucket totals (nbuckets) and
 * pivots (npivots) on their way back to the host, asynchronous on the
 * stream: into pinned memory where it can be had, else into vectors kept
 * between calls; *h_npiv, *h_totals and *h_pivots say where.
 */
template <typename K>
static gpusort_status
qs_split_fetch_results(size_t nseqs, size_t nbuckets, size_t npivots, const uint32_t *d_npiv,
					   const uint32_t *d_totals, const K *d_pivots, cudaStream_t stream,
					   uint32_t **h_npiv, uint32_t **h_totals, K **h_pivots)
{
	static std::vector<uint32_t> npiv,
				totals;
	static std::vector<K> pivots;
	const size_t tot_at = (nseqs * sizeof(uint32_t) + 15) & ~(size_t) 15,
				piv_at = (tot_at + nbuckets * sizeof(uint32_t) + 15) & ~(size_t) 15;
	unsigned char *h = (unsigned char *) qs_pinned(0, piv_at + npivots * sizeof(K));

	if (h == NULL)
	{
		npiv.resize(nseqs);
		totals.resize(nbuckets);
		pivots.resize(npivots);
	}
	*h_npiv = h ? (uint32_t *) h : npiv.data();
	*h_totals = h ? (uint32_t *) (h + tot_at) : totals.data();
	*h_pivots = h ? (K *) (h + piv_at) : pivots.data();
	CUDA_TRY(cudaMemcpyAsync(*h_npiv, d_npiv, nseqs * sizeof(uint32_t),
							 cudaMemcpyDeviceToHost, stream));
	CUDA_TRY(cudaMemcpyAsync(*h_totals, d_totals, nbuckets * sizeof(uint32_t),
							 cudaMemcpyDeviceToHost, stream));
	CUDA_TRY(cudaMemcpyAsync(*h_pivots, d_pivots, npivots * sizeof(K),
							 cudaMemcpyDeviceToHost, stream));
	return GPUSORT_OK;
}

/*
 * The split rounds: while some sequence of work is longer than QS_SPLIT_MIN
 * (and not of one value, and not left by a poor split), those of one buffer
 * are split into the other, and their buckets replace them in work.
 * Buckets of at most QS_LEAF pairs next to each other are joined into
 * leaves of at most QS_LEAF (phase two sorts a leaf whole); a bucket more
 * than half as long as its sequence is not split again (phase one's
 * two-way rounds take it).  Buckets and leaves of at most QS_SPLIT_MIN
 * pairs (and more than one value) go to the leaf queue at once, so that
 * phase two sorts them while the host reads the rest.  temp:
 * qs_split_temp_bytes(n) at split_temp.
 */
template <typename K>
static gpusort_status
qs_split_rounds(K *keys[2], uint32_t *vals[2], size_t n, void *split_temp, int sms,
				cudaStream_t stream, std::vector<qs_work> *work, qs_leaf_queue<K> *queue,
				quicksort_stats *stats)
{
	const qs_split_caps cap = qs_split_capacity(n);
	unsigned char *p = (unsigned char *) (((uintptr_t) split_temp + 15) & ~(uintptr_t) 15);
	qs_split_seq *d_seqs = (qs_split_seq *) p;
	qs_split_task *d_tasks = (qs_split_task *) (d_seqs + cap.seqs);
	uint32_t   *d_counts = (uint32_t *) (d_tasks + cap.tasks),
			   *d_npiv = d_counts + cap.tasks * QS_SPLIT_BUCKETS,
			   *d_totals = d_npiv + cap.seqs;
	K		   *d_pivots = (K *) (((uintptr_t) (d_totals + cap.buckets) + 15) & ~(uintptr_t) 15);
	uint16_t   *d_bid = (uint16_t *) (((uintptr_t) (d_pivots + cap.pivots) + 15) & ~(uintptr_t) 15);
	constexpr size_t STEP = qs_split_items<K>::STEP;
	static std::vector<qs_split_seq> seqs;
	static std::vector<qs_split_task> tasks;

	if (!qs_split_applies(n))
		return GPUSORT_OK;
	static std::vector<qs_work> rest,
				split;
	const int	scatter_tier = qs_scatter_tier<K>();
	const int	scatter_per_sm = qs_with_scatter_shape<K>(scatter_tier, [](auto shape) {
		return qs_split_scatter_per_sm<K, decltype(shape)>();
	});
	const int	count_per_sm = qs_split_count_per_sm<K>();
	qs_event	totals_in;		/* the round's totals on the host (the scatter still running) */

	CUDA_TRY(cudaEventCreateWithFlags(&totals_in.ev, cudaEventDisableTiming));

	for (;;)
	{
		size_t		total = 0,
					npivots = 0,
					nbuckets = 0;
		int			src = -1;

		rest.clear();
		split.clear();
		for (const qs_work &w : *work)
		{
			const size_t len = w.end - w.start;
			if (w.min == w.max || w.nosplit || len <= QS_SPLIT_MIN ||
				(src >= 0 && w.buf != src) || split.size() == cap.seqs ||
				npivots + qs_split_kmax(len) > cap.pivots)
			{
				rest.push_back(w);
				continue;
			}
			src = w.buf;
			split.push_back(w);
			total += len;
			npivots += qs_split_kmax(len);
		}
		if (split.empty())
			return GPUSORT_OK;

		const size_t chunk = qs_split_chunk(split, total, (size_t) sms * scatter_per_sm, STEP,
											cap.tasks);
		size_t		ncounts = 0;
		gpusort_status st;

		qs_split_plan_round(split, chunk, STEP, &seqs, &tasks, &npivots, &nbuckets, &ncounts);
		if (tasks.size() > cap.tasks || ncounts > cap.tasks * QS_SPLIT_BUCKETS ||
			nbuckets > cap.buckets)
			return gpusort_from_cuda(cudaErrorUnknown, "qs_split_rounds: temp too small");
		if ((st = qs_split_send_round(seqs, tasks, d_seqs, d_tasks, stream)) != GPUSORT_OK)
			return st;
		qs_trace(stream, "split: copies in", seqs.size());
		qs_split_pivots_kernel<K><<<(unsigned) seqs.size(), QS_THREADS, 0, stream>>>(
			d_seqs, keys[src], d_pivots, d_npiv);
		CUDA_TRY_LAUNCH("qs_split_pivots_kernel");
		qs_trace(stream, "split: pivots", seqs.size());
		/* the count's blocks: the scatter's tasks, each shared by parts blocks (whole steps each) */
		const size_t parts = std::max<size_t>(1, std::min(
			(size_t) sms * count_per_sm / tasks.size(), chunk / qs_split_items<K>::STEP));

		CUDA_TRY(cudaMemsetAsync(d_counts, 0, ncounts * sizeof(uint32_t), stream));
		qs_split_count_kernel<K><<<(unsigned) (tasks.size() * parts), QS_THREADS, 0, stream>>>(
			d_tasks, d_seqs, d_pivots, d_npiv, keys[src], d_counts, d_bid, (uint32_t) parts);
		CUDA_TRY_LAUNCH("qs_split_count_kernel");
		qs_trace(stream, "split: count", tasks.size());
		qs_split_offsets_kernel<<<(unsigned) seqs.size(), QS_SPLIT_OFFSET_THREADS, 0, stream>>>(
			d_seqs, d_tasks, d_npiv, d_counts, d_totals);
		CUDA_TRY_LAUNCH("qs_split_offsets_kernel");
		qs_trace(stream, "split: offsets", tasks.size());

		/*
		 * the pivot counts, bucket totals and pivots back (into pinned
		 * memory if it can be had) before the scatter, which does not change
		 * them: the host reads them and plans the next round, or sends the
		 * leaves, while the scatter runs
		 */
		uint32_t   *h_npiv,
				   *h_totals;
		K		   *h_pivots;

		if ((st = qs_split_fetch_results<K>(seqs.size(), nbuckets, npivots, d_npiv, d_totals,
											d_pivots, stream, &h_npiv, &h_totals,
											&h_pivots)) != GPUSORT_OK)
			return st;
		CUDA_TRY(cudaEventRecord(totals_in.ev, stream));
		{
			const gpusort_status sst = qs_with_scatter_shape<K>(scatter_tier, [&](auto shape) {
				return qs_launch_split_scatter<K, decltype(shape)>(
					tasks.size(), stream, d_tasks, d_seqs, d_npiv, d_counts, d_bid,
					keys[src], vals[src], keys[src ^ 1], vals[src ^ 1]);
			});

			if (sst != GPUSORT_OK)
				return sst;
		}
		qs_trace(stream, "split: scatter", total);
		CUDA_TRY(cudaEventSynchronize(totals_in.ev));
		qs_trace(stream, "split: copies out", nbuckets);
		stats->phase_one_rounds++;

		/* the buckets, small neighbours joined into leaves; what is left to rest */
		if ((st = qs_split_buckets<K>(split, seqs, h_npiv, h_totals, h_pivots, src, queue,
									  &rest)) != GPUSORT_OK)
			return st;
		work->swap(rest);
		qs_trace(stream, "split: host", work->size());
	}
}

#endif
