/* test_h5.c - the HDF5 schema: write -> read round trip, encoding, summary
 * statistics, storage (size, compression, optional columns), atomic
 * publication, the reader on hand-built schema 1/2/3 files and on every
 * failure path of spec §11.5, h5py reading what we write. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <hdf5.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5/h5_internal.h"
#include "h5_test_util.h"
#include "scopeprof/h5.h"

/* ---- write -> read --------------------------------------------------------- */

Test(h5_roundtrip, every_column_and_table)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/full.h5", dir);
    sp_profile *in = full_profile();
    cr_assert_eq(sp_h5_write(path, in, err, sizeof err), 0, "%s", err);
    sp_profile *out = sp_h5_read(path, err, sizeof err);
    cr_assert_not_null(out, "%s", err);

    cr_assert_eq(out->schema_version, 3);
    cr_assert_eq(out->aggregate, 0);
    cr_assert_str_eq(out->path, path);
    cr_assert_eq(out->num_names, 2);
    cr_assert_str_eq(out->names[0], "main");
    cr_assert_str_eq(out->names[1], "solve");
    cr_assert_eq(out->num_rows, 3);
    cr_assert_eq(out->num_events, 4);
    cr_assert_eq(out->num_ranks, 2);
    for (size_t i = 0; i < 3; i++) {
        const sp_row *a = &in->rows[i], *b = &out->rows[i];
        cr_assert_eq(b->region, a->region);
        cr_assert_eq(b->rank, a->rank);
        cr_assert_eq(b->offset, a->offset);
        cr_assert_eq(b->count, a->count);
        cr_assert_eq(b->source_line, a->source_line);
        cr_assert_eq(b->exclusive_total, a->exclusive_total);
        cr_assert_str_eq(b->source_file, a->source_file);
        cr_assert_str_eq(b->source_text, a->source_text);
        cr_assert_str_eq(b->tags, a->tags);
        cr_assert_str_eq(b->event_metadata, a->event_metadata);
    }
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(out->start[i], in->start[i]);
        cr_assert_eq(out->end[i], in->end[i]);
        cr_assert_eq(out->gpu[i], in->gpu[i]);
        cr_assert_eq(out->call_ids[i], in->call_ids[i]);
        cr_assert_eq(out->parent_ids[i], in->parent_ids[i]);
        cr_assert_eq(out->thread_ids[i], in->thread_ids[i]);
        cr_assert_eq(out->task_ids[i], in->task_ids[i]);
        cr_assert_eq(out->await_ns[i], in->await_ns[i]);
    }
    cr_assert(out->has_thread_table);
    cr_assert_eq(out->num_threads, 3);
    for (size_t i = 0; i < 3; i++) {
        const sp_thread_row *a = &in->threads[i], *b = &out->threads[i];
        cr_assert_eq(b->rank, a->rank);
        cr_assert_eq(b->index, a->index);
        cr_assert_eq(b->ident, a->ident);
        cr_assert_eq(b->native_id, a->native_id);
        cr_assert_eq(b->daemon, a->daemon);
        cr_assert_eq(b->start_ns, a->start_ns);
        cr_assert_eq(b->end_ns, a->end_ns);
        cr_assert_eq(b->cpu_ns, a->cpu_ns);
        cr_assert_str_eq(b->name, a->name);
    }
    cr_assert(out->has_task_table);
    cr_assert_eq(out->num_tasks, 1);
    const sp_task_row *ta = &in->tasks[0], *tb = &out->tasks[0];
    cr_assert_eq(tb->rank, ta->rank);
    cr_assert_eq(tb->index, ta->index);
    cr_assert_eq(tb->thread_index, ta->thread_index);
    cr_assert_eq(tb->created_ns, ta->created_ns);
    cr_assert_eq(tb->done_ns, ta->done_ns);
    cr_assert_eq(tb->steps, ta->steps);
    cr_assert_eq(tb->running_ns, ta->running_ns);
    cr_assert_eq(tb->suspended_ns, ta->suspended_ns);
    cr_assert_str_eq(tb->kind, ta->kind);
    cr_assert_str_eq(tb->name, ta->name);
    cr_assert_str_eq(tb->coro_name, ta->coro_name);

    int64_t v;
    cr_assert_eq(sp_profile_meta_int(out, "mpi_size", &v), 0);
    cr_assert_eq(v, 2);
    cr_assert_str_eq(sp_profile_meta_string(out, "label"), "demo");
    const sp_meta *ratio = sp_profile_meta(out, "ratio");
    cr_assert(ratio && ratio->type == SP_META_FLOAT && ratio->f == 0.5);
    const sp_meta *modules = sp_profile_meta(out, "modules");
    cr_assert(modules && modules->type == SP_META_STRINGS && modules->list_len == 2);
    cr_assert_str_eq(modules->list[0], "gcc/12");
    cr_assert_str_eq(modules->list[1], "hdf5/1.10");
    cr_assert_eq(sp_profile_origin_ns(out), 1000);
    sp_profile_free(in);
    sp_profile_free(out);
    remove_tree(dir);
}

