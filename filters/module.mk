# Filters: JSONL in, JSONL out (cutmerge, cutioctl, cutslice).
TOOLS += cutmerge cutioctl
MAN1 += share/man/cutmerge.1 share/man/cutioctl.1
TOOLS += cutslice
MAN1 += share/man/cutslice.1

# NVIDIA's ioctl tables: compiled into libcut's ioctl.c from share/data/nvidia (one source),
# and installed under $(DATADIR)/nvidia for reference.
NVIDIA_TABLES := $(wildcard share/data/nvidia/*.tsv) share/data/nvidia/VERSION \
	share/data/nvidia/README
$(B)/gen/nvidia_tables.h: share/scripts/gen-nvidia-tables.sh $(NVIDIA_TABLES)
	@mkdir -p $(@D)
	$(call quiet,GEN)share/scripts/gen-nvidia-tables.sh share/data/nvidia >$@.tmp && mv $@.tmp $@
$(B)/obj/share/lib/ioctl.o: $(B)/gen/nvidia_tables.h

.PHONY: install-nvidia-tables
install: install-nvidia-tables
install-nvidia-tables:
	install -d $(DESTDIR)$(DATADIR)/nvidia
	install -m 644 $(NVIDIA_TABLES) $(DESTDIR)$(DATADIR)/nvidia
