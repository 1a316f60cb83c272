# cut: trace CUDA programs across the driver API, NVIDIA ioctls, interrupts and scheduling.
# `make` builds everything into build/; `make demo` and `make check` are the two entry points.
include config.mk

B := build
LIBCUT := $(B)/lib/libcut.a
ALL_CFLAGS = -std=gnu11 $(WARNFLAGS) $(CFLAGS) -MMD -MP $(CUT_CPPFLAGS) -Ishare/lib -I$(B)/gen \
	$(JANSSON_CFLAGS)
LDLIBS = $(LIBCUT) $(JANSSON_LIBS) $(COMPRESS_LIBS) $(DEMANGLE_LIBS) -lm

# Quiet commands ("  CC      build/obj/x.o"), as Linux and git print them; V=1 prints each
# command whole. A recipe line starts with $(call quiet,WHAT) to take part.
ifeq ($(V),1)
quiet =
else
quiet = @printf '  %-7s %s\n' '$(1)' '$@';
endif

# Each part of the tree adds its programs, man pages and data here.
TOOLS :=
MAN1 :=
MAN5 :=
MAN7 :=
DATA :=
CHECKS :=

# Keep objects between the pattern rules (no rebuilds, no "rm ..." noise).
.SECONDARY:
# A rule that fails removes its target: no half-written file is taken as built next time.
.DELETE_ON_ERROR:

.PHONY: all deps need-deps demo check check-loaded check-sanitized test-programs install \
	uninstall clean
all:

include $(wildcard share/lib/module.mk share/sql/module.mk analyze/module.mk filters/module.mk \
	visualize/module.mk capture/module.mk capture/hook/module.mk share/dask/module.mk tests/module.mk)

all: $(addprefix $(B)/bin/,$(TOOLS))

$(B)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(call quiet,CC)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# Filters and analysers are one source file each, linked against libcut; a tool that shares a
# module of its folder names it in TOOL_OBJ (target-specific, and as a prerequisite).
$(B)/bin/%: $(B)/obj/analyze/%.o $(LIBCUT)
	@mkdir -p $(@D)
	$(call quiet,LD)$(CC) $(LDFLAGS) -o $@ $< $(TOOL_OBJ) $(LDLIBS)
$(B)/bin/%: $(B)/obj/filters/%.o $(LIBCUT)
	@mkdir -p $(@D)
	$(call quiet,LD)$(CC) $(LDFLAGS) -o $@ $< $(LDLIBS)
$(B)/bin/%: $(B)/obj/visualize/%.o $(LIBCUT)
	@mkdir -p $(@D)
	$(call quiet,LD)$(CC) $(LDFLAGS) -o $@ $< $(TOOL_OBJ) $(LDLIBS)

deps:
	share/scripts/deps.sh

# Installs missing packages when root; otherwise says what is missing.
need-deps:
	@share/scripts/deps.sh --if-missing

# The first run: the build (quiet; V=1 prints the commands), then the tools on two real traces
# of a PyTorch training loop (share/scripts/demo.sh says what it shows; samples/README.md how
# the traces were made).
demo: need-deps
	@echo "building cut into $(B)/ (make V=1 prints each command)"
	@$(MAKE) --no-print-directory all
	@PATH="$(CURDIR)/$(B)/bin:$$PATH" share/scripts/demo.sh $(B)

# Every stage (build, unit suites, cases and scripts, sanitized, fuzz smoke), whether or not
# one before it failed, then one summary of what failed (tests/check).
check: need-deps
	@MAKE="$(MAKE)" tests/check $(B)

# The suite with the CPU oversubscribed (two busy loops per core beside it), as on a busy
# CI machine: a test that holds only on an idle machine fails here.
check-loaded: need-deps
	@$(MAKE) --no-print-directory test-programs
	@tests/run-all --loaded $(B)

# The unit tests, the data-driven cases, the demo pipeline and the scripts of the gpu, runtime
# and NVTX layers again, built with AddressSanitizer and UndefinedBehaviorSanitizer (any report
# fails the run): the tools, and the stand-in libcuda, libcudart and the programs that drive
# them, into which cuthook preloads libcuthook (never instrumented). The sanitizer runtime is
# then not first in the programs' libraries (verify_asan_link_order=0), and dlopen, which
# ASan intercepts, no longer finds the stand-in libcuda by libcudart's RUNPATH
# (LD_LIBRARY_PATH); HACKING.md says more. Never loaded (CUT_LOADED_SCRIPTS), and the scripts
# as many at a time as there are cores, those that time things too (CUT_ALONE_SCRIPTS): a
# sanitized build's times are not held.
SAN_FLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined
SAN_SCRIPTS = gpu-hook hook-runtime hook-nvtx hook-leaks stat-gpu merge-gpu plot-gpu gpu-shared
check-sanitized:
	@rc=0; unset CUT_LOADED_SCRIPTS; $(MAKE) --no-print-directory -k B=$(B)/san CFLAGS="$(SAN_FLAGS)" \
		LDFLAGS="-fsanitize=address,undefined" FIXTURE_CFLAGS="$(SAN_FLAGS)" test-programs || \
		{ rc=1; [ -z "$$CUT_FAILED_LOG" ] || echo "the sanitized build" >>"$$CUT_FAILED_LOG"; }; \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		tests/run-all -j$$(nproc) --no-scripts $(B)/san || rc=1; \
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		tests/run-all $(B)/san demo-pipeline || rc=1; \
	CUT_SANITIZED=1 ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 UBSAN_OPTIONS=print_stacktrace=1 \
		LD_LIBRARY_PATH=$(abspath $(B))/san/fixtures CUT_ALONE_SCRIPTS= \
		tests/run-all -j$$(nproc) $(B)/san $(SAN_SCRIPTS) || rc=1; \
	exit $$rc

test-programs: all $(CHECKS)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(DATADIR)
	install -m 755 $(addprefix $(B)/bin/,$(TOOLS)) $(DESTDIR)$(BINDIR)
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(MAN5) $(DESTDIR)$(MANDIR)/man5
	install -m 644 $(MAN7) $(DESTDIR)$(MANDIR)/man7
	$(if $(DATA),install -m 644 $(DATA) $(DESTDIR)$(DATADIR))

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(TOOLS))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(MAN5)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man7/,$(notdir $(MAN7)))
	rm -rf $(DESTDIR)$(DATADIR)

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
