/* cut.c: the checked output every tool ends with, and the options every tool answers. */
#include <err.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cut.h"

void
cut_write_buf(struct cut_buf *b)
{
	if (b->len && fwrite(b->s, 1, b->len, stdout) != b->len)
		err(CUT_EXIT_FATAL, "write error on standard output");
	buf_reset(b);
}

int
cut_finish_output(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		err(CUT_EXIT_FATAL, "write error on standard output");
	return status;
}

static bool help_asked;
static const struct cut_opt_help *help_opts;

/* The options' lines of --help, after the usage. */
static void
print_opts(void)
{
	static const struct cut_opt_help std[] = {
	    {"--help", "print this help and exit"},
	    {"--version", "print the version and exit"},
	};
	int w = 0;
	for (const struct cut_opt_help *o = help_opts; o->option; o++)
		w = (int)strlen(o->option) > w ? (int)strlen(o->option) : w;
	w = w < 11 ? 11 : w;
	putchar('\n');
	for (const struct cut_opt_help *o = help_opts; o->option; o++)
		printf("  %-*s  %s\n", w, o->option, o->meaning);
	for (size_t i = 0; i < sizeof(std) / sizeof(std[0]); i++)
		printf("  %-*s  %s\n", w, std[i].option, std[i].meaning);
}

/* The tool's usage function exits with status 2: asked for, the usage is a success. */
static void
help_exit(void)
{
	if (!help_asked)
		return;
	if (help_opts)
		print_opts();
	_exit(fflush(stdout) == 0 && !ferror(stdout) ? CUT_EXIT_OK : CUT_EXIT_FATAL);
}

void
cut_std_args_help(int argc, char *argv[], void (*usage)(void), const struct cut_opt_help *opts)
{
	help_opts = opts;
	cut_std_args(argc, argv, usage);
}

void
cut_std_args(int argc, char *argv[], void (*usage)(void))
{
	if (argc < 2)
		return;
	if (strcmp(argv[1], "--version") == 0) {
		const char *name = strrchr(argv[0], '/');
		printf("%s %s\n", name ? name + 1 : argv[0], CUT_VERSION);
		exit(cut_finish_output(CUT_EXIT_OK));
	}
	if (strcmp(argv[1], "--help") == 0) {
		fflush(stdout);
		fflush(stderr);
		if (dup2(STDOUT_FILENO, STDERR_FILENO) < 0)
			err(CUT_EXIT_FATAL, "--help");
		help_asked = true;
		atexit(help_exit);
		usage();
		exit(CUT_EXIT_OK); /* a usage function that returns */
	}
}

void *
cut_grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t n = *cap ? *cap : 16;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			cut_out_of_memory();
		n *= 2;
	}
	char *q = cut_xrealloc(p, n, size);
	memset(q + *cap * size, 0, (n - *cap) * size);
	*cap = n;
	return q;
}
