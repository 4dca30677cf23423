/*
 * devices.c -- gpusort_devices(): the CUDA devices the server sorts on:
 * those the GPU service opened where it is in use (the backend then opens
 * no CUDA driver of its own), else those this backend can see.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "gpu_service.h"
#include "guc.h"
#include "service_shared.h"
#include "../kernels/gpusort_kernels.h"

PG_FUNCTION_INFO_V1(gpusort_devices);

Datum
gpusort_devices(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			count = 0;
	gpusort_device_info *service_infos = palloc(SERVICE_MAX_DEVICES * sizeof(gpusort_device_info));
	bool		from_service = gpu_service_device_infos(service_infos, &count);

	InitMaterializedSRF(fcinfo, 0);
	/* no driver or no device: no rows (not an error) */
	if (!from_service && gpusort_device_count(&count) != GPUSORT_OK)
		PG_RETURN_VOID();

	for (int i = 0; i < count; i++)
	{
		gpusort_device_info info;
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};
		char		cc[32];

		if (from_service)
			info = service_infos[i];
		else if (gpusort_device_get_info(i, &info) != GPUSORT_OK)
			continue;
		snprintf(cc, sizeof(cc), "%d.%d", info.cc_major, info.cc_minor);
		values[0] = Int32GetDatum(info.ordinal);
		values[1] = CStringGetTextDatum(info.name);
		values[2] = CStringGetTextDatum(cc);
		values[3] = Int64GetDatum((int64) (info.total_memory / (1024 * 1024)));
		values[4] = Int32GetDatum(info.multiprocessors);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}
