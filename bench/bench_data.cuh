/*
 * bench_data.cuh -- the key distributions of test/test_data.h, made on the
 * device for 32- and 64-bit keys (generating 10^9 keys on one CPU core
 * would take longer than sorting them all many times over).  Every key is a
 * function of (seed, index), so one kernel fills any size.
 *
 * uniform, sorted, reverse (non-decreasing random keys over the whole
 * range, ascending or descending), zero (one value), bucket and staggered
 * (Cederman and Tsigas, p = 128), gaussian (mean of four uniform keys),
 * entropy-and2/-and4 (AND of 2 or 4 uniform keys) and banded20 (a random
 * base plus 20 random low bits: 20 significant bits), few16 and few4 (one
 * of 16 or 4 random values).
 */
#ifndef GPUSORT_BENCH_DATA_CUH
#define GPUSORT_BENCH_DATA_CUH

#include <stdint.h>

#include "test_data.h"			/* the distribution enum and names */

__device__ __forceinline__ uint64_t
bench_mix(uint64_t seed, uint64_t i, uint64_t k)
{
	/* splitmix64 of (seed, i, k) */
	uint64_t	z = seed + i * 0x9e3779b97f4a7c15ull + k * 0xd1b54a32d192ed03ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

template <typename K>
__device__ __forceinline__ K
bench_rand(uint64_t seed, uint64_t i, uint64_t k)
{
	return (K) (bench_mix(seed, i, k) >> (64 - 8 * sizeof(K)));
}

template <typename K>
__device__ K
bench_key(int dist, uint64_t i, uint64_t n, uint64_t seed)
{
	constexpr int BITS = 8 * sizeof(K);
	const uint64_t p = 128;
	/* width of 1/p of the key range, as 2^BITS / p */
	const K		width = (K) (((K) 1 << (BITS - 1)) / (p / 2));

	switch (dist)
	{
		case DIST_UNIFORM:
			return bench_rand<K>(seed, i, 0);
		case DIST_SORTED:
		case DIST_REVERSE:
			{
				K			step = (K) (~(K) 0 / (K) n);
				uint64_t	at = dist == DIST_SORTED ? i : n - 1 - i;

				return (K) (at * step + (step > 1 ? bench_rand<K>(seed, i, 0) % step : 0));
			}
		case DIST_ZERO:
			return bench_rand<K>(seed, 0, 1);
		case DIST_BUCKET:
			{
				uint64_t	block = n / p + 1;
				uint64_t	section = block / p + 1;
				uint64_t	j = ((i % block) / section) % p;

				return (K) (j * width + bench_rand<K>(seed, i, 0) % width);
			}
		case DIST_GAUSSIAN:
			{
				K			s = 0;

				for (int k = 0; k < 4; k++)
					s += bench_rand<K>(seed, i, k) / 4;
				return s;
			}
		case DIST_STAGGERED:
			{
				uint64_t	block = n / p + 1;
				uint64_t	b = i / block;
				uint64_t	lo = b < p / 2 ? 2 * b + 1 : 2 * b - p;

				return (K) ((lo % p) * width + bench_rand<K>(seed, i, 0) % width);
			}
		case DIST_ENTROPY_AND2:
			return bench_rand<K>(seed, i, 0) & bench_rand<K>(seed, i, 1);
		case DIST_ENTROPY_AND4:
			return bench_rand<K>(seed, i, 0) & bench_rand<K>(seed, i, 1) &
				bench_rand<K>(seed, i, 2) & bench_rand<K>(seed, i, 3);
		case DIST_BANDED20:
			{
				K			base = bench_rand<K>(seed, 0, 2) >> 1;

				base &= ~(K) 0xfffff;
				return base + (bench_rand<K>(seed, i, 0) & 0xfffff);
			}
		case DIST_FEW16:
			/* one of 16 random values */
			return bench_rand<K>(seed, bench_rand<uint32_t>(seed, i, 0) >> 28, 5);
		case DIST_FEW4:
			/* one of 4 random values */
			return bench_rand<K>(seed, bench_rand<uint32_t>(seed, i, 0) >> 30, 5);
	}
	return 0;
}

template <typename K>
__global__ void
bench_fill_kernel(K *keys, size_t n, int dist, uint64_t seed)
{
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
		 i += (size_t) gridDim.x * blockDim.x)
		keys[i] = bench_key<K>(dist, i, n, seed);
}

#endif
