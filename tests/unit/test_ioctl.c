/* test_ioctl.c: the NVIDIA ioctl decoder: table lookups, spelling of unknown numbers, device
 * kinds, decoding of event args. Expected names are copied from the TSV files of share/data/nvidia.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "ioctl.h"

static const char *
req(uint32_t cmd, enum cut_nvdev dev)
{
	static char out[64];
	ioctl_request_name(cmd, dev, out, sizeof(out));
	return out;
}

START_TEST(test_escapes)
{
	/* FACTS.md: the requests a PyTorch run makes */
	ck_assert_str_eq(req(0xC020462A, CUT_NVDEV_CTL), "NV_ESC_RM_CONTROL");
	ck_assert_str_eq(req(0xC030462B, CUT_NVDEV_CTL), "NV_ESC_RM_ALLOC");
	ck_assert_str_eq(req(0xC020462B, CUT_NVDEV_UNKNOWN), "NV_ESC_RM_ALLOC"); /* NVOS21 size */
	ck_assert_str_eq(req(0xC038464E, CUT_NVDEV_UNKNOWN), "NV_ESC_RM_MAP_MEMORY");
	ck_assert_str_eq(req(0xC0104629, CUT_NVDEV_CTL), "NV_ESC_RM_FREE");
	ck_assert_str_eq(req(0xC04846D2, CUT_NVDEV_CTL), "NV_ESC_CHECK_VERSION_STR");
	ck_assert_str_eq(req(0xC01046D3, CUT_NVDEV_CTL), "NV_ESC_IOCTL_XFER_CMD");
	ck_assert_str_eq(req(0xC90046C8, CUT_NVDEV_CTL), "NV_ESC_CARD_INFO"); /* variable size */
	ck_assert_str_eq(req(0xC0144632, CUT_NVDEV_CTL),
	                 "NV_ESC_RM_CONFIG_GET"); /* removed in 595 */
	ck_assert_int_eq(ioctl_request_name(0xC020462A, CUT_NVDEV_CTL, (char[8]){0}, 8),
	                 CUT_IOCTL_ESCAPE);
	/* unknown escape numbers and other types are spelled out */
	ck_assert_str_eq(req(0xC0204699, CUT_NVDEV_CTL), "_IOWR('F',0x99,0x20)");
	ck_assert_str_eq(req(0x40044620, CUT_NVDEV_CTL), "_IOW('F',0x20,0x4)");
	ck_assert_str_eq(req(0x80084621, CUT_NVDEV_UNKNOWN), "_IOR('F',0x21,0x8)");
	ck_assert_str_eq(req(0x5401, CUT_NVDEV_UNKNOWN), "_IO('T',0x1)"); /* TCGETS */
	ck_assert_str_eq(req(0x5401, CUT_NVDEV_OTHER), "_IO('T',0x1)");
	ck_assert_str_eq(req(0xC020462A, CUT_NVDEV_OTHER), "_IOWR('F',0x2a,0x20)");
	ck_assert_int_eq(ioctl_request_name(0xC0204699, CUT_NVDEV_CTL, (char[8]){0}, 8),
	                 CUT_IOCTL_UNKNOWN);
	ck_assert_str_eq(ioctl_escape_name(0x2A), "NV_ESC_RM_CONTROL");
	ck_assert_ptr_null(ioctl_escape_name(0x30));
}
END_TEST

START_TEST(test_uvm)
{
	ck_assert_str_eq(req(0x30000001, CUT_NVDEV_UVM), "UVM_INITIALIZE");
	ck_assert_str_eq(req(0x30000001, CUT_NVDEV_UNKNOWN), "UVM_INITIALIZE");
	ck_assert_str_eq(req(0x30000002, CUT_NVDEV_UNKNOWN), "UVM_DEINITIALIZE");
	ck_assert_str_eq(req(0x21, CUT_NVDEV_UNKNOWN), "UVM_MAP_EXTERNAL_ALLOCATION");
	ck_assert_str_eq(req(0x49, CUT_NVDEV_UVM), "UVM_CREATE_EXTERNAL_RANGE");
	ck_assert_str_eq(req(0x1B, CUT_NVDEV_UVM), "UVM_REGISTER_CHANNEL");
	ck_assert_str_eq(req(0x25, CUT_NVDEV_UVM), "UVM_REGISTER_GPU");
	ck_assert_str_eq(req(0x7FF, CUT_NVDEV_UVM), "UVM_IS_8_SUPPORTED");
	ck_assert_str_eq(req(0xC8, CUT_NVDEV_UVM), "UVM_TEST_IOCTL_BASE(0)");
	ck_assert_str_eq(req(0xCD, CUT_NVDEV_UVM), "UVM_TEST_IOCTL_BASE(5)");
	ck_assert_str_eq(req(0x24, CUT_NVDEV_UVM), "UVM(0x24)");
	ck_assert_str_eq(req(0x12345, CUT_NVDEV_UVM), "UVM(0x12345)");
	/* the device decides: 0x2A on the UVM device is UVM_SET_PREFERRED_LOCATION */
	ck_assert_str_eq(req(0x2A, CUT_NVDEV_UVM), "UVM_SET_PREFERRED_LOCATION");
	ck_assert_str_eq(req(0x2A, CUT_NVDEV_CTL), "_IO(0x0,0x2a)");
	ck_assert_int_eq(ioctl_request_name(0x24, CUT_NVDEV_UVM, (char[16]){0}, 16),
	                 CUT_IOCTL_UNKNOWN);
}
END_TEST

