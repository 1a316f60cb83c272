/* test_classify.c: every libcuda export has a category; lookups of versioned names; the
 * functions' flags. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "classify.h"
#include "event.h"

/* How many names of an export list starting with prefix there are, and how many of them the
 * table lists. */
static void
count_listed(const char *file, const char *prefix, int *n, int *found)
{
	const char *dir = getenv("CUT_DATADIR");
	char path[512], name[256];
	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "share/data", file);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	*n = *found = 0;
	while (fscanf(f, "%255s", name) == 1) {
		if (strncmp(name, prefix, strlen(prefix)) != 0)
			continue;
		(*n)++;
		for (size_t i = 0; i < cut_api_table_size(); i++)
			if (strcmp(cut_api_table_name(i), name) == 0) {
				(*found)++;
				break;
			}
	}
	fclose(f);
}

START_TEST(test_every_export_listed)
{
	/* The table must name every function the real driver and runtime export, not fall
	 * back. */
	int n, found;
	count_listed("libcuda-580.159.04.exports", "cu", &n, &found);
	ck_assert_int_eq(n, 682);
	ck_assert_int_eq(found, n);
	count_listed("libcudart-13.0.96.exports", "cuda", &n, &found);
	ck_assert_int_eq(n, 407);
	ck_assert_int_eq(found, n);
}
END_TEST

