/* test_run_collect.c - the comparison's per-key accumulators fed call by
 * call by the streamed report (src/diff/run_collect_stream.c): exclusive
 * times that arrive out of their entering order are added in that order
 * (the same bits as the in-memory path), and a key whose calls pile up
 * behind an open one makes the stream give up instead of growing without
 * bound. */
#include <criterion/criterion.h>
#include <string.h>

#include "diff/run_collect.h"

static sp_stream_call call_of(uint64_t index, int64_t duration, int64_t exclusive)
{
    return (sp_stream_call){.region = 0, .call_index = index, .start = 0, .end = duration,
                            .exclusive = exclusive};
}

Test(run_collect, exclusive_times_are_added_in_entering_order)
{
    /* durations and exclusive times whose Welford sums depend on the order */
    static const int64_t dur[] = {1000000007, 3, 123456789, 77777, 5};
    static const int64_t excl[] = {999999937, 1, 98765431, 12345, 2};
    static const int exit_order[] = {3, 1, 4, 2, 0};
    sp_report_node node = {.region = 0, .parent = -1};
    sp_report_tree tree = {.num_nodes = 1, .nodes = &node};
    for (int by_name = 0; by_name < 2; by_name++) {
        run_collect streamed, in_order;
        run_collect_init(&streamed, by_name);
        run_collect_init(&in_order, by_name);
        cr_assert_eq(run_collect_grow(&streamed, 1), 0);
        cr_assert_eq(run_collect_grow(&in_order, 1), 0);
        sp_report_call_hook hook = run_collect_hook(&streamed);
        cr_assert_eq(hook.rank_begin(hook.ctx, 0), 0);
        run_collect_begin_rank(&in_order);
        for (int k = 0; k < 5; k++) {
            sp_stream_call c = call_of((uint64_t)k, dur[k], excl[k]);
            cr_assert_eq(hook.call(hook.ctx, &c, &tree, 0, 0), 0);
            cr_assert_eq(run_collect_duration(&in_order, 0, dur[k]), 0);
            run_collect_own(&in_order, 0, excl[k]);
        }
        for (int k = 0; k < 5; k++) {
            int i = exit_order[k];
            sp_stream_call c = call_of((uint64_t)i, dur[i], excl[i]);
            cr_assert_eq(hook.call(hook.ctx, &c, &tree, 0, 1), 0);
            /* nothing of the own time before call 0 (the first) has exited */
            cr_expect_eq(streamed.acc[0].own_calls, k < 4 ? 0u : 5u, "after exit %d", k);
        }
        cr_assert_eq(hook.rank_end(hook.ctx, 0), 0);
        run_collect_end_rank(&in_order);
        const key_acc *s = &streamed.acc[0], *m = &in_order.acc[0];
        cr_expect_eq(s->calls, 5u);
        cr_expect_eq(memcmp(&s->own, &m->own, sizeof s->own), 0);
        cr_expect_eq(memcmp(&s->mean_own, &m->mean_own, sizeof s->mean_own), 0);
        cr_expect_eq(memcmp(&s->m2_own, &m->m2_own, sizeof s->m2_own), 0, "%.17g %.17g",
                     s->m2_own, m->m2_own);
        cr_expect_eq(memcmp(&s->m2_incl, &m->m2_incl, sizeof s->m2_incl), 0);
        cr_expect_eq(s->rank_max, m->rank_max);
        cr_expect_eq(streamed.num_pending, 0u);
        run_collect_free(&streamed);
        run_collect_free(&in_order);
    }
}

Test(run_collect, calls_piling_up_behind_an_open_one_give_up)
{
    sp_report_node node = {.region = 0, .parent = -1};
    sp_report_tree tree = {.num_nodes = 1, .nodes = &node};
    run_collect c;
    run_collect_init(&c, 1);
    cr_assert_eq(run_collect_grow(&c, 1), 0);
    sp_report_call_hook hook = run_collect_hook(&c);
    cr_assert_eq(hook.rank_begin(hook.ctx, 0), 0);
    sp_stream_call open = call_of(0, 1000000000, 0);
    cr_assert_eq(hook.call(hook.ctx, &open, &tree, 0, 0), 0);
    uint64_t k = 1;
    int rc = 0;
    for (; k < ((uint64_t)1 << 23) && rc == 0; k++) {
        sp_stream_call short_call = call_of(k, 10, 10);
        rc = hook.call(hook.ctx, &short_call, &tree, 0, 0);
        if (rc == 0)
            rc = hook.call(hook.ctx, &short_call, &tree, 0, 1);
    }
    cr_expect_eq(rc, -1, "the queue grew to %zu calls", c.num_pending);
    cr_expect(c.too_many_pending);
    cr_expect_eq(k - 1, (uint64_t)1 << 22, "gave up after %llu calls", (unsigned long long)k);
    run_collect_free(&c);
}
