/* test_hooklib.c: what cuthook, cutcapture and libcuthook share about the library
 * (capture/hooklib.h): its layers' one list, the lists of -l and CUTHOOK_LAYERS, the pid in a
 * %p file name, and what a driver function is to the gpu layer. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "event.h"
#include "hooklib.h"

/* The list names each layer as the trace does. */
START_TEST(test_layer_names)
{
#define CHECK_NAME(name, layer, only) ck_assert_str_eq(#name, cut_layer_name(layer));
	CUT_HOOK_LAYERS(CHECK_NAME)
#undef CHECK_NAME
	ck_assert_str_eq(CUT_HOOK_LAYER_NAMES, "api, gpu, nvtx, runtime");
	ck_assert_uint_eq(CUT_HOOK_ONLY, 1u << CUT_GPU | 1u << CUT_NVTX);
	ck_assert_uint_eq(CUT_HOOK_ALL, CUT_HOOK_ONLY | 1u << CUT_API | 1u << CUT_RUNTIME);
	ck_assert_int_eq(cut_hook_layer("gpu", 3), CUT_GPU);
	ck_assert_int_eq(cut_hook_layer("runtime,api", 7), CUT_RUNTIME);
	ck_assert_int_eq(cut_hook_layer("apix", 3), CUT_API);
	ck_assert_int_eq(cut_hook_layer("apix", 4), -1);
	ck_assert_int_eq(cut_hook_layer("gp", 2), -1);
	ck_assert_int_eq(cut_hook_layer("ioctl", 5), -1); /* cutcapture's, not the library's */
	ck_assert_int_eq(cut_hook_layer("", 0), -1);
}
END_TEST

START_TEST(test_layer_lists)
{
	char buf[64];
	ck_assert_uint_eq(cut_hook_layers_in("api,nvtx"), 1u << CUT_API | 1u << CUT_NVTX);
	ck_assert_uint_eq(cut_hook_layers_in("ioctl,gpu,sched"), 1u << CUT_GPU);
	ck_assert_uint_eq(cut_hook_layers_in("apis,xgpu,nvtx2"), 0);
	ck_assert_uint_eq(cut_hook_layers_in(""), 0);
	ck_assert_uint_eq(cut_hook_layers_in(NULL), 0);
	ck_assert_str_eq(cut_hook_layer_join(buf, sizeof(buf), CUT_HOOK_ALL, ","),
	                 "api,gpu,nvtx,runtime");
	ck_assert_str_eq(cut_hook_layer_join(buf, sizeof(buf), CUT_HOOK_ONLY, ", "), "gpu, nvtx");
	ck_assert_str_eq(
	    cut_hook_layer_join(buf, sizeof(buf), 1u << CUT_RUNTIME | 1u << CUT_API, ","),
	    "api,runtime");
	ck_assert_str_eq(cut_hook_layer_join(buf, sizeof(buf), 1u << CUT_IOCTL, ","), "");
	ck_assert_str_eq(cut_hook_layer_join(buf, 6, CUT_HOOK_ALL, ","), "api,g"); /* cut short */
	ck_assert_int_eq(cut_hook_listed("api,gpu", "gpu"), 1);
	ck_assert_int_eq(cut_hook_listed("api,gpus", "gpu"), 0);
	ck_assert_int_eq(cut_hook_listed("xapi,api", "api"), 1);
	ck_assert_int_eq(cut_hook_listed(NULL, "api"), 0);
}
END_TEST

START_TEST(test_pid_of)
{
	ck_assert_int_eq(cut_hook_pid_of("hook.123.jsonl", "hook.%p.jsonl"), 123);
	ck_assert_int_eq(cut_hook_pid_of("t.7-7", "t.%p-%p"), 7);
	ck_assert_int_eq(cut_hook_pid_of("t.7-8", "t.%p-%p"), -1);
	ck_assert_int_eq(cut_hook_pid_of("hook..jsonl", "hook.%p.jsonl"), -1);
	ck_assert_int_eq(cut_hook_pid_of("hook.0.jsonl", "hook.%p.jsonl"), -1);
	ck_assert_int_eq(cut_hook_pid_of("hook.1.jsonl", "hook.jsonl"), -1);
}
END_TEST

