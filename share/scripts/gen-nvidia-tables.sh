#!/bin/sh
# Turns NVIDIA's ioctl tables (share/data/nvidia/*.tsv) into the sorted C arrays ioctl.c
# searches. usage: gen-nvidia-tables.sh DIR > nvidia_tables.h
# Only numbers present in the tables come out; duplicates are resolved here, once:
#   controls: names whose note says "alias of" give way to the others; two real names for
#             one id are joined with "|"; an id with no #define is named by its RM handler;
#   classes:  every name rm_classes.tsv gives an id, joined with "|"; ids only in
#             rm_classes_all.tsv take the first name listed there.
set -eu
dir=$1
version=$(cat "$dir/VERSION")

# hex2dec in awk (mawk has no strtonum); prints "decimal<TAB>line" so sort -n can order it.
awkhex='function hex(s,   i, c, v) {
	s = tolower(s); sub(/^0x/, "", s); v = 0
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1))
		if (c == 0) return -1
		v = v * 16 + c - 1
	}
	return v
}'

echo "/* Generated from $dir by gen-nvidia-tables.sh: do not edit. */"
echo "#define NV_TABLES_VERSION \"$version\""
echo

# nv_ioctls.tsv: device, number, name, params struct, notes ("size=56; cmd=...; ...").
escapes() {
	awk -F '\t' -v dev="$1" "$awkhex"'
	NR > 1 && $1 == dev && $2 ~ /^0x[0-9A-Fa-f]+$/ {
		size = "-"
		if (match($5, /size=[0-9a-z|-]+/)) size = substr($5, RSTART + 5, RLENGTH - 5)
		printf "%d\t{0x%s, \"%s\", \"%s\", \"%s\"},\n", hex($2), toupper(substr($2, 3)), $3, $4, size
	}' "$dir/nv_ioctls.tsv" | sort -n -k1,1 | cut -f2-
}
echo "static const struct nv_ioctl_entry nv_escape_table[] = {"
escapes nvidiactl | sed 's/^/	/'
echo "};"
echo "static const struct nv_ioctl_entry nv_uvm_table[] = {"
escapes nvidia-uvm | sed 's/^/	/'
echo "};"
echo

# rm_controls.tsv: cmd_hex, name, ..., note (7), ..., rm_handler_impl (9).
echo "static const struct nv_name nv_control_table[] = {"
awk -F '\t' "$awkhex"'
NR > 1 && $1 ~ /^0x[0-9A-Fa-f]+$/ {
	id = toupper(substr($1, 3)); name = $2
	if (name !~ /^[A-Za-z0-9_]+$/) {
		name = $9; sub(/_IMPL$/, "", name)
		if (name !~ /^[A-Za-z0-9_]+$/) next
	}
	if (!(id in order)) { order[id] = ++n; ids[n] = id }
	if ($7 ~ /^alias of/) { if (!(id in alias)) alias[id] = name; next }
	if (id in real) name = real[id] "|" name
	real[id] = name
}
END {
	for (i = 1; i <= n; i++) {
		id = ids[i]
		printf "%d\t{0x%s, \"%s\"},\n", hex(id), id, (id in real) ? real[id] : alias[id]
	}
}' "$dir/rm_controls.tsv" | sort -n -k1,1 | cut -f2- | sed 's/^/	/'
echo "};"
echo

# rm_classes.tsv first (the classes CUDA allocates, curated), then rm_classes_all.tsv.
echo "static const struct nv_name nv_class_table[] = {"
awk -F '\t' "$awkhex"'
FNR == 1 { file++; next }
$1 !~ /^0x[0-9A-Fa-f]+$/ || $2 !~ /^[A-Za-z0-9_]+$/ { next }
{ id = toupper(substr($1, 3)) }
file == 1 { name = $2; if (id in cur) name = cur[id] "|" name; cur[id] = name; next }
!(id in cur) && !(id in all) { all[id] = $2 }
END {
	for (id in cur) printf "%d\t{0x%s, \"%s\"},\n", hex(id), id, cur[id]
	for (id in all) printf "%d\t{0x%s, \"%s\"},\n", hex(id), id, all[id]
}' "$dir/rm_classes.tsv" "$dir/rm_classes_all.tsv" | sort -n -k1,1 | cut -f2- | sed 's/^/	/'
echo "};"
