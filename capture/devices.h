/* devices.h: the device files whose system calls cutcapture traces (the ioctl layer): every
 * NVIDIA character device major of /proc/devices, plus those added; and the names
 * cut-events(5) gives them. */
#ifndef CUT_CAPTURE_DEVICES_H
#define CUT_CAPTURE_DEVICES_H

#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "records.h"

/* Adds every NVIDIA major of /proc/devices. Returns the number found. */
int dev_scan(void);
/* Adds the device file at path (its exact major:minor) as a device of kind (CC_DEV_*).
 * Returns 0, or -1 with errno set when path is not a device. */
int dev_add(const char *path, unsigned kind);
/* The devices for the BPF side; returns how many were copied (at most max). */
size_t dev_list(struct cc_dev *out, size_t max);
/* The name of the device of rdev (kernel encoding: major << 20 | minor), with its kind in
 * *kind (0 when it is none of ours), formatted into buf when it has no fixed name. */
const char *dev_name(uint32_t rdev, unsigned *kind, char *buf, size_t n);

#endif
