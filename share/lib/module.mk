# libcut: the event reader/writer, classification and helpers every tool links.
LIBCUT_SRC := $(wildcard share/lib/*.c)
LIBCUT_OBJ := $(LIBCUT_SRC:%.c=$(B)/obj/%.o)

$(LIBCUT): $(LIBCUT_OBJ)
	@mkdir -p $(@D)
	$(call quiet,AR)$(AR) rcs $@ $^

# The category table is generated from the one TSV so nothing else lists API names.
$(B)/gen/api_categories.h: share/data/api-categories.tsv share/scripts/gen-categories.sh
	@mkdir -p $(@D)
	$(call quiet,GEN)share/scripts/gen-categories.sh $< >$@.tmp && mv $@.tmp $@
$(B)/obj/share/lib/classify.o: $(B)/gen/api_categories.h

# The runtime's rows (cuda*), after the line that says so, come from a rule table.
.PHONY: categories
categories:
	sed '/^# CUDA runtime:/,$$d' share/data/api-categories.tsv >share/data/api-categories.tsv.tmp
	sed -n '/^# CUDA runtime:/,/^[^#]/p' share/data/api-categories.tsv | grep '^#' \
		>>share/data/api-categories.tsv.tmp
	share/scripts/gen-rt-categories.sh >>share/data/api-categories.tsv.tmp
	mv share/data/api-categories.tsv.tmp share/data/api-categories.tsv

MAN5 += share/man/cut-events.5
# cut(7): the toolkit, the rules every tool shares, and the guides for jobs of many ranks.
MAN7 += share/man/cut.7
DATA += share/data/api-categories.tsv
