/* records.h: the contract between cutcapture's BPF side (cutcapture.bpf.c and its layers'
 * *.bpf.h) and its loader (cutcapture.c and the modules that read what the BPF side writes):
 * settings, per-thread state and the records of the ring buffer. Fixed-width types only. */
#ifndef CUT_CAPTURE_RECORDS_H
#define CUT_CAPTURE_RECORDS_H

#define CC_MAX_FUNCS 2048 /* driver and runtime API functions one capture probes (power of two) */
#define CC_DEPTH 8        /* nested driver API calls remembered per thread (power of two) */
#define CC_NEXTRA 11      /* argument words kept beyond the six passed in registers */
#define CC_NARGS (6 + CC_NEXTRA)
#define CC_STRLEN 4096 /* longest string read from the traced process, NUL included */
#define CC_PATHLEN 64
#define CC_CMDLEN 256
#define CC_ENVLEN 16384 /* bytes of a new program's environment read at exec */
#define CC_COMMLEN 16
#define CC_MAX_DEVS 16  /* device numbers whose ioctls are traced */
#define CC_MAX_KFUNCS 8 /* kernel functions of the kernel layer */

/* Layer switches (targ_layers). */
enum {
	CC_L_API = 1 << 0,
	CC_L_IOCTL = 1 << 1,
	CC_L_IRQ = 1 << 2,
	CC_L_SCHED = 1 << 3,
	CC_L_KERNEL = 1 << 4,
	CC_L_RUNTIME = 1 << 5,
};

/* How a driver API probe gets its argument words beyond the registers (cc_fdesc.extra). */
enum {
	CC_EXTRA_NONE,
	CC_EXTRA_STACK,  /* nextra words of the caller's stack: [sp+8], [sp+16], ... */
	CC_EXTRA_ARG0,   /* the first nextra words of the struct arg 0 points to (CUlaunchConfig) */
	CC_EXTRA_GATHER, /* nextra words of that struct, at word offsets word[] (CUDA_MEMCPY2D) */
};

/* How the string of a driver API call is found (cc_fdesc.strmode). */
enum {
	CC_STR_NONE,
	CC_STR_ARG, /* argument str-1 points to it, read at return */
	CC_STR_OUT, /* argument str-1 points to a pointer to it, set by the call */
};

/* What the BPF side reads of one probed function's calls, indexed by its cookie. The loader
 * derives it from capture/api/args.def (cut_api_describe); libcuthook reads the same. */
struct cc_fdesc {
	__u8 out[2];     /* 1 + index of an argument whose target is read at return */
	__u8 outsize[2]; /* the target's size: 4 or 8 bytes */
	__u8 str;        /* 1 + index of the argument holding the string, see strmode */
	__u8 strmode;
	__u8 extra; /* CC_EXTRA_* */
	__u8 nextra;
	__u8 word[CC_NEXTRA];
	__u8 pad[5];
};

/* Device kinds of cc_dev.kind: what the ioctl decoder reads. */
enum {
	CC_DEV_RM = 1, /* /dev/nvidiactl, /dev/nvidiaN: _IOWR('F', nr, size) escapes */
	CC_DEV_UVM,    /* /dev/nvidia-uvm: plain integer commands */
	CC_DEV_OTHER,  /* another NVIDIA device: command only */
};

struct cc_dev {
	__u32 major;
	__u32 minor; /* CC_ANY_MINOR for every minor of major */
	__u32 kind;
};
#define CC_ANY_MINOR 0xffffffffu

/* Counters (map "counters", per CPU), read by the loader. */
enum {
	CC_C_LOST_API, /* ring buffer full, per layer... */
	CC_C_LOST_IOCTL,
	CC_C_LOST_IRQ,
	CC_C_LOST_SCHED,
	CC_C_LOST_KERNEL,
	CC_C_LOST_META,
	CC_C_DEPTH,      /* call nested deeper than CC_DEPTH: not recorded */
	CC_C_NOTHREAD,   /* per-thread map full: call not recorded */
	CC_C_UNMATCHED,  /* returns with no matching entry (entries missed or unwound) */
	CC_C_BARE_CALLS, /* --bench-bare: calls counted... */
	CC_C_BARE_NS,    /* ...and their time, with no record written */
	CC_C_OWN,        /* calls and ioctls of libcuthook's own, left out */
	CC_C_INNER,      /* calls a probed function made to another of its layer, left out */
	CC_NCOUNTERS
};

/* Flags of a driver API call (cc_frame.flags, cc_api.flags). */
enum {
	CC_A_EXTRA = 1 << 0,   /* the words beyond the registers were read */
	CC_A_RUNTIME = 1 << 1, /* a runtime function's frame */
	CC_A_INNER = 1 << 2,   /* called by a function of its own layer: not recorded */
};

/* One driver API call in flight. */
struct cc_frame {
	__u64 ts;
	__u64 sp; /* stack pointer at entry: the return matches it */
	__u32 fid;
	__u32 flags; /* CC_A_* */
	__u64 a[CC_NARGS];
};

/* Per-thread state (map "threads", keyed by thread id). The loader reads the start times
 * of what is in flight to know which events can no longer be preceded by a later one. */
struct cc_thread {
	__u64 api_oldest; /* start of the outermost API call in flight; 0 when none */
	__u32 depth;
	__u32 pad0;
	struct cc_frame f[CC_DEPTH];

