/* test_api_args.c: the driver and runtime API argument decoder both capture paths share
 * (capture/api),
 * fed synthetic call words, as the BPF side delivers them (raw registers) and as libcuthook
 * reads them in the process (cut_api_read): expected args objects, failed calls, out values,
 * strings, launch configurations and 2D/3D copies read from their structs, _ptsz variants,
 * stream/event defaults, symbol records, and what each function asks the BPF side to read. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "api/call.h"
#include "api/cudatypes.h"
#include "check_main.h"

#define W(p) ((uint64_t)(uintptr_t)(p))
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Names known to the test: handle 0xf0000 is "vecAdd", 0xe0001 the kernel "gemm"; host stub
 * 0x401000 is "_Z4axpyPf" (only as a host function). */
static const struct cut_name *
test_get(struct cut_names *n, uint32_t pid, uint64_t h, bool ok, enum cut_name_of of)
{
	static const struct cut_name vec = {"vecAdd", NULL, 0}, gemm = {"gemm", "\"gemm\"", 6},
	                             axpy = {"_Z4axpyPf", NULL, 0};
	(void)n, (void)pid, (void)ok;
	if (of == CUT_NAME_HOSTFN)
		return h == 0x401000 ? &axpy : NULL;
	return h == 0xf0000 ? &vec : h == 0xe0001 ? &gemm : NULL;
}
static struct cut_names names = {test_get};

static struct cut_api_desc
desc(const char *name)
{
	struct cut_api_desc d;
	ck_assert_msg(cut_api_describe(&d, name) == 0, "%s: no description", name);
	return d;
}

/* The args object of fn for raw words a (as the BPF side delivers them). */
static void
check_raw(const char *fn, const uint64_t *a, size_t n, int32_t ret, const uint64_t *out,
          const char *str, const char *want)
{
	struct cut_api_desc d = desc(fn);
	struct cut_call c = {.ret = ret, .extra_ok = true};
	memcpy(c.a, a, n * sizeof(a[0]));
	if (out)
		memcpy(c.out, out, sizeof(c.out));
	c.str = str;
	c.slen = str ? strlen(str) : 0;
	struct cut_buf b = {0};
	struct cut_api_sym sym;
	cut_api_args(&d, &c, 1, &names, &b, &sym);
	ck_assert_msg(strcmp(b.s ? b.s : "", want) == 0, "%s: %s, want %s", fn, b.s ? b.s : "",
	              want);
	buf_free(&b);
}

/* The args object (and symbol) of fn called in the process with words a, returning ret. */
static void
check_read(const char *fn, const uint64_t *a, size_t n, int32_t ret, const char *want,
           struct cut_api_sym *sym)
{
	struct cut_api_desc d = desc(fn);
	struct cut_call c;
	struct cut_api_sym s;
	cut_api_read(&d, &c, a, n, ret);
	struct cut_buf b = {0};
	cut_api_args(&d, &c, 1, &names, &b, sym ? sym : &s);
	ck_assert_msg(strcmp(b.s ? b.s : "", want) == 0, "%s: %s, want %s", fn, b.s ? b.s : "",
	              want);
	buf_free(&b);
}

static bool
runtime_name(const char *name)
{
	return strncmp(name, "cuda", 4) == 0 || strncmp(name, "__cuda", 6) == 0;
}

START_TEST(test_rows_describe)
{
	/* Every line describes (within what a call carries), in strcmp order. */
	for (size_t i = 0; i < cut_api_rows(); i++) {
		struct cut_api_desc d;
		const char *name = cut_api_row_name(i);
		ck_assert_msg(cut_api_describe(&d, name) == 0, "%s asks too much", name);
		ck_assert_msg(d.row && d.decodes, "%s", name);
		/* Two tables, the driver's then the runtime's, each sorted. */
		if (i && runtime_name(cut_api_row_name(i - 1)) == runtime_name(name))
			ck_assert_msg(strcmp(cut_api_row_name(i - 1), name) < 0, "%s not sorted",
			              name);
		ck_assert_msg(d.runtime == runtime_name(name), "%s", name);
	}
	/* The functions both old tables decoded (121), 13 of them now through the stream and
	 * event defaults alone. */
	ck_assert_uint_ge(cut_api_rows(), 108);
	static const char *const by_roles[] = {
	    "cuEventDestroy_v2",      "cuEventQuery",       "cuEventRecord",
	    "cuEventRecordWithFlags", "cuEventSynchronize", "cuStreamBeginCapture_v2",
	    "cuStreamCreate",         "cuStreamDestroy_v2", "cuStreamEndCapture",
	    "cuStreamIsCapturing",    "cuStreamQuery",      "cuStreamSynchronize",
	    "cuStreamWaitEvent"};
	for (size_t i = 0; i < N(by_roles); i++) {
		struct cut_api_desc d = desc(by_roles[i]);
		ck_assert_msg(!d.row && d.decodes, "%s", by_roles[i]);
	}
}
END_TEST

