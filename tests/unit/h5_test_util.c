/* h5_test_util.c - see h5_test_util.h. */
#include "h5_test_util.h"

#include <criterion/criterion.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void make_temp_dir(char *buf, size_t len)
{
    snprintf(buf, len, "/tmp/sp_h5_test.XXXXXX");
    cr_assert_not_null(mkdtemp(buf));
}

void remove_tree(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

static int64_t *grow(int64_t *col, size_t n)
{
    int64_t *g = realloc(col, (n ? n : 1) * sizeof *g);
    cr_assert_not_null(g);
    return g;
}

void add_row(sp_profile *p, const char *name, uint32_t rank, const int64_t *starts,
             const int64_t *ends, size_t n)
{
    int64_t region = sp_profile_intern_name(p, name);
    cr_assert_geq(region, 0);
    size_t base = p->num_events;
    p->start = grow(p->start, base + n);
    p->end = grow(p->end, base + n);
    memcpy(p->start + base, starts, n * sizeof *starts);
    memcpy(p->end + base, ends, n * sizeof *ends);
    p->num_events = base + n;
    p->rows = realloc(p->rows, (p->num_rows + 1) * sizeof *p->rows);
    cr_assert_not_null(p->rows);
    sp_row *r = &p->rows[p->num_rows++];
    memset(r, 0, sizeof *r);
    r->region = (uint32_t)region;
    r->rank = rank;
    r->offset = base;
    r->count = n;
    r->source_line = -1;
    r->exclusive_total = -1;
    r->source_file = strdup("");
    r->source_text = strdup("");
    r->tags = strdup("[]");
    r->event_metadata = strdup("[]");
    if (rank + 1 > p->num_ranks)
        p->num_ranks = rank + 1;
}

sp_profile *simple_profile(const char *name, uint32_t rank, const int64_t *starts,
                           const int64_t *ends, size_t n)
{
    sp_profile *p = sp_profile_new();
    cr_assert_not_null(p);
    add_row(p, name, rank, starts, ends, n);
    return p;
}

static int64_t *column(const int64_t *values, size_t n)
{
    int64_t *c = malloc(n * sizeof *c);
    memcpy(c, values, n * sizeof *c);
    return c;
}

sp_profile *full_profile(void)
{
    int64_t s0[] = {1000}, e0[] = {5000};
    int64_t s1[] = {1500, 3000}, e1[] = {2000, 4000};
    int64_t s2[] = {1200}, e2[] = {1700};
    sp_profile *p = simple_profile("main", 0, s0, e0, 1);
    add_row(p, "solve", 0, s1, e1, 2);
    add_row(p, "solve", 1, s2, e2, 1);
    sp_row *r = &p->rows[0];
    free(r->source_file);
    free(r->source_text);
    free(r->tags);
    r->source_file = strdup("app.c");
    r->source_text = strdup("int main()");
    r->tags = strdup("[\"top\"]");
    r->source_line = 10;
    r->exclusive_total = 3000;
    p->gpu = column((int64_t[]){-1, 100, -1, 50}, 4);
    p->call_ids = column((int64_t[]){0, 1, 2, 0}, 4);
    p->parent_ids = column((int64_t[]){-1, 0, 0, -1}, 4);
    p->thread_ids = column((int64_t[]){0, 0, 1, 0}, 4);
    p->task_ids = column((int64_t[]){-1, 3, -1, -1}, 4);
    p->await_ns = column((int64_t[]){0, 20, 0, 0}, 4);
    p->has_thread_table = 1;
    p->num_threads = 3;
    p->threads = calloc(3, sizeof *p->threads);
    p->threads[0] = (sp_thread_row){0, 0, 111, 222, 0, 0, 9000, 8000, strdup("MainThread"), NULL, -1};
    p->threads[1] = (sp_thread_row){0, 1, 112, 223, 1, 10, -1, 500, strdup("worker"), NULL, -1};
    p->threads[2] = (sp_thread_row){1, 0, 113, 224, 0, 0, 7000, 6000, strdup("MainThread"), NULL, -1};
    p->has_task_table = 1;
    p->num_tasks = 1;
    p->tasks = calloc(1, sizeof *p->tasks);
    p->tasks[0] = (sp_task_row){0, 3, 0, 5, 50, 2, 30, 20, strdup("asyncio"), strdup("Task-1"),
                                strdup("fetch")};
    sp_profile_set_meta_int(p, "mpi_size", 2);
    sp_profile_set_meta_int(p, "start_time_ns", 1000);
    sp_profile_set_meta_string(p, "label", "demo");
    sp_profile_set_meta_float(p, "ratio", 0.5);
    const char *modules[] = {"gcc/12", "hdf5/1.10"};
    sp_profile_set_meta_strings(p, "modules", modules, 2);
    return p;
}

static hid_t open_file(const char *path)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(f, 0, "cannot open %s", path);
    return f;
}

