/*
 * gpusort_phase_wait.c -- a test-only PostgreSQL module that aims a cancel
 * at a named phase of a loaded gpusort's sort, through its phase hook
 * (src/phase_hook.h), on every run whatever the machine's load.  Used by
 * test/t/002_cancel.pl; never installed.  Each call arms the next sort of
 * this backend once:
 *
 *   SELECT gpusort_phase_wait('sort');       -- at the start of phase 'sort',
 *                                            -- wait (wait event Extension)
 *                                            -- until a cancel or terminate
 *                                            -- signal has reached the backend
 *   SELECT gpusort_phase_timeout('sort', 5); -- the statement timeout fires
 *                                            -- 5 ms after phase 'sort' starts
 *   SELECT gpusort_phase_lag();              -- seconds since the armed cancel
 *                                            -- was due (NULL: the phase was
 *                                            -- never reached); disarms
 *   SELECT gpusort_phase_seen();             -- 'phase ms' per line: the phases
 *                                            -- entered since the last call, at
 *                                            -- ms from the first
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

#include "phase_hook.h"

PG_MODULE_MAGIC;

/* the longest a phase waits for a signal before the test is failed */
#define WAIT_LIMIT_MS 60000

typedef enum ArmedHow
{
	ARMED_NONE = 0,
	ARMED_WAIT,					/* wait for a signal */
	ARMED_TIMEOUT				/* fire the statement timeout */
} ArmedHow;

static ArmedHow armed = ARMED_NONE;
static char armed_phase[NAMEDATALEN];
static int	armed_delay_ms;
static bool reached;
static TimestampTz due_at;		/* when the cancel was pending or due */

static char seen[8192];			/* gpusort_phase_seen()'s lines */
static TimestampTz seen_from;

/* Wait until a cancel or terminate signal is pending; an ERROR after WAIT_LIMIT_MS. */
static void
wait_for_signal(const char *phase)
{
	TimestampTz start = GetCurrentTimestamp();

	while (!QueryCancelPending && !ProcDiePending)
	{
		if (TimestampDifferenceExceeds(start, GetCurrentTimestamp(), WAIT_LIMIT_MS))
			elog(ERROR, "gpusort_phase_wait: no cancel reached phase \"%s\" in %d ms",
				 phase, WAIT_LIMIT_MS);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

static void
phase_hook(const char *phase)
{
	TimestampTz now = GetCurrentTimestamp();
	size_t		used = strlen(seen);

	if (used == 0)
		seen_from = now;
	snprintf(seen + used, sizeof(seen) - used, "%s %.3f\n", phase,
			 (double) (now - seen_from) / 1000.0);

	if (armed == ARMED_NONE || reached || strcmp(phase, armed_phase) != 0)
		return;
	reached = true;
	if (armed == ARMED_TIMEOUT)
	{
		due_at = TimestampTzPlusMilliseconds(now, armed_delay_ms);
		/* the statement timeout's own timer and handler, brought forward */
		enable_timeout_after(STATEMENT_TIMEOUT, armed_delay_ms);
		return;
	}
	wait_for_signal(phase);
	due_at = GetCurrentTimestamp();
}

/* gpusort's own hook variable, wherever it was loaded */
static void
install_hook(void)
{
	gpusort_phase_hook_type *hook = (gpusort_phase_hook_type *)
		load_external_function("$libdir/gpusort", "gpusort_phase_hook", true, NULL);

	*hook = phase_hook;
}

static void
arm(text *phase, ArmedHow how, int delay_ms)
{
	install_hook();
	text_to_cstring_buffer(phase, armed_phase, sizeof(armed_phase));
	armed = how;
	armed_delay_ms = delay_ms;
	reached = false;
	due_at = 0;
}

PG_FUNCTION_INFO_V1(gpusort_phase_wait);
Datum
gpusort_phase_wait(PG_FUNCTION_ARGS)
{
	arm(PG_GETARG_TEXT_PP(0), ARMED_WAIT, 0);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(gpusort_phase_timeout);
Datum
gpusort_phase_timeout(PG_FUNCTION_ARGS)
{
	arm(PG_GETARG_TEXT_PP(0), ARMED_TIMEOUT, Max(PG_GETARG_INT32(1), 0));
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(gpusort_phase_lag);
Datum
gpusort_phase_lag(PG_FUNCTION_ARGS)
{
	bool		was_reached = armed != ARMED_NONE && reached;

	armed = ARMED_NONE;
	if (!was_reached)
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8((double) (GetCurrentTimestamp() - due_at) / 1e6);
}

PG_FUNCTION_INFO_V1(gpusort_phase_seen);
Datum
gpusort_phase_seen(PG_FUNCTION_ARGS)
{
	text	   *result;

	install_hook();
	result = cstring_to_text(seen);
	seen[0] = '\0';
	PG_RETURN_TEXT_P(result);
}
