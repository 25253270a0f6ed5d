/* many_regions.c - registers argv[1] distinct regions (default 5000), each
 * called once (a region per iteration, as a code generator or a per-cell
 * instrumentation would), inside one "all" region: the region table, the
 * name interning and the file layout must scale with the number of names. */
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 5000;
    int all = sp_region("all");
    sp_begin(all);
    for (long i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "cell_%ld", i);
        int id = sp_region(name);
        sp_begin(id);
        sp_end(id);
    }
    sp_end(all);
    printf("regions=%ld\n", n + 1);
    return 0;
}
