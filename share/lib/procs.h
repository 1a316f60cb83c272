/* procs.h: the processes of a trace, each a pid on a host, and the host and rank of the
 * records that lack them: one rule for every tool that groups by host, process or rank
 * (cutstat, cutgaps, the collectives' waits, the viewers), the rule cutslice and share/sql
 * follow. */
#ifndef CUT_PROCS_H
#define CUT_PROCS_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

/*
 * The rule. A record belongs to the process of its pid on its host (the envelope's host). A
 * record without a host belongs to the first process met of its pid, which takes the host of
 * the first record of that pid that names one: writers have left the host and rank off some
 * records of a process whose other records carry them (the runtime and NVTX records of
 * samples/ddp-2gpu-hook), while a record of that pid on another host is another process (a
 * trace merged from two hosts carries the host on every record: cutmerge(1)). A header record
 * names its process's host in its args too. A process's rank is the rank of the first of its
 * records that carries one in its envelope (a header, a process record, any event), else its
 * process record's args.rank; a record without a rank has its process's. What a later record
 * says applies to the earlier ones too: ask for the host and rank after the last record.
 */
struct cut_procs;

/* A new, empty set. Exits (status 2) on no memory. */
struct cut_procs *cut_procs_new(void);
void cut_procs_free(struct cut_procs *p);
/* The process of ev by the rule: an index from 0, in the order processes are met; learns what
 * ev says of its process's host and rank. Records of no process (pid 0) are a process too. */
size_t cut_procs_of(struct cut_procs *p, const struct cut_event *ev);
/* The processes met. */
size_t cut_procs_count(const struct cut_procs *p);
/* Process i's pid; its host, NULL while none is known; its rank, -1 while none is known. */
int64_t cut_procs_pid(const struct cut_procs *p, size_t i);
const char *cut_procs_host(const struct cut_procs *p, size_t i);
int64_t cut_procs_rank(const struct cut_procs *p, size_t i);
/* How many hosts the processes are on. */
size_t cut_procs_hosts(const struct cut_procs *p);
/* What reports call process i: "pid P", and " on HOST" after it when the processes are on
 * two hosts or more (as the viewers name them). The string is valid until the next call. */
const char *cut_procs_label(const struct cut_procs *p, size_t i);

#endif
