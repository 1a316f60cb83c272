# chunks.sh, sourced by the benchmarks that time launchloop.py (bench-preload.sh, bench-ab.sh):
# how they read its chunks.
# fast_table PREFIX MODE...: the chunks of each mode (PREFIX.MODE, from launchloop.py) run at
# full speed, both probes within 15 % of the fastest of all these modes' chunks: us an op, their
# median and 10th percentile, how many of the mode's chunks they are, and the median against the
# first mode's.
fast_table() {
	_p=$1
	shift
	_fast=$(for _m; do cat "$_p.$_m"; done | awk 'NR == 1 || $2 < m { m = $2 } END { print m * 1.15 }')
	echo "chunks at full speed (probe <= $_fast ms): us per op, median / p10, chunks kept, vs $1"
	_base=$(awk -v f="$_fast" '$2 <= f { print $1 }' "$_p.$1" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
	for _m; do
		[ -f "$_p.$_m" ] || continue
		awk -v f="$_fast" '$2 <= f { print $1 }' "$_p.$_m" | sort -n |
			awk -v m="$_m" -v n="$(wc -l <"$_p.$_m")" -v b="${_base:-0}" '
			{ v[NR] = $1 }
			END {
				if (!NR) { printf "%-22s   none of %d\n", m, n; exit }
				med = v[int((NR + 1) / 2)]
				printf "%-22s %6.2f %6.2f %4d of %-4d", m, med, v[int(NR / 10) + 1], NR, n
				if (b > 0) printf " %+6.1f %%", 100 * (med - b) / b
				print ""
			}'
	done
}
