#!/bin/sh
# perf-bundle.sh OUT.tar.xz: perf, objdump and addr2line from this machine, with every library
# they load and the dynamic loader, packed to be carried to the GPU machines, which have no perf
# (run's carry). There: tar xJf OUT.tar.xz -C /tmp; PATH=/tmp/perf/bin:$PATH; perf ... Each tool
# runs under the packed loader and libraries, whatever the machine's own libc is; the programs
# perf starts run under their own. The GPU machines' virtual CPUs expose no hardware counters:
# perf record samples task-clock (perf record -F 25000 -o p.data -- CMD; perf report -i p.data
# --stdio --no-children --comm python3 --sort dso,sym), which slows a launch-bound loop by
# about a third, so read its shares, not its times.
out=${1:?usage: perf-bundle.sh OUT.tar.xz}
for b in perf objdump addr2line; do
	command -v $b >/dev/null || { echo "perf-bundle.sh: no $b here (apt-get install linux-perf binutils)" >&2; exit 2; }
done
w=$(mktemp -d) || exit 2
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/perf/lib" "$w/perf/bin"
for b in perf objdump addr2line; do
	p=$(command -v $b)
	cp "$p" "$w/perf/$b.real" || exit 2
	ldd "$p" | awk '$3 ~ /^\// { print $3 }' | xargs -r cp -L -t "$w/perf/lib" || exit 2
	# The wrapper finds the bundle where it was unpacked.
	cat >"$w/perf/bin/$b" <<EOF
#!/bin/sh
d=\$(cd "\$(dirname "\$0")/.." && pwd)
exec "\$d/ld.so" --library-path "\$d/lib" "\$d/$b.real" "\$@"
EOF
	chmod +x "$w/perf/bin/$b"
done
cp -L "$(ldd "$(command -v perf)" | awk '$1 ~ /ld-linux/ { print $1 }')" "$w/perf/ld.so" || exit 2
tar cJf "$out" -C "$w" perf || exit 2
"$w/perf/bin/perf" --version >/dev/null || { echo "perf-bundle.sh: the packed perf does not run" >&2; exit 1; }
echo "$out: $(du -h "$out" | cut -f1); unpack with tar xJf $out -C DIR, then DIR/perf/bin/perf"
