/* test_h5_read.c - the reader on hand-built files (spec §1.1 compatibility
 * fixtures, built with h5py like the Python package lays them out), every
 * failure path of spec §11.5, and h5py reading a file we wrote. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5_test_util.h"
#include "scopeprof/h5.h"

static char fixtures[64];

static void build_fixtures(void)
{
    make_fixtures(fixtures, sizeof fixtures);
}

static void drop_fixtures(void)
{
    remove_tree(fixtures);
}

static const char *fixture(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", fixtures, name);
    return path;
}

static void assert_golden(const char *name, int schema)
{
    char err[512];
    sp_profile *p = sp_h5_read(fixture(name), err, sizeof err);
    cr_assert_not_null(p, "%s: %s", name, err);
    cr_assert_eq(p->schema_version, schema);
    cr_assert_eq(p->num_ranks, 1);
    cr_assert_eq(p->num_names, 1);
    cr_assert_str_eq(p->names[0], "solve");
    cr_assert_eq(p->num_rows, 1);
    const sp_row *r = &p->rows[0];
    cr_assert_eq(r->rank, 0);
    cr_assert_eq(r->count, 3);
    cr_assert_eq(r->source_line, 7);
    cr_assert_str_eq(r->tags, "[\"golden\"]");
    cr_assert_str_eq(r->source_file, "solver.py");
    int64_t starts[] = {10, 20, 40}, ends[] = {15, 33, 55};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(p->start[r->offset + i], starts[i], "%s start %d", name, i);
        cr_assert_eq(p->end[r->offset + i], ends[i], "%s end %d", name, i);
    }
    cr_assert_eq(r->stats.total, 33);
    cr_assert_eq(r->stats.start_minimum, 10);
    cr_assert_eq(r->stats.end_maximum, 55);
    sp_profile_free(p);
}

TestSuite(h5_fixtures, .init = build_fixtures, .fini = drop_fixtures);

Test(h5_fixtures, schema1_has_no_attribute_and_reads)
{
    cr_assert_not(dataset_exists(fixture("schema1.h5"), "events"));
    assert_golden("schema1.h5", 1);
}

Test(h5_fixtures, schema2_absolute_times) { assert_golden("schema2.h5", 2); }
Test(h5_fixtures, schema3_deltas) { assert_golden("schema3.h5", 3); }
Test(h5_fixtures, fixed_width_strings) { assert_golden("fixed_strings.h5", 3); }

Test(h5_fixtures, missing_exclusive_totals_reads_as_not_computed)
{
    char err[512];
    sp_profile *p = sp_h5_read(fixture("no_exclusive.h5"), err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    cr_assert_eq(p->rows[0].exclusive_total, -1);
    sp_profile_free(p);
}

static void assert_fails(const char *path, const char *needle1, const char *needle2)
{
    char err[512] = "";
    sp_profile *p = sp_h5_read(path, err, sizeof err);
    cr_assert_null(p, "%s should not read", path);
    cr_assert(strncmp(err, path, strlen(path)) == 0, "message names the file: %s", err);
    cr_assert_not_null(strstr(err, needle1), "'%s' not in: %s", needle1, err);
    if (needle2)
        cr_assert_not_null(strstr(err, needle2), "'%s' not in: %s", needle2, err);
    cr_assert_null(strchr(err, '\n'));
}

Test(h5_fixtures, schema_attribute_rules)
{
    assert_fails(fixture("schema_0.h5"), "must be positive", NULL);
    assert_fails(fixture("schema_-1.h5"), "must be positive", NULL);
    assert_fails(fixture("schema_str.h5"), "must be an integer", NULL);
    assert_fails(fixture("schema_float.h5"), "must be an integer", NULL);
    assert_fails(fixture("schema_bool.h5"), "must be an integer", NULL);
    assert_fails(fixture("schema_4.h5"), "version 4", "Upgrade scope-profiler to read this file");
}

Test(h5_fixtures, damaged_index)
{
    assert_fails(fixture("row_past_end.h5"), "claims 5 recorded events but its event columns hold 3",
                 "The file is truncated or damaged.");
    assert_fails(fixture("overlapping_rows.h5"), "overlapping region rows", NULL);
    assert_fails(fixture("no_events.h5"), "no events group", NULL);
}

/* ---- files that are not profiles ------------------------------------------- */

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

Test(h5_failures, missing_empty_foreign_and_truncated_files)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);

    snprintf(path, sizeof path, "%s/missing.h5", dir);
    assert_fails(path, "no such file", NULL);

    snprintf(path, sizeof path, "%s/empty.h5", dir);
    write_bytes(path, "", 0);
    assert_fails(path, "not a readable HDF5", "interrupted while writing");

    snprintf(path, sizeof path, "%s/text.h5", dir);
    const char text[] = "this is not HDF5 at all\n";
    write_bytes(path, text, sizeof text);
    assert_fails(path, "not a readable HDF5", "interrupted while writing");

    /* A real profile cut short, as by a crash during a non-atomic copy. */
    snprintf(path, sizeof path, "%s/cut.h5", dir);
    sp_profile *p = full_profile();
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    cr_assert_eq(truncate(path, size / 2), 0);
    assert_fails(path, "not a readable HDF5", "interrupted while writing");
    sp_profile_free(p);
    remove_tree(dir);
}

Test(h5_failures, directory_is_not_a_profile)
{
    char dir[64];
    make_temp_dir(dir, sizeof dir);
    assert_fails(dir, "directory", NULL);
    remove_tree(dir);
}

/* ---- interoperability --------------------------------------------------------- */

Test(h5_interop, h5py_reads_our_layout)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ours.h5", dir);
    sp_profile *p = full_profile();
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_fixture_script("h5py_verify_written.py", path), 0,
                 "h5py found a layout difference (see stderr)");
    sp_profile_free(p);
    remove_tree(dir);
}

Test(h5_interop, empty_profile_is_a_readable_file)
{
    char dir[64], path[128], err[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/empty.h5", dir);
    sp_profile *p = sp_profile_new();
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    sp_profile *back = sp_h5_read(path, err, sizeof err);
    cr_assert_not_null(back, "%s", err);
    cr_assert_eq(back->num_rows, 0);
    cr_assert_eq(back->num_names, 0);
    cr_assert_eq(back->num_ranks, 0);
    sp_profile_free(back);
    sp_profile_free(p);
    remove_tree(dir);
}
