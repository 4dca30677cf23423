/*
 * radix_sort.cu -- stable LSD radix sort of 32-bit keys with 32-bit payloads
 * (row positions), and multi-word keys by stable passes from the last word
 * to the first.
 *
 * Each digit pass (8-bit digits) is three kernels, after Merrill and
 * Grimshaw's reduce-then-scan structure:
 *   upsweep  - every block counts the digits of its contiguous range;
 *   scan     - one block turns the digit-major count table into exclusive
 *              offsets (digit d of block b starts at offsets[d * grid + b]);
 *   scatter  - every block walks its range tile by tile, ranks each key
 *              among equal digits with warp-level match (stable: warp w of a
 *              tile holds the w-th contiguous slice, rounds go in order, lanes
 *              in order), and writes keys and payloads to their places.
 * One histogram kernel per key word counts all four digit places at once so
 * that places where every key has the same digit are skipped.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_check.cuh"

#define RADIX_BITS		8
#define RADIX			(1 << RADIX_BITS)
#define DIGIT_PLACES	(32 / RADIX_BITS)
#define BLOCK_THREADS	256
#define WARPS			(BLOCK_THREADS / 32)
#define ITEMS			8
#define TILE			(BLOCK_THREADS * ITEMS)
#define SCAN_THREADS	1024
#define BLOCKS_PER_SM	8
#define INVALID_DIGIT	RADIX

struct gpusort_job
{
	size_t		n;
	int			nwords;
	uint32_t   *d_words;		/* nwords * n; aliases d_keys[1] if nwords == 1 */
	uint32_t   *d_keys[2];
	uint32_t   *d_vals[2];
	uint32_t   *d_counts;		/* RADIX * grid */
	uint32_t   *d_hist;			/* DIGIT_PLACES * RADIX */
	int			grid;
	size_t		tiles_per_block;
	int			cur;			/* buffer holding the result, -1: identity */
	gpusort_timing timing;
};

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- kernels ---------------------------------------------------------- */

__global__ void
histogram_kernel(const uint32_t *__restrict__ keys, size_t n, uint32_t *hist)
{
	__shared__ uint32_t sh[DIGIT_PLACES][RADIX];

	for (int i = threadIdx.x; i < DIGIT_PLACES * RADIX; i += blockDim.x)
		(&sh[0][0])[i] = 0;
	__syncthreads();
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
		 i += (size_t) gridDim.x * blockDim.x)
	{
		uint32_t	k = keys[i];

#pragma unroll
		for (int p = 0; p < DIGIT_PLACES; p++)
			atomicAdd(&sh[p][(k >> (p * RADIX_BITS)) & (RADIX - 1)], 1u);
	}
	__syncthreads();
	for (int i = threadIdx.x; i < DIGIT_PLACES * RADIX; i += blockDim.x)
	{
		uint32_t	c = (&sh[0][0])[i];

		if (c)
			atomicAdd(&hist[i], c);
	}
}

__global__ void
upsweep_kernel(const uint32_t *__restrict__ keys, size_t n, int shift,
			   size_t range, uint32_t *counts)
{
	__shared__ uint32_t sh[RADIX];
	size_t		begin = blockIdx.x * range;
	size_t		end = begin + range < n ? begin + range : n;

	sh[threadIdx.x] = 0;
	__syncthreads();
	for (size_t i = begin + threadIdx.x; i < end; i += BLOCK_THREADS)
		atomicAdd(&sh[(keys[i] >> shift) & (RADIX - 1)], 1u);
	__syncthreads();
	counts[threadIdx.x * gridDim.x + blockIdx.x] = sh[threadIdx.x];
}

/* Exclusive scan of len counts in place, by one block. */
__global__ void
scan_kernel(uint32_t *counts, int len)
{
	__shared__ uint32_t sums[SCAN_THREADS];
	int			per = (len + SCAN_THREADS - 1) / SCAN_THREADS;
	int			begin = threadIdx.x * per;
	int			end = begin + per < len ? begin + per : len;
	uint32_t	s = 0;

	for (int i = begin; i < end; i++)
		s += counts[i];
	sums[threadIdx.x] = s;
	__syncthreads();
	/* Hillis-Steele inclusive scan of the per-thread sums */
	for (int off = 1; off < SCAN_THREADS; off <<= 1)
	{
		uint32_t	v = threadIdx.x >= off ? sums[threadIdx.x - off] : 0;

		__syncthreads();
		sums[threadIdx.x] += v;
		__syncthreads();
	}
	s = threadIdx.x ? sums[threadIdx.x - 1] : 0;
	for (int i = begin; i < end; i++)
	{
		uint32_t	c = counts[i];

		counts[i] = s;
		s += c;
	}
}