START_TEST(test_categories)
{
	static const struct {
		const char *fn, *cat;
	} cases[] = {
	    {"cuInit", "init"},
	    {"cuGetProcAddress_v2", "init"},
	    {"cuLaunchKernel", "launch"},
	    {"cuLaunchKernelEx_ptsz", "launch"},
	    {"cuMemcpyHtoDAsync_v2", "transfer"},
	    {"cuMemsetD8Async", "transfer"},
	    {"cuMemAlloc_v2", "memory"},
	    {"cuStreamSynchronize", "sync"},
	    {"cuCtxSynchronize", "sync"},
	    {"cuCtxGetDevice_v2", "query"},
	    {"cuDeviceGetAttribute", "query"},
	    {"cuLibraryLoadData", "module"},
	    {"cuKernelGetFunction", "module"},
	    {"cuGraphLaunch", "graph"},
	    {"cuEventRecord", "event"},
	    {"cuStreamCreate", "stream"},
	    {"cuDevicePrimaryCtxRetain", "context"},
	    {"cuDeviceGet", "device"},
	    {"cuProfilerStart", "other"},
	    /* The runtime's rows. */
	    {"cudaLaunchKernel", "launch"},
	    {"cudaLaunchKernelExC_ptsz", "launch"},
	    {"cudaMemcpyAsync", "transfer"},
	    {"cudaMemsetAsync_ptsz", "transfer"},
	    {"cudaMalloc", "memory"},
	    {"cudaFreeAsync", "memory"},
	    {"cudaDeviceSynchronize", "sync"},
	    {"cudaStreamSynchronize_ptsz", "sync"},
	    {"cudaStreamQuery", "query"},
	    {"cudaGetDevice", "query"},
	    {"cudaDeviceGetAttribute", "query"},
	    {"cudaSetDevice", "context"},
	    {"cudaStreamCreateWithPriority", "stream"},
	    {"cudaEventRecord", "event"},
	    {"cudaGraphLaunch", "graph"},
	    {"cudaStreamBeginCapture", "graph"},
	    {"cudaGetDriverEntryPointByVersion", "init"},
	    {"cudaFuncSetAttribute", "module"},
	    /* Not in the table: versions stripped, then "other". */
	    {"cuLaunchKernel_v9", "launch"},
	    {"cuMemcpyHtoD_v2_ptds", "transfer"},
	    {"cuNoSuchFunction", "other"},
	    {"", "other"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(strcmp(cut_api_category(cases[i].fn), cases[i].cat) == 0,
		              "%s: %s, want %s", cases[i].fn, cut_api_category(cases[i].fn),
		              cases[i].cat);
}
END_TEST

/* An event's category: its own, else the table's for driver and runtime calls (runtime rows
 * are looked up like driver ones, suffixes stripped), else "other" for driver calls and the
 * layer name for the rest. */
START_TEST(test_event_category)
{
	struct cut_event ev;
	cut_event_init(&ev);
	ev.layer = CUT_API;
	ev.name = "cuLaunchKernel_ptsz";
	ck_assert_str_eq(cut_event_category(&ev), "launch");
	ev.name = "cuNoSuchThing";
	ck_assert_str_eq(cut_event_category(&ev), "other");
	ck_assert_int_eq(cut_api_category_find("cuNoSuchThing"), -1);
	ck_assert_int_eq(cut_api_category_find("cuMemAlloc_v2"), CUT_CAT_MEMORY);
	ev.layer = CUT_RUNTIME;
	ck_assert_str_eq(cut_event_category(&ev), "runtime");
	ev.name = "cuMemAlloc_v2"; /* any name the table has */
	ck_assert_str_eq(cut_event_category(&ev), "memory");
	ev.cat = "mine";
	ck_assert_str_eq(cut_event_category(&ev), "mine");
	ev.cat = NULL;
	ev.layer = CUT_NVTX;
	ck_assert_str_eq(cut_event_category(&ev), "nvtx");
}
END_TEST

/* Category names back to categories. */
START_TEST(test_category_names)
{
	for (int c = 0; c < CUT_NCATS; c++)
		ck_assert_int_eq(cut_category_from_name(cut_category_name(c)), c);
	ck_assert_int_eq(cut_category_from_name(""), -1);
	ck_assert_int_eq(cut_category_from_name("launches"), -1);
	ck_assert_int_eq(cut_category_from_name("mod"), -1);
	ck_assert_int_eq(cut_category_from_name("runtime"), -1);
}
END_TEST

/* The one layer table: names both ways, ranks from the framework down. */
START_TEST(test_layers)
{
	for (int l = 0; l < CUT_NLAYERS; l++)
		ck_assert_int_eq(cut_layer_from_name(cut_layer_name(l)), l);
	ck_assert_int_eq(cut_layer_from_name("cuda"), -1);
	ck_assert_str_eq(cut_layer_name(CUT_NLAYERS), "?");
	ck_assert_int_eq(cut_layer_rank(CUT_NVTX), 3);
	ck_assert_int_eq(cut_layer_rank(CUT_RUNTIME), 2);
	ck_assert_int_eq(cut_layer_rank(CUT_API), 1);
	ck_assert_int_eq(cut_layer_rank(CUT_IOCTL), 0);
	ck_assert_int_eq(cut_layer_rank(CUT_META), -1);
	ck_assert_str_eq(cut_layer_label(CUT_SCHED), "off-CPU");
}
END_TEST

/* The flags column: what the gpu layer, cutgaps, cutstat and the visualisers decide a call
 * by. Versioned names not in the table take their base's flags, as categories do. */
START_TEST(test_flags)
{
	static const struct {
		const char *fn;
		unsigned flags;
	} cases[] = {
	    {"cuLaunchKernel", CUT_API_SUBMITS | CUT_API_KERNEL},
	    {"cuLaunchKernel_ptsz", CUT_API_SUBMITS | CUT_API_KERNEL},
	    {"cuLaunchKernelEx", CUT_API_SUBMITS | CUT_API_KERNEL | CUT_API_LAUNCH_CONFIG},
	    {"cuLaunchCooperativeKernelMultiDevice", CUT_API_SUBMITS},
	    {"cuLaunchHostFunc", CUT_API_SUBMITS | CUT_API_ENQUEUE},
	    {"cuMemcpyHtoD_v2", CUT_API_COPY | CUT_API_HTOD},
	    {"cuMemcpyHtoDAsync_v2", CUT_API_SUBMITS | CUT_API_COPY | CUT_API_HTOD},
	    {"cuMemcpyDtoH_v2_ptds", CUT_API_COPY | CUT_API_DTOH},
	    {"cuMemcpyDtoDAsync", CUT_API_SUBMITS | CUT_API_COPY | CUT_API_DTOD},
	    {"cuMemcpyAsync", CUT_API_SUBMITS | CUT_API_COPY},
	    {"cuMemcpyHtoA_v2", CUT_API_COPY},
	    {"cuMemcpyBatchAsync", CUT_API_SUBMITS | CUT_API_ENQUEUE},
	    {"cuMemsetD8_v2_ptds", CUT_API_MEMSET},
	    {"cuMemsetD32Async", CUT_API_SUBMITS | CUT_API_MEMSET},
	    {"cuGraphLaunch", CUT_API_SUBMITS | CUT_API_GRAPH},
	    {"cuGraphUpload", CUT_API_ENQUEUE},
	    {"cuGraphInstantiateWithFlags", CUT_API_INSTANTIATES_GRAPH},
	    {"cuGraphInstantiateWithParams_ptsz", CUT_API_INSTANTIATES_GRAPH},
	    {"cuGraphInstantiate_v2", CUT_API_INSTANTIATES_GRAPH},
	    {"cuGraphExecUpdate_v2", 0},
	    {"cuCtxDestroy_v2", CUT_API_DESTROYS_CONTEXT},
	    {"cuDevicePrimaryCtxReset", CUT_API_RESETS_CONTEXT},
	    {"cuDevicePrimaryCtxRelease_v2", CUT_API_RELEASES_PRIMARY},
	    {"cuDevicePrimaryCtxRetain", CUT_API_CREATES_CONTEXT | CUT_API_RETAINS_PRIMARY},
	    {"cuDevicePrimaryCtxSetFlags_v2", 0},
	    {"cuStreamCreateWithPriority", CUT_API_CREATES_STREAM},
	    {"cuGreenCtxStreamCreate", CUT_API_CREATES_STREAM | CUT_API_GREEN},
	    {"cuGreenCtxDestroy", CUT_API_DESTROYS_CONTEXT | CUT_API_GREEN},
	    {"cuCtxWaitEvent", CUT_API_ENQUEUE | CUT_API_CONTEXT_WAIT},
	    {"cuGreenCtxWaitEvent", CUT_API_ENQUEUE | CUT_API_CONTEXT_WAIT | CUT_API_GREEN},
	    {"cuCtxSynchronize", CUT_API_SYNCS_CONTEXT},
	    {"cuStreamQuery_ptsz", CUT_API_SYNCS_STREAM},
	    {"cuStreamSynchronize", CUT_API_SYNCS_STREAM},
	    {"cuEventQuery", CUT_API_SYNCS_EVENT},
	    {"cuEventRecordWithFlags", CUT_API_ENQUEUE | CUT_API_RECORDS_EVENT},
	    {"cuMemAlloc_v2", CUT_API_ALLOCATES},
	    {"cuMemAllocAsync", CUT_API_ENQUEUE | CUT_API_ALLOCATES},
	    {"cuMemAllocHost_v2", 0},
	    {"cuMemFreeAsync", CUT_API_FREES},
	    {"cuMemFreeHost", 0},
	    {"cuInit", 0},
	    /* not in the table: the base's, or none */
	    {"cuMemsetD8_v9", CUT_API_MEMSET},
	    {"cuMemcpyDtoH_v3", CUT_API_COPY | CUT_API_DTOH},
	    {"cuLaunchKernel_v3_ptsz", CUT_API_SUBMITS | CUT_API_KERNEL},
	    {"cuMemsetSomethingNew", 0},
	    /* the runtime's rows have none */
	    {"cudaMemsetAsync", 0},
	    {"", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(cut_api_flags(cases[i].fn) == cases[i].flags, "%s: %#x, want %#x",
		              cases[i].fn, cut_api_flags(cases[i].fn), cases[i].flags);
}
END_TEST

START_TEST(test_table_sorted)
{
	for (size_t i = 1; i < cut_api_table_size(); i++)
		ck_assert_msg(strcmp(cut_api_table_name(i - 1), cut_api_table_name(i)) < 0,
		              "%s before %s", cut_api_table_name(i - 1), cut_api_table_name(i));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("classify");
	TCase *tc = tcase_create("classify");
	tcase_add_test(tc, test_every_export_listed);
	tcase_add_test(tc, test_categories);
	tcase_add_test(tc, test_flags);
	tcase_add_test(tc, test_table_sorted);
	tcase_add_test(tc, test_event_category);
	tcase_add_test(tc, test_layers);
	tcase_add_test(tc, test_category_names);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
