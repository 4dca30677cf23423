/*
 * guc.c -- gpusort's configuration parameters.
 */
#include "postgres.h"

#include <limits.h>

#include "utils/guc.h"

#include "guc.h"

/* the defaults, named once */
#define DEFAULT_GPU_MIN_ELEMENTS 32768
#define DEFAULT_MIN_ROWS 1000
#define DEFAULT_MAX_MEMORY_MB 2048
#define DEFAULT_GPU_REORDER_MIN_ROWS 262144

int			gpusort_device = GPUSORT_DEVICE_AUTO;
int			gpusort_algorithm_choice = GPUSORT_ALGORITHM_AUTO;
int			gpusort_gpu_min_elements = DEFAULT_GPU_MIN_ELEMENTS;
bool		gpusort_enabled = true;
int			gpusort_min_rows = DEFAULT_MIN_ROWS;
bool		gpusort_cost_model = true;
int			gpusort_max_memory = DEFAULT_MAX_MEMORY_MB;
int			gpusort_work_mem = -1;
int			gpusort_gpu_reorder_min_rows = DEFAULT_GPU_REORDER_MIN_ROWS;
int			gpusort_gpu_job_memory = 0;
int			gpusort_parallel_fill = GPUSORT_PARALLEL_FILL_AUTO;
bool		gpusort_gather_leader_scans = true;
bool		gpusort_verify_order = false;
bool		gpusort_service = true;
int			gpusort_service_queue_wait = 1000;

Size
gpusort_memory_limit(void)
{
	int			mb = gpusort_max_memory;

	/* a user may lower the DBA's cap for a session, never raise it */
	if (gpusort_work_mem >= 0 && gpusort_work_mem < mb)
		mb = gpusort_work_mem;
	return (Size) mb * 1024 * 1024;
}

static const struct config_enum_entry device_options[] = {
	{"auto", GPUSORT_DEVICE_AUTO, false},
	{"gpu", GPUSORT_DEVICE_GPU, false},
	{"cpu", GPUSORT_DEVICE_CPU, false},
	{NULL, 0, false}
};

static const struct config_enum_entry parallel_fill_options[] = {
	{"auto", GPUSORT_PARALLEL_FILL_AUTO, false},
	{"on", GPUSORT_PARALLEL_FILL_ON, false},
	{"off", GPUSORT_PARALLEL_FILL_OFF, false},
	{"true", GPUSORT_PARALLEL_FILL_ON, true},
	{"false", GPUSORT_PARALLEL_FILL_OFF, true},
	{"yes", GPUSORT_PARALLEL_FILL_ON, true},
	{"no", GPUSORT_PARALLEL_FILL_OFF, true},
	{"1", GPUSORT_PARALLEL_FILL_ON, true},
	{"0", GPUSORT_PARALLEL_FILL_OFF, true},
	{NULL, 0, false}
};

static const struct config_enum_entry algorithm_options[] = {
	{"auto", GPUSORT_ALGORITHM_AUTO, false},
	{"radix", GPUSORT_ALGORITHM_RADIX, false},
	{"quicksort", GPUSORT_ALGORITHM_QUICKSORT, false},
	{"bitonic", GPUSORT_ALGORITHM_BITONIC, false},
	{"cpu", GPUSORT_ALGORITHM_CPU, false},
	{NULL, 0, false}
};

void
gpusort_define_gucs(void)
{
	DefineCustomEnumVariable("gpusort.algorithm",
							 "Which sort gpusort runs: auto, radix, quicksort, bitonic or cpu.",
							 NULL,
							 &gpusort_algorithm_choice,
							 GPUSORT_ALGORITHM_AUTO,
							 algorithm_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("gpusort.device",
							 "Where gpusort sorts: auto, gpu or cpu.",
							 NULL,
							 &gpusort_device,
							 GPUSORT_DEVICE_AUTO,
							 device_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.gpu_min_elements",
							"Fewest keys for which gpusort.device = auto uses the GPU.",
							NULL,
							&gpusort_gpu_min_elements,
							DEFAULT_GPU_MIN_ELEMENTS,
							0, INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpusort.enabled",
							 "Replaces PostgreSQL's Sort with GpuSort where the sort keys allow.",
							 NULL,
							 &gpusort_enabled,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.min_rows",
							"Fewest estimated rows for which a Sort is replaced by GpuSort.",
							NULL,
							&gpusort_min_rows,
							DEFAULT_MIN_ROWS,
							0, INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpusort.cost_model",
							 "Replaces a Sort only where GpuSort's estimated cost is below the native plan's.",
							 "Off: every Sort of at least gpusort.min_rows estimated rows is replaced.",
							 &gpusort_cost_model,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.max_memory",
							"Most memory one GpuSort node may hold, for every session (superuser only).",
							NULL,
							&gpusort_max_memory,
							DEFAULT_MAX_MEMORY_MB,
							1, MAX_KILOBYTES / 1024,
							PGC_SUSET,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.work_mem",
							"Most memory one GpuSort node may hold in this session; -1 uses gpusort.max_memory.",
							NULL,
							&gpusort_work_mem,
							-1,
							-1, MAX_KILOBYTES / 1024,
							PGC_USERSET,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpusort.verify_order",
							 "Checks each GpuSort's output order with PostgreSQL's comparators (for testing).",
							 NULL,
							 &gpusort_verify_order,
							 false,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.gpu_job_memory",
							"Most GPU memory one sort job may take (superuser only); 0: the GPU's free memory.",
							"A sort whose job would take more is sorted on the GPU in pieces that fit, merged on the CPU.",
							&gpusort_gpu_job_memory,
							0,
							0, MAX_KILOBYTES / 1024,
							PGC_SUSET,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpusort.service",
							 "Sends GPU sorts to the GPU service, where gpusort is in shared_preload_libraries.",
							 "The service's background workers hold one CUDA context per GPU for all "
							 "backends; off: this session opens the GPU itself.",
							 &gpusort_service,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.service_queue_wait",
							"Longest a sort waits in the GPU service's queue before it takes the CPU path.",
							NULL,
							&gpusort_service_queue_wait,
							1000,
							0, 3600 * 1000,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.gpu_reorder_min_rows",
							"Fewest rows for which a GPU sort also moves GpuSort's rows into sorted order.",
							NULL,
							&gpusort_gpu_reorder_min_rows,
							DEFAULT_GPU_REORDER_MIN_ROWS,
							0, INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("gpusort.parallel_fill",
							 "Lets parallel workers encode and store GpuSort's rows: off, on or auto.",
							 NULL,
							 &gpusort_parallel_fill,
							 GPUSORT_PARALLEL_FILL_AUTO,
							 parallel_fill_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("gpusort.gather_leader_scans",
							 "Lets the leader of the Gather under a GpuSort run the parallel plan too.",
							 NULL,
							 &gpusort_gather_leader_scans,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	MarkGUCPrefixReserved("gpusort");
}
