# Visualisers: JSONL in, pictures out.
TOOLS += cutchrome cutplot cutperfetto
MAN1 += share/man/cutchrome.1 share/man/cutplot.1 share/man/cutperfetto.1
# cutchrome and cutperfetto write one timeline model (timeline.c), each in its format; cutplot
# bins a picture and keeps its own.
VISUALIZE_TIMELINE := $(B)/obj/visualize/timeline.o
VISUALIZE_TOOLS := $(addprefix $(B)/bin/,cutchrome cutperfetto)
$(VISUALIZE_TOOLS): $(VISUALIZE_TIMELINE)
$(B)/bin/cutchrome: private TOOL_OBJ = $(VISUALIZE_TIMELINE)
# cutperfetto alone writes protobuf (pb.c: the wire format by hand).
VISUALIZE_PB := $(B)/obj/visualize/pb.o
$(B)/bin/cutperfetto: $(VISUALIZE_PB)
$(B)/bin/cutperfetto: private TOOL_OBJ = $(VISUALIZE_TIMELINE) $(VISUALIZE_PB)
$(B)/tests/test_pb: $(VISUALIZE_PB)
$(B)/tests/test_pb: private UNIT_OBJ = $(VISUALIZE_PB)
$(B)/tests/test_pb: private UNIT_CFLAGS = -Ivisualize
$(B)/tests/test_timeline: $(VISUALIZE_TIMELINE)
$(B)/tests/test_timeline: private UNIT_OBJ = $(VISUALIZE_TIMELINE)
$(B)/tests/test_timeline: private UNIT_CFLAGS = -Ivisualize