int dataset_exists(const char *path, const char *name)
{
    hid_t f = open_file(path);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", name);
    int exists = 1;
    for (char *slash = buf;; slash++) {
        slash = strchr(slash, '/');
        if (slash)
            *slash = '\0';
        if (H5Lexists(f, buf, H5P_DEFAULT) <= 0) {
            exists = 0;
            break;
        }
        if (!slash)
            break;
        *slash = '/';
    }
    H5Fclose(f);
    return exists;
}

static hid_t open_dcpl(const char *path, const char *name, hid_t *file, hid_t *dset)
{
    *file = open_file(path);
    *dset = H5Dopen2(*file, name, H5P_DEFAULT);
    cr_assert_geq(*dset, 0, "%s has no %s", path, name);
    hid_t dcpl = H5Dget_create_plist(*dset);
    cr_assert_geq(dcpl, 0);
    return dcpl;
}

int dataset_is_chunked(const char *path, const char *name)
{
    hid_t f, d, dcpl = open_dcpl(path, name, &f, &d);
    int chunked = H5Pget_layout(dcpl) == H5D_CHUNKED;
    H5Pclose(dcpl);
    H5Dclose(d);
    H5Fclose(f);
    return chunked;
}

int dataset_filters(const char *path, const char *name, int *shuffle, int *deflate)
{
    hid_t f, d, dcpl = open_dcpl(path, name, &f, &d);
    int n = H5Pget_nfilters(dcpl);
    for (int i = 0; i < n; i++) {
        unsigned flags, conf;
        size_t nvals = 0;
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &nvals, NULL, 0, NULL, &conf);
        if (id == H5Z_FILTER_SHUFFLE && shuffle)
            *shuffle = 1;
        if (id == H5Z_FILTER_DEFLATE && deflate)
            *deflate = 1;
    }
    H5Pclose(dcpl);
    H5Dclose(d);
    H5Fclose(f);
    return n;
}

void read_i64_column(const char *path, const char *name, int64_t *out, size_t n)
{
    hid_t f = open_file(path);
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    cr_assert_geq(d, 0);
    hid_t space = H5Dget_space(d);
    cr_assert_eq(H5Sget_simple_extent_npoints(space), (hssize_t)n);
    hid_t type = H5Dget_type(d);
    cr_assert(H5Tequal(type, H5T_STD_I64LE) > 0, "%s is not int64", name);
    cr_assert_geq(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), 0);
    H5Tclose(type);
    H5Sclose(space);
    H5Dclose(d);
    H5Fclose(f);
}

void read_stats_row(const char *path, size_t row, sp_summary_stats *out)
{
    /* Build the memory type by hand, so the test does not trust the writer's. */
    hid_t mem = H5Tcreate(H5T_COMPOUND, sizeof *out);
#define F(name, type) H5Tinsert(mem, #name, offsetof(sp_summary_stats, name), type)
    F(total, H5T_NATIVE_INT64);
    F(minimum, H5T_NATIVE_INT64);
    F(maximum, H5T_NATIVE_INT64);
    F(first, H5T_NATIVE_INT64);
    F(last, H5T_NATIVE_INT64);
    F(start_minimum, H5T_NATIVE_INT64);
    F(end_maximum, H5T_NATIVE_INT64);
    F(gpu_count, H5T_NATIVE_UINT64);
    F(gpu_total, H5T_NATIVE_INT64);
    F(mean, H5T_NATIVE_DOUBLE);
    F(m2, H5T_NATIVE_DOUBLE);
#undef F
    hid_t f = open_file(path);
    hid_t d = H5Dopen2(f, "rank_region_index/summary_statistics", H5P_DEFAULT);
    cr_assert_geq(d, 0);
    hid_t space = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(space);
    cr_assert_lt(row, (size_t)n);
    sp_summary_stats *all = calloc((size_t)n, sizeof *all);
    cr_assert_geq(H5Dread(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, all), 0);
    *out = all[row];
    free(all);
    H5Sclose(space);
    H5Dclose(d);
    H5Fclose(f);
    H5Tclose(mem);
}

int run_fixture_script(const char *script, const char *arg)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/fixtures/%s' '%s'", TEST_SOURCE_DIR, script,
             arg);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void make_fixtures(char *dir, size_t len)
{
    make_temp_dir(dir, len);
    cr_assert_eq(run_fixture_script("make_h5_fixtures.py", dir), 0, "fixture script failed");
}
