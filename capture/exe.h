/* exe.h: the file a command runs, and whether the dynamic loader will take LD_PRELOAD there:
 * cutcapture records the api and runtime layers with the library it preloads where it can, and
 * with uprobes where the loader ignores the preload or the driver is linked into the program. */
#ifndef CUT_CAPTURE_EXE_H
#define CUT_CAPTURE_EXE_H

#include <stdbool.h>
#include <stddef.h>

/* Why a preloaded library would not see the command's driver calls. */
enum exe_why {
	EXE_PRELOADS,      /* it would: the loader takes LD_PRELOAD, the driver is a library */
	EXE_STATIC,        /* no dynamic loader (an ELF without PT_INTERP) */
	EXE_SETUID,        /* set-user-ID: secure-execution mode, which ignores a preload by path */
	EXE_SETGID,        /* set-group-ID: the same */
	EXE_CAPABILITIES,  /* file capabilities (security.capability) granted: the same */
	EXE_LIBCUDA_INSIDE /* the program defines the driver API itself (libcuda linked in) */
};

/*
 * What the loader will do with command argv[0..] when it is run by this process (its real and
 * effective ids, its no_new_privs): argv[0] found as execvp(3) finds it, through "#!"
 * interpreters (the interpreter's file is what the kernel loads) and env(1) (the program it
 * runs, found in PATH), up to a few levels. The file that decided goes into file (n bytes: the
 * last file looked at when none did). A command that cannot be found or read is EXE_PRELOADS
 * (exec will say why).
 */
enum exe_why exe_preload_check(char *const argv[], char *file, size_t n);
/* The word for it in the header's sources ("static", "setuid", ...), NULL for EXE_PRELOADS. */
const char *exe_why_word(enum exe_why w);
/* Whether the ELF file defines the CUDA runtime's functions itself: libcudart linked in
 * (nvcc links it so by default), whose calls no preloaded library sees. */
bool exe_runtime_inside(const char *file);

#endif
