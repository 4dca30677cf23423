/*
 * sort_job.cu -- the job API of gpusort_kernels.h: rows whose keys are
 * one or more 32-bit words, sorted on the GPU; the result is the sorting
 * permutation.
 *
 * Keys of one word are sorted as 32-bit keys, of two words as 64-bit keys.
 * The radix sort (onesweep.cuh) takes longer keys by stable passes over
 * chunks of two words from the last chunk to the first, each chunk
 * gathered through the permutation so far.  Quicksort (quicksort.cuh) and
 * the bitonic sort (bitonic.cuh) take keys of up to two words.  Under
 * GPUSORT_ALGO_AUTO the job picks one by key width, n and a look at the keys
 * (sort_choice.cuh), whose first read the sort picked then goes on from.
 */
#include <algorithm>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_check.cuh"
#include "bitonic.cuh"
#include "onesweep.cuh"
#include "quicksort.cuh"
#include "row_permute.cuh"
#include "sort_choice.cuh"

#define BLOCK_THREADS	256

struct gpusort_job
{
	size_t		n;
	int			nwords;
	uint32_t   *d_words;		/* nwords * n; aliases d_keys[0] if nwords == 1 */
	void	   *d_keys[2];		/* 64-bit keys if nwords > 1, else 32-bit */
	uint32_t   *d_vals[2];		/* right after d_keys[i], in its allocation */
	void	   *d_temp;
	size_t		temp_bytes;
	void	   *d_bitonic;		/* padded buffers of a bitonic sort beyond one block */
	int			cur;			/* buffer holding the result, -1: not sorted */
	gpusort_timing timing;
	sort_look	look;			/* the auto choice's look at the keys */
};

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Host ranges from this size on are page-locked for the time of their copy
 * (cudaHostRegister): a copy from or to pageable memory goes through the
 * driver's staging buffers at about 8 GB/s, a locked range at about 50 GB/s,
 * and locking costs about 20 ms for 400 MB (measured on the H100 hosts).
 */
#define LOCK_MIN_BYTES ((size_t) 4 << 20)

/*
 * cudaMemcpy between device memory and a large host range, the range
 * page-locked for the copy where the driver allows it (a range whose pages
 * someone else has locked is copied as pageable memory).  Registering is
 * checked like any call (a test may fail it), but its failure only costs
 * the speed: the plain copy follows.
 */
static cudaError_t
copy_locked(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
	void	   *host = kind == cudaMemcpyHostToDevice ? (void *) src : dst;
	size_t		lock_min = gpusort_test_hooks.lock_min_bytes ?
		gpusort_test_hooks.lock_min_bytes : LOCK_MIN_BYTES;
	bool		locked = false;
	cudaError_t err;

	if (bytes >= lock_min)
	{
		cudaError_t reg = injected_fault("cudaHostRegister(host, bytes)");

		if (reg == cudaSuccess)
			reg = cudaHostRegister(host, bytes, cudaHostRegisterDefault);
		locked = reg == cudaSuccess;
		if (!locked)
			(void) cudaGetLastError();	/* not sticky: the plain copy follows */
	}
	err = cudaMemcpy(dst, src, bytes, kind);
	if (locked)
	{
		/* an injected failure still unlocks: the test leaves no pages pinned */
		cudaError_t unlock = injected_fault("cudaHostUnregister(host)");
		cudaError_t done = cudaHostUnregister(host);

		if (unlock == cudaSuccess)
			unlock = done;
		if (err == cudaSuccess)
			err = unlock;
	}
	return err;
}

/* ---- kernels ---------------------------------------------------------- */

/*
 * The sort key of one chunk of key words (one word, or two as a 64-bit key,
 * first the more significant) of row perm[i] (row i if perm is NULL).
 */
template <typename K>
__global__ void
chunk_keys_kernel(const uint32_t *__restrict__ words, size_t n, int first_word,
				  const uint32_t *__restrict__ perm, K *__restrict__ keys)
{
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
		 i += (size_t) gridDim.x * blockDim.x)
	{
		size_t		row = perm ? perm[i] : i;
		K			k = words[(size_t) first_word * n + row];

		if constexpr (sizeof(K) == 8)
			k = (k << 32) | words[(size_t) (first_word + 1) * n + row];
		keys[i] = k;
	}
}

