/* libcuda.h: the libcuda a traced program uses (cutcapture's api layer probes it), and its
 * exported driver API functions, read from its ELF symbol table. */
#ifndef CUT_CAPTURE_LIBCUDA_H
#define CUT_CAPTURE_LIBCUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* libcuda.so.1 as the dynamic loader would find it for this environment (pid 0), or for
 * process pid: the one it has mapped, else the one its LD_LIBRARY_PATH, the ld.so cache and
 * the default directories give. RPATH/RUNPATH of the program are not read (--libcuda covers
 * them). Returns a path to free, or NULL. */
char *libcuda_find(pid_t pid);
/* libcudart.so.13 likewise (the runtime layer). */
char *libcudart_find(pid_t pid);
/*
 * The exported cu* functions (runtime: cuda* and __cuda*) of the library at path (defined STT_FUNC
 * in .dynsym; where none is, the global ones of .symtab: a program with the driver linked in) that
 * match one of the fnmatch(3) patterns (all when there are none), one name per
 * address (an alias would fire twice), sorted by name, at most CC_MAX_FUNCS, with their file
 * offsets. The offsets are given to libbpf rather than the names: its resolution of a name list
 * failed with ENOENT on libcuda 580 (H200 machine), and the offsets are what the kernel takes
 * anyway. Returns the count, or -1 with a message in why.
 */
int libcuda_functions(const char *path, bool runtime, const char *const *patterns, int npatterns,
                      char ***names, unsigned long **offsets, char *why, size_t whylen);

#endif
