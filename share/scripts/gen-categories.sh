#!/bin/sh
# Turns share/data/api-categories.tsv into the sorted C table classify.c searches.
set -eu
tsv=$1
cats=" init context device memory transfer launch sync stream event module graph query other "
echo "/* Generated from $tsv by gen-categories.sh: do not edit. */"
echo "static const struct api_entry api_table[] = {"
grep -v '^#' "$tsv" | LC_ALL=C sort -t '	' -k1,1 | awk -F '\t' -v cats="$cats" '
NF != 2 || $1 !~ /^cu[A-Za-z0-9_]+$/ { printf "%s: bad line: %s\n", FILENAME, $0 > "/dev/stderr"; exit 1 }
index(cats, " " $2 " ") == 0 { printf "unknown category %s for %s\n", $2, $1 > "/dev/stderr"; exit 1 }
$1 == prev { printf "duplicate entry %s\n", $1 > "/dev/stderr"; exit 1 }
{ prev = $1; printf "\t{\"%s\", CUT_CAT_%s},\n", $1, toupper($2) }'
echo "};"
