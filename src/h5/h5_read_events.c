/* h5_read_events.c - a file's event columns read back in windows
 * (hyperslabs), for the streaming analysis (src/stream/): the caller keeps
 * a few windows, never a whole column. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "h5/h5_internal.h"

struct sp_h5_event_reader {
    hid_t file;
    hid_t dset[SP_H5_COL_ALL];
    hid_t space[SP_H5_COL_ALL];
    int lazy[SP_H5_COL_ALL];      /* await_ns, fork_parent_ids: open at the first read */
    hid_t xdset[SP_EXTRA_N];  /* MPI columns */
    hid_t xspace[SP_EXTRA_N];
    const char *path;
    int64_t bytes;
};

void sp_h5_event_reader_close(sp_h5_event_reader *r)
{
    if (!r)
        return;
    for (int c = 0; c < SP_H5_COL_ALL; c++) {
        if (r->space[c] >= 0)
            H5Sclose(r->space[c]);
        if (r->dset[c] >= 0)
            H5Dclose(r->dset[c]);
    }
    for (int c = 0; c < SP_EXTRA_N; c++) {
        if (r->xspace[c] >= 0)
            H5Sclose(r->xspace[c]);
        if (r->xdset[c] >= 0)
            H5Dclose(r->xdset[c]);
    }
    if (r->file >= 0)
        H5Fclose(r->file);
    free(r);
}

sp_h5_event_reader *sp_h5_event_reader_open(const char *path, const sp_h5_event_shape *shape,
                                            size_t cache_bytes, char *err, size_t errlen)
{
    static const char *const names[2][SP_H5_COL_N] = {
        {"events/start_times", "events/end_times", "events/gpu_durations", "events/call_ids",
         "events/parent_ids", "events/thread_ids", "events/task_ids"},
        {"events/start_deltas", "events/durations", "events/gpu_durations", "events/call_ids",
         "events/parent_ids", "events/thread_ids", "events/task_ids"}};
    sp_h5_event_reader *r = calloc(1, sizeof *r);
    if (!r) {
        sp_h5_errf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    r->path = path;
    r->file = -1;
    for (int c = 0; c < SP_H5_COL_ALL; c++)
        r->dset[c] = r->space[c] = -1;
    for (int c = 0; c < SP_EXTRA_N; c++)
        r->xdset[c] = r->xspace[c] = -1;
    r->lazy[SP_H5_COL_AWAIT] = shape->has_await;
    r->lazy[SP_H5_COL_FORK] = shape->has_fork;
    sp_h5_silence();
    struct stat st;
    r->bytes = stat(path, &st) == 0 ? (int64_t)st.st_size : 0;
    r->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    /* Every window reads whole chunks: a cache holding one chunk of every
     * open window decompresses each chunk about once. */
    if (dapl >= 0 && cache_bytes)
        H5Pset_chunk_cache(dapl, 12421, cache_bytes, 1.0);
    int ok = r->file >= 0 && dapl >= 0;
    for (int c = 0; ok && c < SP_H5_COL_N; c++) {
        if (!shape->has[c])
            continue;
        r->dset[c] = H5Dopen2(r->file, names[shape->deltas != 0][c], dapl);
        r->space[c] = r->dset[c] >= 0 ? H5Dget_space(r->dset[c]) : -1;
        ok = r->space[c] >= 0;
    }
    for (int c = 0; ok && c < SP_EXTRA_N; c++) {
        if (!shape->has_extra[c])
            continue;
        char name[64];
        snprintf(name, sizeof name, "events/%s", sp_event_extra_names[c]);
        r->xdset[c] = H5Dopen2(r->file, name, dapl);
        r->xspace[c] = r->xdset[c] >= 0 ? H5Dget_space(r->xdset[c]) : -1;
        ok = r->xspace[c] >= 0;
    }
    if (dapl >= 0)
        H5Pclose(dapl);
    if (!ok) {
        sp_h5_errf(err, errlen, "%s: %s", path, SP_UNREADABLE_MSG);
        sp_h5_event_reader_close(r);
        return NULL;
    }
    return r;
}

static int read_window(sp_h5_event_reader *r, hid_t dset, hid_t space, uint64_t offset,
                       size_t count, int64_t *out);

int sp_h5_event_reader_read(sp_h5_event_reader *r, int col, uint64_t offset, size_t count,
                            int64_t *out)
{
    if (col >= SP_H5_COL_N && col < SP_H5_COL_ALL && r->lazy[col]) {
        r->lazy[col] = 0;
        r->dset[col] = H5Dopen2(r->file, col == SP_H5_COL_AWAIT ? "events/await_ns"
                                                                : "events/fork_parent_ids",
                                H5P_DEFAULT);
        r->space[col] = r->dset[col] >= 0 ? H5Dget_space(r->dset[col]) : -1;
    }
    if (col < 0 || col >= SP_H5_COL_ALL || r->dset[col] < 0 || r->space[col] < 0)
        return -1;
    return read_window(r, r->dset[col], r->space[col], offset, count, out);
}

int sp_h5_event_reader_read_extra(sp_h5_event_reader *r, int extra, uint64_t offset,
                                  size_t count, int64_t *out)
{
    if (extra < 0 || extra >= SP_EXTRA_N || r->xdset[extra] < 0)
        return -1;
    return read_window(r, r->xdset[extra], r->xspace[extra], offset, count, out);
}

static int read_window(sp_h5_event_reader *r, hid_t dset, hid_t space, uint64_t offset,
                       size_t count, int64_t *out)
{
    if (count == 0)
        return 0;
    hsize_t start[1] = {offset}, n[1] = {count};
    if (H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, n, NULL) < 0)
        return -1;
    hid_t mem = H5Screate_simple(1, n, NULL);
    if (mem < 0)
        return -1;
    /* The command's watchdog times every read (read_watchdog.c). */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    __atomic_store_n(&sp_h5_current_bytes, r->bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&sp_h5_current_since_ns, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&sp_h5_current_path, r->path, __ATOMIC_RELEASE);
    herr_t rc = H5Dread(dset, H5T_NATIVE_INT64, mem, space, H5P_DEFAULT, out);
    __atomic_store_n(&sp_h5_current_path, NULL, __ATOMIC_RELEASE);
    H5Sclose(mem);
    return rc < 0 ? -1 : 0;
}
