# cutjob: cutstat's job view with each rank's summary made on Dask, where its trace is
# (share/dask/cutjob.py, installed with the tools; Dask from python3-distributed).
TOOLS += cutjob
MAN1 += share/man/cutjob.1

$(B)/bin/cutjob: share/dask/cutjob.py config.mk
	@mkdir -p $(@D)
	$(call quiet,GEN)sed 's/^VERSION = "@VERSION@"/VERSION = "$(VERSION)"/' share/dask/cutjob.py \
		>$@.tmp && chmod 755 $@.tmp && mv $@.tmp $@
