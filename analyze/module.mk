# Analysers: JSONL in, reports out.
TOOLS += cutstat
MAN1 += share/man/cutstat.1
TOOLS += cutgaps
MAN1 += share/man/cutgaps.1
