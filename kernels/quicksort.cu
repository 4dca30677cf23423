/*
 * quicksort.cu -- GPU-Quicksort; see quicksort.cuh for the design.  Here:
 * the sort's driver (quicksort_sort_pairs) and the sample of distinct
 * keys.  Its phases: the multi-pivot round (quicksort_multi.cuh), the
 * split rounds (quicksort_split.cuh on the device, quicksort_split_rounds.cuh
 * on the host), phase one (quicksort_partition.cuh), phase two and the leaf
 * queue (quicksort_phase_two.cuh, quicksort_leaf.cuh); host helpers in
 * quicksort_host.cuh, tuning constants in quicksort_config.cuh.
 */
#include <algorithm>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <type_traits>
#include <vector>

#include "bitonic.cuh"
#include "block_scan.cuh"
#include "cuda_check.cuh"
#include "device_smem.cuh"
#include "first_read.cuh"		/* the key range (a range read), iota */
#include "quicksort.cuh"
#include "quicksort_config.cuh"
#include "quicksort_leaf.cuh"
#include "quicksort_multi.cuh"
#include "quicksort_split.cuh"
#include "quicksort_host.cuh"
#include "quicksort_partition.cuh"
#include "quicksort_phase_two.cuh"
#include "quicksort_split_rounds.cuh"

size_t
quicksort_temp_bytes(size_t n, int key_bytes)
{
	size_t		seq = key_bytes == 8 ? sizeof(qs_seq<uint64_t>) : sizeof(qs_seq<uint32_t>);
	size_t		maxseq = qs_max_sequences(n);

	return maxseq * seq + qs_max_tasks(n) * sizeof(qs_task) + qs_leaf_capacity(n) * sizeof(qs_leaf) +
		16 + ONESWEEP_SUMMARY_OFFSET + ONESWEEP_SUMMARY_BYTES + 16 + sizeof(qs_multi) +
		qs_split_temp_bytes(n, key_bytes);
}

void
quicksort_release_host_buffers(void)
{
	if (multi_pinned != NULL)
		(void) cudaFreeHost(multi_pinned);
	multi_pinned = NULL;
	multi_tried = false;
	for (int slot = 0; slot < 3; slot++)
	{
		if (pinned_buf[slot] != NULL)
			(void) cudaFreeHost(pinned_buf[slot]);
		pinned_buf[slot] = NULL;
		pinned_cap[slot] = 0;
	}
	pinned_failed = false;
}

/*
 * The key range of n keys, into range[2], and what the look at them found:
 * the sample's distinct keys (*sample_distinct; 0: not known) and whether
 * every key is <= the next (*in_order).  Few keys: the first read (range
 * and sample in one read, laid out in head as the radix sort's); many:
 * the sample first, then the range read where the sample says it is needed.
 */
