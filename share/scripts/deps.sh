#!/bin/sh
# Install the Debian/Ubuntu packages cut needs to build and test.
# libbpf >= 1.2 (for uprobe_multi links) comes from bookworm-backports on Debian 12.
set -eu

need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: must be root to install packages (try: sudo make deps)" >&2
		exit 2
	fi
}

. /etc/os-release
pkgs="libjansson-dev check gnuplot-nox clang llvm libelf-dev zlib1g-dev libzstd-dev libiberty-dev zstd pkg-config make gcc python3 jq protobuf-compiler python3-distributed"
bpfpkgs="libbpf-dev bpftool"

# --if-missing: do nothing when everything is there (used by make demo / make check).
missing() {
	m=
	for pc in jansson check libbpf zlib libzstd; do
		$PKG_CONFIG --exists "$pc" 2>/dev/null || m="$m $pc"
	done
	if $PKG_CONFIG --exists libbpf 2>/dev/null; then
		case $($PKG_CONFIG --modversion libbpf) in 0.* | 1.0.* | 1.1.*) m="$m libbpf>=1.2" ;; esac
	fi
	# libiberty's demangler (share/lib/demangle.c): a static library, no pkg-config file
	echo '#include <libiberty/demangle.h>' | ${CC:-cc} -E -x c - >/dev/null 2>&1 || m="$m libiberty"
	for t in clang gnuplot protoc zstd; do
		command -v "$t" >/dev/null 2>&1 || m="$m $t"
	done
	command -v bpftool >/dev/null 2>&1 || [ -x /usr/sbin/bpftool ] || m="$m bpftool"
	# Dask for share/dask/cutjob.py, in the system's python3 (the one apt installs into)
	/usr/bin/python3 -c 'import distributed' >/dev/null 2>&1 || m="$m python3-distributed"
	echo "$m"
}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
if [ "${1:-}" = --if-missing ]; then
	command -v "$PKG_CONFIG" >/dev/null 2>&1 || PKG_CONFIG=false
	m=$(missing)
	[ -z "$m" ] && exit 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: missing:$m; run 'sudo make deps' once" >&2
		exit 2
	fi
	echo "deps: installing what is missing:$m" >&2
fi

need_root
export DEBIAN_FRONTEND=noninteractive
backports=
if [ "${ID:-}" = debian ] && [ "${VERSION_CODENAME:-}" = bookworm ]; then
	list=/etc/apt/sources.list.d/bookworm-backports.list
	if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		echo "deb http://deb.debian.org/debian bookworm-backports main" >"$list"
	fi
	backports="-t bookworm-backports"
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends $pkgs >/dev/null 2>&1 ||
	{ echo "deps: apt-get install failed: $pkgs" >&2; exit 1; }
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $backports $bpfpkgs >/dev/null 2>&1 ||
	{ echo "deps: apt-get install failed: $bpfpkgs" >&2; exit 1; }
ver=$(pkg-config --modversion libbpf)
case $ver in
0.* | 1.0.* | 1.1.*)
	echo "deps: libbpf $ver is too old; cut needs >= 1.2 for uprobe_multi" >&2
	exit 1
	;;
esac
echo "deps: installed; libbpf $ver, $(bpftool version 2>/dev/null | head -1)"
