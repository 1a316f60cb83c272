/* test_demangle.c: real kernel names demangled as c++filt does, hostile names bounded, the
 * shortening rule, and the collective kernels' rule. */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "check_main.h"
#include "classify.h"
#include "demangle.h"
#include "reader.h"

static const char *
top(void)
{
	const char *t = getenv("CUT_TOP");
	return t ? t : ".";
}

/* Whether s is well-formed UTF-8 (no character cut short). */
static int
utf8_ok(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int n = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 : 3;
		if ((*p & 0xc0) == 0x80 || (*p & 0xf8) == 0xf8)
			return 0;
		for (p++; n--; p++)
			if ((*p & 0xc0) != 0x80)
				return 0;
	}
	return 1;
}

START_TEST(test_real_names)
{
	/* tests/fixtures/demangle-names.tsv: names of the samples, with c++filt -r's output
	 * (two of them past the 1,024 bytes __cxa_demangle refuses). */
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/fixtures/demangle-names.tsv", top());
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	char *line = NULL;
	size_t cap = 0;
	int n = 0, long_names = 0;
	while (getline(&line, &cap, f) > 0) {
		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		char *tab = strchr(line, '\t');
		ck_assert_ptr_nonnull(tab);
		*tab = '\0';
		const char *d = cut_demangle(line);
		ck_assert_str_eq(d, tab + 1);
		ck_assert_ptr_eq(cut_demangle(line), d); /* cached */
		long_names += strlen(line) > 1024;
		n++;
	}
	free(line);
	fclose(f);
	ck_assert_int_eq(n, 19);
	ck_assert_int_ge(long_names, 3);
	ck_assert_str_eq(cut_demangle("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLv"),
	                 "ncclDevKernel_AllReduce_Sum_f32_RING_LL()");
	ck_assert_str_eq(cut_demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_"
	                              "11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"),
	                 "void at::native::vectorized_elementwise_kernel<4, "
	                 "at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, "
	                 "at::native::FillFunctor<float>, std::array<char*, 1ul>)");
	cut_demangle_free();
}
END_TEST

struct seen {
	int mangled, demangled;
};

static void
count(struct seen *s, const char *name)
{
	if (!name || strncmp(name, "_Z", 2) != 0)
		return;
	const char *d = cut_demangle(name);
	s->mangled++;
	s->demangled += d != name && strncmp(d, "_Z", 2) != 0;
}

/* The kernels' names: the gpu records' and the symbol records' (args.name). */
static void
each_name(struct cut_reader *r, struct cut_event *ev, void *arg)
{
	(void)r;
	static char name[CUT_DEMANGLE_MAX + 2];
	count(arg, ev->name);
	if (ev->layer == CUT_META && ev->name && strcmp(ev->name, "symbol") == 0 &&
	    cut_args_str(ev->args, "name", name, sizeof(name)) >= 0)
		count(arg, name);
}

START_TEST(test_every_sample_name)
{
	/* Every mangled name of the samples demangles (the 371 over 1 KB too). */
	char pat[4096];
	snprintf(pat, sizeof(pat), "%s/samples/*-gpu.jsonl.zst", top());
	glob_t g;
	ck_assert_int_eq(glob(pat, 0, NULL, &g), 0);
	struct seen s = {0, 0};
	cut_read_all((int)g.gl_pathc, g.gl_pathv, each_name, &s);
	globfree(&g);
	ck_assert_int_gt(s.mangled, 20000);
	ck_assert_int_eq(s.demangled, s.mangled);
	cut_demangle_free();
}
END_TEST

