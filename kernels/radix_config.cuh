/*
 * radix_config.cuh -- every tuning constant of the radix sort, in one place.
 *
 * A onesweep policy fixes the thread block (THREADS), the keys each thread
 * ranks (ITEMS; a tile is THREADS * ITEMS keys), the digit width (BITS) and
 * the blocks per multiprocessor the register budget aims at (MIN_BLOCKS),
 * whether a tile publishes its digit counts before ranking (a shared-
 * memory histogram first; EARLY_COUNTS) or after, and how a warp finds the
 * lanes whose keys share its digit (RANK: one match.any, BITS ballots, or
 * an atomic OR of the lane bits into a per-warp shared word per digit),
 * and whether a full tile's payloads are copied into shared memory
 * asynchronously (cp.async) while its keys are ranked (ASYNC_VALS; costs
 * TILE * 4 bytes of shared memory more), and, with RANK_ATOMIC_OR, whether
 * a digit's match word is cleared by its leader lane alone instead of by
 * every lane of the digit (LEADER_CLEARS; 1-2% faster 10-bit passes, no
 * gain on 8-bit ones: bench/results/radix_variants-h100.txt), and, with
 * EARLY_COUNTS, whether the early counts are kept per warp and made each
 * warp's first place of a digit before the ranking (WARP_STARTS_FIRST:
 * CUB's order), so that the ranking gives a key its place in the tile with
 * no per-key read of its warp's start afterwards.
 * Policies are chosen per key width and digit width; the figures were
 * measured on an H100 (sm_90, bench/results/radix-*.md).  Other
 * architectures use the same policies until they are measured: add a row to
 * onesweep_policies_for() when they are.
 */
#ifndef GPUSORT_RADIX_CONFIG_CUH
#define GPUSORT_RADIX_CONFIG_CUH

#include <stdint.h>

#include "warp_primitives.cuh"	/* the RANK_* methods */

/*
 * Keys a thread of the records' passes ranks (onesweep_policies_u32's
 * records policy, 1,024 threads): 24, a tile of 24,576 keys, which fits
 * only because those passes stage nothing but packed pairs (PAIRS_ONLY;
 * 200 KB of shared memory against 216 KB for the 1,024 x 20 wide tile).
 * Banded 20-bit keys at 100M as the extension sorts them 3.4% faster than
 * on the wide tile, 1.3% slower at 10M (bench/results/radix_records-h100.txt,
 * section 11).
 */
#define RADIX_RECORDS_ITEMS 24

/* Earlier tiles' status words a look-back step reads at once. */
#define RADIX_LOOKBACK_WINDOW	8

template <int THREADS_, int ITEMS_, int BITS_, int MIN_BLOCKS_ = 1, bool EARLY_COUNTS_ = false,
		  int RANK_ = RANK_BALLOTS, bool ASYNC_VALS_ = false, bool LEADER_CLEARS_ = false,
		  bool WARP_STARTS_FIRST_ = false, bool PAIRS_ONLY_ = false>
struct onesweep_policy
{
	/*
	 * only ever stages packed 64-bit pairs (the records' passes): its keys'
	 * region need hold only the warp counters, the pairs spanning both
	 * regions (onesweep_keys_bytes), so that a larger tile fits
	 */
	static constexpr bool PAIRS_ONLY = PAIRS_ONLY_;
	/* early counts per warp, made the warps' starts before the ranking */
	static constexpr bool WARP_STARTS_FIRST = WARP_STARTS_FIRST_;
	static constexpr bool LEADER_CLEARS = LEADER_CLEARS_;	/* match word cleared by the leader */
	static constexpr int RANK = RANK_;
	static constexpr bool ASYNC_VALS = ASYNC_VALS_;	/* payloads staged by cp.async */
	static constexpr bool EARLY_COUNTS = EARLY_COUNTS_;	/* publish counts before ranking */
	static constexpr int MIN_BLOCKS = MIN_BLOCKS_;	/* resident blocks per SM to aim for */
	static constexpr int THREADS = THREADS_;
	static constexpr int ITEMS = ITEMS_;
	static constexpr int BITS = BITS_;
	static constexpr int BINS = 1 << BITS_;
	static constexpr int WARPS = THREADS_ / 32;
	static constexpr int TILE = THREADS_ * ITEMS_;
	static constexpr int BINS_PER_THREAD = (BINS + THREADS_ - 1) / THREADS_;
	/*
	 * a thread a digit (and 16-bit warp counters): the tile's counts and
	 * warp starts taken a pair of digits a thread (tile_pair_scan)
	 */
	static constexpr bool PAIR_SCAN = THREADS_ == BINS && BINS % 64 == 0 &&
		!WARP_STARTS_FIRST_;

