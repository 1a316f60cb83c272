#!/bin/sh
# make install honours DESTDIR and PREFIX and installs programs, man pages (cut(7) too) and data.
B=${CUT_BUILD:-build}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
make -s B="$B" install DESTDIR="$tmp" PREFIX=/opt/cut >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
for f in bin/cutstat share/man/man1/cutstat.1 share/man/man5/cut-events.5 \
	share/man/man7/cut.7 share/cut/api-categories.tsv share/cut/sql/events.sql \
	share/cut/sql/api-functions.sql share/cut/sql/run.js bin/cutjob share/man/man1/cutjob.1; do
	[ -f "$tmp/opt/cut/$f" ] || { echo "missing after install: /opt/cut/$f"; exit 1; }
done
"$tmp/opt/cut/bin/cutstat" samples/demo.jsonl >/dev/null || { echo "installed cutstat fails"; exit 1; }
[ "$("$tmp/opt/cut/bin/cutjob" --version)" = "cutjob $(sed -n 's/^VERSION = //p' config.mk)" ] ||
	{ echo "installed cutjob --version: not config.mk's VERSION"; exit 1; }
grep -q "'/opt/cut/share/cut')" "$tmp/opt/cut/share/cut/sql/events.sql" ||
	{ echo "installed events.sql does not look in /opt/cut/share/cut for api-categories.tsv"; exit 1; }
make -s B="$B" uninstall DESTDIR="$tmp" PREFIX=/opt/cut >/dev/null 2>&1
[ ! -e "$tmp/opt/cut/bin/cutstat" ] || { echo "uninstall left bin/cutstat"; exit 1; }
exit 0
