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
    sp_h5_chunk_seen *seen;   /* checks: chunks that read (created at the first) */
    int64_t *check_window;
    unsigned char *raw;       /* a stored chunk */
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
    sp_h5_chunk_seen_free(r->seen);
    free(r->check_window);
    free(r->raw);
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

/* The command's watchdog times every read (read_watchdog.c). */
static void watch_begin(const sp_h5_event_reader *r)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    __atomic_store_n(&sp_h5_current_bytes, r->bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&sp_h5_current_since_ns, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&sp_h5_current_path, r->path, __ATOMIC_RELEASE);
}

static void watch_end(void)
{
    __atomic_store_n(&sp_h5_current_path, NULL, __ATOMIC_RELEASE);
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
    watch_begin(r);
    herr_t rc = H5Dread(dset, H5T_NATIVE_INT64, mem, space, H5P_DEFAULT, out);
    watch_end();
    H5Sclose(mem);
    return rc < 0 ? -1 : 0;
}

#define CHECK_WINDOW 65536

/* Values [lo, hi) read into a scratch window, dropped. */
static int read_through(sp_h5_event_reader *r, hid_t dset, hid_t space, uint64_t lo,
                        uint64_t hi)
{
    if (!r->check_window && !(r->check_window = malloc(CHECK_WINDOW * sizeof(int64_t))))
        return -1;
    for (uint64_t at = lo; at < hi; at += CHECK_WINDOW) {
        size_t n = hi - at < CHECK_WINDOW ? (size_t)(hi - at) : CHECK_WINDOW;
        if (read_window(r, dset, space, at, n, r->check_window) != 0)
            return -1;
    }
    return 0;
}

/* A compressed chunk decodes whole whichever of its values are read, so
 * one read of it (or of a chunk with the same stored bytes in a column of
 * the same pipeline and type) vouches for all of them. */
static int check_values(sp_h5_event_reader *r, hid_t dset, hid_t space, uint64_t lo,
                        uint64_t hi)
{
    if (dset < 0 || space < 0)
        return -1;
    hsize_t extent[1] = {0}, chunk[1] = {0};
    hid_t dcpl = H5Dget_create_plist(dset);
    int filtered = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
                   H5Pget_nfilters(dcpl) > 0 && H5Pget_chunk(dcpl, 1, chunk) == 1 &&
                   chunk[0] > 0 && H5Sget_simple_extent_ndims(space) == 1 &&
                   H5Sget_simple_extent_dims(space, extent, NULL) == 1;
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (!filtered)
        return read_through(r, dset, space, lo, hi);
    if (hi > extent[0])
        return -1;
    if (!r->seen)
        r->seen = sp_h5_chunk_seen_new();
    size_t max = sp_h5_chunk_seen_max();
    if (!r->raw)
        r->raw = malloc(max);
    long group = r->seen && r->raw ? sp_h5_chunk_seen_group(r->seen, dset) : -1;
    for (uint64_t first = lo - lo % chunk[0]; first < hi; first += chunk[0]) {
        uint64_t end = first + chunk[0] < extent[0] ? first + chunk[0] : extent[0];
        hsize_t offset[1] = {first}, stored = 0;
        uint32_t mask = 0;
        int known = 0;
        if (group >= 0 && H5Dget_chunk_storage_size(dset, offset, &stored) >= 0 &&
            stored > 0 && stored <= max) {
            watch_begin(r);
            known = H5Dread_chunk(dset, H5P_DEFAULT, offset, &mask, r->raw) >= 0;
            watch_end();
        }
        if (known && sp_h5_chunk_seen_has(r->seen, group, mask, r->raw, (size_t)stored))
            continue;
        if (read_through(r, dset, space, known ? first : (lo > first ? lo : first),
                         known || hi > end ? end : hi) != 0)
            return -1;
        if (known)
            sp_h5_chunk_seen_add(r->seen, group, mask, r->raw, (size_t)stored);
    }
    return 0;
}

int sp_h5_event_reader_check(sp_h5_event_reader *r, int col, uint64_t lo, uint64_t hi)
{
    if (lo >= hi)
        return 0;
    if (col >= SP_H5_COL_N && col < SP_H5_COL_ALL && r->lazy[col]) {
        /* opened as a read would open it */
        int64_t one;
        if (sp_h5_event_reader_read(r, col, lo, 1, &one) != 0)
            return -1;
    }
    if (col < 0 || col >= SP_H5_COL_ALL)
        return -1;
    return check_values(r, r->dset[col], r->space[col], lo, hi);
}

int sp_h5_event_reader_check_extra(sp_h5_event_reader *r, int extra, uint64_t lo, uint64_t hi)
{
    if (lo >= hi)
        return 0;
    if (extra < 0 || extra >= SP_EXTRA_N)
        return -1;
    return check_values(r, r->xdset[extra], r->xspace[extra], lo, hi);
}
