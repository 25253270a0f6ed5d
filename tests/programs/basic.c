/* basic.c - outer > 5 x inner, recursive fib(10) (177 calls), and a region
 * with many calls (argv[1], default 5000) past any initial buffer size. */
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

static int fib_id;

static int fib(int n)
{
    sp_begin(fib_id);
    int r = n < 2 ? n : fib(n - 1) + fib(n - 2);
    sp_end(fib_id);
    return r;
}

int main(int argc, char **argv)
{
    long many = argc > 1 ? atol(argv[1]) : 5000;
    if (sp_init("basic", 0) != 0)
        return 1;
    int outer = sp_region("outer");
    int inner = sp_region("inner");
    fib_id = sp_region("fib");
    int tick = sp_region("tick");

    sp_begin(outer);
    for (int i = 0; i < 5; i++) {
        sp_begin(inner);
        sp_end(inner);
    }
    sp_end(outer);
    int f = fib(10);
    for (long i = 0; i < many; i++) {
        sp_begin(tick);
        sp_end(tick);
    }
    printf("fib=%d inner=%lld tick=%lld active=%d path=%s\n", f, (long long)sp_num_calls(inner),
           (long long)sp_num_calls(tick), sp_is_active(), sp_output_path() ? sp_output_path() : "(none)");
    return 0;
}
