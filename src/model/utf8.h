/* utf8.h - names are bytes (the C API takes any char *, HDF5 keeps them as
 * given), but every text output (JSON, SVG, CSV, folded stacks, the
 * terminal) must be valid UTF-8: invalid sequences are written as U+FFFD. */
#ifndef SCOPEPROF_UTF8_H
#define SCOPEPROF_UTF8_H

#include <stddef.h>
#include <stdio.h>

/* U+FFFD REPLACEMENT CHARACTER, encoded. */
#define SP_UTF8_REPLACEMENT "\xef\xbf\xbd"

/* Length (2..4) of the well-formed UTF-8 sequence of a non-ASCII lead byte
 * at s (n bytes available), or 0 when it is not one (stray continuation
 * byte, overlong form, surrogate, past U+10FFFF, cut short). */
size_t sp_utf8_sequence(const unsigned char *s, size_t n);

/* Write the n bytes of s with every invalid sequence replaced by U+FFFD
 * (one per offending byte, as Python's errors="replace" does). */
void sp_utf8_write(FILE *out, const char *s, size_t n);

#endif