	static_assert(TILE < 65536, "16-bit per-warp counters");
	static_assert(THREADS_ % 32 == 0 && THREADS_ <= 1024, "whole warps");
	static_assert(!WARP_STARTS_FIRST_ || EARLY_COUNTS_, "warp starts first are early counts");
};

/*
 * The policies of one key width: narrow (8-bit) and wide (up to 10-bit)
 * digits, and the 8-bit passes of 32-bit keys whose pairs are packed in
 * 64-bit words (onesweep_io).
 */
template <typename NARROW, typename WIDE, typename PACKED = NARROW, bool WIDE_PACKS_ = false,
		  typename RECORDS = WIDE>
struct onesweep_policies
{
	typedef NARROW narrow;
	typedef WIDE wide;
	typedef PACKED packed;
	typedef RECORDS records;	/* the records' two passes (onesweep_records): as wide, or a larger tile */
	static constexpr bool WIDE_PACKS = WIDE_PACKS_;	/* 10-bit passes may pack too */
};

/*
 * The tiles, by name.  Each policy is a struct that derives from
 * radix_tile and sets the fields it changes; tile_policy<S> is the
 * onesweep_policy they make.
 */
struct radix_tile
{
	static constexpr int THREADS = 256;
	static constexpr int ITEMS = 16;
	static constexpr int BITS = 8;
	static constexpr int MIN_BLOCKS = 1;
	static constexpr bool EARLY_COUNTS = false;
	static constexpr int RANK = RANK_BALLOTS;
	static constexpr bool ASYNC_VALS = false;
	static constexpr bool LEADER_CLEARS = false;
	static constexpr bool WARP_STARTS_FIRST = false;
	static constexpr bool PAIRS_ONLY = false;
};

template <typename S>
using tile_policy = onesweep_policy<S::THREADS, S::ITEMS, S::BITS, S::MIN_BLOCKS,
									  S::EARLY_COUNTS, S::RANK, S::ASYNC_VALS,
									  S::LEADER_CLEARS, S::WARP_STARTS_FIRST, S::PAIRS_ONLY>;

/*
 * sm_90, measured (bench/results/radix_tune-h100.txt; the 32-bit wide tile
 * of 1024 x 20 keys in bench/results/radix_place-h100.txt: 5% faster banded
 * 20-bit keys than 1024 x 16; the 32-bit narrow policy's warp starts
 * first and leader's clear in bench/results/radix_warp_starts-h100.txt:
 * 2-7% faster 32-bit sorts from 1M to 10M keys and on few distinct keys,
 * level at 100M uniform, 1% slower for 64-bit keys, which keep the block's
 * early counts); the default for every architecture whose
 * blocks may have that much shared memory (up to 111 KB narrow, 168 KB
 * wide 32-bit, 216 KB wide 64-bit).  Devices whose blocks have less for
 * 32-bit keys but 136 KB (an A100's 163 KB) take the mid policies: the
 * same but the 1024 x 16 wide tile.
 */
/*
 * The packed 8-bit passes of 32-bit keys: 256 x 32, two blocks a SM, 128
 * registers and no spill in any of the packed passes
 * (bench/results/radix_packed-h100.txt: 384 x 24 packed 5% slower, 256 x
 * 36 and staged payloads within 1%); the 10-bit passes pack on their own
 * tile (the payloads read again, onesweep_holds_payloads: banded 32-bit
 * keys at 100M 2.47 against 2.61 ms apart; 1024 x 16 2.57-2.58).  The mid
 * policies pack with their narrow policy, the compact ones too (not
 * measured).
 */