__global__ void
scatter_kernel(const uint32_t *__restrict__ keys_in,
			   const uint32_t *__restrict__ vals_in,	/* NULL: row position */
			   uint32_t *__restrict__ keys_out, uint32_t *__restrict__ vals_out,
			   size_t n, int shift, size_t range,
			   const uint32_t *__restrict__ offsets)
{
	__shared__ uint32_t warp_hist[WARPS][RADIX];
	__shared__ uint32_t run[RADIX];
	const int	lane = threadIdx.x & 31;
	const int	warp = threadIdx.x >> 5;
	const uint32_t lt_mask = (1u << lane) - 1;
	size_t		begin = blockIdx.x * range;
	size_t		end = begin + range < n ? begin + range : n;

	run[threadIdx.x] = offsets[threadIdx.x * gridDim.x + blockIdx.x];
	for (int w = 0; w < WARPS; w++)
		warp_hist[w][threadIdx.x] = 0;
	__syncthreads();

	for (size_t tile = begin; tile < end; tile += TILE)
	{
		uint32_t	k[ITEMS], v[ITEMS], rank[ITEMS];
		int			d[ITEMS];

#pragma unroll
		for (int r = 0; r < ITEMS; r++)
		{
			size_t		idx = tile + (size_t) warp * 32 * ITEMS + r * 32 + lane;
			bool		valid = idx < end;
			uint32_t	peers, base;

			k[r] = valid ? keys_in[idx] : 0;
			v[r] = valid ? (vals_in ? vals_in[idx] : (uint32_t) idx) : 0;
			d[r] = valid ? (int) ((k[r] >> shift) & (RADIX - 1)) : INVALID_DIGIT;
			peers = __match_any_sync(0xffffffffu, d[r]);
			base = valid ? warp_hist[warp][d[r]] : 0;
			__syncwarp();
			if (valid && lane == __ffs(peers) - 1)
				warp_hist[warp][d[r]] = base + __popc(peers);
			__syncwarp();
			rank[r] = base + __popc(peers & lt_mask);
		}
		__syncthreads();

		/* per digit (one thread each): exclusive scan over the warps */
		uint32_t	total = 0;

		for (int w = 0; w < WARPS; w++)
		{
			uint32_t	c = warp_hist[w][threadIdx.x];

			warp_hist[w][threadIdx.x] = total;
			total += c;
		}
		__syncthreads();

#pragma unroll
		for (int r = 0; r < ITEMS; r++)
		{
			if (d[r] != INVALID_DIGIT)
			{
				uint32_t	pos = run[d[r]] + warp_hist[warp][d[r]] + rank[r];

				keys_out[pos] = k[r];
				vals_out[pos] = v[r];
			}
		}
		__syncthreads();
		run[threadIdx.x] += total;
		for (int w = 0; w < WARPS; w++)
			warp_hist[w][threadIdx.x] = 0;
		__syncthreads();
	}
}

/* keys[i] = words[perm[i]] */
__global__ void
gather_kernel(const uint32_t *__restrict__ words, const uint32_t *__restrict__ perm,
			  uint32_t *__restrict__ keys, size_t n)
{
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
		 i += (size_t) gridDim.x * blockDim.x)
		keys[i] = words[perm[i]];
}

__global__ void
iota_kernel(uint32_t *vals, size_t n)
{
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
		 i += (size_t) gridDim.x * blockDim.x)
		vals[i] = (uint32_t) i;
}

/* ---- host side -------------------------------------------------------- */

static int
grid_for_stride_loop(size_t n)
{
	size_t		blocks = (n + BLOCK_THREADS - 1) / BLOCK_THREADS;

	return blocks > 4096 ? 4096 : (int) (blocks ? blocks : 1);
}

size_t
gpusort_job_device_bytes(size_t n, int nwords)
{
	size_t		words = nwords > 1 ? (size_t) nwords * n : 0;

	return (words + 4 * n) * sizeof(uint32_t) +
		(size_t) RADIX * 256 * BLOCKS_PER_SM * sizeof(uint32_t)	/* up to 256 SMs */ +
		DIGIT_PLACES * RADIX * sizeof(uint32_t);
}

