/* fuzz_input.h - hand a fuzz input to readers that take a path. */
#ifndef SCOPEPROF_FUZZ_INPUT_H
#define SCOPEPROF_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

/* The bytes as a file of this process in /dev/shm (memory: millions of
 * runs wear no disk), its path in path.  0, or -1 on failure.  A memfd's
 * /proc/self/fd path would avoid even that, but the HDF5 reader refuses
 * to open a symbolic link. */
int fuzz_input_file(const uint8_t *data, size_t size, char *path, size_t len);
/* Remove it again. */
void fuzz_input_done(const char *path);

#endif
