/* ioctl.c: lookups in NVIDIA's ioctl tables (generated into nvidia_tables.h from
 * share/data/nvidia at build time) and the spelling of numbers they do not hold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "ioctl.h"

struct nv_ioctl_entry {
	uint32_t num;
	const char *name, *params, *size;
};

struct nv_name {
	uint32_t num;
	const char *name;
};

#include "nvidia_tables.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* UVM's test commands are UVM_TEST_IOCTL_BASE(i) = 200 + i (nv_ioctls.tsv, "0xC8+i"). */
#define UVM_TEST_BASE 200u

const char *
ioctl_tables_version(void)
{
	return NV_TABLES_VERSION;
}

enum cut_nvdev
ioctl_dev_kind(const char *dev)
{
	if (!dev || !*dev)
		return CUT_NVDEV_UNKNOWN;
	if (strncmp(dev, "/dev/", 5) == 0)
		dev += 5;
	if (strcmp(dev, "nvidia-uvm") == 0 || strcmp(dev, "nvidia-uvm-tools") == 0)
		return CUT_NVDEV_UVM;
	if (strcmp(dev, "nvidiactl") == 0)
		return CUT_NVDEV_CTL;
	if (strncmp(dev, "nvidia", 6) == 0 && dev[6] >= '0' && dev[6] <= '9' &&
	    strspn(dev + 6, "0123456789") == strlen(dev + 6))
		return CUT_NVDEV_CTL;
	return CUT_NVDEV_OTHER;
}

static const struct nv_ioctl_entry *
find_ioctl(const struct nv_ioctl_entry *t, size_t n, uint32_t num)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && t[lo].num == num ? &t[lo] : NULL;
}

static const char *
find_name(const struct nv_name *t, size_t n, uint32_t num)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && t[lo].num == num ? t[lo].name : NULL;
}

const char *
ioctl_escape_name(unsigned nr)
{
	const struct nv_ioctl_entry *e = find_ioctl(nv_escape_table, LEN(nv_escape_table), nr);
	return e ? e->name : NULL;
}

const char *
ioctl_uvm_name(uint32_t cmd)
{
	const struct nv_ioctl_entry *e = find_ioctl(nv_uvm_table, LEN(nv_uvm_table), cmd);
	return e ? e->name : NULL;
}

const char *
ioctl_control_name(uint32_t ctrl)
{
	return find_name(nv_control_table, LEN(nv_control_table), ctrl);
}

const char *
ioctl_class_name(uint32_t cls)
{
	return find_name(nv_class_table, LEN(nv_class_table), cls);
}

void
ioctl_ioc_format(uint32_t cmd, char *out, size_t n)
{
	static const char *const macro[4] = {"_IO", "_IOW", "_IOR", "_IOWR"};
	unsigned dir = CUT_IOC_DIR(cmd), type = CUT_IOC_TYPE(cmd), size = CUT_IOC_SIZE(cmd);
	char t[8];
	if (type >= 0x21 && type < 0x7f && type != '\'' && type != '\\')
		snprintf(t, sizeof(t), "'%c'", (char)type);
	else
		snprintf(t, sizeof(t), "0x%x", type);
	if (dir == 0 && size)
		snprintf(out, n, "_IOC(0,%s,0x%x,0x%x)", t, CUT_IOC_NR(cmd), size);
	else if (dir == 0)
		snprintf(out, n, "_IO(%s,0x%x)", t, CUT_IOC_NR(cmd));
	else
		snprintf(out, n, "%s(%s,0x%x,0x%x)", macro[dir], t, CUT_IOC_NR(cmd), size);
}

/* UVM commands are plain integers: small numbers, or 0x30000001/2 (UVM_(DE)INITIALIZE). */
static bool
uvm_shaped(uint32_t cmd)
{
	return cmd < 0x800 || ioctl_uvm_name(cmd) != NULL;
}

static bool
escape_shaped(uint32_t cmd)
{
	return CUT_IOC_TYPE(cmd) == CUT_NV_IOCTL_MAGIC && CUT_IOC_DIR(cmd) != 0;
}

static enum cut_ioctl_kind
uvm_request_name(uint32_t cmd, char *out, size_t n)
{
	const char *s = ioctl_uvm_name(cmd);
	if (s) {
		snprintf(out, n, "%s", s);
		return CUT_IOCTL_UVM;
	}
	if (cmd >= UVM_TEST_BASE && cmd < 0x7ff) {
		snprintf(out, n, "UVM_TEST_IOCTL_BASE(%u)", cmd - UVM_TEST_BASE);
		return CUT_IOCTL_UVM;
	}
	snprintf(out, n, "UVM(0x%x)", cmd);
	return CUT_IOCTL_UNKNOWN;
}

