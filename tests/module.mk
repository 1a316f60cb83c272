# Tests: Check unit suites (tests/unit/test_*.c), data-driven cases (tests/cases/<tool>/<case>/)
# and scripts (tests/scripts/*.sh); tests/run-all runs them all.
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
CHECKS += $(UNIT_BIN)

$(B)/tests/%: tests/unit/%.c $(LIBCUT)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(LDLIBS) $(CHECK_LIBS)

# The stand-in libcuda and the program that drives it (see tests/fixtures/cuprog.c).
FIXTURES := $(B)/fixtures/libcuda.so.1 $(B)/fixtures/cuprog
CHECKS += $(FIXTURES)
$(B)/fixtures/libcuda.so.1: tests/fixtures/fakecuda.c tests/fixtures/fakecuda.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARNFLAGS) -O1 -g -fPIC -shared -fvisibility=hidden \
		-Wl,-soname,libcuda.so.1 -o $@ $<
	ln -sf libcuda.so.1 $(@D)/libcuda.so
$(B)/fixtures/cuprog: tests/fixtures/cuprog.c tests/fixtures/fakecuda.h $(B)/fixtures/libcuda.so.1
	$(CC) -std=gnu11 $(WARNFLAGS) -O1 -g -o $@ $< -L$(B)/fixtures -lcuda \
		-Wl,-rpath,'$$ORIGIN' -ldl -pthread

# Benchmark helpers (built by `make bench-programs`, not by check).
$(B)/bench/readbench: tests/bench/readbench.c $(LIBCUT)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS)
.PHONY: bench-programs
bench-programs: all $(B)/bench/readbench
