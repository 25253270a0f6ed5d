/* contexts.c - explicit profilers: two independent contexts, scope tokens,
 * end_last, reset, stats, flush and finalize (spec §11.3 sequences). */
#include <stdio.h>
#include <unistd.h>

#include "scope_profiler.h"

int main(void)
{
    sp_profiler *a = sp_create("a", 0);
    sp_profiler *b = sp_create("b", 1);
    int ra = sp_profiler_region(a, "work");
    int rb = sp_profiler_region(b, "work");
    sp_profiler_begin(a, ra);
    sp_profiler_end(a, ra);
    for (int i = 0; i < 2; i++) {
        sp_profiler_begin(b, rb);
        sp_profiler_end(b, rb);
    }

    /* scope tokens */
    sp_profiler *s = sp_create("scopes", 0);
    int outer = sp_profiler_region(s, "outer");
    int inner = sp_profiler_region(s, "inner");
    sp_scope so = sp_profiler_scope_begin(s, outer);
    sp_scope si = sp_profiler_scope_begin(s, inner);
    int r1 = sp_scope_end(&so);
    int r2 = sp_scope_end(&si);
    int r3 = sp_scope_end(&so);
    int r4 = sp_scope_end(&so);
    printf("scopes %d %d %d %d\n", r1, r2, r3, r4);

    /* end_last */
    sp_profiler *el = sp_create("endlast", 0);
    int el_outer = sp_profiler_region(el, "outer");
    int el_inner = sp_profiler_region(el, "inner");
    sp_profiler_begin(el, el_outer);
    sp_profiler_begin(el, el_inner);
    int e1 = sp_profiler_end_last(el);
    long long ci = (long long)sp_profiler_num_calls(el, el_inner);
    int e2 = sp_profiler_end_last(el);
    int e3 = sp_profiler_end_last(el);
    printf("end_last %d %lld %d %d\n", e1, ci, e2, e3);

    /* reset */
    sp_profiler *r = sp_create("reset", 0);
    int x = sp_profiler_region(r, "x");
    sp_profiler_begin(r, x);
    int z1 = sp_profiler_reset(r);
    sp_profiler_end(r, x);
    int z2 = sp_profiler_reset(r);
    long long calls = (long long)sp_profiler_num_calls(r, x);
    sp_profiler_begin(r, x);
    sp_profiler_end(r, x);
    printf("reset %d %d regions=%d calls=%lld reuse=%lld\n", z1, z2, sp_profiler_num_regions(r),
           calls, (long long)sp_profiler_num_calls(r, x));

    /* stats */
    sp_profiler *st = sp_create("stats", 0);
    int w = sp_profiler_region(st, "wait");
    sp_profiler_begin(st, w);
    usleep(1000);
    sp_profiler_end(st, w);
    sp_profiler_begin(st, w);
    usleep(5000);
    sp_profiler_end(st, w);
    sp_region_stats stats;
    sp_profiler_get_region_stats(st, w, &stats);
    printf("stats calls=%lld total_ok=%d minmax_ok=%d\n", (long long)stats.calls,
           stats.total_ns > 0, stats.min_ns > 0 && stats.min_ns <= stats.max_ns);

    /* flush then finalize: the file holds both calls */
    sp_profiler *f = sp_create("flush", 0);
    int q = sp_profiler_region(f, "q");
    sp_profiler_begin(f, q);
    sp_profiler_end(f, q);
    int fl = sp_profiler_flush(f);
    int act = sp_profiler_is_active(f);
    sp_profiler_begin(f, q);
    int fl2 = sp_profiler_flush(f);
    sp_profiler_end(f, q);
    int fin = sp_profiler_finalize(f);
    int fin2 = sp_profiler_finalize(f);
    printf("flush %d %d %d %d %d trace=%d\n", fl, act, fl2, fin, fin2,
           sp_profiler_set_output_format(b, SP_OUTPUT_TRACE));
    return 0;
}
