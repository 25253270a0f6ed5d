#ifndef SCOPEPROF_OUTPUT_PATH_H
#define SCOPEPROF_OUTPUT_PATH_H
#include <stddef.h>
/* Expand the prefix and append "_rank<NNNNN>.h5".  0, or -1 if too long. */
int sp_output_path_format(char *buf, size_t len, const char *prefix, int rank, int pid);
#endif