START_TEST(test_not_mangled)
{
	static const char *const names[] = {
	    "cuLaunchKernel",
	    "ncclDevKernel_AllReduce",
	    "",
	    "_",
	    "_Z",
	    "_Zx",
	    "_ZN",
	    "_Z3fo",
	    "_ZN2at6native29vectorized_elementwise_kernelILi4E",
	    "_Z1fv garbage",
	    "memcpy HtoD",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_msg(cut_demangle(names[i]) == names[i], "%s: %s", names[i],
		              cut_demangle(names[i]));
	ck_assert_ptr_null(cut_demangle(NULL));
	ck_assert_ptr_null(cut_name_short(NULL, 10));
	/* A failure is cached too: the same answer the second time. */
	ck_assert_ptr_eq(cut_demangle("_Zx"), "_Zx");
	cut_demangle_free();
	ck_assert_str_eq(cut_demangle("_Z1fv"), "f()");  /* the cache starts again */
	ck_assert_str_eq(cut_demangle("_Z3foo"), "foo"); /* a variable */
	cut_demangle_free();
}
END_TEST

/* A string of n copies of s between head and tail (malloc'd). */
static char *
repeat(const char *head, const char *s, size_t n, const char *tail)
{
	size_t hl = strlen(head), sl = strlen(s), tl = strlen(tail);
	char *r = malloc(hl + n * sl + tl + 1), *p = r;
	ck_assert_ptr_nonnull(r);
	memcpy(p, head, hl);
	p += hl;
	for (size_t i = 0; i < n; i++, p += sl)
		memcpy(p, s, sl);
	memcpy(p, tail, tl + 1);
	return r;
}

/* Substitution index k (0: "S_", 1: "S0_", ... base 36). */
static void
sub(char *out, unsigned k)
{
	if (k == 0) {
		strcpy(out, "S_");
		return;
	}
	char d[16];
	int n = 0;
	for (k--;; k /= 36) {
		d[n++] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[k % 36];
		if (k < 36)
			break;
	}
	char *p = out;
	*p++ = 'S';
	while (n)
		*p++ = d[--n];
	strcpy(p, "_");
}

START_TEST(test_long_names)
{
	/* Past the 1,024 bytes __cxa_demangle refuses, to the limit; past it, as is. */
	char head[32];
	snprintf(head, sizeof(head), "_Z%d", CUT_DEMANGLE_MAX - 8);
	char *name = repeat(head, "a", CUT_DEMANGLE_MAX - 8, "v");
	ck_assert_uint_le(strlen(name), CUT_DEMANGLE_MAX);
	const char *d = cut_demangle(name);
	ck_assert_uint_eq(strlen(d), (size_t)CUT_DEMANGLE_MAX - 8 + 2);
	ck_assert_str_eq(d + strlen(d) - 3, "a()");
	free(name);
	snprintf(head, sizeof(head), "_Z%d", CUT_DEMANGLE_MAX);
	name = repeat(head, "a", CUT_DEMANGLE_MAX, "v");
	ck_assert_ptr_eq(cut_demangle(name), name);
	free(name);
	name = repeat("_Z1f", "i", 50 << 20, ""); /* 50 MB */
	ck_assert_ptr_eq(cut_demangle(name), name);
	free(name);
	cut_demangle_free();
}
END_TEST

/* "_Z1f1AIS_S_E", then each type two of the one before, k times: the demangled name doubles
 * each time (malloc'd). */
static char *
doubling(unsigned k)
{
	char *s = malloc(16 + 16 * (size_t)k), a[16];
	ck_assert_ptr_nonnull(s);
	strcpy(s, "_Z1f1AIS_S_E");
	for (unsigned i = 1; i <= k; i++) {
		sub(a, i);
		sprintf(s + strlen(s), "S_I%s%sE", a, a);
	}
	return s;
}

START_TEST(test_hostile_names)
{
	/* Nesting that drives a recursive demangler deep, at the largest length demangled
	 * (head, n units, middle, n closers, tail): each gives the name or its demangling, and
	 * none takes the stack down. */
	static const struct {
		const char *head, *unit, *mid, *close, *tail;
		size_t size; /* of a unit and its closer */
	} deep[] = {
	    {"_Z1f", "P", "i", "", "", 1},           /* pointers */
	    {"_Z1f", "A1_", "i", "", "", 3},         /* arrays */
	    {"_Z1fI", "1AI", "i", "E", "Ev", 4},     /* templates */
	    {"_Z1f", "PF", "v", "E", "", 3},         /* function types */
	    {"_Z1fIN", "1a", "EEvv", "", "", 2},     /* nested names */
	    {"_Z1fIiEvDT", "ps", "fp_E", "", "", 2}, /* expressions */
	    {"_Z1fI", "J", "i", "E", "Ev", 2},       /* argument packs */
	};
	for (size_t i = 0; i < sizeof(deep) / sizeof(deep[0]); i++) {
		size_t n = (CUT_DEMANGLE_MAX - 16) / deep[i].size;
		char *closers = repeat("", deep[i].close, n, deep[i].tail);
		char *mid = malloc(strlen(deep[i].mid) + strlen(closers) + 1);
		ck_assert_ptr_nonnull(mid);
		strcpy(mid, deep[i].mid);
		strcat(mid, closers);
		char *name = repeat(deep[i].head, deep[i].unit, n, mid);
		ck_assert_uint_le(strlen(name), CUT_DEMANGLE_MAX);
		const char *d = cut_demangle(name);
		ck_assert_ptr_nonnull(d);
		ck_assert_uint_le(strlen(d), 64 * strlen(name));
		free(name);
		free(mid);
		free(closers);
	}
	/* Many templates times many references: the printer's stack arrays grow with the
	 * product (64 MB for this one, 8 KB long). Refused. */
	char *many = repeat("_Z1fI", "1AIiE", 1000, "Ev");
	char *name = repeat(many, "RT_", 1000, "");
	ck_assert_ptr_eq(cut_demangle(name), name);
	free(many);
	free(name);
	/* Back references that double the output: 2^60 times the first type's length from 700
	 * bytes. Refused, in about the time the allowed output takes. */
	name = doubling(60);
	clock_t t0 = clock();
	ck_assert_ptr_eq(cut_demangle(name), name);
	ck_assert_msg(clock() - t0 < 2 * CLOCKS_PER_SEC, "exponential name took %.1f s",
	              (double)(clock() - t0) / CLOCKS_PER_SEC);
	free(name);
	/* A few doublings are a name like any other. */
	name = doubling(3);
	ck_assert_str_eq(cut_demangle(name),
	                 "f(A<A, A>, A<A<A, A>, A<A, A> >, A<A<A<A, A>, A<A, A> >, A<A<A, A>, "
	                 "A<A, A> > >, A<A<A<A<A, A>, A<A, A> >, A<A<A, A>, A<A, A> > >, "
	                 "A<A<A<A, A>, A<A, A> >, A<A<A, A>, A<A, A> > > >)");
	free(name);
	/* Every prefix of a real name: a name cut short demangles or is left as is. */
	const char *real = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEES"
	                   "t5arrayIPcLm1EEEEviT0_T1_";
	char cutname[256];
	for (size_t k = 0; k <= strlen(real); k++) {
		memcpy(cutname, real, k);
		cutname[k] = '\0';
		const char *d = cut_demangle(cutname);
		ck_assert(d == cutname || strncmp(d, "_Z", 2) != 0);
	}
	cut_demangle_free();
}
END_TEST

START_TEST(test_short_rule)
{
	const char *n = "void at::native::vectorized_elementwise_kernel<4, "
	                "at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, "
	                "at::native::FillFunctor<float>, std::array<char*, 1ul>)";
	size_t w = cut_name_cols(n);
	ck_assert_uint_eq(w, strlen(n));
	ck_assert_ptr_eq(cut_name_short(n, w), n);
	ck_assert_ptr_eq(cut_name_short(n, 0), n);
	/* The deepest level first, the last list of it first. */
	ck_assert_str_eq(cut_name_short(n, w - 1),
	                 "void at::native::vectorized_elementwise_kernel<4, "
	                 "at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, "
	                 "at::native::FillFunctor<float>, std::array<…>)");
	const char *inner = "void at::native::vectorized_elementwise_kernel<4, "
	                    "at::native::FillFunctor<…>, std::array<…> >(int, "
	                    "at::native::FillFunctor<…>, std::array<…>)";
	ck_assert_str_eq(cut_name_short(n, cut_name_cols(inner)), inner);
	/* Then the level above: the parameters, then the template arguments. */
	const char *params = "void at::native::vectorized_elementwise_kernel<4, "
	                     "at::native::FillFunctor<…>, std::array<…> >(…)";
	ck_assert_str_eq(cut_name_short(n, cut_name_cols(inner) - 1), params);
	ck_assert_str_eq(cut_name_short(n, cut_name_cols(params)), params);
	const char *outer = "void at::native::vectorized_elementwise_kernel<…>(…)";
	ck_assert_str_eq(cut_name_short(n, cut_name_cols(params) - 1), outer);
	ck_assert_str_eq(cut_name_short(n, cut_name_cols(outer)), outer);
	ck_assert_str_eq(cut_name_short(n, cut_name_cols(outer) - 1),
	                 "void at::native::vectorized_elementwise_kernel<…>(…");
	ck_assert_str_eq(cut_name_short(n, 10), "void at::…");
	ck_assert_str_eq(cut_name_short(n, 1), "…");
	/* Cached per name and width. */
	ck_assert_ptr_eq(cut_name_short(n, 10), cut_name_short(n, 10));

	/* Operators' brackets, "(anonymous namespace)", "->" and a comparison are not lists. */
	const char *op = "std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, "
	                 "char const*)";
	ck_assert_str_eq(cut_name_short(op, 60),
	                 "std::ostream& std::operator<< <std::char_traits<…> >(…)");
	ck_assert_str_eq(cut_name_short(op, 40), "std::ostream& std::operator<< <…>(…)");
	const char *call = "void (anonymous namespace)::F::operator()<float>(float)";
	ck_assert_str_eq(cut_name_short(call, 50),
	                 "void (anonymous namespace)::F::operator()<…>(…)");
	const char *arrow = "void k<decltype (a->b), ((1)>(2))>(int, long)";
	ck_assert_str_eq(cut_name_short(arrow, 30), "void k<decltype (…), (…)>(…)");
	ck_assert_str_eq(cut_name_short(arrow, 20), "void k<…>(…)");
	const char *lt = "void k<(a<b), int>(long, long)";
	ck_assert_str_eq(cut_name_short(lt, 20), "void k<(…), int>(…)");
	/* A list of one character stays. */
	ck_assert_str_eq(cut_name_short("f<4>(int, int, int, int)", 10), "f<4>(…)");
	/* Unbalanced brackets are text; the cut comes last. */
	ck_assert_str_eq(cut_name_short(")>a<(b", 5), ")>a<…");

	/* UTF-8: columns are characters, and no cut falls inside one. */
	const char *u = "f<ééééé>(ççççç)";
	ck_assert_uint_eq(cut_name_cols(u), 15);
	ck_assert_str_eq(cut_name_short(u, 14), "f<ééééé>(…)");
	ck_assert_str_eq(cut_name_short(u, 10), "f<…>(…)");
	const char *flat = "éééééééééé";
	for (size_t k = 1; k <= 10; k++) {
		const char *s = cut_name_short(flat, k);
		ck_assert_uint_eq(cut_name_cols(s), k);
		ck_assert(utf8_ok(s));
	}
	cut_demangle_free();
}
END_TEST

START_TEST(test_short_any_width)
{
	/* Every width of every fixture name: within the width, whole characters, and the
	 * start of the name kept. */
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/fixtures/demangle-names.tsv", top());
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		const char *d = strchr(line, '\t') + 1;
		size_t cols = cut_name_cols(d);
		for (size_t w = 1; w <= cols; w += 1 + w / 8) {
			const char *s = cut_name_short(d, w);
			ck_assert_uint_le(cut_name_cols(s), w);
			ck_assert(utf8_ok(s));
			if (w > 1)
				ck_assert_int_eq(s[0], d[0]);
		}
		cut_demangle_free();
	}
	free(line);
	fclose(f);
}
END_TEST