template <typename K>
static gpusort_status
qs_read_range(const K *keys, size_t n, void *d_head, qs_multi *d_multi, qs_multi *h_multi,
			  int sms, cudaStream_t stream, unsigned long long range[2], int *sample_distinct,
			  bool *in_order)
{
	if (n < QS_SAMPLE_FIRST_MIN_N)
	{
		/* few keys: one read for the range and the sample (two kernels, one launch's wait) */
		digit_plan	none;		/* no digit places: the key range alone */
		const first_read_summary *look;
		gpusort_status hst;

		none.passes = 0;
		if ((hst = onesweep_first_read<K>(keys, n, none, d_head, QS_PIVOTS_MAX,
										  stream)) != GPUSORT_OK ||
			(hst = onesweep_first_read_wait(stream, &look)) != GPUSORT_OK)
			return hst;
		range[0] = look->range[0];
		range[1] = look->range[1];
		*sample_distinct = look->distinct;
		*in_order = look->sorted != 0;
	}
	else
	{
		/*
		 * Many keys: the sample of the first read (its distinct keys decide
		 * on the multi-pivot round), then the range -- which only one value or few
		 * need, so the read of every key is skipped on the device where the
		 * sample holds more distinct keys than that round takes: the whole
		 * type's range bounds them then (the split rounds' pivots come from
		 * samples, and phase one's from the bounds it tightens).  One wait.
		 */
		constexpr size_t from = offsetof(qs_multi, distinct),
					to = offsetof(qs_multi, range) + sizeof(h_multi->range);

		qs_sample_pivots_kernel<K><<<1, FIRST_READ_SAMPLE, 0, stream>>>(keys, n, d_multi, NULL);
		CUDA_TRY_LAUNCH("qs_sample_pivots_kernel");
		/* blocks of four vectors a thread, at most QS_RANGE_BLOCKS_PER_SM a SM */
		const unsigned rgrid = (unsigned) std::min<size_t>(
			(n / (16 / sizeof(K)) + 4 * QS_RANGE_THREADS - 1) / (4 * QS_RANGE_THREADS) + 1,
			(size_t) sms * QS_RANGE_BLOCKS_PER_SM);

		qs_range_kernel<K><<<rgrid, QS_RANGE_THREADS, 0, stream>>>(keys, n, d_multi);
		CUDA_TRY_LAUNCH("qs_range_kernel");
		CUDA_TRY(cudaMemcpyAsync((char *) h_multi + from, (const char *) d_multi + from, to - from,
								 cudaMemcpyDeviceToHost, stream));
		CUDA_TRY(cudaStreamSynchronize(stream));
		*sample_distinct = h_multi->distinct;
		if (*sample_distinct > QS_PIVOTS_MAX)
		{
			range[0] = 0;
			range[1] = (unsigned long long) ~(K) 0;
		}
		else
		{
			range[0] = ~h_multi->range[0];
			range[1] = h_multi->range[1];
		}
	}
	return GPUSORT_OK;
}

/* [b, e) of sequence q into tasks of at most chunk pairs. */
static void
qs_add_tasks(std::vector<qs_task> *tasks, uint32_t q, size_t b, size_t e, size_t chunk)
{
	for (; b < e; b += chunk)
		tasks->push_back({q, (uint32_t) b, (uint32_t) std::min<size_t>(b + chunk, e)});
}

/* A section size for the pairs of ws over a round's max_blocks blocks, in whole steps. */
static size_t
qs_round_chunk(const std::vector<qs_work> &ws, size_t max_blocks)
{
	size_t		total = 0;

	for (const qs_work &w : ws)
		total += w.end - w.start;

	size_t		chunk = std::max<size_t>((total + max_blocks - 1) / max_blocks, QS1_STEP);

	return (chunk + QS1_STEP - 1) / QS1_STEP * QS1_STEP;
}

/*
 * Sequences of one value in buffer 0 (copies), copied into buffer 1 by
 * qs_copy_kernel, in launches of at most the task buffer (stream order
 * keeps it until read).
 */
template <typename K>
static gpusort_status
qs_copy_sequences(const std::vector<qs_work> &copies, K *keys[2], uint32_t *vals[2], size_t n,
				  qs_task *d_tasks, size_t max_blocks, cudaStream_t stream)
{
	static std::vector<qs_task> tasks;
	const size_t chunk = qs_round_chunk(copies, max_blocks);

	tasks.clear();
	for (const qs_work &w : copies)
		qs_add_tasks(&tasks, 0, w.start, w.end, chunk);
	for (size_t f = 0; f < tasks.size(); f += qs_max_tasks(n))
	{
		size_t		m = std::min(tasks.size() - f, qs_max_tasks(n));

		CUDA_TRY(cudaMemcpyAsync(d_tasks, tasks.data() + f, m * sizeof(qs_task),
								 cudaMemcpyHostToDevice, stream));
		qs_copy_kernel<K><<<(unsigned) m, QS_THREADS, 0, stream>>>(
			d_tasks, keys[0], vals[0], keys[1], vals[1]);
		CUDA_TRY_LAUNCH("qs_copy_kernel");
	}
	return GPUSORT_OK;
}

/*
 * One round of phase one: every sequence of active (all in one buffer) is
 * partitioned around the midpoint of its range into the other buffer
 * (qs_partition_kernel, many blocks a sequence), and the two sides of each,
 * with the ranges the kernel found, go to *work.
 */
