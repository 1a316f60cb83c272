/* test_containers.c: the id map (growth, collisions, adversarial keys, deletion against a
 * model) and the (ts, seq) heap (against sorting, ties, fixing the top in place). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "heap.h"
#include "idmap.h"

/* Check's ck_assert records its place on every call (a write to its log); these loops make
 * millions of checks, so they test first and only call Check to fail. */
#define EQ(a, b)                                                                                   \
	do {                                                                                       \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                   \
		if (a_ != b_)                                                                      \
			ck_abort_msg("%s:%d: %s == %llu, %s == %llu", __FILE__, __LINE__, #a,      \
			             (unsigned long long)a_, #b, (unsigned long long)b_);          \
	} while (0)
#define TRUE(c) EQ(!!(c), 1)

static uint64_t rng = 88172645463325252u;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

START_TEST(test_idmap_growth)
{
	struct cut_idmap *m = idmap_new();
	bool isnew;
	EQ(idmap_get(m, 7), IDMAP_NONE);
	EQ(idmap_del(m, 7), IDMAP_NONE);
	for (int64_t k = 0; k < 100000; k++) {
		EQ(idmap_put(m, k * 7919 - 50000, &isnew), (size_t)k);
		TRUE(isnew);
	}
	for (int64_t k = 0; k < 100000; k++) {
		EQ(idmap_put(m, k * 7919 - 50000, &isnew), (size_t)k);
		TRUE(!isnew);
		EQ(idmap_get(m, k * 7919 - 50000), (size_t)k);
	}
	EQ(idmap_len(m), 100000);
	EQ(idmap_span(m), 100000);
	EQ(idmap_get(m, 1), IDMAP_NONE);
	/* The extremes are keys like any other; (k, 0) is the single key k. */
	EQ(idmap_put(m, INT64_MIN, NULL), 100000);
	EQ(idmap_put2(m, INT64_MAX, INT64_MIN, NULL), 100001);
	EQ(idmap_get2(m, -50000, 0), 0);
	EQ(idmap_get2(m, INT64_MIN, 0), 100000);
	EQ(idmap_get2(m, INT64_MAX, INT64_MAX), IDMAP_NONE);
	idmap_free(m);
}
END_TEST

/* Keys that share their low bits (pages, pointers, pids shifted into high bits) or differ
 * only in the second half of a pair must not pile up in one probe run: 2^18 of each kind in
 * well under a second, where clustering would make it quadratic. */
START_TEST(test_idmap_adversarial)
{
	static const int64_t step[] = {4096, (int64_t)1 << 32, (int64_t)1 << 40, 1 << 20};
	const int64_t n = 1 << 18;
	for (size_t s = 0; s < sizeof(step) / sizeof(step[0]); s++) {
		struct cut_idmap *m = idmap_new();
		clock_t t0 = clock();
		for (int64_t k = 0; k < n; k++) {
			EQ(idmap_put(m, k * step[s], NULL), (size_t)(2 * k));
			EQ(idmap_put2(m, 77, 0x7f0000000000 + k * step[s], NULL),
			   (size_t)(2 * k + 1));
		}
		for (int64_t k = 0; k < n; k++) {
			EQ(idmap_get(m, k * step[s]), (size_t)(2 * k));
			EQ(idmap_get2(m, 77, 0x7f0000000000 + k * step[s]), (size_t)(2 * k + 1));
			EQ(idmap_get2(m, 78, 0x7f0000000000 + k * step[s]), IDMAP_NONE);
		}
		double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
		ck_assert_msg(secs < 2.0, "step %lld: %.2f s", (long long)step[s], secs);
		idmap_free(m);
	}
}
END_TEST

/* Random puts and deletes of pairs from a small key space (long probe runs, many shifts
 * back), checked after each step against a plain array. */
START_TEST(test_idmap_delete)
{
	enum { NKEYS = 3000 };
	static size_t model[NKEYS]; /* index of key i, or IDMAP_NONE */
	static bool used[NKEYS + 1];
	struct cut_idmap *m = idmap_new();
	size_t live = 0, maxlive = 0, lastfreed = IDMAP_NONE;
	for (int i = 0; i < NKEYS; i++)
		model[i] = IDMAP_NONE;
	for (int step = 0; step < 400000; step++) {
		int k = (int)(rnd() % NKEYS);
		int64_t a = k % 7, b = (int64_t)(k / 7) * 4096;
		bool isnew;
		if (rnd() % 3) {
			size_t idx = idmap_put2(m, a, b, &isnew);
			TRUE(isnew == (model[k] == IDMAP_NONE));
			if (isnew) {
				TRUE(!used[idx]); /* an index given twice */
				if (lastfreed != IDMAP_NONE)
					EQ(idx, lastfreed); /* the last freed first */
				used[idx] = true;
				model[k] = idx;
				live++;
				lastfreed = IDMAP_NONE;
			}
			EQ(idx, model[k]);
		} else {
			size_t idx = idmap_del2(m, a, b);
			EQ(idx, model[k]);
			if (idx != IDMAP_NONE) {
				used[idx] = false;
				model[k] = IDMAP_NONE;
				live--;
				lastfreed = idx;
			}
		}
		maxlive = live > maxlive ? live : maxlive;
		if (step % 997 == 0)
			for (int j = 0; j < NKEYS; j++)
				EQ(idmap_get2(m, j % 7, (int64_t)(j / 7) * 4096), model[j]);
		EQ(idmap_len(m), live);
	}
	ck_assert_uint_le(idmap_span(m), maxlive); /* freed indices were reused */
	idmap_free(m);
}
END_TEST

struct item {
	struct cut_heap_key key;
	uint64_t payload[3];
};

static int
by_key(const void *x, const void *y)
{
	const struct item *a = x, *b = y;
	if (a->key.ts != b->key.ts)
		return a->key.ts < b->key.ts ? -1 : 1;
	return a->key.seq < b->key.seq ? -1 : a->key.seq > b->key.seq;
}

START_TEST(test_heap_order)
{
	enum { N = 50000 };
	static struct item in[N], out[N];
	struct cut_heap h;
	heap_init(&h, sizeof(struct item));
	ck_assert_ptr_null(heap_top(&h));
	TRUE(!heap_pop(&h, NULL));
	for (int round = 0; round < 2; round++) {
		for (uint64_t i = 0; i < N; i++) {
			/* few distinct times, so the seq decides often; negative ones too */
			in[i].key.ts = (int64_t)(rnd() % 200) - 100;
			in[i].key.seq = i;
			in[i].payload[0] = in[i].payload[2] = ~i;
			heap_push(&h, &in[i]);
		}
		EQ(heap_len(&h), N);
		qsort(in, N, sizeof(in[0]), by_key);
		for (int i = 0; i < N; i++) {
			TRUE(heap_pop(&h, &out[i]));
			EQ(out[i].key.ts, in[i].key.ts);
			EQ(out[i].key.seq, in[i].key.seq);
			EQ(out[i].payload[2], ~out[i].key.seq);
		}
		TRUE(!heap_pop(&h, NULL));
	}
	heap_free(&h);
}
END_TEST

/* Interleaved pushes, pops and keys raised in place, as the merge of inputs does. */
START_TEST(test_heap_fix_top)
{
	struct cut_heap h;
	heap_init(&h, sizeof(struct item));
	for (uint64_t i = 0; i < 16; i++)
		heap_push(&h, &(struct item){{(int64_t)(i * 37 % 16), i}, {0}});
	int64_t last = INT64_MIN;
	for (int step = 0; step < 100000; step++) {
		struct item *top = heap_top(&h);
		TRUE(top->key.ts >= last);
		last = top->key.ts;
		for (size_t i = 0; i < heap_len(&h); i++)
			TRUE(((struct item *)heap_at(&h, i))->key.ts >= top->key.ts);
		if (step % 5 == 0) {
			struct item x;
			heap_pop(&h, &x);
			x.key.ts += (int64_t)(rnd() % 10);
			heap_push(&h, &x);
		} else {
			top->key.ts += (int64_t)(rnd() % 10);
			heap_fix_top(&h);
		}
	}
	heap_free(&h);
	EQ(heap_len(&h), 0);
	heap_push(&h, &(struct item){{1, 1}, {0}}); /* reusable after heap_free */
	EQ(((struct item *)heap_top(&h))->key.ts, 1);
	heap_free(&h);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("containers");
	TCase *tc = tcase_create("containers");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_idmap_growth);
	tcase_add_test(tc, test_idmap_adversarial);
	tcase_add_test(tc, test_idmap_delete);
	tcase_add_test(tc, test_heap_order);
	tcase_add_test(tc, test_heap_fix_top);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