/* Full tier (sm_90 and every device whose blocks get as much shared memory). */
/* warp starts first, leader clears: 2-7% faster 1M-10M (radix_warp_starts-h100.txt) */
struct full_u32_narrow : radix_tile
{
	static constexpr int THREADS = 384, ITEMS = 24, BITS = 8, MIN_BLOCKS = 2;
	static constexpr bool EARLY_COUNTS = true, WARP_STARTS_FIRST = true;
	static constexpr int RANK = RANK_ATOMIC_OR;
	static constexpr bool ASYNC_VALS = true, LEADER_CLEARS = true;
};
/* 1024 x 20: 5% faster banded 20-bit keys than 1024 x 16 (radix_place-h100.txt) */
struct full_u32_wide : radix_tile
{
	static constexpr int THREADS = 1024, ITEMS = 20, BITS = 10;
	static constexpr int RANK = RANK_ATOMIC_OR;
	static constexpr bool LEADER_CLEARS = true;
};
/* 256 x 32: 384 x 24 packed 5% slower (radix_packed-h100.txt) */
struct full_u32_packed : radix_tile
{
	static constexpr int THREADS = 256, ITEMS = 32, BITS = 8, MIN_BLOCKS = 2;
	static constexpr bool EARLY_COUNTS = true, WARP_STARTS_FIRST = true;
	static constexpr int RANK = RANK_ATOMIC_OR;
	static constexpr bool LEADER_CLEARS = true;
};
/* 1024 x 24: 3.4% faster banded keys at 100M (radix_records-h100.txt, section 11) */
struct full_u32_records : full_u32_wide
{
	static constexpr int ITEMS = RADIX_RECORDS_ITEMS;
	static constexpr bool PAIRS_ONLY = true;
};
struct full_u64_narrow : radix_tile
{
	static constexpr int THREADS = 256, ITEMS = 24, BITS = 8, MIN_BLOCKS = 2;
	static constexpr bool EARLY_COUNTS = true;
	static constexpr int RANK = RANK_ATOMIC_OR;
	static constexpr bool ASYNC_VALS = true;
};
struct full_u64_wide : radix_tile
{
	static constexpr int THREADS = 512, ITEMS = 24, BITS = 10;
	static constexpr int RANK = RANK_ATOMIC_OR;
	static constexpr bool ASYNC_VALS = true, LEADER_CLEARS = true;
};

/* Mid tier (A100-class: 136 to 167 KB a block): the full tier's but this wide tile. */
struct mid_u32_wide : full_u32_wide
{
	static constexpr int ITEMS = 16;
};

/* Compact tier (48 KB a block: sm_75-class devices). */
struct compact_u32_narrow : radix_tile
{
	static constexpr int THREADS = 256, ITEMS = 16, BITS = 8;
};
struct compact_u32_wide : compact_u32_narrow
{
	static constexpr int BITS = 10;
};
struct compact_u64_narrow : radix_tile
{
	static constexpr int THREADS = 256, ITEMS = 8, BITS = 8;
};
struct compact_u64_wide : compact_u64_narrow
{
	static constexpr int BITS = 10;
};

/* 10-bit passes pack too (onesweep_policies::WIDE_PACKS) */
#define RADIX_WIDE_PACKS true

typedef onesweep_policies<tile_policy<full_u32_narrow>, tile_policy<full_u32_wide>,
						  tile_policy<full_u32_packed>, RADIX_WIDE_PACKS,
						  tile_policy<full_u32_records> >
			onesweep_policies_u32;
typedef onesweep_policies<tile_policy<full_u32_narrow>, tile_policy<mid_u32_wide>,
						  tile_policy<full_u32_narrow>, RADIX_WIDE_PACKS>
			onesweep_policies_mid_u32;
typedef onesweep_policies<tile_policy<full_u64_narrow>, tile_policy<full_u64_wide> >
			onesweep_policies_u64;
typedef onesweep_policies_u64 onesweep_policies_mid_u64;	/* no mid tier measured for 64-bit keys */
typedef onesweep_policies<tile_policy<compact_u32_narrow>, tile_policy<compact_u32_wide> >
			onesweep_policies_compact_u32;
