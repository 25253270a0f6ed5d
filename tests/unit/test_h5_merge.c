/* test_h5_merge.c - several files of one run: sp_h5_merge, sp_load_run,
 * and sp_h5_check (plus the `scopeprof merge` / `check` commands). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "h5_test_util.h"
#include "scopeprof/h5.h"

/* Rank file r: region "main" (1 call) and "step" (r + 1 calls inside it);
 * rank 0 also has GPU durations, rank 1 a thread table and thread ids. */
static sp_profile *rank_profile(uint32_t rank, const char *run_id)
{
    int64_t base = 1000 * (int64_t)(rank + 1);
    int64_t ms = base, me = base + 900;
    sp_profile *p = simple_profile("main", rank, &ms, &me, 1);
    int64_t s[8], e[8];
    for (uint32_t i = 0; i <= rank; i++) {
        s[i] = base + 10 + 100 * i;
        e[i] = s[i] + 50;
    }
    add_row(p, rank == 2 ? "only_on_2" : "step", rank, s, e, rank + 1);
    if (rank == 0) {
        p->gpu = malloc(p->num_events * sizeof *p->gpu);
        for (size_t i = 0; i < p->num_events; i++)
            p->gpu[i] = (int64_t)i;
    }
    if (rank == 1) {
        p->thread_ids = calloc(p->num_events, sizeof *p->thread_ids);
        p->has_thread_table = 1;
        p->num_threads = 1;
        p->threads = calloc(1, sizeof *p->threads);
        p->threads[0] = (sp_thread_row){1, 0, 7, 8, 0, 0, -1, 100, strdup("MainThread"), NULL, -1};
    }
    sp_profile_set_meta_int(p, "mpi_size", 3);
    sp_profile_set_meta_int(p, "mpi_rank", rank);
    if (run_id)
        sp_profile_set_meta_string(p, "run_id", run_id);
    return p;
}

static void write_rank(const char *dir, uint32_t rank, const char *run_id, char *path, size_t len)
{
    char err[512];
    snprintf(path, len, "%s/run_rank%05u.h5", dir, rank);
    sp_profile *p = rank_profile(rank, run_id);
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    sp_profile_free(p);
}

static void assert_merged_run(const sp_profile *m)
{
    cr_assert_eq(m->num_ranks, 3);
    cr_assert_eq(m->num_rows, 6);
    cr_assert_eq(m->num_events, 2 + 3 + 4);
    cr_assert_eq(m->num_names, 3);
    cr_assert_str_eq(m->names[0], "main");
    cr_assert_str_eq(m->names[1], "step");
    cr_assert_str_eq(m->names[2], "only_on_2");
    for (uint32_t r = 0; r < 3; r++) {
        const sp_row *main_row = &m->rows[2 * r], *inner = &m->rows[2 * r + 1];
        cr_assert_eq(main_row->rank, r);
        cr_assert_eq(main_row->region, 0);
        cr_assert_eq(inner->rank, r);
        cr_assert_eq(inner->count, r + 1);
        cr_assert_eq(m->start[main_row->offset], 1000 * (int64_t)(r + 1));
        cr_assert_eq(m->start[inner->offset + r], 1000 * (int64_t)(r + 1) + 10 + 100 * r);
    }
    /* Optional columns back-filled for the ranks that lacked them. */
    cr_assert_not_null(m->gpu);
    cr_assert_eq(m->gpu[1], 1);
    cr_assert_eq(m->gpu[m->rows[2].offset], -1);
    cr_assert_not_null(m->thread_ids);
    cr_assert_eq(m->thread_ids[0], -1);
    cr_assert_eq(m->thread_ids[m->rows[2].offset], 0);
    cr_assert(m->has_thread_table);
    cr_assert_eq(m->num_threads, 1);
    cr_assert_eq(m->threads[0].rank, 1);
    int64_t v;
    cr_assert_eq(sp_profile_meta_int(m, "mpi_rank", &v), 0);
    cr_assert_eq(v, 0, "metadata comes from the lowest rank");
}

