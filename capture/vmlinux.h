/* vmlinux.h: the few kernel types cutcapture.bpf.c reads, declared for CO-RE. Only the
 * members used are listed; libbpf relocates each access against the running kernel's BTF,
 * so this file does not depend on the kernel of the build machine. x86-64 only. */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

#include <linux/bpf.h>
#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef int pid_t;
typedef _Bool bool;
#define true 1
#define false 0

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

/* The kernel's register frame (not the uapi one: bpf_tracing.h uses these names when
 * __VMLINUX_H__ is defined). */
struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax,
		ip, cs, flags, sp, ss;
};

typedef struct {
	int counter;
} atomic_t;

struct inode {
	u32 i_rdev;
};

struct file {
	struct inode *f_inode;
};

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
};

struct files_struct {
	struct fdtable *fdt;
};

struct mm_struct {
	unsigned long arg_start;
	unsigned long arg_end;
	unsigned long env_start;
	unsigned long env_end;
	unsigned long saved_auxv[2]; /* only its offset is used: pairs (type, value) to AT_NULL */
};

struct signal_struct {
	atomic_t live;
};

struct task_struct {
	unsigned int __state;
	unsigned int flags;
	pid_t pid;
	pid_t tgid;
	struct task_struct *real_parent;
	struct files_struct *files;
	struct mm_struct *mm;
	struct signal_struct *signal;
	char comm[16];
};

/* Kernels before 5.14 call the state "state". */
struct task_struct___pre514 {
	long state;
};

struct irqaction {
	const char *name;
};

struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
	struct file *vm_file;
};

#pragma clang attribute pop

#endif
