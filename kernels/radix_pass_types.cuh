/*
 * radix_pass_types.cuh -- what a onesweep pass is given: tile status words,
 * how it holds its pairs (onesweep_io), and the records between two passes.
 */
#ifndef GPUSORT_RADIX_PASS_TYPES_CUH
#define GPUSORT_RADIX_PASS_TYPES_CUH

#include <stddef.h>
#include <stdint.h>

/* Tile status words: two flag bits over a 30-bit count. */
#define TILE_STATUS_AGGREGATE	0x40000000u
#define TILE_STATUS_INCLUSIVE	0x80000000u
#define TILE_STATUS_VALUE		0x3fffffffu

/*
 * How a onesweep pass holds its pairs in memory: keys and payloads in
 * arrays apart, or (32-bit keys) each pair packed in one 64-bit word,
 * key << 32 | payload, so that a pass reads and writes one 8-byte stream
 * (one load, one shared store and one scatter a pair where there were two,
 * and digit runs twice as long in each store).  A packed sort's first pass
 * packs, its middle ones stay packed, its last one unpacks.
 */
enum onesweep_io
{
	ONESWEEP_IO_APART = 0,		/* keys and payloads apart, in and out */
	ONESWEEP_IO_PACK = 1,		/* apart in, packed out */
	ONESWEEP_IO_PACKED = 2,		/* packed in and out */
	ONESWEEP_IO_UNPACK = 3,		/* packed in, apart out */
	ONESWEEP_IO_TO_RECORDS = 4,	/* keys in (payloads the row positions), records out */
	ONESWEEP_IO_FROM_RECORDS = 5	/* records in, keys and row positions out */
};

/*
 * Records: the two passes of a plan over key - min whose payloads are the
 * row positions (32-bit keys, shift[1] == bits[0]) carry one 32-bit word
 * a pair between them instead of a packed 64-bit pair.  After the first
 * pass the pairs lie grouped by their low digit l (low_bits wide) and, within a
 * group, in row order, so a word need not hold l, nor the high bits of
 * the row: the first pass writes
 *     ((key - kmin) >> low_bits) << idx_bits | row - epoch * epoch_tiles * TILE
 * where epoch = tile / epoch_tiles (epoch_tiles tiles of TILE rows fit
 * idx_bits = 32 - the second digit's bits), and the tiles that begin an
 * epoch write where the epoch's rows of each group begin:
 * table[l << e2_log | epoch], nondecreasing in that order (the entries of
 * epochs past the last hold the group's end), so that the place p of a
 * word gives l and epoch as the last entry <= p.  tile_range holds, for
 * each tile of the second pass, the first and last entry its places need
 * (records_range_kernel); that pass copies them into shared memory (up to
 * BINS of them; more are searched where they lie) and writes each pair's
 * key and row position.  Where the passes would share one look-back region
 * (onesweep_region_bytes), the second has its own, next_region, which each
 * tile of the first clears its part of (its tile's status words; tile 0 the
 * tile counter too), so that no memset runs between the passes.
 */
struct onesweep_records
{
	uint32_t   *table;			/* BINS << e2_log entries */
	const uint32_t *tile_range;	/* 2 a tile of the second pass */
	uint32_t	epoch_tiles;	/* first-pass tiles an epoch */
	int			e2_log;			/* log2 of the table's entries a group */
	int			idx_bits;		/* low bits of a record holding the row in its epoch */
	int			low_bits;		/* the first digit's width */
	uint32_t   *next_region;	/* the second pass's look-back region, which the first clears (or NULL) */
};

/* Longest input the 30-bit status counts allow. */
#define ONESWEEP_MAX_N			((size_t) 1 << 30)

#endif
