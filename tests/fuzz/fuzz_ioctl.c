/* fuzz_ioctl: libFuzzer harness for the NVIDIA ioctl decoder. The input's first bytes are
 * request, control, class and inner numbers for every naming function (with output buffers
 * of the input's choosing); when the input is a JSON object it is also decoded as the args of
 * an ioctl event. Outputs must stay NUL-terminated within their buffers. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ioctl.h"

static void
check_str(const char *out, size_t n)
{
	if (n && !memchr(out, '\0', n)) {
		fprintf(stderr, "fuzz_ioctl: output not terminated within %zu bytes\n", n);
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t w[4] = {0};
	memcpy(w, data, size < sizeof(w) ? size : sizeof(w));
	size_t n = size > 16 ? data[16] % 80 + 1 : 64;
	char *out = malloc(n); /* exact size, so ASan sees any overrun */
	for (int dev = CUT_NVDEV_UNKNOWN; dev <= CUT_NVDEV_OTHER; dev++) {
		ioctl_request_name(w[0], (enum cut_nvdev)dev, out, n);
		check_str(out, n);
	}
	ioctl_ioc_format(w[0], out, n);
	check_str(out, n);
	ioctl_control_format(w[1], out, n);
	check_str(out, n);
	ioctl_class_format(w[2], out, n);
	check_str(out, n);
	ioctl_xfer_format(w[3], out, n);
	check_str(out, n);
	(void)ioctl_escape_name(w[0] & 0xff);
	(void)ioctl_uvm_name(w[0]);

	json_t *j = json_loadb((const char *)data, size, 0, NULL);
	if (json_is_object(j)) {
		char *args = json_dumps(j, JSON_COMPACT);
		struct cut_ioctl_info info;
		if (args && ioctl_decode_args(args, &info) == 0) {
			ioctl_info_label(&info, out, n);
			check_str(out, n);
		}
		free(args);
	}
	json_decref(j);
	free(out);
	return 0;
}
