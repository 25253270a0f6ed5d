/* callsite_c.c - regions registered from known lines (marked @name: the
 * test reads the line numbers from this file).  Built with -g
 * (callsite_c) and without (callsite_c_nodebug).  "--unlink-self" deletes
 * the running executable first: the call sites must still resolve. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "scope_profiler.h"

static void run(int id)
{
    sp_begin(id);
    sp_end(id);
}

/* A function of its own, so the call site names it. */
__attribute__((noinline)) static int register_helper(void)
{
    int id = sp_region("helper"); /* @helper */
    run(id);
    return id;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--unlink-self")) {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 0] = '\0';
        if (n <= 0 || unlink(self) != 0) {
            perror("unlink");
            return 1;
        }
    }
    sp_init("callsite", 0);
    int solve = sp_region("solve"); /* @solve */
    int again = sp_region("solve"); /* @solve_again: same region, first call site kept */
    int given = sp_region_at("given", "given.c", 7);
    int backfilled = sp_region("backfilled"); /* @backfilled */
    sp_region_at("backfilled", "explicit.c", 99); /* an explicit location wins */
    run(solve);
    run(again);
    run(given);
    run(backfilled);
    register_helper();
    printf("solve=%d again=%d\n", solve, again);
    return 0;
}