template <typename K>
static gpusort_status
qs_partition_round(const std::vector<qs_work> &active, K *keys[2], uint32_t *vals[2], size_t n,
				   qs_seq<K> *d_seqs, qs_task *d_tasks, size_t max_blocks, cudaStream_t stream,
				   std::vector<qs_work> *work, quicksort_stats *stats)
{
	static std::vector<qs_seq<K> > seqs;
	static std::vector<qs_task> tasks;
	const size_t chunk = qs_round_chunk(active, max_blocks);

	seqs.clear();
	tasks.clear();
	for (size_t q = 0; q < active.size(); q++)
	{
		const qs_work &w = active[q];
		qs_seq<K>	sq;
		K			lo = (K) w.min,
					hi = (K) w.max;

		sq.start = w.start;
		sq.end = w.end;
		sq.lt_ptr = w.start;
		sq.gt_ptr = w.end;
		sq.pivot = lo + (K) ((hi - lo) / 2 + 1);	/* in (min, max] */
		sq.lmin = sq.rmin = ~(K) 0;
		sq.lmax = sq.rmax = 0;
		seqs.push_back(sq);
		qs_add_tasks(&tasks, (uint32_t) q, w.start, w.end, chunk);
	}
	if (tasks.size() > qs_max_tasks(n))
		return GPUSORT_ERR_INVALID_ARGUMENT;
	CUDA_TRY(cudaMemcpyAsync(d_seqs, seqs.data(), seqs.size() * sizeof(qs_seq<K>),
							 cudaMemcpyHostToDevice, stream));
	CUDA_TRY(cudaMemcpyAsync(d_tasks, tasks.data(), tasks.size() * sizeof(qs_task),
							 cudaMemcpyHostToDevice, stream));

	const int	src = active[0].buf;	/* every active sequence is in one buffer */

	qs_partition_kernel<K><<<(unsigned) tasks.size(), QS_THREADS, 0, stream>>>(
		d_tasks, d_seqs, keys[src], vals[src], keys[src ^ 1], vals[src ^ 1]);
	CUDA_TRY_LAUNCH("qs_partition_kernel");
	CUDA_TRY(cudaMemcpyAsync(seqs.data(), d_seqs, seqs.size() * sizeof(qs_seq<K>),
							 cudaMemcpyDeviceToHost, stream));
	CUDA_TRY(cudaStreamSynchronize(stream));
	qs_trace(stream, "phase one round", seqs.size());
	stats->phase_one_rounds++;
	for (const qs_seq<K> &sq : seqs)
	{
		if (sq.lt_ptr > sq.start)
			work->push_back({sq.start, sq.lt_ptr, src ^ 1, (uint64_t) sq.lmin, (uint64_t) sq.lmax});
		if (sq.lt_ptr < sq.end)
			work->push_back({sq.lt_ptr, sq.end, src ^ 1, (uint64_t) sq.rmin, (uint64_t) sq.rmax});
	}
	return GPUSORT_OK;
}

/*
 * Phase one, until every sequence is short (at most minlength) or of one
 * value: the sequences in *work (what the split rounds left) are
 * partitioned round after round; those of one value are copied into buffer
 * 1, the short ones handed to the leaf queue.  Every sequence it splits is
 * longer than n / maxseq, so a round never splits more than maxseq; skewed
 * keys take more rounds rather than leaving long sequences to a single
 * block.
 */
