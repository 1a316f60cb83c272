/* units.c: parsing and printing durations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

int64_t
cut_parse_duration(const char *s)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"", 1}, {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	char *end;
	double v = strtod(s, &end);
	if (end == s || !(v >= 0))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0)
			return v * units[i].ns <= 9e18 ? (int64_t)(v * units[i].ns) : -1;
	return -1;
}

const char *
cut_format_duration(double ns, char *buf, size_t n)
{
	if (ns >= 1e9)
		snprintf(buf, n, "%.3f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, n, "%.3f ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, n, "%.3f us", ns / 1e3);
	else
		snprintf(buf, n, "%.0f ns", ns);
	return buf;
}