/*
 * Tie bits of the sorted order: bit i % 32 of bits[i / 32] is set where the
 * row at position i has the same nwords words (word-major, n rows each) as
 * the row before.  The rows are perm[i], or i where perm is NULL (words
 * already in sorted order).  Each warp writes whole 32-bit words, so the
 * loop runs over n rounded up to 32 (the stride is a multiple of 32).
 */
__global__ void
tie_bits_kernel(const uint32_t *__restrict__ words, size_t n, int nwords,
				const uint32_t *__restrict__ perm, uint32_t *__restrict__ bits)
{
	size_t		padded = (n + 31) / 32 * 32;

	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < padded;
		 i += (size_t) gridDim.x * blockDim.x)
	{
		bool		same = i > 0 && i < n;

		if (same)
		{
			size_t		a = perm ? perm[i - 1] : i - 1,
						b = perm ? perm[i] : i;

			for (int w = 0; w < nwords && same; w++)
				same = words[(size_t) w * n + a] == words[(size_t) w * n + b];
		}
		unsigned	ballot = __ballot_sync(0xffffffffu, same);

		if ((threadIdx.x & 31) == 0)
			bits[i / 32] = ballot;
	}
}

/* ---- host side -------------------------------------------------------- */

static int
grid_for_stride_loop(size_t n)
{
	size_t		blocks = (n + BLOCK_THREADS - 1) / BLOCK_THREADS;

	return blocks > 4096 ? 4096 : (int) (blocks ? blocks : 1);
}

static int
job_key_bytes(int nwords)
{
	return nwords > 1 ? 8 : 4;
}

size_t
gpusort_job_max_rows(void)
{
	return ONESWEEP_MAX_N;
}

size_t
gpusort_job_device_bytes(size_t n, int nwords)
{
	size_t		words = nwords > 1 ? (size_t) nwords * n * sizeof(uint32_t) : 0;

	return words + 2 * n * (job_key_bytes(nwords) + sizeof(uint32_t)) +
		std::max(onesweep_temp_bytes(n, job_key_bytes(nwords)),
				 quicksort_temp_bytes(n, job_key_bytes(nwords)));
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
		cudaFree(job->d_keys[i]);	/* d_vals[i] lies in the same allocation */
	cudaFree(job->d_temp);
	cudaFree(job->d_bitonic);
	(void) cudaGetLastError();
	free(job);
}

static gpusort_status
job_alloc(gpusort_job *job)
{
	size_t		n = job->n;
	int			kb = job_key_bytes(job->nwords);

	/*
	 * each buffer's payloads right after its keys, so that the radix sort
	 * may pack 32-bit pairs between its passes (onesweep_can_pack)
	 */
	for (int i = 0; i < 2; i++)
	{
		CUDA_TRY(cudaMalloc(&job->d_keys[i], n * (kb + sizeof(uint32_t))));
		job->d_vals[i] = (uint32_t *) ((unsigned char *) job->d_keys[i] + n * kb);
	}
	if (job->nwords > 1)
		CUDA_TRY(cudaMalloc(&job->d_words, (size_t) job->nwords * n * sizeof(uint32_t)));
	else
		job->d_words = (uint32_t *) job->d_keys[0];
	job->temp_bytes = std::max(onesweep_temp_bytes(n, kb), quicksort_temp_bytes(n, kb));
	CUDA_TRY(cudaMalloc(&job->d_temp, job->temp_bytes));
	return GPUSORT_OK;
}

