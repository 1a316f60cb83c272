"""Names as cut's viewers show them (cut-events(5), Names), worked out apart from the tools for
the checks of their output: C++ names demangled by binutils' c++filt (the tools use libiberty's
demangler, which c++filt is built on), and which GPU kernels are collectives, by the rule as the
man page states it.
"""
import re
import subprocess

# c++filt prints the standard substitutions whole (DMGL_VERBOSE); the tools, as nm and gdb do,
# by their short names.
VERBOSE = [
    ("std::basic_string<char, std::char_traits<char>, std::allocator<char> >", "std::string"),
    ("std::basic_istream<char, std::char_traits<char> >", "std::istream"),
    ("std::basic_ostream<char, std::char_traits<char> >", "std::ostream"),
    ("std::basic_iostream<char, std::char_traits<char> >", "std::iostream"),
]
COLLECTIVES = ["AllGather", "AllReduce", "AllToAllPivot", "AllToAll", "Broadcast", "Gather",
               "ReduceScatter", "Reduce", "Scatter", "SendRecv", "Send", "Recv"]


def demangled(names):
    """{name: the name shown} for every name: an Itanium symbol (_Z...) c++filt demangles
    becomes what it prints, any other name stays. One c++filt for all of them."""
    todo = sorted({n for n in names if n.startswith("_Z") and "\n" not in n and len(n) <= 16384})
    out = {n: n for n in names}
    if todo:
        p = subprocess.run(["c++filt"], input="\n".join(todo) + "\n", capture_output=True,
                           text=True, check=True)
        for name, shown in zip(todo, p.stdout.split("\n")):
            for verbose, short in VERBOSE:
                shown = shown.replace(verbose, short)
            out[name] = shown
    return out


def collective(name):
    """The collective a kernel is ("AllReduce", ...; "collective" when its name says none), or
    None: its identifier (the name, or the n characters after "_Z<n>" or "_ZL<n>") starts with
    nccl or rccl and its first run of letters ends in Kernel."""
    m = re.match(r"_ZL?([0-9]+)", name)
    ident = name[m.end():m.end() + int(m.group(1))] if m else name
    m = re.match(r"[nr]ccl([A-Za-z]*)Kernel(?![A-Za-z])", ident)
    if not m:
        return None
    after = ident[m.end():]
    if after.startswith("_"):
        word = re.match(r"[A-Za-z0-9]*", after[1:]).group(0)
        for c in COLLECTIVES:
            if word == c:
                return c
    for c in COLLECTIVES:  # NCCL 2.7: ncclAllReduceRingLLKernel_sum_f32
        if m.group(1).startswith(c):
            return c
    return "collective"
