/* call.h: the one description of a driver or runtime API call that both capture paths decode
 * with. args.def (driver) and rtargs.def (runtime) say, one line per function, which arguments
 * become members of the args object (cut-events(5)) and how; api.def and rt.def say the type of
 * every parameter and which are streams and events. From them cut_api_describe derives what must be
 * read when the call returns (out values, a string, words of a struct or of the stack), which the
 * BPF side does from its cc_fdesc (cutcapture) and libcuthook's wrapper does in the process
 * (cut_api_read); then both hand the same words to cut_api_args. HACKING.md says how to add an
 * argument. */
#ifndef CUT_API_CALL_H
#define CUT_API_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define CUT_API_NREG 6                                /* arguments passed in registers */
#define CUT_API_NEXTRA 11                             /* words read beyond them */
#define CUT_API_NARGS (CUT_API_NREG + CUT_API_NEXTRA) /* words of a call */
#define CUT_API_NOUT 2                                /* out values read at return */
#define CUT_API_STRLEN 4096 /* a string read from the call, its NUL included, at most */
#define CUT_API_NFIELDS 8   /* members of an args.def line */
#define CUT_API_KEYLEN 16   /* "key": of a member, padded (a fixed-size copy is faster) */

/* Where the words after the sixth come from (cut_api_reads.extra). */
enum {
	CUT_EXTRA_NONE,
	CUT_EXTRA_STACK,  /* the arguments after the sixth: the caller's stack from [sp+8] */
	CUT_EXTRA_ARG0,   /* the first nextra words of the struct argument 0 points to */
	CUT_EXTRA_GATHER, /* the words of that struct at the offsets word[] */
};

/* How the string of a call is found (cut_api_reads.strmode). */
enum {
	CUT_STR_NONE,
	CUT_STR_ARG, /* argument str-1 points to it; read at return */
	CUT_STR_OUT, /* argument str-1 points to a pointer to it, set by the call */
};

/* What must be read of a call, at its entry and its return, besides its six registers. */
struct cut_api_reads {
	unsigned char out[CUT_API_NOUT];     /* 1 + argument pointing to an out value; 0: none */
	unsigned char outsize[CUT_API_NOUT]; /* its size: 4 or 8 bytes */
	unsigned char str;                   /* 1 + argument of the string; 0: none */
	unsigned char strmode;               /* CUT_STR_* */
	unsigned char extra;                 /* CUT_EXTRA_* */
	unsigned char nextra;                /* words: a[6] ... a[5 + nextra] */
	unsigned char word[CUT_API_NEXTRA];  /* CUT_EXTRA_GATHER: word offset of each */
};

struct cut_api_row; /* a line of args.def */

/* A driver or runtime API function, described for decoding (once per function, then
 * read-only). */
struct cut_api_desc {
	const char *name;
	const struct cut_api_row *row; /* NULL when args.def has no line for it */
	unsigned char nparams;         /* argument words, from api.def or rt.def; 0: in neither */
	bool runtime;                  /* a function of rt.def (the runtime layer) */
	bool noret;                    /* returns no cudaError_t: its events have no ret */
	bool silent;                   /* no event of its own: it only names a handle, quietly */
	unsigned char norm[CUT_API_NARGS]; /* how each argument word is cut to its type */
	signed char stream, event;         /* argument of the default stream and event; -1: none */
	bool stream_out, event_out;        /* that argument points to it (set by the call) */
	bool decodes;                      /* the args object can have anything in it */
	/* The args object is a function of the call as read (cut_call: its result, the words in
	 * the bit set words, its out values, whether its extra words could be read) and the names
	 * of handles among them alone: no string, no handle named. Two calls alike so write the
	 * same args (libcuthook copies them from a recent call: writer.c). */
	bool pure;
	uint32_t words;
	struct cut_api_reads rd;
	char key[CUT_API_NFIELDS][CUT_API_KEYLEN]; /* each member's "key": */
	unsigned char keylen[CUT_API_NFIELDS];
};

