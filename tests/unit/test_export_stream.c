/* test_export_stream.c - the pieces the streamed exports share
 * (src/export/stream_calls.h): the spill file of values known at a call's
 * exit, the stacks of open kept calls, the lanes of a first pass. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "export/stream_calls.h"

/* Values set in post order (a parent after its children), windows written
 * out while calls are open: read back in ordinal order, each exactly. */
Test(spill, post_order_across_windows_reads_back_in_order)
{
    sx_spill s;
    cr_assert_eq(sx_spill_open(&s), 0);
    const uint64_t n = 300000; /* several windows of 65,536 */
    /* a root (0) open throughout, then groups of 1 parent + 6 children:
     * children exit first, the parent after them, the root last */
    uint64_t k = 1;
    while (k < n) {
        uint64_t parent = k, last = k + 6 < n ? k + 6 : n - 1;
        for (uint64_t c = parent + 1; c <= last; c++)
            sx_spill_set(&s, c, (int64_t)(c * 3 + 1));
        sx_spill_set(&s, parent, (int64_t)(parent * 3 + 1));
        k = last + 1;
    }
    sx_spill_set(&s, 0, 1);
    cr_assert_eq(sx_spill_finish(&s), 0);
    for (uint64_t i = 0; i < n; i++) {
        int64_t v = -1;
        cr_assert_eq(sx_spill_next(&s, &v), 0, "value %llu", (unsigned long long)i);
        cr_assert_eq(v, (int64_t)(i * 3 + 1), "value %llu: %lld", (unsigned long long)i,
                     (long long)v);
    }
    int64_t v;
    cr_assert_eq(sx_spill_next(&s, &v), -1, "nothing past the last value");
    sx_spill_close(&s);
}

Test(spill, nothing_set_reads_nothing)
{
    sx_spill s;
    cr_assert_eq(sx_spill_open(&s), 0);
    cr_assert_eq(sx_spill_finish(&s), 0);
    int64_t v;
    cr_assert_eq(sx_spill_next(&s, &v), -1);
    sx_spill_close(&s);
}

Test(spill, no_temporary_directory_is_refused)
{
    const char *old = getenv("TMPDIR");
    setenv("TMPDIR", "/nonexistent-scopeprof-dir", 1);
    sx_spill s;
    cr_assert_eq(sx_spill_open(&s), -1);
    sx_spill_close(&s);
    if (old)
        setenv("TMPDIR", old, 1);
    else
        unsetenv("TMPDIR");
}

static int closed[16], num_closed;

static int note_close(void *ctx, const sx_open *o)
{
    (void)ctx;
    closed[num_closed++] = (int)o->ordinal;
    return 0;
}

/* The calls above the kept parent close innermost first; lanes apart. */
Test(stacks, enter_closes_what_is_not_an_ancestor)
{
    sx_stacks s = {0};
    sx_stack *a = sx_stacks_enter(&s, -2, -1, note_close, NULL);
    cr_assert_not_null(a);
    for (int i = 0; i < 3; i++) { /* 0 > 1 > 2 on lane -2 */
        sx_open o = {i, 100 + i, (uint32_t)i};
        a = sx_stacks_enter(&s, -2, i - 1, note_close, NULL);
        cr_assert_eq(sx_stack_push(a, &o), 0);
    }
    sx_stack *b = sx_stacks_enter(&s, -3, -1, note_close, NULL); /* other lane */
    sx_open o = {3, 103, 3};
    cr_assert_eq(sx_stack_push(b, &o), 0);
    cr_assert_eq(num_closed, 0);
    a = sx_stacks_enter(&s, -2, 0, note_close, NULL); /* a sibling of 1 */
    cr_assert_eq(a->depth, 1);
    cr_assert_eq(num_closed, 2);
    cr_assert_eq(closed[0], 2);
    cr_assert_eq(closed[1], 1);
    cr_assert_eq(sx_stacks_close_all(&s, note_close, NULL), 0);
    cr_assert_eq(num_closed, 4);
    sx_stacks_free(&s);
}

Test(lanes, sorted_with_first_start_and_last_end)
{
    sx_lanes l = {0};
    sp_stream_call calls[] = {{.lane = -3, .start = 5, .end = 9}, {.lane = -2, .start = 1, .end = 4},
                              {.lane = -3, .start = 6, .end = 12}, {.lane = 4, .start = 2, .end = 3}};
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(sx_lanes_note(&l, &calls[i]), 0);
    cr_assert_eq(l.n, 3);
    cr_assert_eq(l.v[0].lane, -3);
    cr_assert_eq(l.v[0].first_start, 5);
    cr_assert_eq(l.v[0].last_end, 12);
    cr_assert_eq(l.v[0].calls, 2);
    cr_assert_eq(l.v[1].lane, -2);
    cr_assert_eq(l.v[2].lane, 4);
    sx_lanes_free(&l);
}
