# Tests: Check unit suites (tests/unit/test_*.c), data-driven cases (tests/cases/<tool>/<case>/)
# and scripts (tests/scripts/*.sh); tests/run-all runs them all.
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
CHECKS += $(UNIT_BIN)

# A suite of a module outside libcut names its objects and flags in UNIT_OBJ and UNIT_CFLAGS
# (target-specific, in the module's module.mk, with the objects as prerequisites too).
$(B)/tests/%: tests/unit/%.c $(LIBCUT)
	@mkdir -p $(@D)
	$(call quiet,CC)$(CC) $(ALL_CFLAGS) $(UNIT_CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(UNIT_OBJ) $(LDLIBS) $(CHECK_LIBS)

# The stand-in libcuda and the program that drives it (see tests/fixtures/cuprog.c).
# FIXTURE_CFLAGS: more flags for every fixture (check-sanitized builds them with ASan and UBSan).
FIXTURE_CFLAGS ?=
FIXTURE_CC = $(CC) -std=gnu11 -O1 -g $(FIXTURE_CFLAGS)
FIXTURES := $(B)/fixtures/libcuda.so.1 $(B)/fixtures/cuprog $(B)/fixtures/gpuprog \
	$(B)/fixtures/shareprog
CHECKS += $(FIXTURES)
$(B)/fixtures/libcuda.so.1: tests/fixtures/fakecuda.c tests/fixtures/fakegpu.c \
		tests/fixtures/fakeshare.c tests/fixtures/fakecuda.h
	@mkdir -p $(@D)
	$(call quiet,CC)$(FIXTURE_CC) $(WARNFLAGS) -fPIC -shared -fvisibility=hidden \
		-Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic-functions -o $@ tests/fixtures/fakecuda.c \
		tests/fixtures/fakegpu.c tests/fixtures/fakeshare.c -pthread
	@ln -sf libcuda.so.1 $(@D)/libcuda.so
$(B)/fixtures/cuprog: tests/fixtures/cuprog.c tests/fixtures/fakecuda.h $(B)/fixtures/libcuda.so.1
	$(call quiet,CC)$(FIXTURE_CC) $(WARNFLAGS) -o $@ $< -L$(B)/fixtures -lcuda \
		-Wl,-rpath,'$$ORIGIN' -ldl -pthread

$(B)/fixtures/gpuprog: tests/fixtures/gpuprog.c tests/fixtures/fakecuda.h $(B)/fixtures/libcuda.so.1
	$(call quiet,CC)$(FIXTURE_CC) $(WARNFLAGS) -o $@ $< -L$(B)/fixtures -lcuda -Wl,-rpath,'$$ORIGIN' \
		-pthread
$(B)/fixtures/shareprog: tests/fixtures/shareprog.c tests/fixtures/fakecuda.h \
		$(B)/fixtures/libcuda.so.1
	$(call quiet,CC)$(FIXTURE_CC) $(WARNFLAGS) -o $@ $< -L$(B)/fixtures -lcuda -Wl,-rpath,'$$ORIGIN'

# The stand-in again, exporting every function of api.def, and cuargs, which calls them all
# (tests/scripts/capture-args-agree.sh).
ARGS_FIXTURES := $(B)/fixtures/all/libcuda.so.1 $(B)/fixtures/all/cuargs
CHECKS += $(ARGS_FIXTURES)
$(B)/fixtures/all/libcuda.so.1: tests/fixtures/fakecuda.c tests/fixtures/fakegpu.c \
		tests/fixtures/fakeshare.c tests/fixtures/fakecuda-all.c tests/fixtures/fakecuda.h \
		capture/api/api.def
	@mkdir -p $(@D)
	$(call quiet,CC)$(FIXTURE_CC) $(WARNFLAGS) -fPIC -shared -fvisibility=hidden -Icapture/api \
		-Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic-functions -o $@ tests/fixtures/fakecuda.c \
		tests/fixtures/fakegpu.c tests/fixtures/fakeshare.c tests/fixtures/fakecuda-all.c -pthread
$(B)/fixtures/all/cuargs: tests/fixtures/cuargs.c capture/api/api.def capture/api/cudatypes.h \
		$(B)/fixtures/all/libcuda.so.1
	$(call quiet,CC)$(FIXTURE_CC) $(WARNFLAGS) -Icapture/api -o $@ $< -L$(B)/fixtures/all \
		-l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN'

# The stand-in libcudart (versioned libcudart.so.13, loads the stand-in libcuda with dlopen)
# and rtprog, which drives it (tests/scripts/hook-runtime.sh).
RT_FIXTURES := $(B)/fixtures/libcudart.so.13 $(B)/fixtures/rtprog $(B)/fixtures/rtprog-static \
	$(B)/fixtures/libblasish.so $(B)/fixtures/rtmixed
CHECKS += $(RT_FIXTURES)
$(B)/fixtures/libcudart.so.13: tests/fixtures/fakecudart.c tests/fixtures/fakecudart.h \
		tests/fixtures/fakecudart.map tests/fixtures/fakecuda.h
	@mkdir -p $(@D)
	$(call quiet,CC)$(FIXTURE_CC) $(WARNFLAGS) -fPIC -shared -fvisibility=hidden \
		-Wl,-soname,libcudart.so.13 -Wl,--version-script=tests/fixtures/fakecudart.map \
		-Wl,-rpath,'$$ORIGIN' -o $@ $< -ldl -pthread
$(B)/fixtures/rtprog: tests/fixtures/rtprog.c tests/fixtures/fakecudart.h \
		$(B)/fixtures/libcudart.so.13
	$(call quiet,CC)$(FIXTURE_CC) $(WARNFLAGS) -o $@ $< -L$(B)/fixtures -l:libcudart.so.13 \
		-Wl,-rpath,'$$ORIGIN' -ldl -pthread
# rtprog with the stand-in runtime linked in, as nvcc links libcudart by default, and as
# there, the runtime functions local symbols of the program (nvcc's leaves those the program
# calls local) (tests/scripts/capture-runtime.sh).
$(B)/fixtures/rtprog-static: tests/fixtures/rtprog.c tests/fixtures/fakecudart.c \
		tests/fixtures/fakecudart.h tests/fixtures/fakecuda.h
	@mkdir -p $(@D)
	$(call quiet,CC)$(FIXTURE_CC) $(WARNFLAGS) -o $@.tmp tests/fixtures/rtprog.c \
		tests/fixtures/fakecudart.c -Wl,-rpath,'$$ORIGIN' -ldl -pthread
	objcopy --wildcard --localize-symbol='cuda[A-Z]*' --localize-symbol='__cuda*' \
		$@.tmp $@ && rm -f $@.tmp

# A library with the stand-in runtime linked in and hidden, as cuBLAS has its own, and
# rtmixed, which calls the runtime through libcudart.so.13 and through it.
$(B)/fixtures/libblasish.so: tests/fixtures/blasish.c tests/fixtures/fakecudart.c \
		tests/fixtures/fakecudart.h tests/fixtures/fakecuda.h
	@mkdir -p $(@D)
	$(call quiet,CC)$(FIXTURE_CC) $(WARNFLAGS) -fPIC -shared -fvisibility=hidden -DEXPORT= \
		-Wl,-soname,libblasish.so -o $@ tests/fixtures/blasish.c tests/fixtures/fakecudart.c \
		-ldl -pthread
$(B)/fixtures/rtmixed: tests/fixtures/rtmixed.c tests/fixtures/fakecudart.h \
		$(B)/fixtures/libcudart.so.13 $(B)/fixtures/libblasish.so
	$(call quiet,CC)$(FIXTURE_CC) $(WARNFLAGS) -o $@ $< -L$(B)/fixtures -l:libcudart.so.13 \
		-l:libblasish.so -Wl,-rpath,'$$ORIGIN' -ldl -pthread

# nvtxprog, annotated with the vendored NVTX3 headers (tests/fixtures/nvtx3, NVIDIA/NVTX,
# Apache-2.0 with LLVM exception), and nvtxtool, a second injection library to chain to
# (tests/scripts/hook-nvtx.sh).
NVTX_FIXTURES := $(B)/fixtures/nvtxprog $(B)/fixtures/libnvtxtool.so
CHECKS += $(NVTX_FIXTURES)
$(B)/fixtures/nvtxprog: tests/fixtures/nvtxprog.c tests/fixtures/fakecudart.h \
		$(wildcard tests/fixtures/nvtx3/*.h tests/fixtures/nvtx3/nvtxDetail/*.h) \
		$(B)/fixtures/libcudart.so.13
	$(call quiet,CC)$(FIXTURE_CC) -Itests/fixtures -o $@ $< -L$(B)/fixtures -l:libcudart.so.13 \
		-Wl,-rpath,'$$ORIGIN' -ldl -pthread
$(B)/fixtures/libnvtxtool.so: tests/fixtures/nvtxtool.c
	@mkdir -p $(@D)
	$(call quiet,CC)$(FIXTURE_CC) $(WARNFLAGS) -Itests/fixtures -fPIC -shared -fvisibility=hidden \
		-o $@ $<

# Benchmark helpers (built by `make bench-programs`, not by check).
$(B)/bench/readbench: tests/bench/readbench.c $(LIBCUT)
	@mkdir -p $(@D)
	$(call quiet,CC)$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS)
$(B)/bench/collide: tests/bench/collide.c
	@mkdir -p $(@D)
	$(call quiet,CC)$(CC) $(ALL_CFLAGS) -o $@ $<
.PHONY: bench-programs
bench-programs: all $(B)/bench/readbench $(B)/bench/collide

# Fuzzing (libFuzzer, clang): `make fuzz FUZZ_TIME=600` grows the corpus in tests/fuzz/corpus;
# `make fuzz-smoke` (run by check) runs each harness briefly on a copy of it.
FUZZ_TIME ?= 60
FUZZ_SMOKE_TIME ?= 10
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZERS := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)
FUZZ_FLAGS = -g -O1 -fno-sanitize-recover=undefined $(CUT_CPPFLAGS) -Ishare/lib -I$(B)/gen \
	$(JANSSON_CFLAGS)
FUZZ_CFLAGS = $(FUZZ_FLAGS) -fsanitize=fuzzer,address,undefined
# libcut compiled once for every harness (instrumented for coverage, not linked with
# libFuzzer's main).
FUZZ_LIBOBJ := $(LIBCUT_SRC:share/lib/%.c=$(B)/fuzz/obj/%.o)
$(B)/fuzz/obj/%.o: share/lib/%.c $(B)/gen/api_categories.h $(B)/gen/nvidia_tables.h \
	$(wildcard share/lib/*.h)
	@mkdir -p $(@D)
	$(call quiet,FUZZCC)$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,address,undefined -c -o $@ $<
$(B)/fuzz/%: tests/fuzz/%.c $(FUZZ_LIBOBJ)
	@mkdir -p $(@D)
	$(call quiet,FUZZ)$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_LIBOBJ) $(JANSSON_LIBS) $(COMPRESS_LIBS) \
		$(DEMANGLE_LIBS) -lm
.PHONY: fuzz fuzz-smoke fuzzers
fuzzers: $(FUZZERS)
fuzz: $(FUZZERS)
	@for f in $(FUZZERS); do n=$${f##*/fuzz_}; mkdir -p tests/fuzz/corpus/$$n; \
		echo "== $$n for $(FUZZ_TIME) s"; \
		$$f -max_total_time=$(FUZZ_TIME) -close_fd_mask=2 tests/fuzz/corpus/$$n || exit 1; done
# Every harness runs, all at once (libFuzzer's time is wall time), whether or not another
# failed.
fuzz-smoke: $(FUZZERS)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && rc=0 && \
	for f in $(FUZZERS); do n=$${f##*/fuzz_}; mkdir -p $$tmp/$$n; \
		cp tests/fuzz/corpus/$$n/* $$tmp/$$n/ 2>/dev/null; \
		{ $$f -max_total_time=$(FUZZ_SMOKE_TIME) -close_fd_mask=2 $$tmp/$$n >$$tmp/$$n.log 2>&1; \
			echo $$? >$$tmp/$$n.rc; } & \
	done; wait; \
	for f in $(FUZZERS); do n=$${f##*/fuzz_}; \
		if [ "$$(cat $$tmp/$$n.rc)" = 0 ]; \
		then echo "fuzz-smoke: $$n: $$(grep -o 'Done [0-9]* runs' $$tmp/$$n.log)"; \
		else tail -30 $$tmp/$$n.log; echo "fuzz-smoke: $$n failed"; rc=1; \
			[ -z "$$CUT_FAILED_LOG" ] || echo "fuzz/$$n" >>"$$CUT_FAILED_LOG"; fi; \
	done; exit $$rc
