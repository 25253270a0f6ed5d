/* test_rank_stream.c - the streamed reconstruction (src/stream/) against
 * the in-memory one (sp_rank_calls) on crafted rows: ties, zero-length
 * calls, rows out of time order, several lanes, calls that do not nest,
 * windows smaller than the rows. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_test_util.h"
#include "scopeprof/analysis.h"
#include "scopeprof/h5.h"
#include "scopeprof/stream.h"

typedef struct seen_call {
    sp_stream_call call;
    int64_t parent;       /* enter index of the parent, -1 root */
    int exited;
} seen_call;

typedef struct recorder {
    seen_call *calls;
    size_t n, cap;
} recorder;

static int rec_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    recorder *r = ctx;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->calls = realloc(r->calls, r->cap * sizeof *r->calls);
        cr_assert_not_null(r->calls);
    }
    r->calls[r->n] = (seen_call){.call = *call, .parent = parent};
    *user = (int64_t)r->n++;
    return 1;
}

static int rec_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    recorder *r = ctx;
    cr_assert_lt((size_t)user, r->n);
    r->calls[user].call.exclusive = call->exclusive;
    r->calls[user].exited = 1;
    return 0;
}

static int stream_rows_only(sp_profile *p, const char *tag, int64_t (*want)[3]);

/* What the last stream_matches_memory learnt of the sort (a scattered
 * rank): sorted runs written, replayed from memory. */
static size_t last_sorted_runs;
static int last_replayed;

/* Write p, stream rank 0, compare call by call with the in-memory
 * reconstruction; returns sp_stream_rank's result. */
