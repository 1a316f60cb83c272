#!/bin/sh
# Turns share/data/api-categories.tsv into the sorted C table classify.c searches: per name its
# category and its flags (the third column, comma-separated words, as CUT_API_* bits).
set -eu
tsv=$1
cats=" init context device memory transfer launch sync stream event module graph query other "
flags=" submits kernel launch-config copy memset graph enqueue creates-stream context-wait green \
syncs-context syncs-stream syncs-event records-event allocates frees htod dtoh dtod \
creates-context instantiates-graph destroys-context resets-context retains-primary \
releases-primary "
echo "/* Generated from $tsv by gen-categories.sh: do not edit. */"
echo "static const struct api_entry api_table[] = {"
grep -v '^#' "$tsv" | LC_ALL=C sort -t '	' -k1,1 | awk -F '\t' -v cats="$cats" -v flags="$flags" '
(NF != 2 && NF != 3) || $1 !~ /^cu[A-Za-z0-9_]+$/ { printf "%s: bad line: %s\n", FILENAME, $0 > "/dev/stderr"; exit 1 }
index(cats, " " $2 " ") == 0 { printf "unknown category %s for %s\n", $2, $1 > "/dev/stderr"; exit 1 }
$1 == prev { printf "duplicate entry %s\n", $1 > "/dev/stderr"; exit 1 }
{
	prev = $1
	bits = ""
	n = NF == 3 ? split($3, w, ",") : 0
	if (NF == 3 && n == 0) { printf "empty flags for %s\n", $1 > "/dev/stderr"; exit 1 }
	for (i = 1; i <= n; i++) {
		if (index(flags, " " w[i] " ") == 0) {
			printf "unknown flag %s for %s\n", w[i], $1 > "/dev/stderr"; exit 1
		}
		f = toupper(w[i]); gsub("-", "_", f)
		bits = bits (bits == "" ? "" : " | ") "CUT_API_" f
	}
	printf "\t{\"%s\", CUT_CAT_%s, %s},\n", $1, toupper($2), bits == "" ? "0" : bits
}'
echo "};"
