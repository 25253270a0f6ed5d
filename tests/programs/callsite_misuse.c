/* callsite_misuse.c - misuse whose messages must name the call sites: an
 * sp_end without a begin, calls that overlap without nesting, a region
 * left open at exit. */
#include <stdio.h>

#include "scope_profiler.h"

int main(void)
{
    sp_init("misuse", 0);
    int lonely = sp_region("lonely"); /* @lonely */
    sp_end(lonely); /* @unmatched_end */

    int outer = sp_region("outer"); /* @outer */
    int crossing = sp_region("crossing"); /* @crossing */
    sp_begin(outer);
    sp_begin(crossing);
    sp_end(outer);
    sp_end(crossing);

    int left_open = sp_region("left_open"); /* @left_open */
    sp_begin(left_open);
    printf("done\n");
    return 0;
}
