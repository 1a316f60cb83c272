/* row.h: what describe.c and call.c (capture/api) share: the lines of args.def as data, the
 * vocabulary those lines are written in, and how an argument word is cut to its type. */
#ifndef CUT_API_ROW_H
#define CUT_API_ROW_H

#include <stdint.h>

/* A member of an args.def line; fmt '@' (SYM) and '<' (READS) write nothing. */
struct cut_api_field {
	const char *key;
	unsigned char idx;
	char fmt;
	unsigned char n;
};

struct cut_api_row {
	const char *name;
	struct cut_api_field f[CUT_API_NFIELDS];
};

/* The vocabulary of args.def. */
enum { ANY, HTOD, DTOH, DTOD, HTOH };
enum { LAUNCH_CONFIG = 1, MEMCPY2D, MEMCPY3D };
#define SYM_OUT 0x40 /* SYM handle: what the argument points to */
#define SYM_STR 0x7f /* SYM name: the call's string */
#define OUT(i) ((i) | SYM_OUT)
#define ARG(i) (i)
#define STR SYM_STR
#define NAMEOF(i) (i)
#define SYM(kind, handle, name)                                                                    \
	{                                                                                          \
		kind, handle, '@', name                                                            \
	}
#define READS(what)                                                                                \
	{                                                                                          \
		"", 0, '<', what                                                                   \
	}

/* How an argument word is cut to its parameter's type (cut_api_desc.norm). */
enum { N_AS_IS, N_U8, N_U16, N_U32, N_I32 };

static inline uint64_t
norm(uint64_t v, unsigned char how)
{
	switch (how) {
	case N_U8: return (uint8_t)v;
	case N_U16: return (uint16_t)v;
	case N_U32: return (uint32_t)v;
	case N_I32: return (uint64_t)(int64_t)(int32_t)v;
	}
	return v;
}

#endif