Test(h5_roundtrip, unsorted_starts_and_huge_gaps_survive_delta_encoding)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/d.h5", dir);
    /* Recording order is not start order (concatenated thread buffers), and
     * extreme values must wrap and unwrap exactly. */
    int64_t starts[] = {500, 100, INT64_MAX - 10, INT64_MIN + 5, 0};
    int64_t ends[] = {600, 150, INT64_MAX, INT64_MIN + 6, 0};
    sp_profile *in = simple_profile("r", 0, starts, ends, 5);
    cr_assert_eq(sp_h5_write(path, in, err, sizeof err), 0, "%s", err);
    sp_profile *out = sp_h5_read(path, err, sizeof err);
    cr_assert_not_null(out, "%s", err);
    for (size_t i = 0; i < 5; i++) {
        cr_assert_eq(out->start[i], starts[i]);
        cr_assert_eq(out->end[i], ends[i]);
    }
    sp_profile_free(in);
    sp_profile_free(out);
    remove_tree(dir);
}

/* ---- encoding and statistics (spec §1.5, §1.6) ------------------------------- */

Test(h5_encoding, start_deltas_and_durations_as_in_the_spec)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/e.h5", dir);
    int64_t t0 = 1700000000000;
    int64_t s1[] = {t0, t0 + 417, t0 + 417 + 605};
    int64_t e1[] = {t0 + 1, t0 + 418, t0 + 1023};
    int64_t s2[] = {100, 200, 300};
    int64_t e2[] = {150, 260, 330};
    sp_profile *p = simple_profile("a", 0, s1, e1, 3);
    add_row(p, "b", 0, s2, e2, 3);
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    int64_t deltas[6], durations[6];
    read_i64_column(path, "events/start_deltas", deltas, 6);
    read_i64_column(path, "events/durations", durations, 6);
    int64_t want_deltas[] = {t0, 417, 605, 100, 100, 100};
    int64_t want_durations[] = {1, 1, 1, 50, 60, 30};
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(deltas[i], want_deltas[i], "delta %d", i);
        cr_assert_eq(durations[i], want_durations[i], "duration %d", i);
    }
    cr_assert_not(dataset_exists(path, "events/start_times"));
    cr_assert_not(dataset_exists(path, "events/end_times"));
    sp_profile_free(p);
    remove_tree(dir);
}

Test(h5_encoding, summary_statistics_computed_by_the_writer)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/s.h5", dir);
    int64_t starts[] = {10, 20, 40}, ends[] = {15, 33, 55}, gpu[] = {-1, 7, 3};
    sp_profile *p = simple_profile("solve", 0, starts, ends, 3);
    p->gpu = malloc(sizeof gpu);
    memcpy(p->gpu, gpu, sizeof gpu);
    /* Stale statistics in memory must not reach the file. */
    p->rows[0].stats.total = 999;
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    sp_summary_stats s;
    read_stats_row(path, 0, &s);
    cr_assert_eq(s.total, 33);
    cr_assert_eq(s.minimum, 5);
    cr_assert_eq(s.maximum, 15);
    cr_assert_eq(s.first, 5);
    cr_assert_eq(s.last, 15);
    cr_assert_eq(s.start_minimum, 10);
    cr_assert_eq(s.end_maximum, 55);
    cr_assert_eq(s.gpu_count, 2);
    cr_assert_eq(s.gpu_total, 10);
    cr_assert_float_eq(s.mean, 11.0, 1e-12);
    cr_assert_float_eq(s.m2, 56.0, 1e-9); /* (5-11)^2 + (13-11)^2 + (15-11)^2 */
    sp_profile_free(p);
    remove_tree(dir);
}

