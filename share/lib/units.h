/* units.h: durations as people type them in options ("10ms") and read them in reports
 * ("1.250 ms"), the same in every tool. */
#ifndef CUT_UNITS_H
#define CUT_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Parses a duration: a non-negative number with an optional unit, s, ms, us or ns
 * (nanoseconds without one). Returns nanoseconds, or -1 when s is not such a duration or
 * exceeds 9e18 ns. */
int64_t cut_parse_duration(const char *s);
/* Writes ns in the unit that keeps three decimals ("1.250 ms", "4.000 us", "812 ns") into buf
 * (n bytes, always terminated). Returns buf. */
const char *cut_format_duration(double ns, char *buf, size_t n);

#endif