	__u64 sys_ts;  /* traced system call in flight (ioctl, open...); 0 when none */
	__u64 sys_arg; /* ioctl: argument; open: path pointer; mmap: length */
	__u64 sys_ptr; /* where the status is read at exit (payload address); 0 if none */
	__u64 sys_off; /* mmap offset */
	__u32 sys_nr;  /* system call number */
	__u32 sys_fd;
	__u32 sys_cmd;
	__u32 sys_rdev;  /* device of the fd, kernel encoding (major << 20 | minor) */
	__u32 sys_sub;   /* RM control command or class */
	__u32 sys_xfer;  /* inner command of NV_ESC_IOCTL_XFER_CMD */
	__u16 sys_flags; /* CC_IO_* */
	__u16 sys_stoff; /* offset of the status in the payload */
	__u32 pad1;

	__u64 off_ts;  /* left the CPU at; 0 when on it */
	__u64 wake_ts; /* woken at; 0 when not yet */
	__u32 off_cpu;
	__u32 off_state; /* 'R', 'S', 'D' or another letter */
	__u32 waker;
	__u32 pad2;

	__u64 hook_mark;   /* address of the thread's struct cc_hook_mark in libcuthook; 0: none */
	__u32 hook_thread; /* the thread is libcuthook's own: nothing it does is recorded */
	__u32 pad3;
};

/* What libcuthook, preloaded by cutcapture into a command it starts (CUTHOOK_MARK), keeps per
 * thread for the uprobes to read: the layout of its struct hook_mark (capture/hook/hook.h).
 * Registered by its cuthook_mark_thread(mark, own_thread), which cutcapture probes. */
struct cc_hook_mark {
	__u32 own; /* the library is calling the driver for itself */
};

/* Record kinds. */
enum {
	CC_EV_API = 1,
	CC_EV_IOCTL,
	CC_EV_FILE, /* open, close, mmap, munmap of a device file */
	CC_EV_IRQ,
	CC_EV_SCHED,
	CC_EV_TASK,
	CC_EV_KFUNC,
	CC_EV_UNFINISHED, /* struct cc_api of a call in flight when its thread ended */
	CC_EV_ENV,        /* struct cc_env: after an exec's task record */
};

struct cc_hdr {
	__u64 ts;
	__u64 dur;
	__u32 pid;
	__u32 tid;
	__u16 kind;
	__u16 size; /* bytes of the whole record */
	__u32 cpu;
};

/* A driver API call; str holds a name when the function has one (cc_fdesc.str). */
struct cc_api {
	struct cc_hdr h;
	__u32 fid;
	__s32 ret;
	__u32 flags; /* CC_A_* */
	__u32 pad;
	__u64 out[2]; /* the values the out arguments (cc_fdesc.out) point to at return */
	__u64 a[CC_NARGS];
	char str[]; /* in records that carry one: up to CC_STRLEN bytes, NUL included (h.size) */
};

/* Flags of cc_ioctl.flags. */
enum {
	CC_IO_SUB = 1 << 0,    /* sub holds the RM control command or class */
	CC_IO_XFER = 1 << 1,   /* xfer holds the inner command of NV_ESC_IOCTL_XFER_CMD */
	CC_IO_STATUS = 1 << 2, /* status was read back */
	CC_IO_CLASS = 1 << 3,  /* sub is a class (NV_ESC_RM_ALLOC), not a control */
};

struct cc_ioctl {
	struct cc_hdr h;
	__s64 ret;
	__u32 fd;
	__u32 rdev;
	__u32 cmd;
	__u32 sub;
	__u32 xfer;
	__u32 status;
	__u32 flags;
	__u32 pad;
};

struct cc_file {
	struct cc_hdr h;
	__s64 ret;
	__u64 addr; /* mmap: the result; munmap: the argument */
	__u64 len;
	__u64 off;
	__u32 nr; /* system call */
	__u32 fd;
	__u32 rdev;
	__u32 pad;
	char path[CC_PATHLEN];
};

struct cc_irq {
	struct cc_hdr h;
	__u32 irq;
	__s32 ret;
	char name[CC_COMMLEN];
};

struct cc_sched {
	struct cc_hdr h;
	__u64 runq; /* ns between the wakeup and getting the CPU back; 0 if unknown */
	__u32 state;
	__u32 waker; /* thread that woke it; 0 if unknown */
	__u32 cpu_in;
	__u32 pad;
};

enum {
	CC_TASK_FORK = 1, /* a new process */
	CC_TASK_THREAD,   /* a new thread */
	CC_TASK_EXEC,
	CC_TASK_EXIT, /* a thread ended */
};

/* What the dynamic loader of a new program does with LD_PRELOAD (exec), from its auxiliary
 * vector: nothing where there is no loader (AT_BASE 0: static) or where it runs in
 * secure-execution mode (AT_SECURE: set-user-ID, set-group-ID, file capabilities). */
enum {
	CC_LOADER_STATIC = 1,
	CC_LOADER_SECURE = 2,
};

struct cc_task {
	struct cc_hdr h;
	__u32 what;
	__u32 ppid;
	__u32 cmdlen;
	__u32 loader; /* exec: CC_LOADER_* bits */
	char comm[CC_COMMLEN];
	char cmd[CC_CMDLEN]; /* exec: the argument strings, NUL-separated */
};

/* The environment of a new program (its first CC_ENVLEN bytes), for its rank in a job: read
 * at exec, while it is there (a short process is gone before /proc could be read). */
struct cc_env {
	struct cc_hdr h;
	__u32 len;
	__u32 pad;
	char env[CC_ENVLEN]; /* NUL-separated NAME=value strings */
};

struct cc_kfunc {
	struct cc_hdr h;
	__s64 ret;
	__u32 idx;
	__u32 pad;
};

#endif
