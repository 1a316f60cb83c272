/* cut.c: the checked output every tool ends with. */
#include <err.h>
#include <stdio.h>

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
