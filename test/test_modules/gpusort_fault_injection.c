/*
 * gpusort_fault_injection.c -- a test-only PostgreSQL module that makes the
 * CUDA calls of a loaded gpusort fail on demand, through the kernel
 * library's test hooks (kernels/gpusort_test_hooks.h).  Used by
 * test/t/005_faults.pl; never installed.
 *
 *   LOAD '.../gpusort_fault_injection.so';   -- after gpusort is loaded
 *   SELECT gpusort_fault_inject(n, code);     -- the n-th checked CUDA call
 *                                             -- from now fails with code;
 *                                             -- every copy page-locks its
 *                                             -- host range (so that small
 *                                             -- sorts reach those calls)
 *   SELECT gpusort_fault_calls();             -- checked calls seen since
 *   SELECT gpusort_fault_last();              -- the call that was failed
 *   SELECT gpusort_fault_disorder(true);      -- every sort by strxfrm keys
 *                                             -- from now has its first and
 *                                             -- last sorted rows swapped
 *                                             -- before its order check, as
 *                                             -- a strxfrm at odds with
 *                                             -- strcoll would (false: off)
 *   SELECT gpusort_fault_write(n, errno);     -- the n-th write to a run's
 *                                             -- temporary file from now
 *                                             -- fails with errno (0: none)
 *   SELECT gpusort_fault_writes();            -- run writes seen since
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "gpusort_test_hooks.h"
#include "phase_hook.h"

PG_MODULE_MAGIC;

static int	calls;				/* checked CUDA calls since the last inject */
static int	fail_at;			/* 0: none */
static int	fail_code;
static char last_failed[256];

static int
cuda_fault(const char *call)
{
	if (++calls != fail_at)
		return 0;
	strlcpy(last_failed, call, sizeof(last_failed));
	return fail_code;
}

static gpusort_test_hooks_t *
hooks(void)
{
	/* gpusort's own copy of the symbol, wherever it was loaded */
	return (gpusort_test_hooks_t *)
		load_external_function("$libdir/gpusort", "gpusort_test_hooks", true, NULL);
}

PG_FUNCTION_INFO_V1(gpusort_fault_inject);
Datum
gpusort_fault_inject(PG_FUNCTION_ARGS)
{
	calls = 0;
	fail_at = PG_GETARG_INT32(0);
	fail_code = PG_GETARG_INT32(1);
	last_failed[0] = '\0';
	hooks()->cuda_fault = cuda_fault;
	hooks()->lock_min_bytes = 1;
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(gpusort_fault_calls);
Datum
gpusort_fault_calls(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(calls);
}

PG_FUNCTION_INFO_V1(gpusort_fault_last);
Datum
gpusort_fault_last(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(last_failed));
}

static void
swap_first_last(uint32 *perm, Size n)
{
	if (n >= 2)
	{
		uint32		first = perm[0];

		perm[0] = perm[n - 1];
		perm[n - 1] = first;
	}
}

PG_FUNCTION_INFO_V1(gpusort_fault_disorder);
Datum
gpusort_fault_disorder(PG_FUNCTION_ARGS)
{
	gpusort_check_hook_type *hook = (gpusort_check_hook_type *)
		load_external_function("$libdir/gpusort", "gpusort_check_hook", true, NULL);

	*hook = PG_GETARG_BOOL(0) ? swap_first_last : NULL;
	PG_RETURN_VOID();
}

static int	writes;				/* run writes since the last gpusort_fault_write */
static int	write_fail_at;		/* 0: none */
static int	write_fail_errno;

static int
write_fault(void)
{
	return ++writes == write_fail_at ? write_fail_errno : 0;
}

PG_FUNCTION_INFO_V1(gpusort_fault_write);
Datum
gpusort_fault_write(PG_FUNCTION_ARGS)
{
	gpusort_write_hook_type *hook = (gpusort_write_hook_type *)
		load_external_function("$libdir/gpusort", "gpusort_write_hook", true, NULL);

	writes = 0;
	write_fail_at = PG_GETARG_INT32(0);
	write_fail_errno = PG_GETARG_INT32(1);
	*hook = write_fault;
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(gpusort_fault_writes);
Datum
gpusort_fault_writes(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(writes);
}
