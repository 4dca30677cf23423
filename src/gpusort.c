/*
 * gpusort.c -- module entry point.
 *
 * _PG_init may run in the postmaster (shared_preload_libraries), so it only
 * defines GUCs, registers the GpuSort node and installs the planner hook;
 * the GPU is opened lazily by the backend that first sorts.
 */
#include "postgres.h"

#include "fmgr.h"

#include "gpu_service.h"
#include "guc.h"
#include "gpusort_node.h"
#include "parallel_fill.h"
#include "phase_hook.h"

PG_MODULE_MAGIC;

/* test modules only (phase_hook.h) */
gpusort_phase_hook_type gpusort_phase_hook = NULL;
gpusort_check_hook_type gpusort_check_hook = NULL;
gpusort_write_hook_type gpusort_write_hook = NULL;
const gpusort_service_emulation *gpusort_service_emulation_hook = NULL;

void		_PG_init(void);

void
_PG_init(void)
{
	gpusort_define_gucs();
	gpusort_register_node();
	gpusort_register_fill_node();
	gpusort_install_planner_hook();
	gpu_service_register();
}