START_TEST(test_controls_classes)
{
	char out[128];
	ck_assert_str_eq(ioctl_control_name(0x20800102), "NV2080_CTRL_CMD_GPU_GET_INFO_V2");
	ck_assert_str_eq(ioctl_control_name(0x00000101),
	                 "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION");
	ck_assert_str_eq(ioctl_control_name(0x00800292), "NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2");
	ck_assert_str_eq(ioctl_control_name(0x20800A4C),
	                 "NV2080_CTRL_CMD_INTERNAL_GPU_GET_SMC_MODE");
	/* an alias gives way to the real name; two real names are both given */
	ck_assert_str_eq(ioctl_control_name(0x00410103), "NV0041_CTRL_CMD_GET_SURFACE_PHYS_ATTR");
	ck_assert_str_eq(ioctl_control_name(0xC36F0000), "NVC36F_CTRL_CMD_NULL");
	ck_assert_str_eq(
	    ioctl_control_name(0x2080132A),
	    "NV2080_CTRL_CMD_FB_COMPBITCOPY_GET_COMPBITS|NV2080_CTRL_CMD_FB_STATS_GET");
	/* no #define: named by its RM handler */
	ck_assert_str_eq(ioctl_control_name(0x20800194),
	                 "subdeviceCtrlCmdGpuSetComputePolicyConfig");
	ck_assert_ptr_null(ioctl_control_name(0x20807F01));
	ck_assert(!ioctl_control_format(0x20807F01, out, sizeof(out)));
	ck_assert_str_eq(out, "NV2080_CTRL(0x7f,0x01)");
	ck_assert(ioctl_control_format(0x20800102, out, sizeof(out)));

	ck_assert_str_eq(ioctl_class_name(0xC86F), "HOPPER_CHANNEL_GPFIFO_A");
	ck_assert_str_eq(ioctl_class_name(0xCBC0), "HOPPER_COMPUTE_A");
	ck_assert_str_eq(ioctl_class_name(0x0040), "NV01_MEMORY_LOCAL_USER");
	ck_assert_str_eq(ioctl_class_name(0x0000), "NV01_ROOT");
	ck_assert_str_eq(ioctl_class_name(0x0041), "NV01_ROOT_CLIENT|NV04_MEMORY");
	ck_assert_str_eq(ioctl_class_name(0x003F), "NV01_MEMORY_LOCAL_PRIVILEGED"); /* all.tsv */
	ck_assert(!ioctl_class_format(0xC7FF, out, sizeof(out)));
	ck_assert_str_eq(out, "CLASS(0xc7ff)");
	ck_assert(ioctl_xfer_format(0x2A, out, sizeof(out)));
	ck_assert_str_eq(out, "NV_ESC_RM_CONTROL");
	ck_assert(ioctl_xfer_format(0xC020462A, out, sizeof(out)));
	ck_assert_str_eq(out, "NV_ESC_RM_CONTROL");
	ck_assert(!ioctl_xfer_format(0x99, out, sizeof(out)));
	ck_assert_str_eq(out, "NV_ESC(0x99)");
}
END_TEST

/* Every entry of every table is found again by its number, tables are in number order, and
 * the counts are those of the TSV files. */
START_TEST(test_tables)
{
	static const size_t want[CUT_NVT_N] = {41, 70, 1620, 276};
	for (int t = 0; t < CUT_NVT_N; t++) {
		ck_assert_uint_eq(ioctl_table_size(t), want[t]);
		uint32_t prev = 0, num;
		for (size_t i = 0; i < ioctl_table_size(t); i++) {
			const char *params, *size;
			const char *name = ioctl_table_entry(t, i, &num, &params, &size);
			ck_assert_ptr_nonnull(name);
			ck_assert(i == 0 || num > prev);
			prev = num;
			const char *back = t == CUT_NVT_ESCAPE    ? ioctl_escape_name(num)
			                   : t == CUT_NVT_UVM     ? ioctl_uvm_name(num)
			                   : t == CUT_NVT_CONTROL ? ioctl_control_name(num)
			                                          : ioctl_class_name(num);
			ck_assert_ptr_eq(back, name);
			if (t == CUT_NVT_ESCAPE)
				ck_assert(strncmp(name, "NV_ESC_", 7) == 0);
			if (t == CUT_NVT_UVM)
				ck_assert(strncmp(name, "UVM_", 4) == 0);
		}
	}
	ck_assert_ptr_null(ioctl_table_entry(CUT_NVT_ESCAPE, 41, &(uint32_t){0}, NULL, NULL));
	const char *params, *size;
	uint32_t num;
	ioctl_table_entry(CUT_NVT_ESCAPE, 3, &num, &params, &size);
	ck_assert_uint_eq(num, 0x2A);
	ck_assert_str_eq(params, "NVOS54_PARAMETERS");
	ck_assert_str_eq(size, "32");
	ck_assert_str_eq(ioctl_tables_version(), "595.45.04");
}
END_TEST