Test(h5_encoding, summary_of_an_empty_row_is_zero)
{
    sp_summary_stats s;
    memset(&s, 0x5a, sizeof s);
    sp_summary_compute(NULL, NULL, NULL, 0, &s);
    cr_assert_eq(s.total, 0);
    cr_assert_eq(s.start_minimum, 0);
    cr_assert_eq(s.gpu_count, 0);
    cr_assert_eq(s.mean, 0.0);
    cr_assert_eq(s.m2, 0.0);
}

/* ---- long metadata lists (issue 13, item 4) ---------------------------------- */

static char **numbered_strings(size_t n)
{
    char **list = calloc(n, sizeof *list);
    for (size_t i = 0; i < n; i++) {
        list[i] = malloc(32);
        snprintf(list[i], 32, "function_%zu", i);
    }
    return list;
}

static void free_strings(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

static int attribute_exists(const char *path, const char *object, const char *name)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    int found = H5Aexists_by_name(f, object, name, H5P_DEFAULT) > 0;
    H5Fclose(f);
    return found;
}

/* 5,000 strings are 80 KB of vlen references: past HDF5's 64 KiB object
 * header message limit, so the file used not to be written at all. */
Test(h5_metadata, a_list_too_long_for_an_attribute_is_a_dataset)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/long.h5", dir);
    int64_t starts[] = {0}, ends[] = {5};
    sp_profile *p = simple_profile("r", 0, starts, ends, 1);
    char **list = numbered_strings(5000);
    cr_assert_eq(sp_profile_set_meta_strings(p, "region_functions", (const char *const *)list,
                                             5000), 0);
    const char *few[] = {"a", "b"};
    cr_assert_eq(sp_profile_set_meta_strings(p, "modules", few, 2), 0);
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    cr_assert(dataset_exists(path, "metadata/region_functions"));
    cr_assert_not(attribute_exists(path, "metadata", "region_functions"));
    cr_assert(attribute_exists(path, "metadata", "modules"), "short lists stay attributes");

    sp_profile *back = sp_h5_read(path, err, sizeof err);
    cr_assert_not_null(back, "%s", err);
    const sp_meta *m = sp_profile_meta(back, "region_functions");
    cr_assert_not_null(m);
    cr_assert_eq(m->type, SP_META_STRINGS);
    cr_assert_eq(m->list_len, 5000);
    for (size_t i = 0; i < 5000; i++)
        cr_assert_str_eq(m->list[i], list[i]);
    m = sp_profile_meta(back, "modules");
    cr_assert(m && m->list_len == 2 && !strcmp(m->list[1], "b"));
    cr_assert_eq(sp_h5_check(path, NULL, NULL, err, sizeof err), 0, "%s", err);
    sp_profile_free(back);
    free_strings(list, 5000);
    sp_profile_free(p);
    remove_tree(dir);
}

/* Files written before lists became datasets hold them as attributes (up
 * to about 4,000 strings): those still read the same. */
Test(h5_metadata, the_old_attribute_form_still_reads)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/old.h5", dir);
    int64_t starts[] = {0}, ends[] = {5};
    sp_profile *p = simple_profile("r", 0, starts, ends, 1);
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    char **list = numbered_strings(3000);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "metadata", H5P_DEFAULT);
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    hsize_t dims[1] = {3000};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t a = H5Acreate2(g, "region_functions", type, space, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(a, 0);
    cr_assert_geq(H5Awrite(a, type, list), 0);
    H5Aclose(a);
    H5Sclose(space);
    H5Tclose(type);
    H5Gclose(g);
    H5Fclose(f);

    sp_profile *back = sp_h5_read(path, err, sizeof err);
    cr_assert_not_null(back, "%s", err);
    const sp_meta *m = sp_profile_meta(back, "region_functions");
    cr_assert(m && m->type == SP_META_STRINGS && m->list_len == 3000);
    cr_assert_str_eq(m->list[2999], "function_2999");
    sp_profile_free(back);
    free_strings(list, 3000);
    sp_profile_free(p);
    remove_tree(dir);
}

/* A failed write advised freeing disk space whatever the cause (HDF5's
 * "object header message is too large" too): only the system's own
 * lack-of-space errors get that advice. */
