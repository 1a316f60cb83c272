# Tests: Check unit suites (tests/unit/test_*.c), data-driven cases (tests/cases/<tool>/<case>/)
# and scripts (tests/scripts/*.sh); tests/run-all runs them all.
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
CHECKS += $(UNIT_BIN)

$(B)/tests/%: tests/unit/%.c $(LIBCUT)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(LDLIBS) $(CHECK_LIBS)
