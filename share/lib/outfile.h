/* outfile.h: output files that tools create (-o): never written through a link, never half
 * written over the previous contents, mode 0644 whatever the umask. */
#ifndef CUT_OUTFILE_H
#define CUT_OUTFILE_H

#include <stdio.h>

/*
 * Opens path for writing a fresh file. A new or existing regular file is written as a
 * temporary beside it, created with O_EXCL and mode 0644 (whatever the umask), and renamed
 * over path by outfile_commit: no file a link planted at path points to is ever written, and
 * a run that fails leaves path as it was. The temporary is removed at exit and when a signal
 * ends the process (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ and the other
 * terminating signals a process is sent, unless ignored at the first call: the handler
 * removes it and raises the signal again with its default action). Anything else that exists
 * at path (a device such as /dev/null, a FIFO) is opened as it is, without creating or
 * truncating. A symbolic link at path is refused: NULL with errno ELOOP. Returns NULL with
 * errno set on other failures. One output at a time; its file descriptor (fileno) may be
 * handed to a child that writes the file (the child neither removes nor renames it).
 */
FILE *outfile_open(const char *path);
/* Flushes and closes f (from outfile_open) and gives the file its name. Returns 0, or -1 with
 * errno set (a write error: the temporary is removed, path is left as it was). */
int outfile_commit(FILE *f);

#endif
