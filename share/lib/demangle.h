/* demangle.h: C++ symbols as people read them: Itanium ABI names (_Z...) demangled, cached
 * per name, and shortened to fit a table's column by one rule (cut-events(5), Names). */
#ifndef CUT_DEMANGLE_H
#define CUT_DEMANGLE_H

#include <stddef.h>

/* Mangled names longer than this (bytes) are not demangled: the demangler's stack grows
 * with the name, and real kernel names stay far below it (the longest in samples/: 2.3 KB). */
#define CUT_DEMANGLE_MAX 16384

/*
 * The demangled form of name when it is an Itanium C++ ABI symbol ("_Z...", as nvcc, g++ and
 * clang name kernels and functions: "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLv" gives
 * "ncclDevKernel_AllReduce_Sum_f32_RING_LL()"), by libiberty's demangler (c++filt's, without
 * its 1 KB limit). Returns name itself when it is not mangled (does not start with "_Z") or
 * does not demangle: malformed, longer than CUT_DEMANGLE_MAX, one whose demangled form would
 * run past 64 times its length (back references built to expand exponentially), or one with
 * so many template argument lists times references that the demangler's printer would take
 * more than 2 MB of stack (real names take a tenth of that at most). Otherwise returns the
 * demangled string, owned by the cache and valid until cut_demangle_free(). NULL gives NULL.
 *
 * Cached: each distinct mangled name is demangled once, then looked up (a hash of the name),
 * so tools may call it for every event. Not thread-safe (one cache per process). Exits with
 * status 2 when memory runs out.
 */
const char *cut_demangle(const char *name);

/*
 * A shorter display form of name (demangled or not) in at most width columns (a column is a
 * UTF-8 character), by the rule people abbreviate C++ names with: the contents of template
 * argument lists <...> and parameter lists (...) are replaced by "…", innermost first: the
 * lists at the deepest level of nesting one at a time from the last one (a function's
 * parameters before its template arguments), then those of the level above, and so on,
 * until the name fits. So "void at::native::vectorized_elementwise_kernel<4,
 * at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>,
 * std::array<char*, 1ul>)" becomes, as the width shrinks, "void at::native::vectorized_
 * elementwise_kernel<4, at::native::FillFunctor<…>, std::array<…> >(…)" and then
 * "void at::native::vectorized_elementwise_kernel<…>(…)". A list of one column stays (<4>),
 * and "(anonymous namespace)" and the brackets of operators (operator<<, operator(), "->",
 * a comparison inside parentheses) are text. When the name with every list elided is still
 * too wide, it is cut to width - 1 columns and "…" is appended; a cut never falls inside a
 * UTF-8 character.
 *
 * Returns name itself when it fits (or width is 0: no limit), else the shortened string,
 * owned by the cache of cut_demangle() and valid until cut_demangle_free(). Linear in the
 * length of name; cached per name and width. NULL gives NULL. Not thread-safe; exits with
 * status 2 when memory runs out.
 */
const char *cut_name_short(const char *name, size_t width);

/* Columns name takes on a terminal: its UTF-8 characters (bytes other than continuation
 * bytes). */
size_t cut_name_cols(const char *name);

/* Frees both caches; every string cut_demangle() and cut_name_short() returned from them is
 * invalid after it. The caches start again empty on the next call. */
void cut_demangle_free(void);

#endif