gpusort_status
gpusort_job_create(size_t n, int nwords, gpusort_job **out)
{
	gpusort_job *job;
	gpusort_status st = GPUSORT_OK;

	*out = NULL;
	if (nwords < 1 || n > ONESWEEP_MAX_N)
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
gpusort_job_upload(gpusort_job *job, const uint32_t *const *words)
{
	double		t0 = now_ms();

	if (job->n > 0)
		for (int w = 0; w < job->nwords; w++)
			CUDA_TRY(copy_locked(job->d_words + (size_t) w * job->n, words[w],
								 job->n * sizeof(uint32_t), cudaMemcpyHostToDevice));
	job->timing.to_device_ms += now_ms() - t0;
	return GPUSORT_OK;
}

/*
 * Stable LSD over chunks of key words, least significant chunk first: two
 * words make one 64-bit key, a last odd word a 32-bit key.  Each chunk after
 * the first is gathered through the permutation so far, which becomes its
 * payload.
 */
static gpusort_status
job_radix_sort(gpusort_job *job)
{
	size_t		n = job->n;
	int			last = job->nwords;	/* words [0, last) still to sort by */

	while (last > 0)
	{
		int			width = last >= 2 ? 2 : 1;
		int			first = last - width;
		int			o = job->cur < 0 ? 0 : job->cur;
		const uint32_t *perm = job->cur < 0 ? NULL : job->d_vals[o];
		void	   *keys[2] = {job->d_keys[o], job->d_keys[o ^ 1]};
		uint32_t   *vals[2] = {job->d_vals[o], job->d_vals[o ^ 1]};
		onesweep_stats stats;
		int			r;
		gpusort_status st;

		/* (keys of exactly two words are already composed: job_whole_keys) */
		if (job->nwords > 1 && !(job->nwords == 2 && perm == NULL))
		{
			if (width == 2)
				chunk_keys_kernel<uint64_t><<<grid_for_stride_loop(n), BLOCK_THREADS>>>(
					job->d_words, n, first, perm, (uint64_t *) keys[0]);
			else
				chunk_keys_kernel<uint32_t><<<grid_for_stride_loop(n), BLOCK_THREADS>>>(
					job->d_words, n, first, perm, (uint32_t *) keys[0]);
			CUDA_TRY_LAUNCH("chunk_keys_kernel");
		}
		if (perm == NULL && job->look.counted && job->nwords == 2)
			st = onesweep_sort_counted((uint64_t **) keys, vals, n, true, job->d_temp,
									   job->temp_bytes, 0, &job->look.summary, &r, &stats,
									   job->look.precleared);
		else if (perm == NULL && job->look.counted && job->nwords == 1)
			st = onesweep_sort_counted((uint32_t **) keys, vals, n, true, job->d_temp,
									   job->temp_bytes, 0, &job->look.summary, &r, &stats,
									   job->look.precleared);
		else
			st = onesweep_sort_pairs(keys, vals, n, width * 4, perm == NULL,
									 job->d_temp, job->temp_bytes, 0, &r, &stats);
		if (st != GPUSORT_OK)
			return st;
		job->cur = r == 0 ? o : o ^ 1;
		job->timing.digit_passes += stats.passes;
		last = first;
	}
	return GPUSORT_OK;
}


/* Which algorithm runs, and why (into job->timing.algorithm_reason). */
static gpusort_status
job_choose(gpusort_job *job, gpusort_algorithm requested, gpusort_algorithm *chosen)
{
	if (job->nwords == 2)
		return choose_algorithm((const uint64_t *) job->d_keys[0], job->n, job->d_temp,
								job->nwords, requested, chosen,
								job->timing.algorithm_reason, sizeof(job->timing.algorithm_reason), &job->look);
	return choose_algorithm((const uint32_t *) job->d_keys[0], job->n, job->d_temp,
							job->nwords, requested, chosen,
							job->timing.algorithm_reason, sizeof(job->timing.algorithm_reason), &job->look);
}

/* The key chunk of keys up to two words, in d_keys[0]. */
static gpusort_status
job_whole_keys(gpusort_job *job)
{
	if (job->nwords == 2)
	{
		chunk_keys_kernel<uint64_t><<<grid_for_stride_loop(job->n), BLOCK_THREADS>>>(
			job->d_words, job->n, 0, NULL, (uint64_t *) job->d_keys[0]);
		CUDA_TRY_LAUNCH("chunk_keys_kernel");
	}
	return GPUSORT_OK;
}

gpusort_status
gpusort_job_sort(gpusort_job *job)
{
	return gpusort_job_sort_with(job, GPUSORT_ALGO_AUTO);
}

gpusort_status
gpusort_job_sort_with(gpusort_job *job, gpusort_algorithm requested)
{
	size_t		n = job->n;
	double		t0 = now_ms();
	gpusort_algorithm chosen = GPUSORT_ALGO_RADIX;
	gpusort_status st = GPUSORT_OK;

	job->cur = -1;
	job->timing.digit_passes = 0;
	if (n == 0)
	{
		job->timing.algorithm = requested == GPUSORT_ALGO_AUTO ? GPUSORT_ALGO_RADIX : requested;
		snprintf(job->timing.algorithm_reason, sizeof(job->timing.algorithm_reason), "no rows");
		return GPUSORT_OK;
	}
	if (job->nwords <= 2)
		st = job_whole_keys(job);
	if (st == GPUSORT_OK)
		st = job_choose(job, requested, &chosen);
	if (st != GPUSORT_OK)
		return st;
	job->timing.algorithm = chosen;

	if (chosen == GPUSORT_ALGO_RADIX)
		st = job_radix_sort(job);
	else if (chosen == GPUSORT_ALGO_QUICKSORT)
	{
		quicksort_stats qs;
		int			out = 1;

		if (job->nwords == 2)
			st = quicksort_sort_pairs((uint64_t **) job->d_keys, job->d_vals, n, true,
									  job->d_temp, job->temp_bytes, 0, &qs, &out,
									  job->look.counted ? job->look.summary.range : NULL);
		else
			st = quicksort_sort_pairs((uint32_t **) job->d_keys, job->d_vals, n, true,
									  job->d_temp, job->temp_bytes, 0, &qs, &out,
									  job->look.counted ? job->look.summary.range : NULL);
		job->cur = out;
	}
	else
	{
		int			kb = job_key_bytes(job->nwords);
		size_t		bytes = bitonic_temp_bytes(n, kb);

		if (bytes && job->d_bitonic == NULL)
		{
			CUDA_TRY(cudaMalloc(&job->d_bitonic, bytes));
			if ((st = bitonic_temp_clear(job->d_bitonic, bytes, 0)) != GPUSORT_OK)
				return st;
		}
		if (job->nwords == 2)
			st = bitonic_sort_pairs((uint64_t **) job->d_keys, job->d_vals, n, true,
									job->d_bitonic, 0);
		else
			st = bitonic_sort_pairs((uint32_t **) job->d_keys, job->d_vals, n, true,
									job->d_bitonic, 0);
		job->cur = 1;
	}
	if (st != GPUSORT_OK)
		return st;
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
		CUDA_TRY(copy_locked(perm, job->d_vals[job->cur], job->n * sizeof(uint32_t),
							 cudaMemcpyDeviceToHost));
	if (keys && job->nwords == 1)
		CUDA_TRY(cudaMemcpy(keys, job->d_keys[job->cur], job->n * sizeof(uint32_t),
							cudaMemcpyDeviceToHost));
	else if (keys)
	{
		/* word 0 of the rows in sorted order, into the spare key buffer */
		uint32_t   *spare = (uint32_t *) job->d_keys[job->cur ^ 1];

		permute_fixed_kernel<uint32_t><<<grid_for_stride_loop(job->n), BLOCK_THREADS>>>(
			job->d_words, job->d_vals[job->cur], spare, job->n);
		CUDA_TRY_LAUNCH("permute_fixed_kernel");
		CUDA_TRY(cudaMemcpy(keys, spare, job->n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
	}
	job->timing.from_device_ms += now_ms() - t0;
	return GPUSORT_OK;
}

gpusort_status
gpusort_job_download_ties(gpusort_job *job, uint32_t *bits)
{
	double		t0 = now_ms();
	size_t		nbits = (job->n + 31) / 32;
	/* the spare key buffer (n words at least) holds them on the device */
	uint32_t   *d_bits;

	if (job->n == 0)
		return GPUSORT_OK;
	if (job->cur < 0)
		return GPUSORT_ERR_INVALID_ARGUMENT;	/* not sorted yet */
	d_bits = (uint32_t *) job->d_keys[job->cur ^ 1];
	/* one word: the sorted keys themselves; more: the words through the permutation */
	if (job->nwords == 1)
		tie_bits_kernel<<<grid_for_stride_loop(job->n), BLOCK_THREADS>>>(
			(const uint32_t *) job->d_keys[job->cur], job->n, 1, NULL, d_bits);
	else
		tie_bits_kernel<<<grid_for_stride_loop(job->n), BLOCK_THREADS>>>(
			job->d_words, job->n, job->nwords, job->d_vals[job->cur], d_bits);
	CUDA_TRY_LAUNCH("tie_bits_kernel");
	CUDA_TRY(cudaMemcpy(bits, d_bits, nbits * sizeof(uint32_t), cudaMemcpyDeviceToHost));
	job->timing.from_device_ms += now_ms() - t0;
	return GPUSORT_OK;
}

/* ---- rows into sorted order ------------------------------------------- */

/* Device buffers of one permute call, freed however the call ends. */
struct DeviceBuffers
{
	void	   *p[2] = {};

	template <typename T>
	cudaError_t alloc(int i, T **out, size_t bytes)
	{
		cudaError_t err = injected_fault("cudaMalloc(DeviceBuffers)");

		if (err == cudaSuccess)
			err = cudaMalloc(&p[i], bytes ? bytes : 1);
		*out = (T *) p[i];
		return err;
	}
	~DeviceBuffers()
	{
		for (void *q : p)
			cudaFree(q);
	}
};

/* out[i] = in[perm[i]] for elements of lanes units of T */
template <typename T>
static gpusort_status
permute_fixed(gpusort_job *job, const T *in, T *out, size_t lanes, size_t m)
{
	DeviceBuffers buf;
	T		   *d_in,
			   *d_out;
	double		t0 = now_ms(),
				t1;

	CUDA_TRY(buf.alloc(0, &d_in, job->n * lanes * sizeof(T)));
	CUDA_TRY(buf.alloc(1, &d_out, m * lanes * sizeof(T)));
	CUDA_TRY(copy_locked(d_in, in, job->n * lanes * sizeof(T), cudaMemcpyHostToDevice));
	t1 = now_ms();
	job->timing.to_device_ms += t1 - t0;
	if (lanes == 1)
		permute_fixed_kernel<T><<<grid_for_stride_loop(m), BLOCK_THREADS>>>(
			d_in, job->d_vals[job->cur], d_out, m);
	else
		permute_lanes_kernel<T><<<grid_for_stride_loop(m * lanes), BLOCK_THREADS>>>(
			d_in, job->d_vals[job->cur], d_out, m, (unsigned) lanes);
	CUDA_TRY_LAUNCH("permute_fixed_kernel");
	CUDA_TRY(copy_locked(out, d_out, m * lanes * sizeof(T), cudaMemcpyDeviceToHost));
	job->timing.from_device_ms += now_ms() - t1;
	return GPUSORT_OK;
}

gpusort_status
gpusort_job_permute_fixed(gpusort_job *job, const void *in, void *out, size_t elem_size,
						  size_t m)
{
	if (job->cur < 0 || m > job->n)
		return job->n == 0 ? GPUSORT_OK : GPUSORT_ERR_INVALID_ARGUMENT;
	if (elem_size == 0 || elem_size > GPUSORT_PERMUTE_MAX_ELEM)
		return GPUSORT_ERR_INVALID_ARGUMENT;
	if (m == 0)
		return GPUSORT_OK;
	/* the widest unit that divides the element */
	if (elem_size % 8 == 0)
		return permute_fixed(job, (const uint64_t *) in, (uint64_t *) out, elem_size / 8, m);
	if (elem_size % 4 == 0)
		return permute_fixed(job, (const uint32_t *) in, (uint32_t *) out, elem_size / 4, m);
	if (elem_size % 2 == 0)
		return permute_fixed(job, (const uint16_t *) in, (uint16_t *) out, elem_size / 2, m);
	return permute_fixed(job, (const uint8_t *) in, (uint8_t *) out, elem_size, m);
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
		(st = gpusort_job_upload(job, (const uint32_t *const *) &keys)) != GPUSORT_OK ||
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
