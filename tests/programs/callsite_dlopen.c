/* callsite_dlopen.c - load argv[1] with dlopen() and call its
 * callsite_lib_work(), which registers a region from the library. */
#include <dlfcn.h>
#include <stdio.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    sp_init("dlopen", 0);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    int (*work)(void) = (int (*)(void))dlsym(lib, "callsite_lib_work");
    if (!work)
        return 1;
    int main_id = sp_region("in_main"); /* @in_main */
    sp_begin(main_id);
    work();
    sp_end(main_id);
    return 0;
}