Test(h5_merge, ranks_in_order_names_unioned_columns_backfilled)
{
    char dir[64], p0[128], p1[128], p2[128], out[128], err[512];
    make_temp_dir(dir, sizeof dir);
    write_rank(dir, 0, "run-A", p0, sizeof p0);
    write_rank(dir, 1, "run-A", p1, sizeof p1);
    write_rank(dir, 2, "run-A", p2, sizeof p2);
    snprintf(out, sizeof out, "%s/merged.h5", dir);
    /* Given out of order: the output is in rank order anyway. */
    const char *inputs[] = {p2, p0, p1};
    cr_assert_eq(sp_h5_merge(inputs, 3, out, err, sizeof err), 0, "%s", err);
    sp_profile *m = sp_h5_read(out, err, sizeof err);
    cr_assert_not_null(m, "%s", err);
    assert_merged_run(m);
    int64_t v;
    cr_assert_eq(sp_profile_meta_int(m, "mpi_size", &v), 0);
    cr_assert_eq(v, 3);
    cr_assert_str_eq(sp_profile_meta_string(m, "run_id"), "run-A");
    /* Summary statistics survive the merge. */
    cr_assert_eq(m->rows[5].stats.total, 150);
    sp_profile_free(m);

    /* A merged file merges again with nothing lost (idempotent). */
    char again[128];
    snprintf(again, sizeof again, "%s/again.h5", dir);
    const char *one[] = {out};
    cr_assert_eq(sp_h5_merge(one, 1, again, err, sizeof err), 0, "%s", err);
    m = sp_h5_read(again, err, sizeof err);
    cr_assert_not_null(m, "%s", err);
    assert_merged_run(m);
    sp_profile_free(m);
    remove_tree(dir);
}