void
gpusort_job_destroy(gpusort_job *job)
{
	if (job == NULL)
		return;
	/* errors are ignored here: this runs on cleanup paths */
	if (job->nwords > 1)
		cudaFree(job->d_words);
	for (int i = 0; i < 2; i++)
	{
		cudaFree(job->d_keys[i]);
		cudaFree(job->d_vals[i]);
	}
	cudaFree(job->d_counts);
	cudaFree(job->d_hist);
	(void) cudaGetLastError();
	free(job);
}

static gpusort_status
job_alloc(gpusort_job *job)
{
	size_t		n = job->n;
	int			dev, sms;
	size_t		tiles;

	CUDA_TRY(cudaGetDevice(&dev));
	CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	tiles = (n + TILE - 1) / TILE;
	job->grid = tiles < (size_t) sms * BLOCKS_PER_SM ? (int) tiles : sms * BLOCKS_PER_SM;
	job->tiles_per_block = (tiles + job->grid - 1) / job->grid;

	for (int i = 0; i < 2; i++)
	{
		CUDA_TRY(cudaMalloc(&job->d_keys[i], n * sizeof(uint32_t)));
		CUDA_TRY(cudaMalloc(&job->d_vals[i], n * sizeof(uint32_t)));
	}
	if (job->nwords > 1)
		CUDA_TRY(cudaMalloc(&job->d_words, (size_t) job->nwords * n * sizeof(uint32_t)));
	else
		job->d_words = job->d_keys[1];
	CUDA_TRY(cudaMalloc(&job->d_counts, (size_t) RADIX * job->grid * sizeof(uint32_t)));
	CUDA_TRY(cudaMalloc(&job->d_hist, DIGIT_PLACES * RADIX * sizeof(uint32_t)));
	return GPUSORT_OK;
}

gpusort_status
gpusort_job_create(size_t n, int nwords, gpusort_job **out)
{
	gpusort_job *job;
	gpusort_status st = GPUSORT_OK;

	*out = NULL;
	if (nwords < 1 || n > (size_t) UINT32_MAX)
		return GPUSORT_ERR_INVALID_ARGUMENT;
	job = (gpusort_job *) calloc(1, sizeof(gpusort_job));
	if (job == NULL)
		return GPUSORT_ERR_OUT_OF_MEMORY;
	job->n = n;
	job->nwords = nwords;
	job->cur = -1;
	if (n > 0)
		st = job_alloc(job);
	if (st != GPUSORT_OK)
	{
		gpusort_job_destroy(job);
		return st;
	}
	*out = job;
	return GPUSORT_OK;
}

gpusort_status
gpusort_job_upload(gpusort_job *job, const uint32_t *words)
{
	double		t0 = now_ms();

	if (job->n > 0)
		CUDA_TRY(cudaMemcpy(job->d_words, words,
							(size_t) job->nwords * job->n * sizeof(uint32_t),
							cudaMemcpyHostToDevice));
	job->timing.to_device_ms += now_ms() - t0;
	return GPUSORT_OK;
}

/* Sort (keys, vals) by all digit places of keys that vary; vals NULL means
 * row positions.  Updates job->cur to the buffer holding the result. */
static gpusort_status
sort_word(gpusort_job *job, const uint32_t *keys, const uint32_t *vals)
{
	uint32_t	hist[DIGIT_PLACES][RADIX];
	size_t		n = job->n;
	size_t		range = job->tiles_per_block * TILE;

	CUDA_TRY(cudaMemset(job->d_hist, 0, sizeof(hist)));
	histogram_kernel<<<grid_for_stride_loop(n) < 1024 ? grid_for_stride_loop(n) : 1024,
		BLOCK_THREADS>>>(keys, n, job->d_hist);
	CUDA_TRY_LAUNCH("histogram_kernel");
	CUDA_TRY(cudaMemcpy(hist, job->d_hist, sizeof(hist), cudaMemcpyDeviceToHost));

	for (int p = 0; p < DIGIT_PLACES; p++)
	{
		int			out;
		uint32_t	first = 0;

		/* skip a place where all keys share one digit */
		for (int b = 0; b < RADIX; b++)
			if (hist[p][b])
			{
				first = hist[p][b];
				break;
			}
		if (first == n)
			continue;

		out = job->cur == 0 ? 1 : 0;
		upsweep_kernel<<<job->grid, BLOCK_THREADS>>>(keys, n, p * RADIX_BITS,
													 range, job->d_counts);
		CUDA_TRY_LAUNCH("upsweep_kernel");
		scan_kernel<<<1, SCAN_THREADS>>>(job->d_counts, RADIX * job->grid);
		CUDA_TRY_LAUNCH("scan_kernel");
		scatter_kernel<<<job->grid, BLOCK_THREADS>>>(keys, vals,
													 job->d_keys[out], job->d_vals[out],
													 n, p * RADIX_BITS, range,
													 job->d_counts);
		CUDA_TRY_LAUNCH("scatter_kernel");
		job->cur = out;
		keys = job->d_keys[out];
		vals = job->d_vals[out];
		job->timing.digit_passes++;
	}
	return GPUSORT_OK;
}

