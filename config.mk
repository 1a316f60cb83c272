# cut build settings; override on the command line (make PREFIX=/opt/cut).
VERSION = 0.1.0

PREFIX = /usr/local
BINDIR = $(PREFIX)/bin
LIBDIR = $(PREFIX)/lib
DATADIR = $(PREFIX)/share/cut
MANDIR = $(PREFIX)/share/man
DESTDIR =

CC = cc
CLANG = clang
BPFTOOL = bpftool
PKG_CONFIG = pkg-config

CFLAGS = -O2 -g
WARNFLAGS = -Wall -Wextra -Werror
CUT_CPPFLAGS = -D_GNU_SOURCE -DCUT_VERSION=\"$(VERSION)\" -DCUT_DATADIR=\"$(DATADIR)\"
JANSSON_CFLAGS = $(shell $(PKG_CONFIG) --cflags jansson 2>/dev/null)
JANSSON_LIBS = $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null || echo -ljansson)
# Compressed input (share/lib/inflate.c) and output: zlib and libzstd.
COMPRESS_LIBS = $(shell $(PKG_CONFIG) --libs libzstd zlib 2>/dev/null || echo -lzstd -lz)
# C++ names (share/lib/demangle.c): libiberty's demangler, static (Debian: libiberty-dev).
DEMANGLE_LIBS = -liberty
CHECK_CFLAGS = $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS = $(shell $(PKG_CONFIG) --libs check 2>/dev/null || echo -lcheck)