Test(h5_merge, duplicate_rank_names_both_files)
{
    char dir[64], sub[128], a[128], b[128], out[128], err[512];
    make_temp_dir(dir, sizeof dir);
    write_rank(dir, 1, NULL, a, sizeof a);
    snprintf(sub, sizeof sub, "%s/again", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    write_rank(sub, 1, NULL, b, sizeof b);
    snprintf(out, sizeof out, "%s/merged.h5", dir);
    const char *inputs[] = {a, b};
    cr_assert_eq(sp_h5_merge(inputs, 2, out, err, sizeof err), -1);
    char want[512];
    snprintf(want, sizeof want, "%s and %s both claim rank 1", a, b);
    cr_assert_not_null(strstr(err, want), "%s", err);
    cr_assert_not(access(out, F_OK) == 0, "no output on failure");

    sp_profile *p = sp_load_run(inputs, 2, err, sizeof err);
    cr_assert_null(p);
    cr_assert_not_null(strstr(err, want), "%s", err);
    remove_tree(dir);
}

Test(h5_merge, files_of_different_runs_are_refused)
{
    char dir[64], a[128], b[128], out[128], err[512];
    make_temp_dir(dir, sizeof dir);
    write_rank(dir, 0, "run-A", a, sizeof a);
    write_rank(dir, 1, "run-B", b, sizeof b);
    snprintf(out, sizeof out, "%s/merged.h5", dir);
    const char *inputs[] = {a, b};
    cr_assert_eq(sp_h5_merge(inputs, 2, out, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, a), "%s", err);
    cr_assert_not_null(strstr(err, b), "%s", err);
    cr_assert_not_null(strstr(err, "different runs"), "%s", err);
    remove_tree(dir);
}

Test(h5_merge, damaged_input_is_named_and_nothing_written)
{
    char dir[64], a[128], bad[128], out[128], err[512];
    make_temp_dir(dir, sizeof dir);
    write_rank(dir, 0, NULL, a, sizeof a);
    snprintf(bad, sizeof bad, "%s/bad.h5", dir);
    FILE *f = fopen(bad, "w");
    fputs("junk", f);
    fclose(f);
    snprintf(out, sizeof out, "%s/merged.h5", dir);
    const char *inputs[] = {a, bad};
    cr_assert_eq(sp_h5_merge(inputs, 2, out, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, bad), "%s", err);
    cr_assert_not_null(strstr(err, "not a readable HDF5"), "%s", err);
    cr_assert_not(access(out, F_OK) == 0);
    remove_tree(dir);
}

Test(h5_merge, many_rank_files_compressed_output)
{
    /* Enough events that the output crosses the compression threshold and
     * chunks span input boundaries. */
    enum { RANKS = 24, EVENTS = 1000 };
    char dir[64], out[128], err[512];
    make_temp_dir(dir, sizeof dir);
    char *paths[RANKS];
    int64_t s[EVENTS], e[EVENTS];
    for (uint32_t r = 0; r < RANKS; r++) {
        for (int i = 0; i < EVENTS; i++) {
            s[i] = 100 * i + r;
            e[i] = s[i] + 40;
        }
        sp_profile *p = simple_profile("work", r, s, e, EVENTS);
        paths[r] = malloc(128);
        snprintf(paths[r], 128, "%s/r%u.h5", dir, r);
        cr_assert_eq(sp_h5_write(paths[r], p, err, sizeof err), 0, "%s", err);
        sp_profile_free(p);
    }
    snprintf(out, sizeof out, "%s/merged.h5", dir);
    cr_assert_eq(sp_h5_merge((const char *const *)paths, RANKS, out, err, sizeof err), 0, "%s", err);
    cr_assert_eq(dataset_filters(out, "events/durations", NULL, NULL), 2);
    sp_profile *m = sp_h5_read(out, err, sizeof err);
    cr_assert_not_null(m, "%s", err);
    cr_assert_eq(m->num_events, RANKS * EVENTS);
    cr_assert_eq(m->num_ranks, RANKS);
    for (uint32_t r = 0; r < RANKS; r++) {
        cr_assert_eq(m->rows[r].rank, r);
        cr_assert_eq(m->start[m->rows[r].offset + EVENTS - 1], 100 * (EVENTS - 1) + r);
        cr_assert_eq(m->end[m->rows[r].offset + 7], 100 * 7 + r + 40);
    }
    sp_profile_free(m);
    for (int r = 0; r < RANKS; r++)
        free(paths[r]);
    remove_tree(dir);
}

Test(h5_load_run, files_combine_in_memory_like_a_merge)
{
    char dir[64], p0[128], p1[128], p2[128], err[512];
    make_temp_dir(dir, sizeof dir);
    write_rank(dir, 0, "run-A", p0, sizeof p0);
    write_rank(dir, 1, "run-A", p1, sizeof p1);
    write_rank(dir, 2, "run-A", p2, sizeof p2);
    const char *inputs[] = {p1, p2, p0};
    sp_profile *m = sp_load_run(inputs, 3, err, sizeof err);
    cr_assert_not_null(m, "%s", err);
    assert_merged_run(m);
    sp_profile_free(m);
    remove_tree(dir);
}

/* ---- check ------------------------------------------------------------------- */

struct collected {
    int n;
    char text[4096];
};

static void collect(void *ctx, const char *problem)
{
    struct collected *c = ctx;
    c->n++;
    strncat(c->text, problem, sizeof c->text - strlen(c->text) - 2);
    strcat(c->text, "\n");
}

Test(h5_check, sound_file_has_no_problem)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/full.h5", dir);
    sp_profile *p = full_profile();
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    struct collected c = {0};
    cr_assert_eq(sp_h5_check(path, collect, &c, err, sizeof err), 0, "%s", c.text);
    sp_profile_free(p);
    remove_tree(dir);
}

Test(h5_check, lane_ids_call_ids_and_nesting_problems_are_listed)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/bad.h5", dir);
    sp_profile *p = full_profile();
    p->parent_ids[1] = 42;  /* no call 42 on rank 0 */
    p->end[1] = 3500;       /* solve [1500, 3500] now crosses solve [3000, 4000] */
    p->thread_ids[2] = 0;   /* ... on the same lane */
    p->task_ids[1] = -1;
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    struct collected c = {0};
    long n = sp_h5_check(path, collect, &c, err, sizeof err);
    cr_assert_geq(n, 2, "%s", c.text);
    cr_assert_eq(n, c.n);
    cr_assert_not_null(strstr(c.text, "parent id 42"), "%s", c.text);
    cr_assert_not_null(strstr(c.text, "rank 0:"), "nesting problem expected:\n%s", c.text);
    sp_profile_free(p);

    p = full_profile();
    p->thread_ids[1] = 5;
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    memset(&c, 0, sizeof c);
    cr_assert_eq(sp_h5_check(path, collect, &c, err, sizeof err), 1, "%s", c.text);
    cr_assert_not_null(strstr(c.text, "thread_ids 5"), "%s", c.text);
    sp_profile_free(p);
    remove_tree(dir);
}

