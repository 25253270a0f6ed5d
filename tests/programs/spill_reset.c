/* spill_reset.c - records enough calls of "before" to spill under a small
 * memory cap, calls sp_reset(), then records 1000 calls of "after".  The
 * file must hold only what came after the reset. */
#include <stdio.h>

#include "scope_profiler.h"

int main(void)
{
    sp_init("spill_reset", 0);
    int before = sp_region("before"), after = sp_region("after");
    for (long i = 0; i < 400000; i++) {
        sp_begin(before);
        sp_end(before);
    }
    int rc = sp_reset();
    for (int i = 0; i < 1000; i++) {
        sp_begin(after);
        sp_end(after);
    }
    printf("reset=%d before=%lld after=%lld\n", rc, (long long)sp_num_calls(before),
           (long long)sp_num_calls(after));
    return 0;
}
