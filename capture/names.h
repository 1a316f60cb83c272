/* names.h: the names cutcapture's records refer to by number: handles, from the calls that
 * named them (symbol records), per process; and threads, their name and process, from the
 * BPF side's task records or /proc while it still has them; and processes, their rank in a
 * distributed job, from their environment. */
#ifndef CUT_CAPTURE_NAMES_H
#define CUT_CAPTURE_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/call.h"
#include "rank.h"

/* The handle names, for the argument decoder (a name it returns is valid until the next). */
struct cut_names *names_handles(void);
/* Names handle of process pid (len bytes of name, copied); told: its symbol record is
 * written now, else when a call first uses it (a kernel's host stub). */
void names_set_handle(uint32_t pid, uint64_t handle, const char *name, size_t len, bool told);
/* The host stub whose name the decoder took for the first time since the last call, if any:
 * its symbol record is due (valid until the next names_set_handle). */
bool names_untold(uint64_t *handle, const char **name);
/* Remembers thread tid of process pid and its name (comm, or /proc's when NULL) while /proc
 * still has them. */
void names_thread_note(uint32_t pid, uint32_t tid, const char *comm);
/* Whether thread tid was noted. */
bool names_thread_known(uint32_t tid);
/* The process of thread tid: as noted, else from /proc (noting it); 0 when unknown. */
uint32_t names_thread_pid(uint32_t tid);
/* The first time thread tid (of pid) appears in the trace: its name, when known (its thread
 * record is due); NULL on every later time. */
const char *names_thread_first(uint32_t pid, uint32_t tid);
/* Reads the rank of process pid (rank.h) from its environment now: at its exec (events from
 * ts on have it, earlier ones the one it had before), or when found running. */
void names_env_exec(uint32_t pid, uint64_t ts);
/* The rank of process pid from the environment block its exec left (len bytes, the exec's
 * task record first): more sure than /proc, which a short process leaves before it is read. */
void names_env_block(uint32_t pid, const char *env, size_t len);
/* Process pid was forked by ppid: it has ppid's rank. */
void names_env_fork(uint32_t pid, uint32_t ppid);
/* The rank of process pid for an event at ts, or NULL when its environment names none (a
 * process never noted is read once, now). */
const struct cut_rank *names_rank(uint32_t pid, uint64_t ts);
/* Frees the names kept. */
void names_free(void);

#endif
