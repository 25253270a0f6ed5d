/* temp_file.h - the anonymous temporary files the streamed exports spill
 * to: made in $TMPDIR (else /tmp) and unlinked at once, so nothing is left
 * behind on any path; read and written whole, at an offset. */
#ifndef SCOPEPROF_TEMP_FILE_H
#define SCOPEPROF_TEMP_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* A new unlinked file named after `stem` while it exists: its fd, or -1
 * (errno set) when none can be made. */
int sp_temp_file_open(const char *stem);
/* All `len` bytes at `at`: 0, or -1 (a write error, a full disk). */
int sp_temp_file_write(int fd, const void *buf, size_t len, off_t at);
/* All `len` bytes at `at`: 0, or -1 (an error or a short file). */
int sp_temp_file_read(int fd, void *buf, size_t len, off_t at);

#endif
