/*
 * device_opener.h -- the GPU opened in a thread of its own.
 *
 * Opening a GPU (the driver, then the primary context) takes 0.2-0.4 s in
 * a fresh process, inside CUDA calls that cannot be interrupted.  Done in
 * the backend's own thread it delays a cancel by that much; done in a
 * helper thread it overlaps the reading of the sort's input, and the
 * backend waits for it answering cancels.  The thread makes CUDA calls
 * only (no PostgreSQL function), with every signal blocked; PostgreSQL's
 * signals stay with the backend's thread.  A cancel while it runs leaves
 * it running: the next wait takes its result.  A backend that exits while
 * it runs closes its client connection, then waits for it.
 */
#ifndef GPUSORT_DEVICE_OPENER_H
#define GPUSORT_DEVICE_OPENER_H

#include "postgres.h"

#include "../kernels/gpusort_kernels.h"

typedef struct DeviceOpenResult
{
	gpusort_status status;
	gpusort_device_info info;	/* where status is GPUSORT_OK */
	char		detail[256];	/* what failed, where it did */
} DeviceOpenResult;

/* Start opening device 0 in a thread, unless that has begun. */
extern void device_opener_start(void);

/*
 * The outcome of opening device 0: waits for the thread (started here if
 * need be, or the device opened in this thread where no thread could be
 * made), with CHECK_FOR_INTERRUPTS every millisecond.
 */
extern void device_opener_wait(DeviceOpenResult *result);

#endif
