/* fuzz_h5_read.c - libFuzzer target: the HDF5 profile reader (what every
 * `scopeprof` command opens files with) and the checker behind
 * `scopeprof validate`, on arbitrary bytes.  Any crash, leak or undefined
 * behaviour is a bug; an error message is the right answer. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_input.h"
#include "scopeprof/h5.h"

static void ignore_problem(void *ctx, const char *problem)
{
    (void)ctx;
    (void)problem;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[1024];
    if (fuzz_input_file(data, size, path, sizeof path) != 0)
        return 0;
    sp_profile *p = sp_h5_read(path, err, sizeof err);
    sp_profile_free(p);
    sp_h5_check(path, ignore_problem, NULL, err, sizeof err);
    fuzz_input_done(path);
    return 0;
}