enum cut_ioctl_kind
ioctl_request_name(uint32_t cmd, enum cut_nvdev dev, char *out, size_t n)
{
	if (dev == CUT_NVDEV_UNKNOWN)
		dev = escape_shaped(cmd) ? CUT_NVDEV_CTL
		      : uvm_shaped(cmd)  ? CUT_NVDEV_UVM
		                         : CUT_NVDEV_OTHER;
	if (dev == CUT_NVDEV_UVM)
		return uvm_request_name(cmd, out, n);
	if (dev == CUT_NVDEV_CTL && CUT_IOC_TYPE(cmd) == CUT_NV_IOCTL_MAGIC) {
		const char *s = ioctl_escape_name(CUT_IOC_NR(cmd));
		if (s) {
			snprintf(out, n, "%s", s);
			return CUT_IOCTL_ESCAPE;
		}
	}
	ioctl_ioc_format(cmd, out, n);
	return CUT_IOCTL_UNKNOWN;
}

bool
ioctl_control_format(uint32_t ctrl, char *out, size_t n)
{
	const char *s = ioctl_control_name(ctrl);
	if (s) {
		snprintf(out, n, "%s", s);
		return true;
	}
	snprintf(out, n, "NV%04X_CTRL(0x%02x,0x%02x)", ctrl >> 16, (ctrl >> 8) & 0xff, ctrl & 0xff);
	return false;
}

bool
ioctl_class_format(uint32_t cls, char *out, size_t n)
{
	const char *s = ioctl_class_name(cls);
	if (s) {
		snprintf(out, n, "%s", s);
		return true;
	}
	snprintf(out, n, "CLASS(0x%04x)", cls);
	return false;
}

bool
ioctl_xfer_format(uint32_t inner, char *out, size_t n)
{
	if (inner <= 0xff) {
		const char *s = ioctl_escape_name(inner);
		if (s) {
			snprintf(out, n, "%s", s);
			return true;
		}
		snprintf(out, n, "NV_ESC(0x%02x)", inner);
		return false;
	}
	return ioctl_request_name(inner, CUT_NVDEV_CTL, out, n) == CUT_IOCTL_ESCAPE;
}

/* An unsigned 32-bit member, written as an integer or a hex string. */
static bool
args_u32(const char *args, const char *key, uint32_t *v)
{
	int64_t x;
	if (cut_args_int(args, key, &x) < 0 || x < 0 || x > UINT32_MAX)
		return false;
	*v = (uint32_t)x;
	return true;
}

int
ioctl_decode_args(const char *args, struct cut_ioctl_info *in)
{
	char dev[64];
	memset(in, 0, sizeof(*in));
	if (!args_u32(args, "cmd", &in->cmd))
		return -1;
	in->dev = cut_args_str(args, "dev", dev, sizeof(dev)) >= 0 ? ioctl_dev_kind(dev)
	                                                           : CUT_NVDEV_UNKNOWN;
	in->kind = ioctl_request_name(in->cmd, in->dev, in->req, sizeof(in->req));
	if ((in->has_ctrl = args_u32(args, "ctrl", &in->ctrl)))
		in->ctrl_known =
		    ioctl_control_format(in->ctrl, in->ctrl_name, sizeof(in->ctrl_name));
	if ((in->has_class = args_u32(args, "class", &in->cls)))
		in->class_known =
		    ioctl_class_format(in->cls, in->class_name, sizeof(in->class_name));
	if ((in->has_xfer = args_u32(args, "xfer", &in->xfer)))
		in->xfer_known = ioctl_xfer_format(in->xfer, in->xfer_name, sizeof(in->xfer_name));
	return 0;
}

void
ioctl_info_label(const struct cut_ioctl_info *in, char *out, size_t n)
{
	snprintf(out, n, "%s%s%s%s%s%s%s", in->req, in->has_xfer ? " " : "",
	         in->has_xfer ? in->xfer_name : "", in->has_ctrl ? " " : "",
	         in->has_ctrl ? in->ctrl_name : "", in->has_class ? " " : "",
	         in->has_class ? in->class_name : "");
}

size_t
ioctl_table_size(enum cut_nvtable t)
{
	switch (t) {
	case CUT_NVT_ESCAPE: return LEN(nv_escape_table);
	case CUT_NVT_UVM: return LEN(nv_uvm_table);
	case CUT_NVT_CONTROL: return LEN(nv_control_table);
	case CUT_NVT_CLASS: return LEN(nv_class_table);
	default: return 0;
	}
}

const char *
ioctl_table_entry(enum cut_nvtable t, size_t i, uint32_t *num, const char **params,
                  const char **size)
{
	const struct nv_ioctl_entry *e = NULL;
	const struct nv_name *m = NULL;
	if (i >= ioctl_table_size(t))
		return NULL;
	if (t == CUT_NVT_ESCAPE)
		e = &nv_escape_table[i];
	else if (t == CUT_NVT_UVM)
		e = &nv_uvm_table[i];
	else
		m = t == CUT_NVT_CONTROL ? &nv_control_table[i] : &nv_class_table[i];
	if (params)
		*params = e ? e->params : "";
	if (size)
		*size = e ? e->size : "";
	*num = e ? e->num : m->num;
	return e ? e->name : m->name;
}
