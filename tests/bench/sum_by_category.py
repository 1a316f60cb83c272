#!/usr/bin/env python3
"""The python3 baseline of bench-filters.sh: API time summed by category, one json.loads a line."""
import json
import sys

totals = {}
for line in sys.stdin:
    e = json.loads(line)
    if e.get("layer") == "api" and "dur" in e:
        totals[e.get("cat")] = totals.get(e.get("cat"), 0) + e["dur"]
print(totals)
