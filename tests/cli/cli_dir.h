/* cli_dir.h - what the CLI tests share: a working directory per test (made
 * by the suite's init, removed with its contents by its fini), paths in it,
 * whole files read back, and a finished command's status and output. */
#ifndef SCOPEPROF_TEST_CLI_DIR_H
#define SCOPEPROF_TEST_CLI_DIR_H

#include <stddef.h>

/* The current test's directory, /tmp/scopeprof-<kind>-XXXXXX. */
extern char dir[256];

/* Make it (kind names the test file's suite) / remove it. */
void cli_dir_make(const char *kind);
void cli_dir_remove(void);

/* dir/name, in one of 8 buffers used in turn. */
const char *in_dir(const char *name);

/* The whole file, NUL-terminated (the test fails when it cannot be read);
 * slurp_sized the same with its length, or NULL when it does not open. */
char *slurp(const char *path);
char *slurp_sized(const char *path, size_t *len);

typedef struct result {
    int status; /* exit code, 128 + signal when killed */
    char *out, *err;
} result;

void result_free(result *r);

#endif