Test(h5_metadata, disk_space_advice_only_for_lack_of_space)
{
    cr_assert_str_eq(sp_h5_write_hint("writing failed: object header message is too large"), "");
    cr_assert_str_eq(sp_h5_write_hint("writing failed: Permission denied"), "");
    cr_assert(strstr(sp_h5_write_hint("writing failed: No space left on device"), "disk space"));
    cr_assert(strstr(sp_h5_write_hint("writing failed: Disk quota exceeded"), "quotas"));
    cr_assert(strstr(sp_h5_write_hint("writing failed: File too large"), "disk space"));
}

/* ---- storage ----------------------------------------------------------------- */

Test(h5_storage, optional_columns_and_lane_tables_omitted_when_absent)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/o.h5", dir);
    int64_t starts[] = {0, 10}, ends[] = {5, 20};
    sp_profile *p = simple_profile("r", 0, starts, ends, 2);
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    const char *absent[] = {"events/gpu_durations", "events/call_ids", "events/parent_ids",
                            "events/thread_ids", "events/task_ids", "events/await_ns",
                            "thread_table", "task_table"};
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++)
        cr_assert_not(dataset_exists(path, absent[i]), "%s should be absent", absent[i]);
    cr_assert(dataset_exists(path, "events/start_deltas"));
    sp_profile *back = sp_h5_read(path, err, sizeof err);
    cr_assert_not_null(back, "%s", err);
    cr_assert_null(back->gpu);
    cr_assert_null(back->call_ids);
    cr_assert_null(back->parent_ids);
    cr_assert_null(back->thread_ids);
    cr_assert_not(back->has_thread_table);
    sp_profile_free(back);
    sp_profile_free(p);
    remove_tree(dir);
}

static long file_size(const char *path)
{
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    return (long)st.st_size;
}

Test(h5_storage, small_files_stay_small)
{
    char dir[64], one[128], many[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(one, sizeof one, "%s/one.h5", dir);
    snprintf(many, sizeof many, "%s/many.h5", dir);
    int64_t s = 100, e = 200;
    sp_profile *p = simple_profile("main", 0, &s, &e, 1);
    sp_profile_set_meta_int(p, "mpi_size", 1);
    sp_profile_set_meta_string(p, "hostname", "node001");
    cr_assert_eq(sp_h5_write(one, p, err, sizeof err), 0, "%s", err);
    long small = file_size(one);
    cr_assert_lt(small, 32 * 1024, "1-region 1-call file is %ld bytes", small);
    cr_assert_not(dataset_is_chunked(one, "events/start_deltas"));
    cr_assert_not(dataset_is_chunked(one, "rank_region_index/region_ids"));

    /* Marginal cost per event below the compression threshold. */
    enum { N = 10000 };
    int64_t *starts = malloc(N * sizeof *starts), *ends = malloc(N * sizeof *ends);
    for (int i = 0; i < N; i++) {
        starts[i] = 1000 + 37 * i;
        ends[i] = starts[i] + 11;
    }
    sp_profile *q = simple_profile("main", 0, starts, ends, N);
    cr_assert_eq(sp_h5_write(many, q, err, sizeof err), 0, "%s", err);
    double per_event = (double)(file_size(many) - small) / (N - 1);
    cr_assert_lt(per_event, 20.0, "%.2f bytes per event", per_event);
    cr_log_info("1 call: %ld bytes; marginal %.2f bytes/event\n", small, per_event);
    free(starts);
    free(ends);
    sp_profile_free(p);
    sp_profile_free(q);
    remove_tree(dir);
}

static sp_profile *profile_of_n_events(size_t n)
{
    int64_t *starts = malloc(n * sizeof *starts), *ends = malloc(n * sizeof *ends);
    uint64_t noise = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        /* xorshift noise in the durations: barely compressible, like real data */
        noise ^= noise << 13;
        noise ^= noise >> 7;
        noise ^= noise << 17;
        starts[i] = (int64_t)(10 * i);
        ends[i] = starts[i] + 5 + (int64_t)(noise % 100000);
    }
    sp_profile *p = simple_profile("r", 0, starts, ends, n);
    free(starts);
    free(ends);
    return p;
}

