/* mark.c: libcuthook's marks for cutcapture (hook.h). When cutcapture runs a command with the
 * library preloaded, its uprobes on libcuda see the library's own driver calls (the gpu layer's
 * events and queries) as well as the program's; and the work the gpu layer times has its corr
 * only here. Each thread's mark says both: a uprobe reads it at the call's entry and return. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hook.h"
#include "hooklib.h"
#include "layer.h"

HOOK_TLS struct hook_mark hook_mark;
int hook_skip_api;
unsigned char hook_keep[HOOK_NAPI];
static int marking;

_Static_assert(sizeof(struct hook_mark) == 4, "records.h's struct cc_hook_mark");

void
hook_mark_init(void)
{
	const char *m = getenv("CUTHOOK_MARK");
	marking = m && !strcmp(m, "1");
	hook_skip_api = hook_layer_skipped(CUT_API);
	bool gpu = hook_layer_wanted(CUT_GPU);
	for (int id = 0; hook_skip_api && id < HOOK_NAPI; id++)
		hook_keep[id] = cut_hook_unprobed(hook_names[id], gpu);
}

/*
 * What cutcapture probes: the address of a thread's mark, and whether the thread is the
 * library's own. Exported under this name (cutcapture finds it in the dynamic symbol table),
 * never inlined and with a side effect the compiler must keep, so that every call reaches it.
 */
HOOK_EXPORT __attribute__((noinline)) void
cuthook_mark_thread(struct hook_mark *mark, int own_thread)
{
	__asm__ volatile("" : : "r"(mark), "r"(own_thread) : "memory");
}

void
hook_mark_thread(int own_thread)
{
	static HOOK_TLS int own; /* once the library's own, always */
	own |= own_thread;
	if (marking)
		cuthook_mark_thread(&hook_mark, own);
}
