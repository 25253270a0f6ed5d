/* h5_test_util.h - helpers shared by the HDF5 unit tests: temporary
 * directories, small profiles built in memory, raw HDF5 inspection. */
#ifndef SCOPEPROF_H5_TEST_UTIL_H
#define SCOPEPROF_H5_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "scopeprof/profile.h"

void make_temp_dir(char *buf, size_t len);
void remove_tree(const char *dir);

/* One region `name` on `rank` with n events. */
sp_profile *simple_profile(const char *name, uint32_t rank, const int64_t *starts,
                           const int64_t *ends, size_t n);
/* Appends a row (and its events) for region `name` on `rank`. */
void add_row(sp_profile *p, const char *name, uint32_t rank, const int64_t *starts,
             const int64_t *ends, size_t n);
/* The profile tests/fixtures/h5py_verify_written.py expects: two regions,
 * ranks 0 and 1, every optional column, thread and task tables, metadata of
 * every type. */
sp_profile *full_profile(void);

/* Raw HDF5 inspection (assert on failure). */
int dataset_exists(const char *path, const char *name);
int dataset_is_chunked(const char *path, const char *name);
/* Number of filters; sets *shuffle / *deflate when those are present. */
int dataset_filters(const char *path, const char *name, int *shuffle, int *deflate);
void read_i64_column(const char *path, const char *name, int64_t *out, size_t n);
void read_stats_row(const char *path, size_t row, sp_summary_stats *out);

/* Runs /usr/bin/python3 with a script from tests/fixtures; exit status. */
int run_fixture_script(const char *script, const char *arg);
/* Hand-built fixture files (make_h5_fixtures.py) in a new temp dir. */
void make_fixtures(char *dir, size_t len);

#endif
