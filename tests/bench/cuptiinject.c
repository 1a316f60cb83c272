/* cuptiinject: the bar the gpu layer is measured against, not part of cut. A CUDA injection
 * library (CUDA_INJECTION64_PATH) that records what Nsight Systems and torch.profiler record
 * through CUPTI's activity API, so that bench-gpu-layer.sh can time the same launchbench under
 * CUPTI and under libcuthook on one machine. cut itself never uses CUPTI (one subscriber per
 * process on driver 580: it would break torch.profiler and nsys).
 *
 *   CUPTI_BENCH=kernels  kernels, copies and memsets on the device (the gpu layer's events)
 *   CUPTI_BENCH=api      the same and every driver and runtime API call (cuthook's default)
 *
 * At exit it prints to stderr how many records of each it took and how many CUPTI dropped.
 *
 * build: cc -shared -fPIC -O2 -I$CUPTI/include -I$CUDA/include -o cuptiinject.so cuptiinject.c \
 *        -L$CUPTI/lib64 -lcupti
 */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CUPTI asks for 8-byte aligned buffers (ACTIVITY_RECORD_ALIGNMENT in its samples). */
enum { BUF_SIZE = 8 << 20, BUF_ALIGN = 8 };

static unsigned long long work, calls, other;
static size_t dropped;

#define CK(x)                                                                                      \
	do {                                                                                       \
		CUptiResult r_ = (x);                                                              \
		if (r_ != CUPTI_SUCCESS) {                                                         \
			const char *s_ = "?";                                                      \
			cuptiGetResultString(r_, &s_);                                             \
			fprintf(stderr, "cuptiinject: %s: %s\n", #x, s_);                          \
			return 0;                                                                  \
		}                                                                                  \
	} while (0)

static void CUPTIAPI
buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(BUF_ALIGN, BUF_SIZE);
	*size = *buf ? BUF_SIZE : 0;
	*max_records = 0;
}

/* Counting each record reads it, as a profiler's consumer does, without the cost of keeping it. */
static void CUPTIAPI
buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;
	(void)size;
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
		switch (r->kind) {
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		case CUPTI_ACTIVITY_KIND_MEMCPY:
		case CUPTI_ACTIVITY_KIND_MEMSET: work++; break;
		case CUPTI_ACTIVITY_KIND_DRIVER:
		case CUPTI_ACTIVITY_KIND_RUNTIME: calls++; break;
		default: other++; break;
		}
	}
	size_t d = 0;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &d) == CUPTI_SUCCESS)
		dropped += d;
	free(buf);
}

static void
report(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr, "cuptiinject: %llu gpu work, %llu api calls, %llu other, %zu dropped\n",
	        work, calls, other, dropped);
}

int
InitializeInjection(void)
{
	const char *mode = getenv("CUPTI_BENCH");
	if (!mode)
		mode = "kernels";
	if (strcmp(mode, "kernels") != 0 && strcmp(mode, "api") != 0) {
		fprintf(stderr, "cuptiinject: CUPTI_BENCH=%s: not kernels or api\n", mode);
		return 0;
	}
	CK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
	CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
	CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
	if (strcmp(mode, "api") == 0) {
		CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
		CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
	}
	atexit(report);
	return 1;
}
