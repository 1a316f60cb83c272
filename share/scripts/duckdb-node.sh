#!/bin/sh
# Installs DuckDB for Node.js (@duckdb/node-api from npm, which ships DuckDB's binary) into a
# cache directory, once, and prints the node_modules directory to put in NODE_PATH for
# share/sql/run.js. Used by .ci/run and tests/scripts/sql-duckdb.sh.
# usage: duckdb-node.sh [dir]   (default: $CUT_DUCKDB_DIR, else build/duckdb in the tree)
set -eu
version=1.5.6-r.1
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-${CUT_DUCKDB_DIR:-$top/build/duckdb}}
modules=$dir/node_modules

loads() {
	NODE_PATH=$modules node -e "require('@duckdb/node-api')" >/dev/null 2>&1
}
if grep -qs "\"version\": \"$version\"" "$modules/@duckdb/node-api/package.json" && loads; then
	echo "$modules"
	exit 0
fi
for t in node npm; do
	command -v $t >/dev/null 2>&1 || { echo "duckdb-node: $t is not installed" >&2; exit 2; }
done
mkdir -p "$dir"
npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error \
	"@duckdb/node-api@$version" >&2 ||
	{ echo "duckdb-node: npm install @duckdb/node-api@$version failed" >&2; exit 1; }
loads || { echo "duckdb-node: @duckdb/node-api@$version installed in $dir but does not load" >&2; exit 1; }
echo "$modules"