typedef onesweep_policies<tile_policy<compact_u64_narrow>, tile_policy<compact_u64_wide> >
			onesweep_policies_compact_u64;

/*
 * A place is skewed for packing (onesweep_can_pack) where its commonest
 * digit holds more than 1/RADIX_PACK_SKEW of the keys: uniform keys' top
 * share is 1/256, gaussian keys' (the sum of four) about 1/90, keys ANDed
 * from four random words' 0.6, four distinct keys' at least 1/4.
 */
#define RADIX_PACK_SKEW			32

/*
 * Fewest keys a sort carries as records between its passes
 * (onesweep_records: 32-bit keys, row positions, a two-pass plan over
 * key - min).  Measured, banded 20-bit keys on an H100
 * (bench/results/radix_records-h100.txt): records 5-11 us slower from
 * 2^16 to 2^21 keys (their two small kernels), 2% faster at 2^22, 7% at
 * 100M.
 */
#define RADIX_RECORDS_MIN_N		((size_t) 1 << 22)

/* Widest digit the wide policy sorts. */
#define RADIX_WIDE_BITS			10
#define RADIX_NARROW_BITS		8

/*
 * Cost model of the pass plan, in units of one 8-bit onesweep pass over the
 * same keys: a wide-digit pass and the extra histogram read that a plan
 * relative to the minimum key needs (a plan of at most two passes whose
 * counts follow from the first read and its first pass reads nothing more,
 * onesweep_counts_follow, but is costed the same: no plan choice turns on
 * it, since a plan over key - min wins only where it saves a pass).  The
 * plan with the lowest cost wins.
 */
#define RADIX_COST_WIDE_PASS	1.35
#define RADIX_COST_EXTRA_HIST	0.22

/* Histogram kernel: threads per block and blocks per multiprocessor (measured
 * with bench/radix_tune's histogram lines, bench/results/radix_tune-h100.txt). */
#define RADIX_HIST_THREADS		512
#define RADIX_HIST_BLOCKS_PER_SM 6		/* grid: 6 per SM (4 resident on an H100) */
/* 16-byte vectors of keys a thread of the histogram read loads at once */
#define RADIX_HIST_UNROLL_32	4
#define RADIX_HIST_UNROLL_64	2
/*
 * The histogram read's one-value vote (a warp whose keys in flight are all
 * one value counts them with one add a place): never, every round, or
 * adaptive -- while the warp's last vote found one value, and every
 * RADIX_HIST_VOTE_RETRY-th round.  Measured (bench/results/radix_vote-h100.txt,
 * radix_hist_places-h100.txt): 64-bit keys' reads are 7% faster adaptive
 * than voting every round (100M: 0.382 against 0.411 ms; 13% when keys
 * were counted key by key); 32-bit keys' were level until the read
 * stopped looking for descents once it had seen one, and are now 2%
 * faster adaptive on banded keys (100M: 156-158 against 158-164 us under
 * ncu; bench/results/radix_records-h100.txt, section 12), level on the
 * others.
 */
#define RADIX_HIST_VOTE_NEVER		0
#define RADIX_HIST_VOTE_ALWAYS		1
#define RADIX_HIST_VOTE_ADAPTIVE	2
#define RADIX_HIST_VOTE_RETRY		8
#define RADIX_HIST_VOTE_32			RADIX_HIST_VOTE_ADAPTIVE
#define RADIX_HIST_VOTE_64			RADIX_HIST_VOTE_ADAPTIVE
/*
 * A first read of fewer keys than this counts lazily: a thread counts once
 * its keys descend, and a block counts what it passed over at its end, so
 * that keys in order cost about a range read (histogram_kernel).  Up to
 * here the keys a block reads again are in the L2 cache, and where the
 * counts stay partial (keys in order but for descents that some blocks
 * did not see) the sort's plan over key - min reads the keys once more,
 * with no second wait (onesweep_plan_from_look).
 */
#define RADIX_LAZY_COUNT_MAX_N		((size_t) 1 << 24)

#endif