Test(h5_storage, compression_switches_on_at_16384_events)
{
    char dir[64], below[128], at[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(below, sizeof below, "%s/below.h5", dir);
    snprintf(at, sizeof at, "%s/at.h5", dir);
    sp_profile *p = profile_of_n_events(SP_COMPRESS_MIN_EVENTS - 1);
    sp_profile *q = profile_of_n_events(SP_COMPRESS_MIN_EVENTS);
    cr_assert_eq(sp_h5_write(below, p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(sp_h5_write(at, q, err, sizeof err), 0, "%s", err);
    cr_assert_eq(dataset_filters(below, "events/start_deltas", NULL, NULL), 0);
    cr_assert_not(dataset_is_chunked(below, "events/durations"));
    int shuffle = 0, deflate = 0;
    cr_assert_eq(dataset_filters(at, "events/start_deltas", &shuffle, &deflate), 2);
    cr_assert(shuffle && deflate);
    cr_assert_eq(dataset_filters(at, "events/durations", &shuffle, &deflate), 2);
    cr_assert(dataset_is_chunked(at, "events/durations"));
    /* The index stays contiguous whatever the event count. */
    cr_assert_eq(dataset_filters(at, "rank_region_index/event_counts", NULL, NULL), 0);
    sp_profile *back = sp_h5_read(at, err, sizeof err);
    cr_assert_not_null(back, "%s", err);
    cr_assert_eq(back->num_events, SP_COMPRESS_MIN_EVENTS);
    cr_assert_eq(back->start[SP_COMPRESS_MIN_EVENTS - 1], 10 * (SP_COMPRESS_MIN_EVENTS - 1));
    cr_assert_eq(back->end[SP_COMPRESS_MIN_EVENTS - 1], q->end[SP_COMPRESS_MIN_EVENTS - 1]);
    sp_profile_free(back);
    sp_profile_free(p);
    sp_profile_free(q);
    remove_tree(dir);
}

/* ---- atomic publication ---------------------------------------------------- */

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

Test(h5_publish, failed_write_keeps_previous_file_and_leaves_no_temp)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/run.h5", dir);
    int64_t s = 1, e = 2;
    sp_profile *small = simple_profile("keep", 0, &s, &e, 1);
    cr_assert_eq(sp_h5_write(path, small, err, sizeof err), 0, "%s", err);
    long before = file_size(path);

    /* A file size limit makes the kernel refuse writes (EFBIG) the way a
     * full disk does (ENOSPC): HDF5 sees failing writes in both cases. */
    sp_profile *big = profile_of_n_events(200000);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit saved, lim;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &saved), 0);
    lim.rlim_cur = 64 * 1024;
    lim.rlim_max = saved.rlim_max;
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    err[0] = '\0';
    int rc = sp_h5_write(path, big, err, sizeof err);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &saved), 0);
    cr_log_info("%s\n", err);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(err, path) == err, "message names the file: %s", err);
    cr_assert_null(strchr(err, '\n'), "one line: %s", err);
    cr_assert_not_null(strstr(err, "("), "says what to do: %s", err);

    cr_assert_eq(file_size(path), before);
    sp_profile *back = sp_h5_read(path, err, sizeof err);
    cr_assert_not_null(back, "%s", err);
    cr_assert_str_eq(back->names[0], "keep");
    cr_assert_eq(count_entries(dir), 1, "a temporary file was left behind");
    sp_profile_free(back);
    sp_profile_free(small);
    sp_profile_free(big);
    remove_tree(dir);
}

Test(h5_publish, rewrite_replaces_the_file)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/run.h5", dir);
    sp_profile *two = profile_of_n_events(2), *seven = profile_of_n_events(7);
    cr_assert_eq(sp_h5_write(path, two, err, sizeof err), 0, "%s", err);
    cr_assert_eq(sp_h5_write(path, seven, err, sizeof err), 0, "%s", err);
    sp_profile *back = sp_h5_read(path, err, sizeof err);
    cr_assert_not_null(back, "%s", err);
    cr_assert_eq(back->rows[0].count, 7);
    cr_assert_eq(count_entries(dir), 1);
    sp_profile_free(back);
    sp_profile_free(two);
    sp_profile_free(seven);
    remove_tree(dir);
}

Test(h5_publish, unwritable_directory_is_one_clear_line)
{
    char err[512];
    sp_profile *p = profile_of_n_events(1);
    const char *path = "/nonexistent-scopeprof-dir/run.h5";
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), -1);
    cr_assert(strstr(err, path) == err, "%s", err);
    cr_assert_not_null(strstr(err, "cannot create"), "%s", err);
    cr_assert_not_null(strstr(err, "No such file or directory"), "%s", err);
    cr_assert_not_null(strstr(err, "(check"), "%s", err);
    cr_assert_null(strchr(err, '\n'));
    sp_profile_free(p);
}
