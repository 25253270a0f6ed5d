/* callsite_lib.c - a library the test program loads with dlopen(); its
 * region must resolve to this file. */
#include "scope_profiler.h"

__attribute__((visibility("default"))) int callsite_lib_work(void)
{
    int id = sp_region("in_library"); /* @in_library */
    sp_begin(id);
    sp_end(id);
    return id;
}
