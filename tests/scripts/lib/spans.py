"""spans.py: time covered by intervals, for the tests that hold cut's GPU busy times to a truth
(tests/scripts/gpu-shared.sh against the stand-in's, tests/gpu/share_busy.py and share_gpu.sh
against CUPTI's)."""


def union(iv):
    """The time the (start, end) intervals iv cover, overlaps counted once."""
    t, cs, ce = 0, None, None
    for s, e in sorted(iv):
        if cs is None or s > ce:
            t += 0 if cs is None else ce - cs
            cs, ce = s, e
        else:
            ce = max(ce, e)
    return t + (0 if cs is None else ce - cs)


def overlap(lists):
    """How long the interval lists overlapped one another: their times, summed, less the time
    they cover together."""
    return sum(union(v) for v in lists) - union([x for v in lists for x in v])