gpusort_status
gpusort_job_sort(gpusort_job *job)
{
	size_t		n = job->n;
	double		t0 = now_ms();

	if (n == 0)
		return GPUSORT_OK;
	job->cur = -1;
	job->timing.digit_passes = 0;
	for (int w = job->nwords - 1; w >= 0; w--)
	{
		const uint32_t *words = job->d_words + (size_t) w * n;
		gpusort_status st;

		if (job->cur < 0)
			st = sort_word(job, words, NULL);
		else
		{
			int			c = job->cur;

			gather_kernel<<<grid_for_stride_loop(n), BLOCK_THREADS>>>(words,
																	   job->d_vals[c],
																	   job->d_keys[c], n);
			CUDA_TRY_LAUNCH("gather_kernel");
			st = sort_word(job, job->d_keys[c], job->d_vals[c]);
		}
		if (st != GPUSORT_OK)
			return st;
	}
	if (job->cur < 0)
	{
		/* every key equal: the identity permutation, keys as uploaded */
		if (job->nwords > 1)
			CUDA_TRY(cudaMemcpy(job->d_keys[0], job->d_words, n * sizeof(uint32_t),
								cudaMemcpyDeviceToDevice));
		else
			CUDA_TRY(cudaMemcpy(job->d_keys[0], job->d_keys[1], n * sizeof(uint32_t),
								cudaMemcpyDeviceToDevice));
		iota_kernel<<<grid_for_stride_loop(n), BLOCK_THREADS>>>(job->d_vals[0], n);
		CUDA_TRY_LAUNCH("iota_kernel");
		job->cur = 0;
	}
	CUDA_TRY(cudaDeviceSynchronize());
	job->timing.sort_ms += now_ms() - t0;
	return GPUSORT_OK;
}

gpusort_status
gpusort_job_download(gpusort_job *job, uint32_t *perm, uint32_t *keys)
{
	double		t0 = now_ms();

	if (job->n == 0)
		return GPUSORT_OK;
	if (job->cur < 0)
		return GPUSORT_ERR_INVALID_ARGUMENT;	/* not sorted yet */
	if (perm)
		CUDA_TRY(cudaMemcpy(perm, job->d_vals[job->cur], job->n * sizeof(uint32_t),
							cudaMemcpyDeviceToHost));
	if (keys)
		CUDA_TRY(cudaMemcpy(keys, job->d_keys[job->cur], job->n * sizeof(uint32_t),
							cudaMemcpyDeviceToHost));
	job->timing.from_device_ms += now_ms() - t0;
	return GPUSORT_OK;
}

void
gpusort_job_timing(const gpusort_job *job, gpusort_timing *timing)
{
	*timing = job->timing;
}

gpusort_status
gpusort_sort_pairs_u32(uint32_t *keys, uint32_t *payloads, size_t n,
					   gpusort_timing *timing)
{
	gpusort_job *job = NULL;
	uint32_t   *perm = NULL,
			   *copy = NULL;
	gpusort_status st;

	memset(timing, 0, sizeof(*timing));
	if (n == 0)
		return GPUSORT_OK;
	perm = (uint32_t *) malloc(n * sizeof(uint32_t));
	copy = (uint32_t *) malloc(n * sizeof(uint32_t));
	if (perm == NULL || copy == NULL)
	{
		st = GPUSORT_ERR_OUT_OF_MEMORY;
		goto done;
	}
	if ((st = gpusort_job_create(n, 1, &job)) != GPUSORT_OK ||
		(st = gpusort_job_upload(job, keys)) != GPUSORT_OK ||
		(st = gpusort_job_sort(job)) != GPUSORT_OK ||
		(st = gpusort_job_download(job, perm, keys)) != GPUSORT_OK)
		goto done;
	memcpy(copy, payloads, n * sizeof(uint32_t));
	for (size_t i = 0; i < n; i++)
		payloads[i] = copy[perm[i]];
	gpusort_job_timing(job, timing);
done:
	gpusort_job_destroy(job);
	free(perm);
	free(copy);
	return st;
}