static int stream_matches_memory(sp_profile *p, const char *tag)
{
    char dir[64], path[160], err[1024];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s.h5", dir, tag);
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    sp_profile_free(p);

    sp_run_source src;
    const char *args[] = {path};
    cr_assert_eq(sp_run_source_open(&src, args, 1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(src.profile->num_events, 0);
    cr_assert_null(src.profile->start);
    recorder rec = {0};
    sp_call_visitor v = {rec_enter, rec_exit, &rec};
    sp_rank_stream_info info;
    char why[256] = "";
    int rc = sp_stream_rank(&src, 0, 0, &v, &info, why, sizeof why);

    sp_profile *full = sp_h5_read(path, err, sizeof err);
    cr_assert_not_null(full, "%s", err);
    sp_calls calls;
    int mem = sp_rank_calls(full, 0, &calls, err, sizeof err);
    if (rc == 0) {
        cr_assert_eq(mem, 0, "streamed, but in memory: %s", err);
        cr_assert_eq(rec.n, calls.n);
        cr_assert_eq(info.calls, calls.n);
        for (size_t i = 0; i < calls.n; i++) {
            const seen_call *s = &rec.calls[i];
            cr_assert(s->exited, "call %zu never exited", i);
            cr_assert_eq(s->call.region, calls.region[i], "call %zu", i);
            cr_assert_eq(s->call.call_index, calls.call_index[i], "call %zu", i);
            cr_assert_eq(s->call.start, calls.start[i], "call %zu", i);
            cr_assert_eq(s->call.end, calls.end[i], "call %zu", i);
            cr_assert_eq(s->call.depth, calls.depth[i], "call %zu", i);
            cr_assert_eq(s->parent, calls.parent[i], "call %zu", i);
            cr_assert_eq(s->call.exclusive, calls.exclusive[i], "call %zu", i);
            cr_assert_eq(s->call.lane, calls.lane ? calls.lane[i] : -1, "call %zu", i);
        }
        sp_calls_free(&calls);
    } else {
        cr_assert_eq(mem, -1, "in memory it nests, streamed: %s", why);
    }
    last_sorted_runs = info.sorted_runs;
    last_replayed = info.replayed;
    sp_rank_stream_info_free(&info);
    free(rec.calls);
    sp_profile_free(full);
    sp_run_source_close(&src);
    remove_tree(dir);
    return rc;
}

Test(rank_stream, tie_rules_of_the_spec)
{
    /* outer(0,100) with a zero-length call at each end, touching siblings
     * a(0,10) b(10,20) with z(10,10) between them, two identical calls. */
    int64_t os[] = {0}, oe[] = {100};
    int64_t ts[] = {100, 0}, te[] = {100, 0};
    int64_t as[] = {0, 40}, ae[] = {10, 50};
    int64_t bs[] = {10, 40}, be[] = {20, 50};
    int64_t zs[] = {10}, ze[] = {10};
    sp_profile *p = simple_profile("outer", 0, os, oe, 1);
    add_row(p, "tick", 0, ts, te, 2);
    add_row(p, "a", 0, as, ae, 2);
    add_row(p, "b", 0, bs, be, 2);
    add_row(p, "z", 0, zs, ze, 1);
    /* equal starts inside one row, shorter first: the row is cut there */
    int64_t rs[] = {60, 60, 60, 70}, re[] = {65, 80, 80, 70};
    add_row(p, "r", 0, rs, re, 4);
    cr_assert_eq(stream_matches_memory(p, "ties"), 0);
}

Test(rank_stream, rows_out_of_time_order_and_two_lanes)
{
    /* Each row: lane 0's calls, then lane 1's, each lane backwards in
     * places, so a row cuts into several runs; chunked rows so the merge
     * refills windows. */
    enum { G = 20000 }; /* rows beyond one 16384-event chunk */
    static int64_t s[3][2 * G], e[3][2 * G];
    static const int64_t rel[3][2] = {{0, 90}, {10, 50}, {50, 50}};
    for (int r = 0; r < 3; r++)
        for (int lane = 0; lane < 2; lane++)
            for (int g = 0; g < G; g++) {
                int at = lane * G + (g % 7 == 3 ? G - 1 - g : g);
                int64_t t = (int64_t)g * 100 + lane * 3;
                s[r][at] = t + rel[r][0];
                e[r][at] = t + rel[r][1];
            }
    sp_profile *p = simple_profile("outer", 0, s[0], e[0], 2 * G);
    add_row(p, "inner", 0, s[1], e[1], 2 * G);
    add_row(p, "tick", 0, s[2], e[2], 2 * G);
    p->thread_ids = malloc(p->num_events * sizeof *p->thread_ids);
    for (size_t r = 0; r < p->num_rows; r++)
        for (uint64_t j = 0; j < p->rows[r].count; j++)
            p->thread_ids[p->rows[r].offset + j] = j < G ? 0 : 1;
    cr_assert_eq(stream_matches_memory(p, "lanes"), 0);
}

Test(rank_stream, calls_that_do_not_nest_are_refused)
{
    int64_t as[] = {0}, ae[] = {10}, bs[] = {5}, be[] = {15};
    sp_profile *p = simple_profile("a", 0, as, ae, 1);
    add_row(p, "b", 0, bs, be, 1);
    cr_assert_eq(stream_matches_memory(p, "overlap"), 1);
}

Test(rank_stream, a_call_ending_before_it_starts_is_refused)
{
    int64_t as[] = {0, 20}, ae[] = {10, 15};
    cr_assert_eq(stream_matches_memory(simple_profile("a", 0, as, ae, 2), "backwards"), 1);
}

Test(rank_stream, a_row_in_reverse_time_order_is_sorted)
{
    /* 600,000 runs of one call: more than the windows' budget, so the rank
     * is sorted (in one block: no temporary file). */
    enum { N = 600000 };
    int64_t *s = malloc(N * sizeof *s), *e = malloc(N * sizeof *e);
    for (size_t i = 0; i < N; i++) {
        s[i] = (int64_t)(N - i) * 10;
        e[i] = s[i] + (i % 3 == 0 ? 0 : 5);
    }
    sp_profile *p = simple_profile("scattered", 0, s, e, N);
    int64_t os[] = {0}, oe[] = {(int64_t)N * 10 + 100};
    add_row(p, "outer", 0, os, oe, 1);
    free(s);
    free(e);
    cr_assert_eq(stream_matches_memory(p, "scattered"), 0);
    cr_assert_eq(last_sorted_runs, 0);
    cr_assert_eq(last_replayed, 0);
}

/* A permutation of 0..n-1 (the same every run). */
static void shuffle(size_t *order, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n; i > 1; i--) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        size_t j = (size_t)(seed >> 33) % i;
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

/* Two lanes of outer > mid > 2 leaves, and a row stored first with a
 * zero-length tick at outer's start and a call as long as the second leaf
 * (the tie rules: end descending, then file order), each row stored
 * reversed or shuffled: far out of time order. */
static sp_profile *scattered_lanes(size_t groups, int shuffled)
{
    static const char *const names[] = {"tick", "outer", "mid", "leaf"};
    static const int64_t rel[4][2][2] = {{{0, 0}, {400, 800}},
                                         {{0, 900}, {0, 900}},
                                         {{10, 890}, {10, 890}},
                                         {{20, 300}, {400, 800}}};
    size_t n = 2 * 2 * groups;
    int64_t *s = malloc(n * sizeof *s), *e = malloc(n * sizeof *e);
    int64_t *th = malloc(4 * n * sizeof *th);
    size_t *order = malloc(n * sizeof *order);
    sp_profile *p = NULL;
    for (int r = 0; r < 4; r++) {
        shuffle(order, n, (uint64_t)r + 7);
        for (size_t k = 0; k < n; k++) {
            size_t g = k / 4, lane = k / 2 % 2, which = k % 2;
            size_t at = shuffled ? order[k] : n - 1 - k;
            s[at] = (int64_t)g * 1000 + rel[r][which][0] + (int64_t)lane * 7;
            e[at] = (int64_t)g * 1000 + rel[r][which][1] + (int64_t)lane * 7;
            th[(size_t)r * n + at] = (int64_t)lane;
        }
        if (!p)
            p = simple_profile(names[r], 0, s, e, n);
        else
            add_row(p, names[r], 0, s, e, n);
    }
    p->thread_ids = th;
    free(s);
    free(e);
    free(order);
    return p;
}

Test(rank_stream, scattered_rows_are_sorted_in_several_runs)
{
    /* 160,000 calls, 4 KiB blocks (about 70 records each): many sorted runs,
     * merged; the temporary files are gone afterwards */
    char tmp[64];
    make_temp_dir(tmp, sizeof tmp);
    setenv("TMPDIR", tmp, 1);
    setenv("SCOPEPROF_SORT_BLOCK", "4K", 1);
    for (int shuffled = 0; shuffled < 2; shuffled++) {
        cr_assert_eq(stream_matches_memory(scattered_lanes(10000, shuffled), "lanes"), 0);
        cr_assert_gt(last_sorted_runs, 100, "shuffled %d: %zu runs", shuffled, last_sorted_runs);
        cr_assert_eq(last_replayed, 0);
    }
    /* 1 MiB: about 10 runs; the default: one block, no file */
    setenv("SCOPEPROF_SORT_BLOCK", "1M", 1);
    cr_assert_eq(stream_matches_memory(scattered_lanes(10000, 1), "lanes"), 0);
    cr_assert(last_sorted_runs > 1 && last_sorted_runs < 20, "%zu runs", last_sorted_runs);
    unsetenv("SCOPEPROF_SORT_BLOCK");
    cr_assert_eq(stream_matches_memory(scattered_lanes(10000, 1), "lanes"), 0);
    cr_assert_eq(last_sorted_runs, 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s)\"", tmp);
    cr_assert_eq(system(cmd), 0, "temporary files left in %s", tmp);
    unsetenv("TMPDIR");
    remove_tree(tmp);
}

Test(rank_stream, without_a_temporary_file_a_scattered_rank_is_replayed)
{
    setenv("TMPDIR", "/nonexistent/scopeprof", 1);
    setenv("SCOPEPROF_SORT_BLOCK", "4K", 1);
    cr_assert_eq(stream_matches_memory(scattered_lanes(5000, 1), "lanes"), 0);
    cr_assert_eq(last_replayed, 1);
    /* a rank that fits the block needs no file */
    unsetenv("SCOPEPROF_SORT_BLOCK");
    cr_assert_eq(stream_matches_memory(scattered_lanes(5000, 1), "lanes"), 0);
    cr_assert_eq(last_replayed, 0);
    unsetenv("TMPDIR");
}

/* The leaf of scattered_lanes starting at `start` on `lane` made longer. */
static void stretch_leaf(sp_profile *p, int64_t start, int64_t lane, int64_t by)
{
    const sp_row *leaf = &p->rows[3];
    for (uint64_t j = 0; j < leaf->count; j++)
        if (p->start[leaf->offset + j] == start && p->thread_ids[leaf->offset + j] == lane)
            p->end[leaf->offset + j] += by;
}

Test(rank_stream, scattered_calls_that_do_not_nest_are_refused)
{
    /* one leaf moved to cross its parent's end, in a shuffled rank sorted
     * in several runs */
    setenv("SCOPEPROF_SORT_BLOCK", "4K", 1);
    sp_profile *p = scattered_lanes(5000, 1);
    stretch_leaf(p, 2500 * 1000 + 400 + 7, 1, 600); /* past mid's end */
    cr_assert_eq(stream_matches_memory(p, "crossing"), 1);
    unsetenv("SCOPEPROF_SORT_BLOCK");
}

Test(rank_stream, a_scattered_rank_that_does_not_nest_is_read_to_its_end)
{
    /* rows_on_crossing: the first crossing worded as in memory, the rows'
     * durations from every event, the rank sorted in several runs */
    setenv("SCOPEPROF_SORT_BLOCK", "4K", 1);
    sp_profile *p = scattered_lanes(5000, 0);
    stretch_leaf(p, 1200 * 1000 + 20, 0, 5000);
    int64_t want[4][3];
    for (size_t r = 0; r < 4; r++) {
        const sp_row *row = &p->rows[r];
        want[r][0] = 0;
        want[r][1] = INT64_MAX;
        want[r][2] = INT64_MIN;
        for (uint64_t j = 0; j < row->count; j++) {
            int64_t d = p->end[row->offset + j] - p->start[row->offset + j];
            want[r][0] += d;
            want[r][1] = d < want[r][1] ? d : want[r][1];
            want[r][2] = d > want[r][2] ? d : want[r][2];
        }
    }
    cr_assert_eq(stream_rows_only(p, "crossing", want), 2);
    unsetenv("SCOPEPROF_SORT_BLOCK");
}

/* rows_on_crossing: the rank is read to its end (2), its first crossing
 * worded as the in-memory reconstruction words it, its rows' durations and
 * counts as its events give them.  Returns the stream's result. */
static int stream_rows_only(sp_profile *p, const char *tag, int64_t (*want)[3])
{
    char dir[64], path[160], err[1024];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s.h5", dir, tag);
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    size_t rows = p->num_rows;
    uint64_t events = p->num_events;
    sp_profile_free(p);
    sp_run_source src;
    const char *args[] = {path};
    cr_assert_eq(sp_run_source_open(&src, args, 1, err, sizeof err), 0, "%s", err);
    recorder rec = {0};
    sp_call_visitor v = {rec_enter, rec_exit, &rec};
    sp_stream_options so = {NULL, NULL, 1};
    sp_rank_stream_info info;
    char why[1024] = "";
    int rc = sp_stream_rank_with(&src, 0, 0, &v, &so, &info, why, sizeof why);
    sp_profile *full = sp_h5_read(path, err, sizeof err);
    cr_assert_not_null(full, "%s", err);
    sp_calls calls;
    cr_assert_eq(sp_rank_calls(full, 0, &calls, err, sizeof err), -1);
    if (rc == 2) {
        /* "<file>: rank 0: <the reconstruction's message>" */
        char want_msg[1200];
        snprintf(want_msg, sizeof want_msg, "%s: rank 0: %s", path, why);
        cr_assert_str_eq(err, want_msg);
        cr_assert_eq(info.calls, events);
        cr_assert_eq(info.num_rows, rows);
        for (size_t r = 0; r < rows; r++)
            for (int k = 0; k < 3; k++)
                cr_assert_eq(info.row_durations[r][k], want[r][k], "row %zu value %d", r, k);
    }
    sp_rank_stream_info_free(&info);
    free(rec.calls);
    sp_profile_free(full);
    sp_run_source_close(&src);
    remove_tree(dir);
    return rc;
}

Test(rank_stream, a_rank_that_does_not_nest_is_read_to_its_end_with_rows_on_crossing)
{
    /* lane 0: a [0,100] with b [50,150] crossing it at 50; lane 1:
     * c [10,40] with d [20,60] crossing it at 20, the first crossing in
     * time order (the one the in-memory sweep names) */
    int64_t as[] = {0, 200}, ae[] = {100, 210}, bs[] = {50, 300}, be[] = {150, 330};
    int64_t cs[] = {10}, ce[] = {40}, ds[] = {20, 400}, de[] = {60, 401};
    sp_profile *p = simple_profile("a", 0, as, ae, 2);
    add_row(p, "b", 0, bs, be, 2);
    add_row(p, "c", 0, cs, ce, 1);
    add_row(p, "d", 0, ds, de, 2);
    p->thread_ids = malloc(p->num_events * sizeof *p->thread_ids);
    for (size_t r = 0; r < p->num_rows; r++)
        for (uint64_t j = 0; j < p->rows[r].count; j++)
            p->thread_ids[p->rows[r].offset + j] = r < 2 ? 0 : 1;
    int64_t want[4][3] = {{110, 10, 100}, {130, 30, 100}, {30, 30, 30}, {41, 1, 40}};
    cr_assert_eq(stream_rows_only(p, "crossing", want), 2);
}

Test(rank_stream, without_rows_on_crossing_or_with_many_lanes_a_crossing_gives_up)
{
    int64_t as[] = {0}, ae[] = {10}, bs[] = {5}, be[] = {15};
    sp_profile *p = simple_profile("a", 0, as, ae, 1);
    add_row(p, "b", 0, bs, be, 1);
    cr_assert_eq(stream_matches_memory(p, "plain"), 1);
    /* 40 lanes seen before the crossing: the in-memory path may group the
     * calls by lane and name another crossing, so the stream hands over */
    enum { L = 40 };
    int64_t ls[L + 1], le[L + 1], xs[] = {47}, xe[] = {60};
    for (int k = 0; k < L; k++) {
        ls[k] = k;
        le[k] = k + 1;
    }
    ls[L] = 45;
    le[L] = 50;
    p = simple_profile("lane", 0, ls, le, L + 1);
    add_row(p, "cross", 0, xs, xe, 1); /* [47,60] crosses lane 0's [45,50] */
    p->thread_ids = malloc(p->num_events * sizeof *p->thread_ids);
    for (int k = 0; k < L; k++)
        p->thread_ids[k] = k;
    p->thread_ids[L] = 0;
    p->thread_ids[L + 1] = 0;
    int64_t none[2][3] = {{0}};
    cr_assert_eq(stream_rows_only(p, "lanes", none), 1);
}

/* sp_stream_rank_mpi: each call's MPI columns at enter, as the file holds
 * them at its event (-1 for a column the file lacks), from the windows and
 * from a rank replayed from memory; NULL at exit and from sp_stream_rank. */
typedef struct mpi_seen {
    const sp_profile *full;
    size_t calls, wrong;
    int null_seen;
} mpi_seen;

static int mpi_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    mpi_seen *m = ctx;
    *user = parent;
    m->calls++;
    if (!call->mpi) {
        m->null_seen = 1;
        return 1;
    }
    const sp_profile *f = m->full;
    const sp_row *row = NULL;
    for (size_t r = 0; r < f->num_rows && !row; r++)
        if (f->rows[r].region == call->region)
            row = &f->rows[r];
    cr_assert_not_null(row);
    uint64_t e = row->offset + call->call_index;
    for (int c = 0; c < SP_EXTRA_N; c++)
        m->wrong += call->mpi[c] != (f->extra[c] ? f->extra[c][e] : -1);
    return 1;
}

