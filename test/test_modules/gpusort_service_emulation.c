/*
 * gpusort_service_emulation.c -- a test-only PostgreSQL module that gives a
 * loaded gpusort's GPU service two emulated devices, through its service
 * hook (src/phase_hook.h), so that the service's queue, cancels and
 * failures are tested without a GPU.  Used by test/t/009_gpu_service.pl;
 * never installed.  It must follow gpusort in shared_preload_libraries:
 *
 *   shared_preload_libraries = 'gpusort,.../gpusort_service_emulation.so'
 *
 * An emulated job sorts on the CPU, stably, writes the tie bits, and puts
 * the columns of a reorder in order (gathers them by the permutation; the
 * file gpusort_service_permuted in the data directory then tells a test
 * that it did).  Files
 * in the data directory steer the jobs, so that a test reaches each state
 * on any machine, idle or busy:
 *   gpusort_service_hold   while it exists, a job waits after it has been
 *                          taken (RUNNING), answering a terminate
 *   gpusort_service_fail   a job fails (as a CUDA error would)
 */
#include "postgres.h"

#include <sys/stat.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/timestamp.h"

#include "phase_hook.h"

PG_MODULE_MAGIC;

/* the longest a held job waits before it goes on anyway */
#define HOLD_LIMIT_MS 60000

/* the gpusort_status values it returns (kernels/gpusort_kernels.h) */
#define EMULATED_OK 0
#define EMULATED_CUDA_ERROR 4

void		_PG_init(void);

typedef struct SortArg
{
	const uint32 *const *words;
	int			nwords;
} SortArg;

static int
row_cmp(const void *a, const void *b, void *arg)
{
	const SortArg *s = (const SortArg *) arg;
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	for (int w = 0; w < s->nwords; w++)
		if (s->words[w][x] != s->words[w][y])
			return s->words[w][x] < s->words[w][y] ? -1 : 1;
	return x < y ? -1 : x > y ? 1 : 0;	/* stable */
}

static bool
file_exists(const char *name)
{
	struct stat st;
	char		path[MAXPGPATH];

	snprintf(path, sizeof(path), "%s/%s", DataDir, name);
	return stat(path, &st) == 0;
}

static int
run_job(int device, const uint32 *const *words, int nwords, Size n, uint32 *perm,
		uint32 *tie_bits, bool *ties_done)
{
	SortArg		arg = {words, nwords};
	TimestampTz start = GetCurrentTimestamp();

	while (file_exists("gpusort_service_hold") &&
		   !TimestampDifferenceExceeds(start, GetCurrentTimestamp(), HOLD_LIMIT_MS))
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	if (file_exists("gpusort_service_fail"))
		return EMULATED_CUDA_ERROR;

	for (Size i = 0; i < n; i++)
		perm[i] = (uint32) i;
	qsort_arg(perm, n, sizeof(uint32), row_cmp, &arg);
	*ties_done = false;
	if (tie_bits != NULL)
	{
		memset(tie_bits, 0, (n + 31) / 32 * sizeof(uint32));
		for (Size i = 1; i < n; i++)
		{
			bool		tie = true;

			for (int w = 0; w < nwords && tie; w++)
				tie = words[w][perm[i]] == words[w][perm[i - 1]];
			if (tie)
				tie_bits[i / 32] |= (uint32) 1 << (i % 32);
		}
		*ties_done = true;
	}
	return EMULATED_OK;
}

static int
permute(const void *in, void *out, Size elem_size, const uint32 *perm, Size m)
{
	char		path[MAXPGPATH];
	FILE	   *f;

	for (Size i = 0; i < m; i++)
		memcpy((char *) out + i * elem_size, (const char *) in + (Size) perm[i] * elem_size,
			   elem_size);
	snprintf(path, sizeof(path), "%s/gpusort_service_permuted", DataDir);
	f = fopen(path, "w");
	if (f != NULL)
		fclose(f);
	return EMULATED_OK;
}

static const gpusort_service_emulation emulation = {
	.devices = 2,
	.memory = (Size) 1 << 30,
	.run_job = run_job,
	.permute = permute
};

void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errmsg("gpusort_service_emulation must be in shared_preload_libraries, after gpusort")));
	gpusort_service_emulation_hook = &emulation;
}
