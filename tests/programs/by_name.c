/* by_name.c - sp_begin_by_name/sp_end_by_name, the name path the Fortran
 * module calls: names given by length and not NUL-terminated, a NUL within
 * the length, a long new name, the same region as sp_region gives, an
 * unmatched end, and a call after sp_finalize.  Prints every status. */
#include <stdio.h>
#include <string.h>

#include "scope_profiler.h"

int main(void)
{
    sp_init("byname", 0);
    const char *text = "solverXYZ"; /* "solve" is its first 5 bytes */
    int begin_ok = 0, end_ok = 0;
    for (int i = 0; i < 3; i++) {
        begin_ok += sp_begin_by_name(text, 5) == SP_OK;
        end_ok += sp_end_by_name("solve", 5) == SP_OK;
    }
    /* the id path and the name path meet on one region */
    int id = sp_region("solve");
    sp_begin(id);
    int mixed = sp_end_by_name("solve and more", 5);
    /* a NUL within the length ends the name there, as a copy would */
    int nul_begin = sp_begin_by_name("inner\0junk", 10);
    int nul_end = sp_end_by_name("inner", 5);
    /* a new name longer than any stack copy */
    char long_name[300];
    memset(long_name, 'x', sizeof long_name);
    int long_begin = sp_begin_by_name(long_name, 250);
    int long_end = sp_end_by_name(long_name, 250);
    int unmatched = sp_end_by_name("solve", 5);
    printf("ok %d %d mixed=%d nul=%d,%d long=%d,%d unmatched=%d id_same=%d\n", begin_ok,
           end_ok, mixed, nul_begin, nul_end, long_begin, long_end, unmatched,
           sp_region("solve") == id);
    sp_finalize();
    printf("after finalize %d\n", sp_begin_by_name("solve", 5));
    return 0;
}
