/* ioctl.h: names for NVIDIA ioctls (RM escapes, RM control commands, RM classes, UVM commands,
 * the request inside NV_ESC_IOCTL_XFER_CMD), from NVIDIA's tables in share/data/nvidia
 * (open-gpu-kernel-modules 595.45.04), compiled in. Numbers missing from the tables are
 * spelled out in their fields, never dropped. */
#ifndef CUT_IOCTL_H
#define CUT_IOCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The _IOC fields of a request (asm-generic/ioctl.h: x86, arm64). */
#define CUT_IOC_NR(c) ((unsigned)(c)&0xffu)
#define CUT_IOC_TYPE(c) (((unsigned)(c) >> 8) & 0xffu)
#define CUT_IOC_SIZE(c) (((unsigned)(c) >> 16) & 0x3fffu)
#define CUT_IOC_DIR(c) (((unsigned)(c) >> 30) & 3u)
/* Type of the requests of /dev/nvidiactl and /dev/nvidia<N>: _IOWR('F', nr, size). */
#define CUT_NV_IOCTL_MAGIC 'F'

/* What kind of NVIDIA device file an ioctl was made on. */
enum cut_nvdev {
	CUT_NVDEV_UNKNOWN, /* not recorded: the request number decides */
	CUT_NVDEV_CTL,     /* /dev/nvidiactl or /dev/nvidia<N>: RM escapes */
	CUT_NVDEV_UVM,     /* /dev/nvidia-uvm or /dev/nvidia-uvm-tools: plain UVM commands */
	CUT_NVDEV_OTHER,   /* any other file */
};

/* How a request was named. */
enum cut_ioctl_kind {
	CUT_IOCTL_ESCAPE,  /* an RM escape from the table */
	CUT_IOCTL_UVM,     /* a UVM command from the table (or a UVM test command) */
	CUT_IOCTL_UNKNOWN, /* not in the tables: spelled out as _IOWR('F',0x99,0x20), UVM(0x24) */
};

/* Device kind of a device name as cut-events(5) writes it ("nvidiactl", "nvidia0",
 * "nvidia-uvm", "nvidia-uvm-tools"), with or without a leading "/dev/". NULL or "" give
 * CUT_NVDEV_UNKNOWN, anything else not NVIDIA CUT_NVDEV_OTHER. */
enum cut_nvdev ioctl_dev_kind(const char *dev);

/* The NVIDIA driver release the compiled-in tables were read from ("595.45.04"). */
const char *ioctl_tables_version(void);

/* Table lookups: the name, or NULL when the number is not in the table. Two names NVIDIA
 * gives one number are joined with "|". */
const char *ioctl_escape_name(unsigned nr);    /* NV_ESC_* by _IOC_NR */
const char *ioctl_uvm_name(uint32_t cmd);      /* UVM_* by the whole command */
const char *ioctl_control_name(uint32_t ctrl); /* NV*_CTRL_CMD_* (NVOS54.cmd) */
const char *ioctl_class_name(uint32_t cls);    /* RM class (NV_ESC_RM_ALLOC hClass) */

/* Writes the name of request cmd made on a device of kind dev into out (always
 * NUL-terminated, truncated to n): the table name, or for numbers not in the tables
 * "_IOWR('F',0x99,0x20)" (the kernel's macro spelling of any _IOC request) or "UVM(0x24)".
 * When dev is unknown the number decides: type 'F' with a direction is an RM escape, a
 * number of UVM's form (below 0x800, or 0x30000001/2) a UVM command. Returns how it was
 * named. */
enum cut_ioctl_kind ioctl_request_name(uint32_t cmd, enum cut_nvdev dev, char *out, size_t n);
/* "_IOWR('F',0x2a,0x20)": the request spelled as the kernel's _IO/_IOR/_IOW/_IOWR macro,
 * or _IOC(dir,type,nr,size) when it has a size but no direction. */
void ioctl_ioc_format(uint32_t cmd, char *out, size_t n);
/* The control's name, or "NV2080_CTRL(0x7f,0x01)" (class, category, index) when unknown.
 * Returns true when the table named it. */
bool ioctl_control_format(uint32_t ctrl, char *out, size_t n);
/* The class's name, or "CLASS(0xc7ff)". Returns true when the table named it. */
bool ioctl_class_format(uint32_t cls, char *out, size_t n);
/* The request inside NV_ESC_IOCTL_XFER_CMD: the kernel re-dispatches on it as an escape
 * number (nr); a whole request is accepted too. Returns true when the table named it. */
bool ioctl_xfer_format(uint32_t inner, char *out, size_t n);

/* Everything decoded from the args of one ioctl event (cut-events(5): fd, dev, cmd, ctrl,
 * class, xfer, status). */
struct cut_ioctl_info {
	uint32_t cmd;
	enum cut_nvdev dev;
	enum cut_ioctl_kind kind;
	char req[64]; /* name of cmd */
	bool has_ctrl, ctrl_known;
	uint32_t ctrl;
	char ctrl_name[128];
	bool has_class, class_known;
	uint32_t cls;
	char class_name[128];
	bool has_xfer, xfer_known;
	uint32_t xfer;
	char xfer_name[64];
};
/* Decodes the args object text of an ioctl event. Returns 0, or -1 when it has no integer
 * "cmd" (opens, closes, mmaps: nothing to name). */
int ioctl_decode_args(const char *args, struct cut_ioctl_info *info);
/* One line naming the call for summaries: the request, then the control, class or inner
 * request, space-separated ("NV_ESC_RM_CONTROL NV2080_CTRL_CMD_GPU_GET_INFO_V2"). */
void ioctl_info_label(const struct cut_ioctl_info *info, char *out, size_t n);

/* The compiled-in tables, for listings and tests. */
enum cut_nvtable { CUT_NVT_ESCAPE, CUT_NVT_UVM, CUT_NVT_CONTROL, CUT_NVT_CLASS, CUT_NVT_N };
/* Number of entries of table t. */
size_t ioctl_table_size(enum cut_nvtable t);
/* The i-th entry of table t in increasing number order: its name, with the number in *num.
 * For escapes and UVM commands, *params (when not NULL) receives the parameter struct and
 * its size in the release ("NVOS54_PARAMETERS", "32"; "-" when none); for the others "". */
const char *ioctl_table_entry(enum cut_nvtable t, size_t i, uint32_t *num, const char **params,
                              const char **size);

#endif
