/* writer_module.c - libscopeprof-writer.so, loaded by the shim with
 * dlmopen() at finalize: capture -> profile -> schema-3 HDF5 file.  It runs
 * in a link namespace of its own, with its own C library: it only reads the
 * capture and frees only what it allocated itself. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "scopeprof/h5.h"

__attribute__((visibility("default"))) int scopeprof_write_capture(const sp_capture *capture,
                                                                  char *err, size_t errlen)
{
    if (!capture || capture->abi != SP_CAPTURE_ABI) {
        snprintf(err, errlen, "the writer module does not match this libscopeprof.so "
                              "(reinstall scopeprof)");
        return -1;
    }
    char warning[2048];
    sp_profile *profile = sp_capture_to_profile(capture, warning, sizeof warning, err, errlen);
    if (!profile)
        return -1;
    if (warning[0]) {
        /* One line, through fd 2 directly: this namespace has its own stdio. */
        char line[2200];
        int n = snprintf(line, sizeof line, "scopeprof: %s: %s\n", capture->path, warning);
        if (n > 0) {
            ssize_t w = write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
            (void)w;
        }
    }
    int rc = sp_h5_write(capture->path, profile, err, errlen);
    sp_profile_free(profile);
    return rc;
}