static int mpi_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    (void)user;
    ((mpi_seen *)ctx)->null_seen |= call->mpi == NULL ? 0 : 2;
    return 0;
}

static void check_mpi_values(sp_profile *p, const char *tag)
{
    char dir[64], path[160], err[1024];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s.h5", dir, tag);
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    size_t events = p->num_events;
    sp_profile_free(p);
    sp_profile *full = sp_h5_read(path, err, sizeof err);
    cr_assert_not_null(full, "%s", err);
    sp_run_source src;
    const char *args[] = {path};
    cr_assert_eq(sp_run_source_open(&src, args, 1, err, sizeof err), 0, "%s", err);
    mpi_seen m = {.full = full};
    sp_call_visitor v = {mpi_enter, mpi_exit, &m};
    sp_rank_stream_info info;
    char why[256] = "";
    cr_assert_eq(sp_stream_rank_mpi(&src, 0, 0, &v, &info, why, sizeof why), 0, "%s", why);
    sp_rank_stream_info_free(&info);
    cr_expect_eq(m.calls, events, "%s", tag);
    cr_expect_eq(m.wrong, 0, "%s: %zu values differ", tag, m.wrong);
    cr_expect_eq(m.null_seen, 0, "%s: mpi NULL at enter or set at exit", tag);
    mpi_seen plain = {.full = full};
    sp_call_visitor pv = {mpi_enter, mpi_exit, &plain};
    cr_assert_eq(sp_stream_rank(&src, 0, 0, &pv, &info, why, sizeof why), 0, "%s", why);
    sp_rank_stream_info_free(&info);
    cr_expect_eq(plain.null_seen, 1, "%s: sp_stream_rank hands MPI columns", tag);
    sp_run_source_close(&src);
    sp_profile_free(full);
    remove_tree(dir);
}