/* The args of call c of d; the caller frees. */
static char *
args_of(const struct cut_api_desc *d, const struct cut_call *c)
{
	struct cut_api_sym s;
	struct cut_buf b = {0};
	cut_api_args(d, c, 1, &names, &b, &s);
	ck_assert(!s.handle);
	buf_addc(&b, 0);
	return b.s;
}

static uint64_t
next_word(uint64_t *x)
{
	*x ^= *x << 13; /* xorshift64 */
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

START_TEST(test_pure)
{
	/* A pure description's args are a function of the call as read (libcuthook copies them
	 * from a call alike: the same result, words of d.words, out values and extra_ok): random
	 * calls, and any word outside d.words changed leaves the args as they were. */
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int pure = 0;
	for (size_t i = 0; i < cut_api_rows(); i++) {
		const char *fn = cut_api_row_name(i);
		struct cut_api_desc d = desc(fn);
		if (!d.pure)
			continue;
		pure++;
		for (int round = 0; round < 20; round++) {
			struct cut_call c = {
			    .ret = round & 2 ? 1 : 0, .extra_ok = round % 3 != 0, .typed = true};
			for (int k = 0; k < CUT_API_NARGS; k++)
				c.a[k] = next_word(&x) >> (next_word(&x) & 63);
			for (int k = 0; k < CUT_API_NOUT; k++)
				c.out[k] = next_word(&x) >> (next_word(&x) & 63);
			if (round & 1)
				c.a[0] = 0xf0000; /* a named handle */
			char *want = args_of(&d, &c);
			for (int k = 0; k < CUT_API_NARGS; k++) {
				if (d.words >> k & 1)
					continue;
				uint64_t keep = c.a[k];
				c.a[k] = next_word(&x);
				char *got = args_of(&d, &c);
				ck_assert_msg(strcmp(got, want) == 0,
				              "%s: word %d changed the args: %s, was %s", fn, k,
				              got, want);
				free(got);
				c.a[k] = keep;
			}
			free(want);
		}
	}
	ck_assert_int_ge(pure, 80);
	/* What a launch reads: its function, grid, block, shared memory and stream, not its
	 * parameters; the runtime's grid and block are two words of dim3 each. */
	struct cut_api_desc d = desc("cuLaunchKernel");
	ck_assert(d.pure);
	ck_assert_uint_eq(d.words, 0x1ff);
	d = desc("cudaLaunchKernel");
	ck_assert(d.pure);
	ck_assert_uint_eq(d.words & 0x1f, 0x1f);
	ck_assert(!(d.words & 1u << 5)); /* args */
	/* Out values and structs are part of the call as read; strings and handles named not. */
	static const char *const alike[] = {"cuDeviceGet",        "cudaGetDevice",
	                                    "cuLaunchKernelEx",   "cuMemcpy2D_v2",
	                                    "cudaGetDeviceCount", "cuMemAlloc_v2"};
	for (size_t i = 0; i < N(alike); i++)
		ck_assert_msg(desc(alike[i]).pure, "%s", alike[i]);
	static const char *const not_alike[] = {"cuModuleGetFunction", "cuFuncGetName",
	                                        "cuGetProcAddress_v2", "cuLibraryGetKernel"};
	for (size_t i = 0; i < N(not_alike); i++)
		ck_assert_msg(!desc(not_alike[i]).pure, "%s", not_alike[i]);
}
END_TEST

START_TEST(test_copies)
{
	uint64_t a[] = {0x7000000000, 0x5a0000001000, 4096};
	check_raw("cuMemcpyHtoD_v2", a, 3, 0, NULL, NULL,
	          "{\"bytes\":4096,\"dir\":\"HtoD\",\"dst\":\"0x7000000000\",\"src\":"
	          "\"0x5a0000001000\"}");
	/* A failed copy says the same: its arguments are inputs. */
	check_raw("cuMemcpyHtoD_v2", a, 3, 1, NULL, NULL,
	          "{\"bytes\":4096,\"dir\":\"HtoD\",\"dst\":\"0x7000000000\",\"src\":"
	          "\"0x5a0000001000\"}");
	/* _ptsz: its base's line, and the stream its own roles give. */
	uint64_t s[] = {0x10, 0x20, 8, 0x5};
	check_raw(
	    "cuMemcpyDtoHAsync_v2_ptsz", s, 4, 0, NULL, NULL,
	    "{\"bytes\":8,\"dir\":\"DtoH\",\"dst\":\"0x10\",\"src\":\"0x20\",\"stream\":\"0x5\"}");
	/* The 32-bit ones (CUDA 3.1's): the high halves of their registers are not theirs. */
	uint64_t v1[] = {0xdead000070000000, 0x5a0000001000, 0xbeef000000001000};
	check_raw(
	    "cuMemcpyHtoD", v1, 3, 0, NULL, NULL,
	    "{\"bytes\":4096,\"dir\":\"HtoD\",\"dst\":\"0x70000000\",\"src\":\"0x5a0000001000\"}");
	uint64_t arr[] = {0xa1, 0x40, 0xa2, 0x80, 512};
	check_raw("cuMemcpyAtoA_v2", arr, 5, 0, NULL, NULL,
	          "{\"bytes\":512,\"dir\":\"DtoD\",\"dst\":\"0xa1\",\"src\":\"0xa2\"}");
	uint64_t ha[] = {0xa1, 0x40, 0x5a00, 64, 0x9};
	check_raw("cuMemcpyHtoAAsync_v2", ha, 5, 0, NULL, NULL,
	          "{\"bytes\":64,\"dir\":\"HtoD\",\"dst\":\"0xa1\",\"src\":\"0x5a00\",\"stream\":"
	          "\"0x9\"}");
}
END_TEST

START_TEST(test_copy_structs)
{
	struct hook_memcpy2d c2 = {0};
	c2.srcMemoryType = HOOK_MEMORYTYPE_HOST;
	c2.srcHost = (void *)0x5a0000002000;
	c2.dstMemoryType = HOOK_MEMORYTYPE_ARRAY;
	c2.dstArray = (void *)0xa7;
	c2.dstDevice = 0xbad;
	c2.WidthInBytes = 100;
	c2.Height = 3;
	uint64_t a[] = {W(&c2), 0x77};
	check_read("cuMemcpy2DAsync_v2", a, 2, 0,
	           "{\"bytes\":300,\"dir\":\"HtoD\",\"dst\":\"0xa7\",\"src\":\"0x5a0000002000\","
	           "\"stream\":\"0x77\"}",
	           NULL);
	struct hook_memcpy3d c3 = {0};
	c3.srcMemoryType = HOOK_MEMORYTYPE_DEVICE;
	c3.srcDevice = 0x7000001000;
	c3.dstMemoryType = HOOK_MEMORYTYPE_UNIFIED;
	c3.dstDevice = 0x7000002000;
	c3.WidthInBytes = 16;
	c3.Height = 4;
	c3.Depth = 2;
	uint64_t b[] = {W(&c3)};
	check_read(
	    "cuMemcpy3D_v2", b, 1, 0,
	    "{\"bytes\":128,\"dir\":\"any\",\"dst\":\"0x7000002000\",\"src\":\"0x7000001000\"}",
	    NULL);
	/* No struct: nothing of it, the stream all the same. */
	uint64_t none[] = {0, 0x77};
	check_read("cuMemcpy2DAsync_v2", none, 2, 1, "{\"stream\":\"0x77\"}", NULL);
	/* The BPF side's view: the gathered words (a[6] on), and whether the read worked. */
	struct cut_api_desc d = desc("cuMemcpy2D_v2");
	ck_assert_uint_eq(d.rd.extra, CUT_EXTRA_GATHER);
	ck_assert_uint_eq(d.rd.nextra, 10);
	ck_assert_uint_eq(d.rd.word[0], offsetof(struct hook_memcpy2d, srcMemoryType) / 8);
	ck_assert_uint_eq(d.rd.word[9], offsetof(struct hook_memcpy2d, Height) / 8);
	uint64_t raw[CUT_API_NARGS] = {0x5a00, 0, 0, 0, 0, 0,
	                               /* types with junk in the padding */
	                               0xffffffff00000002, 0, 0x7000000000, 0, 0xffffffff00000001,
	                               0x5a0000003000, 0, 0, 8, 2};
	check_raw(
	    "cuMemcpy2D_v2", raw, N(raw), 0, NULL, NULL,
	    "{\"bytes\":16,\"dir\":\"DtoH\",\"dst\":\"0x5a0000003000\",\"src\":\"0x7000000000\"}");
}
END_TEST

START_TEST(test_memsets)
{
	uint64_t a[] = {0x7000000000, 0xffffff00000000ab, 1000, 0x3};
	check_raw("cuMemsetD32Async", a, 4, 0, NULL, NULL,
	          "{\"bytes\":4000,\"dst\":\"0x7000000000\",\"value\":171,\"stream\":\"0x3\"}");
	uint64_t b[] = {0x7000000000, 0xffffff00000000ab, 1000};
	check_raw("cuMemsetD8_v2", b, 3, 0, NULL, NULL,
	          "{\"bytes\":1000,\"dst\":\"0x7000000000\",\"value\":171}");
	uint64_t c[] = {0x7000000000, 4096, 0x12345678abcd, 64, 3};
	check_raw("cuMemsetD2D16_v2", c, 5, 0, NULL, NULL,
	          "{\"bytes\":384,\"dst\":\"0x7000000000\",\"value\":43981}");
}
END_TEST

START_TEST(test_outs)
{
	uint64_t dptr = 0x7000000000;
	uint64_t a[] = {W(&dptr), 1 << 20};
	check_read("cuMemAlloc_v2", a, 2, 0, "{\"bytes\":1048576,\"dptr\":\"0x7000000000\"}", NULL);
	/* Failed: out values are not the call's. */
	check_read("cuMemAlloc_v2", a, 2, 2, "{\"bytes\":1048576}", NULL);
	/* A NULL out pointer. */
	uint64_t n[] = {0, 1 << 20};
	check_read("cuMemAlloc_v2", n, 2, 0, "{\"bytes\":1048576}", NULL);
	/* The 32-bit CUdeviceptr of cuMemAlloc: 4 bytes read, never 8. */
	struct {
		uint32_t dptr, beyond;
	} v1 = {0x70000000, 0xdeadbeef};
	uint64_t b[] = {W(&v1.dptr), 4096};
	check_read("cuMemAlloc", b, 2, 0, "{\"bytes\":4096,\"dptr\":\"0x70000000\"}", NULL);
	struct cut_api_desc d = desc("cuMemAlloc");
	ck_assert_uint_eq(d.rd.out[0], 1);
	ck_assert_uint_eq(d.rd.outsize[0], 4);
	/* An int out value, signed. */
	int value = -7;
	uint64_t c[] = {W(&value), 16, 0};
	check_read("cuDeviceGetAttribute", c, 3, 0, "{\"attr\":16,\"dev\":0,\"value\":-7}", NULL);
	uint64_t raw[] = {W(&value), 0xffffffff00000010, 0};
	uint64_t got[2] = {0xdeadbeeffffffff9, 0}; /* the BPF side reads 4 bytes: these are -7 */
	check_raw("cuDeviceGetAttribute", raw, 3, 0, got, NULL,
	          "{\"attr\":16,\"dev\":0,\"value\":-7}");
	/* Pitched: the pitch the call returned times the height; asked width times height when
	 * it failed. Two out values. */
	uint64_t p = 0x7000000000, pitch = 512;
	uint64_t e[] = {W(&p), W(&pitch), 500, 10, 4};
	check_read("cuMemAllocPitch_v2", e, 5, 0, "{\"bytes\":5120,\"dptr\":\"0x7000000000\"}",
	           NULL);
	check_read("cuMemAllocPitch_v2", e, 5, 2, "{\"bytes\":5000}", NULL);
	d = desc("cuMemAllocPitch_v2");
	ck_assert_uint_eq(d.rd.out[0], 2);
	ck_assert_uint_eq(d.rd.out[1], 1);
	/* As the BPF side delivers it. */
	uint64_t outs[2] = {1024, 0x7000000000};
	check_raw("cuMemAllocPitch_v2", e, 5, 0, outs, NULL,
	          "{\"bytes\":10240,\"dptr\":\"0x7000000000\"}");
}
END_TEST

START_TEST(test_launches)
{
	/* 11 words: 6 registers, 5 from the stack (shmem's slot has junk in its high half). */
	uint64_t a[] = {0xf0000, 0xdead000000000040, 1,   1, 256, 1,
	                1,       0xffff000000000400, 0x5, 0, 0};
	check_raw(
	    "cuLaunchKernel", a, 11, 0, NULL, NULL,
	    "{\"func\":\"0xf0000\",\"kernel\":\"vecAdd\",\"grid\":[64,1,1],\"block\":[256,1,1],"
	    "\"shmem\":1024,\"stream\":\"0x5\"}");
	struct cut_api_desc d = desc("cuLaunchKernel_ptsz");
	ck_assert_uint_eq(d.rd.extra, CUT_EXTRA_STACK);
	ck_assert_uint_eq(d.rd.nextra, 3);
	/* Unknown handle: no kernel member. */
	a[0] = 0xf0009;
	check_raw("cuLaunchKernel", a, 11, 0, NULL, NULL,
	          "{\"func\":\"0xf0009\",\"grid\":[64,1,1],\"block\":[256,1,1],\"shmem\":1024,"
	          "\"stream\":\"0x5\"}");
	/* cuLaunchKernelEx: the configuration's words. */
	struct hook_launch_config cf = {8, 4, 2, 128, 2, 1, 2048, (void *)0x9, NULL, 0};
	uint64_t b[] = {W(&cf), 0xe0001, 0, 0};
	check_read("cuLaunchKernelEx", b, 4, 0,
	           "{\"func\":\"0xe0001\",\"kernel\":\"gemm\",\"grid\":[8,4,2],\"block\":[128,2,1],"
	           "\"shmem\":2048,\"stream\":\"0x9\"}",
	           NULL);
	check_read("cuLaunchKernelEx_ptsz", b, 4, 0,
	           "{\"func\":\"0xe0001\",\"kernel\":\"gemm\",\"grid\":[8,4,2],\"block\":[128,2,1],"
	           "\"shmem\":2048,\"stream\":\"0x9\"}",
	           NULL);
	/* No configuration: what the arguments say. */
	uint64_t c[] = {0, 0xe0001, 0, 0};
	check_read("cuLaunchKernelEx", c, 4, 1, "{\"func\":\"0xe0001\",\"kernel\":\"gemm\"}", NULL);
	d = desc("cuLaunchKernelEx");
	ck_assert_uint_eq(d.rd.extra, CUT_EXTRA_ARG0);
	ck_assert_uint_eq(d.rd.nextra, 5);
}
END_TEST

START_TEST(test_names_and_symbols)
{
	uint64_t f = 0xf0003;
	const char *name = "saxpy";
	uint64_t a[] = {W(&f), 0xa0, W(name)};
	struct cut_api_sym sym;
	check_read("cuModuleGetFunction", a, 3, 0,
	           "{\"func\":\"0xf0003\",\"module\":\"0xa0\",\"name\":\"saxpy\"}", &sym);
	ck_assert_uint_eq(sym.handle, 0xf0003);
	ck_assert_uint_eq(sym.len, 5);
	ck_assert(memcmp(sym.name, "saxpy", 5) == 0);
	ck_assert_str_eq(sym.kind, "function");
	/* Failed: the name asked for, no handle, no symbol. */
	check_read("cuModuleGetFunction", a, 3, 500, "{\"module\":\"0xa0\",\"name\":\"saxpy\"}",
	           &sym);
	ck_assert_uint_eq(sym.handle, 0);
	/* The name of a handle named before (cuKernelGetFunction). */
	uint64_t fn = 0xf0001;
	uint64_t b[] = {W(&fn), 0xe0001};
	check_read("cuKernelGetFunction", b, 2, 0,
	           "{\"func\":\"0xf0001\",\"kernel\":\"gemm\",\"handle\":\"0xe0001\"}", &sym);
	ck_assert_uint_eq(sym.handle, 0xf0001);
	ck_assert(memcmp(sym.name, "gemm", 4) == 0 && sym.len == 4);
	/* An out string (cuFuncGetName), only when the call succeeded. */
	const char *got = "k\"1";
	uint64_t c[] = {W(&got), 0xf0002};
	check_read("cuFuncGetName", c, 2, 0, "{\"func\":\"0xf0002\",\"name\":\"k\\\"1\"}", &sym);
	ck_assert_uint_eq(sym.handle, 0xf0002);
	ck_assert_str_eq(sym.kind, "function");
	check_read("cuFuncGetName", c, 2, 1, "{\"func\":\"0xf0002\"}", &sym);
	ck_assert_uint_eq(sym.handle, 0);
	/* An empty name names nothing. */
	const char *empty = "";
	uint64_t e[] = {W(&empty), 0xf0002};
	check_read("cuKernelGetName", e, 2, 0, "{\"handle\":\"0xf0002\"}", &sym);
	ck_assert_uint_eq(sym.handle, 0);
	/* A string is cut where the BPF side cuts it. */
	static char longname[CUT_API_STRLEN + 100];
	memset(longname, 'a', sizeof(longname) - 1);
	uint64_t g[] = {W(&f), 0xa0, W(longname)};
	struct cut_api_desc d = desc("cuModuleGetFunction");
	struct cut_call call;
	cut_api_read(&d, &call, g, 3, 0);
	ck_assert_uint_eq(call.slen, CUT_API_STRLEN - 1);
	ck_assert_uint_eq(d.rd.str, 3);
	ck_assert_uint_eq(d.rd.strmode, CUT_STR_ARG);
}
END_TEST

START_TEST(test_proc_address)
{
	void *fn = (void *)0x5a0000009000;
	/* In the process, words are of their parameter's type (the int version sign-extended). */
	uint64_t a[] = {W("cuInit"), W(&fn), (uint64_t)-1, 2, 0};
	check_read("cuGetProcAddress_v2", a, 5, 0,
	           "{\"symbol\":\"cuInit\",\"version\":-1,\"flags\":2,\"fn\":\"0x5a0000009000\"}",
	           NULL);
	check_read("cuGetProcAddress_v2", a, 5, 500,
	           "{\"symbol\":\"cuInit\",\"version\":-1,\"flags\":2}", NULL);
	/* From registers: the int is the low half, whatever the high half holds. */
	uint64_t r[] = {W("cuInit"), W(&fn), 0x00000000ffffffff, 2, 0};
	uint64_t out[2] = {0x5a0000009000, 0};
	check_raw("cuGetProcAddress_v2", r, 5, 0, out, "cuInit",
	          "{\"symbol\":\"cuInit\",\"version\":-1,\"flags\":2,\"fn\":\"0x5a0000009000\"}");
}
END_TEST

START_TEST(test_roles)
{
	/* No line, no stream or event: nothing to say. */
	struct cut_api_desc d = desc("cuCtxGetCurrent");
	ck_assert(!d.decodes);
	/* No line: the stream and event api.def's roles give, stream first. */
	uint64_t a[] = {0xe1, 0x51};
	check_raw("cuEventRecord", a, 2, 0, NULL, NULL, "{\"stream\":\"0x51\",\"event\":\"0xe1\"}");
	check_raw("cuStreamSynchronize", a + 1, 1, 0, NULL, NULL, "{\"stream\":\"0x51\"}");
	/* A stream set by the call: only when it succeeded. */
	uint64_t s = 0x5100;
	uint64_t b[] = {W(&s), 0};
	check_read("cuStreamCreate", b, 2, 0, "{\"stream\":\"0x5100\"}", NULL);
	check_read("cuStreamCreate", b, 2, 1, "", NULL);
	d = desc("cuStreamCreate");
	ck_assert_uint_eq(d.rd.out[0], 1);
	/* A line with its own "event" member keeps it, and gets no default one. */
	uint64_t c[] = {0x5a00, 0xe1, 0xe2};
	check_raw("cuEventElapsedTime", c, 3, 0, NULL, NULL,
	          "{\"event\":\"0xe1\",\"end\":\"0xe2\"}");
	/* A struct passed by value: the BPF side's registers are not the parameters, so no
	 * default (cuIpcOpenEventHandle's CUevent * comes first, but the rule holds for all). */
	d = desc("cuIpcOpenEventHandle");
	ck_assert(!d.decodes);
	/* Not in api.def (exported, declared nowhere): nothing. */
	d = desc("cuEGLApiInit");
	ck_assert(!d.decodes);
	ck_assert_uint_eq(d.nparams, 0);
}
END_TEST

/* The runtime's words: a dim3 by value is two (x | y << 32, then z), the rest on the stack. */
START_TEST(test_runtime_launches)
{
	/* cudaLaunchKernel(func, dim3 grid, dim3 block, args, size_t shmem, stream) as the BPF
	 * side sees it: z with junk above it (its register's high half), shmem and stream from
	 * the stack. */
	uint64_t a[] = {0x401000,
	                2ull << 32 | 64,
	                0xdead000000000003,
	                1ull << 32 | 256,
	                0xbeef000000000001,
	                0x5a00,
	                4096,
	                0x5};
	check_raw(
	    "cudaLaunchKernel", a, N(a), 0, NULL, NULL,
	    "{\"func\":\"0x401000\",\"kernel\":\"_Z4axpyPf\",\"grid\":[64,2,3],\"block\":[256,"
	    "1,1],\"shmem\":4096,\"stream\":\"0x5\"}");
	struct cut_api_desc d = desc("cudaLaunchKernel_ptsz");
	ck_assert(d.runtime && !d.noret && !d.silent);
	ck_assert_uint_eq(d.nparams, 8);
	ck_assert_uint_eq(d.rd.extra, CUT_EXTRA_STACK);
	ck_assert_uint_eq(d.rd.nextra, 2);
	/* A host function is not a driver handle, nor the reverse. */
	a[0] = 0xf0000;
	check_raw("cudaLaunchKernel", a, N(a), 0, NULL, NULL,
	          "{\"func\":\"0xf0000\",\"grid\":[64,2,3],\"block\":[256,1,1],\"shmem\":4096,"
	          "\"stream\":\"0x5\"}");
	/* cudaLaunchKernelExC: cudaLaunchConfig_t lays out as CUlaunchConfig. */
	struct hook_launch_config cf = {8, 4, 2, 128, 2, 1, 2048, (void *)0x9, NULL, 0};
	uint64_t b[] = {W(&cf), 0x401000, 0};
	check_read("cudaLaunchKernelExC_ptsz", b, N(b), 0,
	           "{\"func\":\"0x401000\",\"kernel\":\"_Z4axpyPf\",\"grid\":[8,4,2],\"block\":["
	           "128,2,1],\"shmem\":2048,\"stream\":\"0x9\"}",
	           NULL);
	/* nvcc's __cudaLaunchKernel (CUDA 13's host stubs) is recorded as cudaLaunchKernel
	 * (rt.def), and decoded as it is. */
	d = desc("__cudaLaunchKernel");
	ck_assert(d.runtime && d.row);
	a[0] = 0x401000;
	check_raw(
	    "__cudaLaunchKernel_ptsz", a, N(a), 0, NULL, NULL,
	    "{\"func\":\"0x401000\",\"kernel\":\"_Z4axpyPf\",\"grid\":[64,2,3],\"block\":[256,"
	    "1,1],\"shmem\":4096,\"stream\":\"0x5\"}");
}
END_TEST

START_TEST(test_runtime_copies)
{
	/* The direction from cudaMemcpyKind: 1 HtoD ... 4 default; an unknown one: none. */
	uint64_t a[] = {0x7000000000, 0x5a0000001000, 4096, 1, 0x5};
	check_raw("cudaMemcpyAsync", a, N(a), 0, NULL, NULL,
	          "{\"bytes\":4096,\"dir\":\"HtoD\",\"dst\":\"0x7000000000\",\"src\":"
	          "\"0x5a0000001000\",\"stream\":\"0x5\"}");
	a[3] = 0xffffffff00000004;
	check_raw("cudaMemcpy", a, 4, 0, NULL, NULL,
	          "{\"bytes\":4096,\"dir\":\"any\",\"dst\":\"0x7000000000\",\"src\":"
	          "\"0x5a0000001000\"}");
	a[3] = 9;
	check_raw("cudaMemcpy_ptds", a, 4, 0, NULL, NULL,
	          "{\"bytes\":4096,\"dst\":\"0x7000000000\",\"src\":\"0x5a0000001000\"}");
	/* 2D: width times height; the kind and the stream on the stack. */
	uint64_t b[] = {0x7000000000, 512, 0x5a00, 256, 100, 3, 2, 0x7};
	check_raw(
	    "cudaMemcpy2DAsync_ptsz", b, N(b), 0, NULL, NULL,
	    "{\"bytes\":300,\"dir\":\"DtoH\",\"dst\":\"0x7000000000\",\"src\":\"0x5a00\",\"stream\""
	    ":\"0x7\"}");
	uint64_t c[] = {0x7000000000, 0xffffffff000000ab, 1000};
	check_raw("cudaMemset", c, N(c), 0, NULL, NULL,
	          "{\"bytes\":1000,\"dst\":\"0x7000000000\",\"value\":171}");
	uint64_t p[] = {0x7100000000, 1, 0x7000000000, 0, 64};
	check_raw("cudaMemcpyPeer", p, N(p), 0, NULL, NULL,
	          "{\"bytes\":64,\"dir\":\"DtoD\",\"dst\":\"0x7100000000\",\"src\":"
	          "\"0x7000000000\"}");
}
END_TEST

START_TEST(test_runtime_outs)
{
	/* 8-byte decimal out values. */
	size_t free_b = 5ull << 32, total = 80ull << 30;
	uint64_t a[] = {W(&free_b), W(&total)};
	check_read("cudaMemGetInfo", a, 2, 0, "{\"free\":21474836480,\"total\":85899345920}", NULL);
	check_read("cudaMemGetInfo", a, 2, 2, "", NULL);
	void *dptr = (void *)0x7000000000;
	uint64_t b[] = {W(&dptr), 1 << 20, 0x3};
	check_read("cudaMallocAsync_ptsz", b, N(b), 0,
	           "{\"bytes\":1048576,\"dptr\":\"0x7000000000\",\"stream\":\"0x3\"}", NULL);
	void *stream = (void *)0x5100;
	uint64_t c[] = {W(&stream), 1, (uint64_t)-2};
	check_read("cudaStreamCreateWithPriority", c, N(c), 0,
	           "{\"stream\":\"0x5100\",\"priority\":-2}", NULL);
	/* Functions that return no cudaError_t. */
	ck_assert(desc("cudaGetErrorString").noret);
	ck_assert(desc("cudaCreateChannelDesc").noret);
	ck_assert(!desc("cudaMalloc").noret);
}
END_TEST

START_TEST(test_runtime_register)
{
	/* __cudaRegisterFunction names the stub after the kernel, and is no event itself. */
	struct cut_api_desc d = desc("__cudaRegisterFunction");
	ck_assert(d.runtime && d.silent && d.noret);
	uint64_t a[] = {0x5a00, 0x401000, W("_Z4axpyPf"), W("_Z4axpyPf"), (uint64_t)-1, 0, 0, 0,
	                0,      0};
	struct cut_api_sym sym;
	check_read("__cudaRegisterFunction", a, N(a), 0, "{\"name\":\"_Z4axpyPf\"}", &sym);
	ck_assert_uint_eq(sym.handle, 0x401000);
	ck_assert_uint_eq(sym.len, 9);
	ck_assert_str_eq(sym.kind, "function");
	ck_assert_uint_eq(d.rd.str, 4);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("api_args");
	TCase *tc = tcase_create("api_args");
	tcase_add_test(tc, test_rows_describe);
	tcase_add_test(tc, test_pure);
	tcase_add_test(tc, test_copies);
	tcase_add_test(tc, test_copy_structs);
	tcase_add_test(tc, test_memsets);
	tcase_add_test(tc, test_outs);
	tcase_add_test(tc, test_launches);
	tcase_add_test(tc, test_names_and_symbols);
	tcase_add_test(tc, test_proc_address);
	tcase_add_test(tc, test_roles);
	tcase_add_test(tc, test_runtime_launches);
	tcase_add_test(tc, test_runtime_copies);
	tcase_add_test(tc, test_runtime_outs);
	tcase_add_test(tc, test_runtime_register);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
