/* file_kind.h - what kind of file a path names, for commands that only read
 * regular files: opening a FIFO blocks until a writer comes (for ever), a
 * device or socket is never a profile. */
#ifndef SCOPEPROF_FILE_KIND_H
#define SCOPEPROF_FILE_KIND_H

#include <sys/stat.h>

/* NULL for a regular file; else what it is ("a FIFO (named pipe)",
 * "a directory", ...), for "<path>: is <kind>, not a ... file". */
const char *sp_file_kind_not_regular(const struct stat *st);

#endif