/* A call, as both capture paths see it once it returned. The words come last: most calls have
 * a few, and libcuthook copies a call whole into a queue (hook/async.c), where what follows the
 * last word used is never touched. */
struct cut_call {
	int32_t ret;                /* the result; CUDA_SUCCESS (0): out values were set */
	bool extra_ok;              /* the words after the sixth could be read */
	bool typed;                 /* each argument word is already of its parameter's type */
	uint64_t out[CUT_API_NOUT]; /* the values rd.out[] point to, when the call succeeded */
	const char *str;            /* the string (rd.str), NULL when none */
	size_t slen;                /* its length, less than CUT_API_STRLEN */
	uint64_t a[CUT_API_NARGS];  /* the arguments, then the extra words (rd.extra) */
};

/* A handle's name as a names table keeps it: raw, and (when json is not NULL) already escaped
 * as a JSON string of json_len bytes. */
struct cut_name {
	const char *raw;
	const char *json;
	size_t json_len;
};

/* What a handle whose name get() looks up is. */
enum cut_name_of {
	CUT_NAME_HANDLE, /* a driver handle: CUfunction, CUkernel... */
	CUT_NAME_HOSTFN, /* a kernel's host stub, as cudaLaunchKernel takes it */
};

/* The handle names a capture has seen: implemented by cutcapture (capture/names.c, per process)
 * and by libcuthook (hook/handles.c, lock-free). get returns the name of handle h of process pid
 * (valid at least until the next get), or NULL when none is known; ok says whether the call
 * being decoded succeeded (libcuthook asks the driver or the runtime about a handle a
 * successful call used). A name given quietly (cut_api_desc.silent) is announced by the first
 * get that returns it: the implementation then has a symbol record due. */
struct cut_names {
	const struct cut_name *(*get)(struct cut_names *n, uint32_t pid, uint64_t h, bool ok,
	                              enum cut_name_of of);
};

/* A handle a call named, for a symbol record (cut-events(5)). */
struct cut_api_sym {
	uint64_t handle;  /* 0: none */
	const char *name; /* len bytes (not always NUL-terminated there) */
	size_t len;
	const char *kind; /* "function", "kernel", "module", "library" */
};

/*
 * Describes function name (its _ptds/_ptsz variant uses its base's line): its line of args.def
 * or rtargs.def and api.def's or rt.def's parameters and roles, and what must be read of its
 * calls. Returns 0, or -1 when
 * the line asks for more than its calls carry (a parameter it does not have, more out values
 * or strings than are read): *d then describes it as undecoded. A function with a parameter
 * that is not one integer word (a float, a struct by value) is not decoded: the BPF side's
 * registers are not its parameters in order.
 */
int cut_api_describe(struct cut_api_desc *d, const char *name);
/*
 * Libcuthook's side of the reading, in the process, after the call returned r: fills *c from
 * the wrapper's n argument words a (each already of its parameter's type), reading what the BPF
 * side reads (out values and the string only when they are set, the struct at argument 0). The
 * strings stay where the call left them.
 */
void cut_api_read(const struct cut_api_desc *d, struct cut_call *c, const uint64_t *a, size_t n,
                  int32_t r);
/*
 * Appends the args object of call c of function d of process pid to b (nothing when there is
 * nothing to say; b must be empty), naming handles through names. When the call named a
 * handle (a symbol record is due), *sym is filled; else sym->handle is 0.
 */
void cut_api_args(const struct cut_api_desc *d, const struct cut_call *c, uint32_t pid,
                  struct cut_names *names, struct cut_buf *b, struct cut_api_sym *sym);

/* For tests: the lines of args.def, then those of rtargs.def, each table sorted by name. */
size_t cut_api_rows(void);
const char *cut_api_row_name(size_t i);
/* Appends "corr":corr to the args object in b (cut_api_args' output; b empty: makes it
 * {"corr":corr}): the link of a call to the GPU work it submitted, which both capture paths
 * write after the decoded members. */
void cut_api_add_corr(struct cut_buf *b, uint64_t corr);

#endif