template <typename K>
static gpusort_status
qs_phase_one(K *keys[2], uint32_t *vals[2], size_t n, qs_seq<K> *d_seqs, qs_task *d_tasks,
			 int sms, cudaStream_t stream, std::vector<qs_work> *work, qs_leaf_queue<K> *queue,
			 quicksort_stats *stats)
{
	static std::vector<qs_work> active,
				copies,
				later;			/* long ones in the other buffer: a round after */
	const size_t maxseq = qs_max_sequences(n);
	/* after split rounds, what they left is for phase two (up to QS_SPLIT_MIN) */
	const size_t minlength = std::max<size_t>(n / maxseq,
											  qs_split_applies(n) ? QS_SPLIT_MIN : QS_LEAF);
	const size_t max_blocks = (size_t) sms * qs_tasks_per_sm();
	gpusort_status st;

	while (!work->empty())
	{
		active.clear();
		copies.clear();
		later.clear();
		for (const qs_work &w : *work)
		{
			if (w.min == w.max)
			{
				/*
				 * One value: in order already; to buffer 1.  Long ones by
				 * device copies, the others all in one launch.
				 */
				if (w.buf != 1 && w.end - w.start >= QS_COPY_ENGINE_MIN)
				{
					CUDA_TRY(cudaMemcpyAsync(keys[1] + w.start, keys[0] + w.start,
											 (size_t) (w.end - w.start) * sizeof(K),
											 cudaMemcpyDeviceToDevice, stream));
					CUDA_TRY(cudaMemcpyAsync(vals[1] + w.start, vals[0] + w.start,
											 (size_t) (w.end - w.start) * sizeof(uint32_t),
											 cudaMemcpyDeviceToDevice, stream));
				}
				else if (w.buf != 1)
					copies.push_back(w);
			}
			else if (w.end - w.start <= minlength || active.size() == maxseq)
			{
				if ((st = queue->add(w.start, w.end, w.buf)) != GPUSORT_OK)
					return st;
			}
			else if (!active.empty() && w.buf != active[0].buf)
				later.push_back(w);
			else
				active.push_back(w);
		}
		work->swap(later);
		if (!copies.empty() &&
			(st = qs_copy_sequences<K>(copies, keys, vals, n, d_tasks, max_blocks,
									   stream)) != GPUSORT_OK)
			return st;
		if (active.empty())
			break;
		if ((st = qs_partition_round<K>(active, keys, vals, n, d_seqs, d_tasks, max_blocks,
										stream, work, stats)) != GPUSORT_OK)
			return st;
	}
	return GPUSORT_OK;
}

template <typename K>
gpusort_status
quicksort_sort_pairs(K *keys[2], uint32_t *vals[2], size_t n, bool positions, void *temp,
					 size_t temp_bytes, cudaStream_t stream, quicksort_stats *stats,
					 int *out, const unsigned long long *known_range)
{
	unsigned char *tp = (unsigned char *) temp;
	qs_seq<K>  *d_seqs = (qs_seq<K> *) tp;
	const size_t maxseq = qs_max_sequences(n);
	qs_task    *d_tasks = (qs_task *) (tp + maxseq * sizeof(qs_seq<K>));
	qs_leaf    *d_leaves = (qs_leaf *) (d_tasks + qs_max_tasks(n));
	const size_t leaf_capacity = qs_leaf_capacity(n);
	/* the first read's head (fewer than QS_SAMPLE_FIRST_MIN_N keys), laid out as the radix sort's */
	void	   *d_head = (void *) (((uintptr_t) (d_leaves + leaf_capacity) + 15) & ~(uintptr_t) 15);
	/* then the sample's and range's results and the multi-pivot round's pivots and counts */
	qs_multi   *d_multi = (qs_multi *) (((uintptr_t) d_head + ONESWEEP_SUMMARY_OFFSET +
										 ONESWEEP_SUMMARY_BYTES + 15) & ~(uintptr_t) 15);
	qs_multi   *h_multi = qs_host_multi();
	void	   *split_temp = (void *) (d_multi + 1);
	/* kept between calls, so that their memory is reused */
	static std::vector<qs_leaf> leaves;
	static std::vector<qs_work> work;
	unsigned long long range[2] = {0, 0};
	int			dev,
				sms,
				sample_distinct = 0;	/* the sample's distinct keys; 0: not known */
	bool		in_order = false;	/* the first read found every key <= the next */
	unsigned	grid = (unsigned) std::min<size_t>((n + 255) / 256 + 1, 4096);

	stats->phase_one_rounds = 0;
	stats->sequences = 0;
	*out = 1;
	work.clear();
	if (n == 0)
		return GPUSORT_OK;
	if (n > ((size_t) 1 << 31) || temp_bytes < quicksort_temp_bytes(n, sizeof(K)))
		return GPUSORT_ERR_INVALID_ARGUMENT;
	CUDA_TRY(cudaGetDevice(&dev));
	CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	qs_trace(stream, NULL, 0);
	if (positions)
	{
		onesweep_iota_kernel<<<grid, 256, 0, stream>>>(vals[0], n);
		CUDA_TRY_LAUNCH("onesweep_iota_kernel");
	}
	if (known_range != NULL)
	{
		range[0] = known_range[0];
		range[1] = known_range[1];
	}
	else
	{
		gpusort_status rst = qs_read_range<K>(keys[0], n, d_head, d_multi, h_multi, sms, stream,
											  range, &sample_distinct, &in_order);

		if (rst != GPUSORT_OK)
			return rst;
	}
	qs_trace(stream, "range read", n);
	if (range[0] == range[1] || in_order)
	{
		/* one value, or keys in order: in order already, where they are (O(n): iota and one read) */
		*out = 0;
		return GPUSORT_OK;
	}
	if (n >= QS_MULTI_MIN_N && sample_distinct <= QS_PIVOTS_MAX)
	{
		gpusort_status mst = qs_multi_round<K>(keys, vals, n, range, d_multi, h_multi, sms, stream,
											   &work, stats);

		if (mst != GPUSORT_OK)
			return mst;
	}
	qs_trace(stream, "multi-pivot round", work.size());
	if (work.empty())
		work.push_back({0, (uint32_t) n, 0, range[0], range[1]});

	/* phase two sorts the leaves a batch at a time, while the host goes on */
	qs_leaf_queue<K> queue(keys, vals, d_leaves, leaf_capacity, &leaves, stream, stats);
	gpusort_status sst = qs_split_rounds<K>(keys, vals, n, split_temp, sms, stream, &work,
											&queue, stats);

	if (sst != GPUSORT_OK)
		return sst;

	sst = qs_phase_one<K>(keys, vals, n, d_seqs, d_tasks, sms, stream, &work, &queue, stats);
	if (sst != GPUSORT_OK)
		return sst;

	/* phase two: the leaves left, and the wait for all */
	return queue.finish();
}