static void add_mpi_columns(sp_profile *p, int skip)
{
    for (int c = 0; c < SP_EXTRA_N; c++) {
        if (c == skip)
            continue; /* a column the file lacks */
        p->extra[c] = malloc((p->num_events + 1) * sizeof *p->extra[c]);
        for (size_t e = 0; e < p->num_events; e++)
            p->extra[c][e] = e % 3 ? (int64_t)(e * 7 + (size_t)c) : -1;
    }
}

Test(rank_stream, mpi_columns_come_with_each_call)
{
    enum { G = 20000 }; /* rows beyond one chunk: the windows refill */
    static int64_t s[2][G], e[2][G];
    for (int g = 0; g < G; g++) {
        s[0][g] = (int64_t)g * 100;
        e[0][g] = s[0][g] + 90;
        /* the inner row partly out of time order: several runs */
        int at = g % 5 == 2 ? G - 1 - g : g;
        s[1][at] = (int64_t)g * 100 + 10;
        e[1][at] = s[1][at] + 40;
    }
    sp_profile *p = simple_profile("MPI_Send", 0, s[1], e[1], G);
    add_row(p, "outer", 0, s[0], e[0], G);
    add_mpi_columns(p, SP_EXTRA_MPI_TAG);
    check_mpi_values(p, "windows");

    enum { N = 600000 }; /* a rank replayed from memory */
    int64_t *rs = malloc(N * sizeof *rs), *re = malloc(N * sizeof *re);
    for (size_t i = 0; i < N; i++) {
        rs[i] = (int64_t)(N - i) * 10;
        re[i] = rs[i] + 5;
    }
    sp_profile *q = simple_profile("MPI_Recv", 0, rs, re, N);
    free(rs);
    free(re);
    add_mpi_columns(q, -1);
    check_mpi_values(q, "sorted");

    /* sorted in several runs */
    setenv("SCOPEPROF_SORT_BLOCK", "4K", 1);
    enum { M = 20000 };
    rs = malloc(M * sizeof *rs);
    re = malloc(M * sizeof *re);
    for (size_t i = 0; i < M; i++) {
        rs[i] = (int64_t)(M - i) * 10;
        re[i] = rs[i] + 5;
    }
    q = simple_profile("MPI_Recv", 0, rs, re, M);
    free(rs);
    free(re);
    add_mpi_columns(q, SP_EXTRA_MPI_TAG);
    check_mpi_values(q, "sorted runs");
    unsetenv("SCOPEPROF_SORT_BLOCK");
}
