/* devices.c: the device files whose system calls cutcapture traces, and their names. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "devices.h"

static struct {
	struct cc_dev d[CC_MAX_DEVS];
	char name[CC_MAX_DEVS][32];
	size_t n;
} D;

static void
dev_push(uint32_t major, uint32_t minor, unsigned kind, const char *name)
{
	if (D.n == CC_MAX_DEVS)
		return;
	D.d[D.n] = (struct cc_dev){major, minor, kind};
	size_t n = strnlen(name, sizeof(D.name[0]) - 1);
	memcpy(D.name[D.n], name, n);
	D.name[D.n][n] = 0;
	D.n++;
}

int
dev_scan(void)
{
	FILE *f = fopen("/proc/devices", "r");
	char line[128], name[64];
	unsigned major;
	int n = 0, chars = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Character", 9) == 0)
			chars = 1;
		else if (strncmp(line, "Block", 5) == 0)
			chars = 0;
		if (!chars || sscanf(line, "%u %63s", &major, name) != 2 ||
		    strncmp(name, "nvidia", 6) != 0)
			continue;
		/* /dev/nvidiactl shares the major of /dev/nvidia<N> ("nvidia"). */
		if (strcmp(name, "nvidiactl") == 0)
			continue;
		unsigned kind = strcmp(name, "nvidia") == 0       ? CC_DEV_RM
		                : strcmp(name, "nvidia-uvm") == 0 ? CC_DEV_UVM
		                                                  : CC_DEV_OTHER;
		dev_push(major, CC_ANY_MINOR, kind, name);
		n++;
	}
	fclose(f);
	return n;
}

int
dev_add(const char *path, unsigned kind)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -1;
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
		errno = ENODEV;
		return -1;
	}
	const char *base = strrchr(path, '/');
	dev_push(major(st.st_rdev), minor(st.st_rdev), kind, base ? base + 1 : path);
	return 0;
}

size_t
dev_list(struct cc_dev *out, size_t max)
{
	size_t n = D.n < max ? D.n : max;
	memcpy(out, D.d, n * sizeof(*out));
	return n;
}

const char *
dev_name(uint32_t rdev, unsigned *kind, char *buf, size_t n)
{
	uint32_t major = rdev >> 20, minor = rdev & 0xfffff;
	for (size_t i = 0; i < D.n; i++) {
		if (D.d[i].major != major)
			continue;
		if (D.d[i].minor != CC_ANY_MINOR && D.d[i].minor != minor)
			continue;
		*kind = D.d[i].kind;
		if (D.d[i].minor != CC_ANY_MINOR)
			return D.name[i];
		if (strcmp(D.name[i], "nvidia") == 0) {
			if (minor == 255)
				return "nvidiactl";
			if (minor == 254)
				return "nvidia-modeset";
			snprintf(buf, n, "nvidia%u", minor);
			return buf;
		}
		if (minor == 0)
			return D.name[i];
		if (strcmp(D.name[i], "nvidia-uvm") == 0 && minor == 1)
			return "nvidia-uvm-tools";
		snprintf(buf, n, "%s%u", D.name[i], minor);
		return buf;
	}
	*kind = 0;
	snprintf(buf, n, "%u:%u", major, minor);
	return buf;
}