template <typename K>
gpusort_status
quicksort_sample_distinct(const K *keys, size_t n, void *temp, cudaStream_t stream, int *distinct,
						  int *order)
{
	/* the first read's host summary, idle until a read: its distinct and order fields, mapped where it can be */
	first_read_summary *dev,
			   *host = onesweep_host_summary(&dev);
	qs_multi   *d_m = (qs_multi *) temp;

	static_assert(offsetof(qs_multi, order) - offsetof(qs_multi, distinct) ==
				  offsetof(first_read_summary, order) - offsetof(first_read_summary, distinct),
				  "distinct and order copied at once");
	*distinct = 0;
	*order = 0;
	if (n < FIRST_READ_SAMPLE)
		return GPUSORT_ERR_INVALID_ARGUMENT;
	qs_sample_pivots_kernel<K><<<1, FIRST_READ_SAMPLE, 0, stream>>>(keys, n, d_m, dev);
	CUDA_TRY_LAUNCH("qs_sample_pivots_kernel");
	if (dev == NULL)
		CUDA_TRY(cudaMemcpyAsync(&host->distinct, &d_m->distinct, 2 * sizeof(int),
								 cudaMemcpyDeviceToHost, stream));
	CUDA_TRY(cudaStreamSynchronize(stream));
	*distinct = *(volatile int *) &host->distinct;
	*order = *(volatile int *) &host->order;
	return GPUSORT_OK;
}

template gpusort_status quicksort_sample_distinct<uint32_t>(const uint32_t *, size_t, void *,
															cudaStream_t, int *, int *);
template gpusort_status quicksort_sample_distinct<uint64_t>(const uint64_t *, size_t, void *,
															cudaStream_t, int *, int *);
template gpusort_status quicksort_sort_pairs<uint32_t>(uint32_t *[2], uint32_t *[2], size_t, bool,
													   void *, size_t, cudaStream_t, quicksort_stats *,
													   int *, const unsigned long long *);
template gpusort_status quicksort_sort_pairs<uint64_t>(uint64_t *[2], uint32_t *[2], size_t, bool,
													   void *, size_t, cudaStream_t, quicksort_stats *,
													   int *, const unsigned long long *);

