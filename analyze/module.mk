# Analysers: JSONL in, reports out. Each is one file; the engines only they use live beside
# them, not in libcut: collwait.c (collectives matched across ranks: cutgaps and cutstat's
# rank and job views) and stat/ (cutstat's GPU, NVTX-range, per-rank, step and job sections).
TOOLS += cutstat
MAN1 += share/man/cutstat.1
TOOLS += cutgaps
MAN1 += share/man/cutgaps.1
TOOLS += cutdiff
MAN1 += share/man/cutdiff.1
TOOLS += cutturns
MAN1 += share/man/cutturns.1

ANALYZE_COLLWAIT := $(B)/obj/analyze/collwait.o
ANALYZE_STAT := $(addprefix $(B)/obj/analyze/stat/,gpustats.o job.o nvtxstats.o rankstats.o steps.o summarize.o gpushare.o) \
	$(ANALYZE_COLLWAIT)
$(B)/obj/analyze/%.o: CUT_CPPFLAGS += -Ianalyze -Ianalyze/stat

$(B)/bin/cutstat: $(ANALYZE_STAT)
$(B)/bin/cutstat: private TOOL_OBJ = $(ANALYZE_STAT)
$(B)/bin/cutdiff: $(ANALYZE_STAT)
$(B)/bin/cutdiff: private TOOL_OBJ = $(ANALYZE_STAT)
$(B)/bin/cutturns: $(ANALYZE_STAT)
$(B)/bin/cutturns: private TOOL_OBJ = $(ANALYZE_STAT)
$(B)/bin/cutgaps: $(ANALYZE_COLLWAIT)
$(B)/bin/cutgaps: private TOOL_OBJ = $(ANALYZE_COLLWAIT)

# Their Check suites link the objects they test (tests/module.mk).
$(B)/tests/test_collwait: $(ANALYZE_COLLWAIT)
$(B)/tests/test_collwait: private UNIT_OBJ = $(ANALYZE_COLLWAIT)
$(B)/tests/test_collwait: private UNIT_CFLAGS = -Ianalyze
$(B)/tests/test_rankstats: $(B)/obj/analyze/stat/rankstats.o $(ANALYZE_COLLWAIT)
$(B)/tests/test_rankstats: private UNIT_OBJ = $(B)/obj/analyze/stat/rankstats.o $(ANALYZE_COLLWAIT)
$(B)/tests/test_rankstats: private UNIT_CFLAGS = -Ianalyze -Ianalyze/stat
$(B)/tests/test_nvtxstats: $(B)/obj/analyze/stat/nvtxstats.o
$(B)/tests/test_nvtxstats: private UNIT_OBJ = $(B)/obj/analyze/stat/nvtxstats.o
$(B)/tests/test_nvtxstats: private UNIT_CFLAGS = -Ianalyze/stat
$(B)/tests/test_steps: $(B)/obj/analyze/stat/steps.o
$(B)/tests/test_steps: private UNIT_OBJ = $(B)/obj/analyze/stat/steps.o
$(B)/tests/test_steps: private UNIT_CFLAGS = -Ianalyze/stat
$(B)/tests/test_summary: $(B)/obj/analyze/stat/summarize.o $(B)/obj/analyze/stat/nvtxstats.o \
	$(B)/obj/analyze/stat/gpustats.o $(B)/obj/analyze/stat/gpushare.o
$(B)/tests/test_summary: private UNIT_OBJ = $(B)/obj/analyze/stat/summarize.o \
	$(B)/obj/analyze/stat/nvtxstats.o $(B)/obj/analyze/stat/gpustats.o \
	$(B)/obj/analyze/stat/gpushare.o
$(B)/tests/test_summary: private UNIT_CFLAGS = -Ianalyze/stat
$(B)/tests/test_gpushare: $(B)/obj/analyze/stat/gpushare.o
$(B)/tests/test_gpushare: private UNIT_OBJ = $(B)/obj/analyze/stat/gpushare.o
$(B)/tests/test_gpushare: private UNIT_CFLAGS = -Ianalyze/stat
