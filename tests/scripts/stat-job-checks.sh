#!/bin/sh
# The job view checks what it merges (issue 23): a summary of a file or a rank already merged
# is reported and left out (its times would count twice), exit 1; a summary of a trace of
# several ranks names them, so that a rank's own summary beside it is caught too; the version
# is read (a newer one is refused with a message saying so, exit 2; none is no summary); an
# item out of range is reported and left out; counts at INT64_MAX saturate and are reported;
# -c prints CSV tables; many names take time and memory in proportion (a quadratic sort and
# 4 KB of histogram per name before: 80,000 names took 41 s and 640 MB).
top=${CUT_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${CUT_BUILD:-$top/build}
PATH=$B/bin:$PATH
command -v python3 >/dev/null || { echo "needs python3"; exit 77; }
t=$(mktemp -d) || exit 2
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

python3 - "$t" <<'PY'
import json, sys
d = sys.argv[1]
for r in (0, 1):
    with open(f"{d}/r{r}.jsonl", "w") as f:
        for i in range(40):
            f.write(json.dumps({"ts": 1000 * i, "dur": 100 + 10 * i + r, "rank": r, "pid": 5 + r, "tid": 5 + r,
                                "layer": "api", "name": 'cuLaunchKernel' if i % 2 else 'odd,"name"', "ret": 0}) + "\n")
            f.write(json.dumps({"ts": 1000 * i + 5, "dur": 50 + 100 * r, "rank": r, "pid": 5 + r, "tid": 5 + r,
                                "layer": "gpu", "name": "ncclDevKernel_AllReduce", "cat": "kernel",
                                "args": {"stream": "0x1", "device": r}}) + "\n")
PY
cat "$t/r0.jsonl" "$t/r1.jsonl" >"$t/both.jsonl"
for r in r0 r1 both; do cutstat -j "$t/$r.jsonl" >"$t/$r.json" || bad "cutstat -j $r"; done
cutstat -j "$t/r0.json" "$t/r1.json" >"$t/job.json" || bad "job of r0 r1: exit $?"
total() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["job"]; print(j["summaries"], *(f["total_ns"] for f in j["functions"]))' "$1"; }
want=$(total "$t/job.json")

# the same file twice, a copy of it (the same rank), a summary of both ranks beside one
cutstat -j "$t/r0.json" "$t/r1.json" "$t/r0.json" >"$t/out" 2>"$t/err"
[ $? -eq 1 ] || bad "the same file twice: exit not 1"
grep -q 'r0.json: the same file as .*r0.json: left out' "$t/err" || bad "the same file twice: $(cat "$t/err")"
[ "$(total "$t/out")" = "$want" ] || bad "the same file twice: totals $(total "$t/out"), want $want"
cp "$t/r0.json" "$t/copy.json"
cutstat -j "$t/r0.json" "$t/r1.json" "$t/copy.json" >"$t/out" 2>"$t/err"
[ $? -eq 1 ] || bad "rank 0 twice: exit not 1"
grep -q 'copy.json: rank 0 is also in .*r0.json: left out' "$t/err" || bad "rank 0 twice: $(cat "$t/err")"
[ "$(total "$t/out")" = "$want" ] || bad "rank 0 twice: totals $(total "$t/out"), want $want"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; sys.exit(s.get("ranks") != [0, 1] or "rank" in s)' "$t/both.json" ||
	bad "a summary of two ranks does not name them"
cutstat -j "$t/both.json" "$t/r1.json" >"$t/out" 2>"$t/err"
[ $? -eq 1 ] || bad "a rank's summary beside one of all ranks: exit not 1"
grep -q 'r1.json: rank 1 is also in' "$t/err" || bad "a rank beside all ranks: $(cat "$t/err")"
[ "$(total "$t/out")" = "$(total "$t/job.json" | sed 's/^2/1/')" ] || bad "a rank beside all ranks: totals $(total "$t/out")"

# versions
python3 - "$t" <<'PY'
import json, sys
d = sys.argv[1]
s = json.load(open(f"{d}/r1.json"))
s["summary"]["version"] = 2
json.dump(s, open(f"{d}/v2.json", "w"), indent=2)
del s["summary"]["version"]
json.dump(s, open(f"{d}/v0.json", "w"), indent=2)
s = json.load(open(f"{d}/r1.json"))
f = s["summary"]["functions"]
f[0]["calls"] = -1
f.append(dict(f[1], hist=[[600, 1]]))
f.append(dict(f[1], name="cuOther", max_ns=-5))
f.append(dict(f[1]))
json.dump(s, open(f"{d}/badit.json", "w"), indent=2)
PY
cutstat "$t/r0.json" "$t/v2.json" >"$t/out" 2>"$t/err"
[ $? -eq 2 ] || bad "version 2: exit not 2"
grep -q 'v2.json: a summary of version 2, which this cutstat cannot read (it reads version 1)' "$t/err" ||
	bad "version 2: $(cat "$t/err")"
cutstat "$t/r0.json" "$t/v0.json" >"$t/out" 2>"$t/err"
[ $? -eq 2 ] || bad "no version: exit not 2"
grep -q 'v0.json: not a cutstat -j summary: no "version"' "$t/err" || bad "no version: $(cat "$t/err")"
cutstat "$t/r0.json" "$t/badit.json" >"$t/out" 2>"$t/err"
[ $? -eq 1 ] || bad "bad items: exit not 1"
[ "$(grep -c 'badit.json: functions\[[0-9]*\]: .*left out' "$t/err")" = 4 ] || bad "bad items: $(cat "$t/err")"

# INT64_MAX counts saturate, and say so
python3 - "$t" <<'PY'
import json, sys
M = 2**63 - 1
for r in (0, 1):
    it = {"name": "cuBig", "calls": M, "total_ns": M, "min_ns": 1, "max_ns": M, "hist": [[1, M], [500, M]]}
    k = dict(it, name="ncclDevKernel_Big")
    json.dump({"summary": {"version": 1, "rank": r, "functions": [it], "kernels": [k]}},
              open(f"{sys.argv[1]}/big{r}.json", "w"), indent=2)
PY
cutstat -j "$t/big0.json" "$t/big1.json" >"$t/out" 2>"$t/err" || bad "big counts: exit $?"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["job"]; M = 2**63 - 1; f = j["functions"][0]
sys.exit(not (j.get("saturated") is True and f["calls"] == M and f["total_ns"] == M and f["max_ns"] == M and f["min_ns"] == 1))' "$t/out" ||
	bad "big counts: $(head -c 600 "$t/out")"
cutstat -c "$t/big0.json" "$t/big1.json" 2>&1 >/dev/null | grep -q 'reached the largest 64-bit integer' ||
	bad "big counts: no message with -c"
cutstat "$t/big0.json" "$t/big1.json" 2>/dev/null | grep -q '^warning: some sums reached the largest' ||
	bad "big counts: no warning in the text"

# -c: CSV tables, names quoted
cutstat -c "$t/r0.json" "$t/r1.json" >"$t/csv" || bad "-c: exit $?"
head -1 "$t/csv" | grep -qx 'name,calls,total_ns,med_ns,p99_ns,min_ns,max_ns,rank_min_ns,rank_max_ns,slowest' ||
	bad "-c: header $(head -1 "$t/csv")"
grep -q '^"odd,""name""",40,' "$t/csv" || bad "-c: a name with a comma and quotes: $(cat "$t/csv")"
grep -qx 'gpu_name,calls,total_ns,med_ns,p99_ns,min_ns,max_ns,rank_min_ns,rank_max_ns,slowest,mangled' "$t/csv" || bad "-c: no kernel table"
grep -qx 'rank 0,2000,rank 1,6000,2,ncclDevKernel_AllReduce,' "$t/csv" || bad "-c: stragglers: $(tail -3 "$t/csv")"

# many names: CPU time and memory in proportion to them (against the same run's smaller job)
python3 - "$t" <<'PY'
import json, sys
d = sys.argv[1]
for n in (10000, 40000):
    for r in (0, 1):
        fns = [{"name": f"cuFunction_{i:06d}_" + "x" * 40, "calls": 3, "total_ns": 300 + i + r,
                "min_ns": 100, "max_ns": 100 + i, "hist": [[54, 2], [55, 1]]} for i in range(n)]
        json.dump({"summary": {"version": 1, "rank": r, "functions": fns, "kernels": []}},
                  open(f"{d}/n{n}-{r}.json", "w"), indent=1)
PY
python3 - "$t" <<'PY' || fail=1
import resource, subprocess, sys
d = sys.argv[1]
def run(n):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(["cutstat", f"{d}/n{n}-0.json", f"{d}/n{n}-1.json"], stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return p.returncode, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
rc, small = run(10000)
rc2, large = run(40000)
# ru_maxrss of children is the largest child so far: the larger job's
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
if rc or rc2:
    sys.exit(f"FAIL: many names: exit {rc} {rc2}")
# four times the names: 4 times the time if linear, 16 if quadratic
if large > 8 * max(small, 0.02):
    sys.exit(f"FAIL: many names: 40000 took {large:.2f} s of CPU, 10000 {small:.2f} s")
# the summaries' own JSON while one is read, and well under 1 KB a name of the job's own
if rss > 80e6 + 1500 * 40000:
    sys.exit(f"FAIL: many names: {rss / 1e6:.0f} MB for 40000")
PY
exit $fail
