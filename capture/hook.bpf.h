// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* hook.bpf.h: libcuthook's marks. A command cutcapture starts runs with libcuthook preloaded
 * (for the gpu and nvtx layers, which eBPF cannot see); each of its threads registers the
 * address of its mark through cuthook_mark_thread(mark, own_thread), probed here: the api,
 * runtime and off-CPU programs leave the library's own thread out, the ioctl programs also
 * the ioctls of driver calls the library makes for itself on the program's threads (its mark
 * says so: hook_own). The driver functions the library calls on those threads, and those
 * whose work it times, are not probed: it records the program's calls to them itself
 * (hooklib.h). Part of cutcapture.bpf.c. */

SEC("uprobe")
int
BPF_UPROBE(hook_mark_thread, void *mark, int own_thread)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (!is_traced(id >> 32))
		return 0;
	struct cc_thread *t = thread_get((__u32)id);
	if (!t)
		return 0;
	t->hook_mark = (__u64)mark;
	t->hook_thread = own_thread != 0;
	return 0;
}