/* events/fork_parent_ids (issue 15): written, read back, checked. */
Test(h5_check, fork_parent_ids_round_trip_and_bad_ids_are_listed)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/fork.h5", dir);
    sp_profile *p = full_profile();
    p->fork_parent_ids = malloc(p->num_events * sizeof *p->fork_parent_ids);
    cr_assert_not_null(p->fork_parent_ids);
    for (size_t i = 0; i < p->num_events; i++)
        p->fork_parent_ids[i] = -1;
    p->fork_parent_ids[1] = p->call_ids[0];
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    struct collected c = {0};
    cr_assert_eq(sp_h5_check(path, collect, &c, err, sizeof err), 0, "%s", c.text);
    sp_profile *back = sp_h5_read(path, err, sizeof err);
    cr_assert_not_null(back, "%s", err);
    cr_assert_not_null(back->fork_parent_ids);
    for (size_t i = 0; i < p->num_events; i++)
        cr_assert_eq(back->fork_parent_ids[i], p->fork_parent_ids[i], "event %zu", i);
    sp_profile_free(back);
    p->fork_parent_ids[2] = 4242;
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    memset(&c, 0, sizeof c);
    int problems = sp_h5_check(path, collect, &c, err, sizeof err);
    cr_assert_eq(problems, 1, "%d: %s / %s", problems, c.text, err);
    cr_assert_not_null(strstr(c.text, "fork parent id 4242"), "%s", c.text);
    sp_profile_free(p);
    remove_tree(dir);
}

Test(h5_check, damaged_fixtures_and_unopenable_files)
{
    char fx[64], err[512], path[256];
    make_fixtures(fx, sizeof fx);
    struct collected c = {0};
    snprintf(path, sizeof path, "%s/overlapping_rows.h5", fx);
    cr_assert_eq(sp_h5_check(path, collect, &c, err, sizeof err), 1);
    cr_assert_not_null(strstr(c.text, "overlapping region rows"), "%s", c.text);
    snprintf(path, sizeof path, "%s/schema3.h5", fx);
    memset(&c, 0, sizeof c);
    cr_assert_eq(sp_h5_check(path, collect, &c, err, sizeof err), 0, "%s", c.text);
    snprintf(path, sizeof path, "%s/nope.h5", fx);
    cr_assert_eq(sp_h5_check(path, collect, &c, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "no such file"), "%s", err);
    remove_tree(fx);
}

/* ---- the commands -------------------------------------------------------------- */

static int run(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' %s >/dev/null 2>&1", SCOPEPROF_EXE, args);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(h5_cli, merge_and_check_exit_codes)
{
    char dir[64], p0[128], p1[128], args[512];
    make_temp_dir(dir, sizeof dir);
    write_rank(dir, 0, NULL, p0, sizeof p0);
    write_rank(dir, 1, NULL, p1, sizeof p1);
    cr_assert_eq(run("merge --help"), 0);
    cr_assert_eq(run("validate --help"), 0);
    cr_assert_eq(run("merge"), 2);
    cr_assert_eq(run("validate"), 2);
    snprintf(args, sizeof args, "merge '%s' '%s'", p0, p1);
    cr_assert_eq(run(args), 2, "no -o is a usage error");
    snprintf(args, sizeof args, "merge --bogus '%s' -o '%s/m.h5'", p0, dir);
    cr_assert_eq(run(args), 2);
    snprintf(args, sizeof args, "merge '%s' '%s' -o '%s/m.h5'", p0, p1, dir);
    cr_assert_eq(run(args), 0);
    snprintf(args, sizeof args, "merge '%s' '%s' -o '%s/dup.h5'", p0, p0, dir);
    cr_assert_eq(run(args), 1);
    snprintf(args, sizeof args, "validate '%s/m.h5' '%s'", dir, p0);
    cr_assert_eq(run(args), 0);
    snprintf(args, sizeof args, "validate '%s/m.h5' '%s/missing.h5'", dir, dir);
    cr_assert_eq(run(args), 1);
    remove_tree(dir);
}