START_TEST(test_collective)
{
	static const struct {
		const char *name, *coll;
	} cases[] = {
	    {"_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLv", "AllReduce"},
	    {"_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
	     "AllReduce"},
	    {"_Z38ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevCommmP8ncclWork", "AllReduce"},
	    {"_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE", "SendRecv"},
	    {"_Z30ncclSymkDevKernel_AllGather_LL21ncclSymkDevWorkArgs4K", "AllGather"},
	    {"_Z35ncclDevKernel_Reduce_Sum_u8_RING_LL24ncclDevKernelArgsStorageILm4096EE",
	     "Reduce"},
	    {"_Z43ncclDevKernel_ReduceScatter_Sum_f32_RING_LLv", "ReduceScatter"},
	    {"_Z31ncclDevKernel_Broadcast_RING_LL24ncclDevKernelArgsStorageILm4096EE", "Broadcast"},
	    {"_Z21ncclDevKernel_Generic24ncclDevKernelArgsStorageILm4096EE", "collective"},
	    {"_ZL10ncclKernelv", "collective"},
	    {"_Z33ncclAllReduceRingLLKernel_sum_f3214CollectiveArgs", "AllReduce"},
	    {"_Z26ncclSendRecvKernel_copy_i814CollectiveArgs", "SendRecv"},
	    {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
	     "AllReduce"},
	    {"ncclDevKernel_AllGather_RING_LL", "AllGather"},
	    {"ncclKernel", "collective"},
	    {"ncclKernel3", "collective"},
	    {"rcclKernel_AllToAll", "AllToAll"},
	    {"ncclDevKernel_AllToAllPivot_RING_SIMPLE", "AllToAllPivot"},
	    {"ncclDevKernel_Sendrecv", "collective"},
	    /* not collective kernels */
	    {"ncclAllReduce", NULL},
	    {"ncclKernelFoo", NULL},
	    {"NCCLKernel_AllReduce", NULL},
	    {"nccl", NULL},
	    {"", NULL},
	    {"gemm", NULL},
	    {"my_ncclDevKernel_AllReduce", NULL},
	    {"_Z10ncclKernelv", "collective"},
	    {"_Z9ncclKernev", NULL}, /* the identifier is "ncclKerne" */
	    {"_Z0ncclKernel", NULL},
	    {"_Z99999999999999999999999ncclKernel_Send", "Send"}, /* the rest */
	    {"_Z13ncclDevKernel", "collective"},
	    {"_ZN4nccl6KernelEv", NULL},
	    {"_ZN2at6native29vectorized_elementwise_kernelILi4EEEvv", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *c = cut_collective(cases[i].name);
		if (!cases[i].coll)
			ck_assert_msg(c == NULL, "%s: %s", cases[i].name, c);
		else
			ck_assert_msg(c && strcmp(c, cases[i].coll) == 0, "%s: %s, want %s",
			              cases[i].name, c ? c : "NULL", cases[i].coll);
		ck_assert_int_eq(cut_is_collective(cases[i].name), cases[i].coll != NULL);
		/* The demangled name is the same collective. */
		const char *d = cut_demangle(cases[i].name);
		if (d != cases[i].name && cases[i].coll)
			ck_assert_str_eq(cut_collective(d), cases[i].coll);
	}
	ck_assert_ptr_null(cut_collective(NULL));
	cut_demangle_free();
}
END_TEST

static Suite *
demangle_suite(void)
{
	Suite *s = suite_create("demangle");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_real_names);
	tcase_add_test(tc, test_every_sample_name);
	tcase_add_test(tc, test_not_mangled);
	tcase_add_test(tc, test_long_names);
	tcase_add_test(tc, test_hostile_names);
	tcase_add_test(tc, test_short_rule);
	tcase_add_test(tc, test_short_any_width);
	tcase_add_test(tc, test_collective);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(demangle_suite());
}
