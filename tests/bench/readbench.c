/* readbench: the shared reader's throughput on a trace, fast path vs jansson only.
 * usage: readbench file   (prints a table: path, MB/s, events/s, events) */
#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "event.h"
#include "parse.h"

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Parses every line of the file in one mode; the file is in memory so only parsing counts. */
static void
run(const char *label, char *data, size_t size, enum cut_parse_mode mode)
{
	struct cut_parser *p = cut_parser_new();
	char why[256];
	struct cut_event ev;
	long events = 0, bad = 0;
	char *copy = malloc(size);
	if (!copy || !p)
		err(2, "out of memory");
	memcpy(copy, data, size); /* parsing writes into the line */
	double t0 = now();
	for (char *s = copy, *e = copy + size; s < e;) {
		char *nl = memchr(s, '\n', (size_t)(e - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(e - s);
		int rc = cut_parse(p, s, len, &ev, mode, why, sizeof(why));
		if (rc == CUT_PARSE_EVENT)
			events++;
		else if (rc != CUT_PARSE_NONE)
			bad++;
		s += len + 1;
	}
	double dt = now() - t0;
	printf("%-14s %10.0f %12.0f %10ld %6ld\n", label, (double)size / dt / 1e6,
	       (double)events / dt, events, bad);
	free(copy);
	cut_parser_free(p);
}

int
main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: readbench file\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		err(2, "%s", argv[1]);
	char *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (data == MAP_FAILED)
		err(2, "mmap");
	printf("%-14s %10s %12s %10s %6s\n", "parser", "MB/s", "events/s", "events", "bad");
	run("fast+jansson", data, (size_t)st.st_size, CUT_PARSE_AUTO);
	run("jansson only", data, (size_t)st.st_size, CUT_PARSE_JANSSON);
	return 0;
}
