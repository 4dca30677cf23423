/*
 * auto_config.h -- the thresholds of gpusort.algorithm = auto
 * (sort_choice.cuh), in one place.  Plain C: the kernel test checks the
 * choice at them.
 */
#ifndef GPUSORT_AUTO_CONFIG_H
#define GPUSORT_AUTO_CONFIG_H

/*
 * gpusort.algorithm = auto, measured on an H100 (doc/algorithms.md,
 * "How auto chooses"; bench/results/auto_*-h100.txt): up to GPUSORT_AUTO_BITONIC_MAX_N_32/_64 rows (32-/64-bit
 * keys) the bitonic network, without a look; above that a look at the keys -- the radix sort's own first
 * read (digit counts of every byte, key range) and, only where every byte
 * takes at most quicksort's limit of values, the distinct values of a
 * sample of GPUSORT_AUTO_SAMPLE keys -- picks quicksort for at most that
 * many distinct keys (its multi-pivot round sorts them in one pass);
 * radix otherwise, going on from that first read.  The limit:
 * GPUSORT_AUTO_QUICKSORT_MAX_DISTINCT_32/_64 (32-/64-bit keys).  From
 * GPUSORT_AUTO_SAMPLE_FIRST_MIN_N_64 64-bit keys the sample comes first,
 * alone (their first read costs more than quicksort's range read by more
 * than the sample's round trip).  64-bit keys whose even sample is in
 * order (either way), GPUSORT_AUTO_ORDERED_QUICKSORT_MIN_N_64 ..
 * _MAX_N_64 of them, go to quicksort as well: there its split rounds
 * write long runs and beat the radix sort's eight passes -- unless the
 * first read (taken after an ascending sample) finds every key <= the
 * next, which no sort needs to move (radix takes no pass).  Up to
 * GPUSORT_AUTO_BITONIC_LOOKED_MAX_N_64 64-bit keys the look is quicksort's
 * range read and sample alone, and keys that the radix sort would take in
 * at least GPUSORT_AUTO_BITONIC_LOOKED_MIN_PASSES passes of key - min go to
 * the bitonic network (one launch there).
 */
#define GPUSORT_AUTO_BITONIC_MAX_N_32			32768
#define GPUSORT_AUTO_BITONIC_MAX_N_64			16384
#define GPUSORT_AUTO_BITONIC_LOOKED_MAX_N_64	131072
#define GPUSORT_AUTO_BITONIC_LOOKED_MIN_PASSES	5
#define GPUSORT_AUTO_SAMPLE						256
#define GPUSORT_AUTO_QUICKSORT_MAX_DISTINCT_32	16
#define GPUSORT_AUTO_QUICKSORT_MAX_DISTINCT_64	32
#define GPUSORT_AUTO_SAMPLE_FIRST_MIN_N_64		32000000
#define GPUSORT_AUTO_ORDERED_QUICKSORT_MIN_N_64	80000000
#define GPUSORT_AUTO_ORDERED_QUICKSORT_MAX_N_64	210000000

#endif							/* GPUSORT_AUTO_CONFIG_H */