START_TEST(test_devices)
{
	ck_assert_int_eq(ioctl_dev_kind("nvidiactl"), CUT_NVDEV_CTL);
	ck_assert_int_eq(ioctl_dev_kind("nvidia0"), CUT_NVDEV_CTL);
	ck_assert_int_eq(ioctl_dev_kind("/dev/nvidia15"), CUT_NVDEV_CTL);
	ck_assert_int_eq(ioctl_dev_kind("nvidia-uvm"), CUT_NVDEV_UVM);
	ck_assert_int_eq(ioctl_dev_kind("/dev/nvidia-uvm-tools"), CUT_NVDEV_UVM);
	ck_assert_int_eq(ioctl_dev_kind("nvidia-modeset"), CUT_NVDEV_OTHER);
	ck_assert_int_eq(ioctl_dev_kind("nvidia0x"), CUT_NVDEV_OTHER);
	ck_assert_int_eq(ioctl_dev_kind("/dev/pts/0"), CUT_NVDEV_OTHER);
	ck_assert_int_eq(ioctl_dev_kind(""), CUT_NVDEV_UNKNOWN);
	ck_assert_int_eq(ioctl_dev_kind(NULL), CUT_NVDEV_UNKNOWN);
}
END_TEST

START_TEST(test_decode_args)
{
	struct cut_ioctl_info in;
	char label[512];
	ck_assert_int_eq(ioctl_decode_args("{\"fd\":5,\"dev\":\"nvidiactl\",\"cmd\":\"0xc020462a\","
	                                   "\"ctrl\":\"0x20800102\",\"status\":0}",
	                                   &in),
	                 0);
	ck_assert_str_eq(in.req, "NV_ESC_RM_CONTROL");
	ck_assert(in.has_ctrl && in.ctrl_known && !in.has_class && !in.has_xfer);
	ck_assert_str_eq(in.ctrl_name, "NV2080_CTRL_CMD_GPU_GET_INFO_V2");
	ioctl_info_label(&in, label, sizeof(label));
	ck_assert_str_eq(label, "NV_ESC_RM_CONTROL NV2080_CTRL_CMD_GPU_GET_INFO_V2");

	ck_assert_int_eq(ioctl_decode_args("{\"cmd\":3224389163,\"class\":51311}", &in), 0);
	ck_assert_str_eq(in.req, "NV_ESC_RM_ALLOC"); /* 0xC030462B */
	ck_assert_str_eq(in.class_name, "HOPPER_CHANNEL_GPFIFO_A");

	ck_assert_int_eq(ioctl_decode_args("{\"cmd\":\"0xc01046d3\",\"xfer\":\"0x2a\","
	                                   "\"ctrl\":\"0x20807f01\"}",
	                                   &in),
	                 0);
	ioctl_info_label(&in, label, sizeof(label));
	ck_assert_str_eq(label, "NV_ESC_IOCTL_XFER_CMD NV_ESC_RM_CONTROL NV2080_CTRL(0x7f,0x01)");
	ck_assert(!in.ctrl_known);

	ck_assert_int_eq(ioctl_decode_args("{\"dev\":\"nvidia-uvm\",\"cmd\":\"0x1b\"}", &in), 0);
	ck_assert_str_eq(in.req, "UVM_REGISTER_CHANNEL");
	ck_assert_int_eq(in.kind, CUT_IOCTL_UVM);

	ck_assert_int_eq(ioctl_decode_args("{\"fd\":5}", &in), -1);
	ck_assert_int_eq(ioctl_decode_args(NULL, &in), -1);
	ck_assert_int_eq(ioctl_decode_args("{\"cmd\":-1}", &in), -1);
	ck_assert_int_eq(ioctl_decode_args("{\"cmd\":\"0x100000000\"}", &in), -1);
	/* a bad class is ignored, the request still named */
	ck_assert_int_eq(ioctl_decode_args("{\"cmd\":\"0xc030462b\",\"class\":\"x\"}", &in), 0);
	ck_assert(!in.has_class);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ioctl");
	TCase *tc = tcase_create("ioctl");
	tcase_add_test(tc, test_escapes);
	tcase_add_test(tc, test_uvm);
	tcase_add_test(tc, test_controls_classes);
	tcase_add_test(tc, test_tables);
	tcase_add_test(tc, test_devices);
	tcase_add_test(tc, test_decode_args);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
