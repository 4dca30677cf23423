/*
 * gpusort.c -- module entry point.
 *
 * _PG_init may run in the postmaster (shared_preload_libraries), so it only
 * defines GUCs; the GPU is opened lazily by the backend that first sorts.
 */
#include "postgres.h"

#include "fmgr.h"

#include "gpusort.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	gpusort_define_gucs();
}