/* The gpu layer's kinds come from the functions' flags (share/data/api-categories.tsv). */
START_TEST(test_gpu_kinds)
{
	ck_assert_int_eq(cut_gpu_kind_of("cuLaunchKernel"), GK_KERNEL);
	ck_assert_int_eq(cut_gpu_kind_of("cuLaunchCooperativeKernel_ptsz"), GK_KERNEL);
	ck_assert_int_eq(cut_gpu_kind_of("cuLaunchKernelEx"), GK_KERNEL_EX);
	ck_assert_int_eq(cut_gpu_kind_of("cuMemcpyDtoHAsync_v2"), GK_COPY);
	ck_assert_int_eq(cut_gpu_kind_of("cuMemcpyBatchAsync"), GK_ENQUEUE);
	ck_assert_int_eq(cut_gpu_kind_of("cuMemsetD2D8_v2"), GK_SET);
	ck_assert_int_eq(cut_gpu_kind_of("cuGraphLaunch_ptsz"), GK_GRAPH);
	ck_assert_int_eq(cut_gpu_kind_of("cuStreamCreateWithPriority"), GK_STREAM);
	ck_assert_int_eq(cut_gpu_kind_of("cuDevicePrimaryCtxRetain"), GK_CONTEXT);
	ck_assert_int_eq(cut_gpu_kind_of("cuCtxCreate_v4"), GK_CONTEXT);
	ck_assert_int_eq(cut_gpu_kind_of("cuGraphInstantiate"), GK_INSTANTIATE);
	ck_assert_int_eq(cut_gpu_kind_of("cuDevicePrimaryCtxReset_v2"), GK_CTX_END);
	ck_assert_int_eq(cut_gpu_kind_of("cuCtxDestroy"), GK_CTX_END);
	ck_assert_int_eq(cut_gpu_kind_of("cuDevicePrimaryCtxRelease"), GK_CTX_END);
	ck_assert_int_eq(cut_hook_unprobed("cuGraphInstantiateWithFlags", 1), 0); /* probed */
	ck_assert_int_eq(cut_gpu_kind_of("cuCtxSetCurrent"), GK_NONE);
	ck_assert_int_eq(cut_hook_unprobed("cuCtxCreate_v4", 1), 0); /* probed: untimed */
	/* called by the library on the program's threads (a reset's primary context) */
	ck_assert_int_eq(cut_hook_unprobed("cuDevicePrimaryCtxRetain", 0), 1);
	ck_assert_int_eq(cut_gpu_kind_of("cuMemAllocAsync"), GK_ENQUEUE);
	ck_assert_int_eq(cut_gpu_kind_of("cuCtxWaitEvent"), GK_ENQUEUE);
	ck_assert_int_eq(cut_gpu_kind_of("cuLaunchCooperativeKernelMultiDevice"), GK_NONE);
	ck_assert_int_eq(cut_gpu_kind_of("cuMemAlloc_v2"), GK_NONE);
	ck_assert_int_eq(cut_gpu_kind_of("cuNoSuchFunction"), GK_NONE);
	ck_assert_int_eq(cut_hook_unprobed("cuEventRecord", 0), 1); /* the library's own calls */
	ck_assert_int_eq(cut_hook_unprobed("cuLaunchKernel", 0), 0);
	ck_assert_int_eq(cut_hook_unprobed("cuLaunchKernel", 1), 1);
	ck_assert_int_eq(cut_hook_unprobed("cuStreamWaitEvent", 1), 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hooklib");
	TCase *tc = tcase_create("hooklib");
	tcase_add_test(tc, test_layer_names);
	tcase_add_test(tc, test_layer_lists);
	tcase_add_test(tc, test_pid_of);
	tcase_add_test(tc, test_gpu_kinds);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
