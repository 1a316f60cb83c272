#!/bin/sh
# Installs puppeteer-core (npm) for tests/viewer-check/viewer-check.js into a cache directory,
# once, and prints the node_modules directory to put in NODE_PATH. Chromium itself comes from
# the system (apt-get install chromium). Used by .ci/run and tests/scripts/chrome-viewer.sh.
# usage: viewer-check-deps.sh [dir]   (default: $CUT_VIEWER_DIR, else build/viewer-check)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-${CUT_VIEWER_DIR:-$top/build/viewer-check}}
modules=$dir/node_modules

loads() {
	NODE_PATH=$modules node -e "require('puppeteer-core')" >/dev/null 2>&1
}
if cmp -s "$top/tests/viewer-check/package.json" "$dir/package.json" && loads; then
	echo "$modules"
	exit 0
fi
for t in node npm; do
	command -v $t >/dev/null 2>&1 || { echo "viewer-check-deps: $t is not installed" >&2; exit 2; }
done
mkdir -p "$dir"
cp "$top/tests/viewer-check/package.json" "$dir/package.json"
(cd "$dir" && npm install --no-save --no-audit --no-fund --loglevel=error >&2) ||
	{ echo "viewer-check-deps: npm install puppeteer-core failed" >&2; exit 1; }
loads || { echo "viewer-check-deps: puppeteer-core installed in $dir but does not load" >&2; exit 1; }
echo "$modules"
