# Visualisers: JSONL in, pictures out.
TOOLS += cutchrome cutplot cutperfetto
MAN1 += share/man/cutchrome.1 share/man/cutplot.1 share/man/cutperfetto.1
