# Visualisers: JSONL in, pictures out.
TOOLS += cutchrome cutplot
MAN1 += share/man/cutchrome.1 share/man/cutplot.1
