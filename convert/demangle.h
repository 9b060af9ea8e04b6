/*
 * demangle.h — C++ and Rust symbol names made readable, through libiberty (the demangler of binutils
 * and gdb). Kept apart because <libiberty/libiberty.h> defines helpers that clash with util.h.
 */
#ifndef STACKREC_CONVERT_DEMANGLE_H
#define STACKREC_CONVERT_DEMANGLE_H

#include <stdbool.h>

/*
 * name demangled with parameters ("ns::f(int)"; Rust legacy and v0 names without their hash), newly
 * allocated; a copy of name when it is not a mangled name or when demangle is false.
 */
char *demangle_name(const char *name, bool demangle);

/*
 * A type's mangled name as std::type_info::name() gives it ("St13runtime_error", "N3app10ParseErrorE": no
 * _Z prefix) demangled ("std::runtime_error"), newly allocated; a copy of name when it does not demangle.
 */
char *demangle_type_name(const char *name);

#endif
