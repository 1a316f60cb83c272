# cutcapture: the eBPF capture tool (libbpf CO-RE skeleton). Needs clang, bpftool and
# libbpf >= 1.2; `make deps` installs them. `make static-capture` builds
# $(B)/bin/cutcapture-static, a static binary for machines without libbpf (GPU hosts).
CAPTURE_BPFTOOL := $(firstword $(shell command -v $(BPFTOOL) 2>/dev/null) \
	$(wildcard /usr/sbin/bpftool /sbin/bpftool) $(BPFTOOL))
CAPTURE_LIBBPF_VERSION := $(shell $(PKG_CONFIG) --modversion libbpf 2>/dev/null)
CAPTURE_LIBBPF_CFLAGS := $(shell $(PKG_CONFIG) --cflags libbpf 2>/dev/null)
CAPTURE_LIBBPF_LIBS := $(or $(shell $(PKG_CONFIG) --libs libbpf 2>/dev/null),-lbpf) -lelf -lz
CAPTURE_ARCH_INCLUDE := /usr/include/$(shell $(CC) -dumpmachine 2>/dev/null)
# The modules that need no libbpf (CAPTURE_PURE) are linked into unit tests too.
CAPTURE_PURE := $(addprefix $(B)/obj/capture/,decode.o devices.o exe.o names.o order.o output.o \
	hooklib.o api/call.o api/describe.o)
CAPTURE_BPF := $(addprefix $(B)/obj/capture/,cutcapture.o drain.o layers.o layers_api.o \
	layers_kernel.o libcuda.o preload.o target.o)
CAPTURE_OBJ := $(CAPTURE_BPF) $(CAPTURE_PURE)
CAPTURE_FIXTURES := $(B)/fixtures/capture-ioctl $(B)/fixtures/capture-loop \
	$(B)/fixtures/capture-faulty

TOOLS += cutcapture
CHECKS += $(CAPTURE_FIXTURES)

.PHONY: capture-deps static-capture install-capture uninstall-capture

# Says what is missing instead of failing deep inside the build.
capture-deps:
	@command -v $(CLANG) >/dev/null 2>&1 || { echo "cutcapture: $(CLANG) not found;" \
		"it needs clang, bpftool and libbpf >= 1.2 (run 'make deps' as root)" >&2; exit 1; }
	@[ -x "$(CAPTURE_BPFTOOL)" ] || command -v "$(CAPTURE_BPFTOOL)" >/dev/null 2>&1 || { \
		echo "cutcapture: bpftool not found; it needs clang, bpftool and libbpf >= 1.2" \
		"(run 'make deps' as root)" >&2; exit 1; }
	@case "$(CAPTURE_LIBBPF_VERSION)" in \
	'') echo "cutcapture: libbpf not found (pkg-config libbpf); it needs libbpf >= 1.2" \
		"(run 'make deps' as root)" >&2; exit 1 ;; \
	0.* | 1.0.* | 1.1.*) echo "cutcapture: libbpf $(CAPTURE_LIBBPF_VERSION) is too old;" \
		"it needs >= 1.2 for uprobe_multi (run 'make deps' as root)" >&2; exit 1 ;; \
	esac

$(B)/capture/cutcapture.bpf.o: capture/cutcapture.bpf.c $(wildcard capture/*.bpf.h) \
		capture/records.h capture/vmlinux.h | capture-deps
	@mkdir -p $(@D)
	$(call quiet,BPF)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -I$(CAPTURE_ARCH_INCLUDE) \
		$(CAPTURE_LIBBPF_CFLAGS) -Icapture -c -o $@ $<

$(B)/gen/cutcapture.skel.h: $(B)/capture/cutcapture.bpf.o
	@mkdir -p $(@D)
	$(call quiet,GEN)$(CAPTURE_BPFTOOL) gen skeleton $< name cutcapture_bpf >$@.tmp && mv $@.tmp $@

$(CAPTURE_BPF): $(B)/gen/cutcapture.skel.h | capture-deps
$(CAPTURE_BPF): ALL_CFLAGS += $(CAPTURE_LIBBPF_CFLAGS)

$(B)/bin/cutcapture: $(CAPTURE_OBJ) $(LIBCUT)
	@mkdir -p $(@D)
	$(call quiet,LD)$(CC) $(LDFLAGS) -o $@ $(CAPTURE_OBJ) $(LIBCUT) $(CAPTURE_LIBBPF_LIBS) $(JANSSON_LIBS) $(COMPRESS_LIBS) \
		$(DEMANGLE_LIBS) -lm

static-capture: $(B)/bin/cutcapture-static
$(B)/bin/cutcapture-static: $(CAPTURE_OBJ) $(LIBCUT)
	@mkdir -p $(@D)
	$(call quiet,LD)$(CC) -static $(LDFLAGS) -o $@ $(CAPTURE_OBJ) $(LIBCUT) -lbpf -lelf -ljansson -lzstd -lz \
		$(DEMANGLE_LIBS) -lm

# Check suites of capture modules (tests/module.mk links UNIT_OBJ into them).
$(B)/tests/test_order: $(B)/obj/capture/order.o
$(B)/tests/test_order: private UNIT_OBJ = $(B)/obj/capture/order.o
$(B)/tests/test_order: private UNIT_CFLAGS = -Icapture
$(B)/tests/test_hooklib: $(B)/obj/capture/hooklib.o
$(B)/tests/test_hooklib: private UNIT_OBJ = $(B)/obj/capture/hooklib.o
$(B)/tests/test_hooklib: private UNIT_CFLAGS = -Icapture
$(B)/tests/test_exe: $(B)/obj/capture/exe.o
$(B)/tests/test_exe: private UNIT_OBJ = $(B)/obj/capture/exe.o -lelf
$(B)/tests/test_exe: private UNIT_CFLAGS = -Icapture
$(B)/tests/test_output: $(B)/obj/capture/output.o
$(B)/tests/test_output: private UNIT_OBJ = $(B)/obj/capture/output.o
$(B)/tests/test_output: private UNIT_CFLAGS = -Icapture
CAPTURE_API_OBJ := $(B)/obj/capture/api/call.o $(B)/obj/capture/api/describe.o
$(B)/tests/test_api_args: $(CAPTURE_API_OBJ)
$(B)/tests/test_api_args: private UNIT_OBJ = $(CAPTURE_API_OBJ)
$(B)/tests/test_api_args: private UNIT_CFLAGS = -Icapture

# Test-only helpers of tests/scripts/capture-*.sh.
$(B)/fixtures/capture-%: tests/fixtures/capture-%.c tests/fixtures/fakecuda.h \
		$(B)/fixtures/libcuda.so.1
	@mkdir -p $(@D)
	$(call quiet,CC)$(CC) -std=gnu11 $(WARNFLAGS) -O2 -g -o $@ $< -L$(B)/fixtures -lcuda \
		-Wl,-rpath,'$$ORIGIN'

# Section 8 is not among the top Makefile's man sections.
install: install-capture
uninstall: uninstall-capture
install-capture:
	install -d $(DESTDIR)$(MANDIR)/man8
	install -m 644 share/man/cutcapture.8 $(DESTDIR)$(MANDIR)/man8
uninstall-capture:
	rm -f $(DESTDIR)$(MANDIR)/man8/cutcapture.8
