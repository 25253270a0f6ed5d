/* h5_io.c - small HDF5 helpers: error reporting, 1-D columns and
 * attributes, so the schema code reads as the layout it implements. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "h5/h5_internal.h"

#define SP_GZIP_LEVEL 4

void sp_h5_silence(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void sp_h5_errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

struct detail_walk {
    char *buf;
    size_t len;
};

static herr_t keep_innermost(unsigned n, const H5E_error2_t *e, void *data)
{
    struct detail_walk *walk = data;
    /* H5E_WALK_UPWARD starts at the innermost frame: keep the first. */
    if (n == 0 && e->desc)
        snprintf(walk->buf, walk->len, "%s", e->desc);
    return 0;
}

/* The innermost cause of the last failure a helper saw: any later HDF5
 * call (closing what was open) clears HDF5's own error stack. */
static _Thread_local char noted_failure[256];

static void note_failure(void)
{
    struct detail_walk walk = {noted_failure, sizeof noted_failure};
    noted_failure[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &walk);
}

const char *sp_h5_error_detail(char *buf, size_t len)
{
    buf[0] = '\0';
    struct detail_walk walk = {buf, len};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &walk);
    if (!buf[0])
        snprintf(buf, len, "%s", noted_failure[0] ? noted_failure : "HDF5 call failed");
    noted_failure[0] = '\0';
    /* A failed system call reads "... errno = 28, error message = 'No space
     * left on device', ...": the system's words are what the user needs. */
    char *sys = strstr(buf, "error message = '");
    if (sys) {
        sys += strlen("error message = '");
        size_t n = strcspn(sys, "'");
        memmove(buf, sys, n);
        buf[n] = '\0';
    }
    for (char *c = buf; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    return buf;
}

const char *sp_h5_write_hint(const char *why)
{
    /* Only a failure the system reported as a lack of space earns the
     * advice to free some: a layout HDF5 refuses is not cured by it. */
    static const int space_errors[] = {ENOSPC, EDQUOT, EFBIG};
    for (size_t i = 0; i < sizeof space_errors / sizeof *space_errors; i++)
        if (why && strstr(why, strerror(space_errors[i])))
            return " (check free disk space and quotas)";
    return "";
}

void sp_problem(sp_problems *p, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (p->count == 0)
        sp_h5_errf(p->err, p->errlen, "%s: %s", p->path, msg);
    p->count++;
    if (p->report)
        p->report(p->ctx, msg);
}

hid_t sp_h5_string_type(void)
{
    hid_t type = H5Tcopy(H5T_C_S1);
    if (type < 0)
        return -1;
    if (H5Tset_size(type, H5T_VARIABLE) < 0 || H5Tset_cset(type, H5T_CSET_UTF8) < 0) {
        H5Tclose(type);
        return -1;
    }
    return type;
}

struct stats_field {
    const char *name;
    size_t offset;
    int is_float, is_unsigned;
};

static const struct stats_field stats_fields[] = {
    {"total", offsetof(sp_summary_stats, total), 0, 0},
    {"minimum", offsetof(sp_summary_stats, minimum), 0, 0},
    {"maximum", offsetof(sp_summary_stats, maximum), 0, 0},
    {"first", offsetof(sp_summary_stats, first), 0, 0},
    {"last", offsetof(sp_summary_stats, last), 0, 0},
    {"start_minimum", offsetof(sp_summary_stats, start_minimum), 0, 0},
    {"end_maximum", offsetof(sp_summary_stats, end_maximum), 0, 0},
    {"gpu_count", offsetof(sp_summary_stats, gpu_count), 0, 1},
    {"gpu_total", offsetof(sp_summary_stats, gpu_total), 0, 0},
    {"mean", offsetof(sp_summary_stats, mean), 1, 0},
    {"m2", offsetof(sp_summary_stats, m2), 1, 0},
};
#define NUM_STATS_FIELDS (sizeof stats_fields / sizeof stats_fields[0])

static hid_t stats_type(int in_file)
{
    size_t size = in_file ? 8 * NUM_STATS_FIELDS : sizeof(sp_summary_stats);
    hid_t type = H5Tcreate(H5T_COMPOUND, size);
    if (type < 0)
        return -1;
    for (size_t i = 0; i < NUM_STATS_FIELDS; i++) {
        const struct stats_field *f = &stats_fields[i];
        hid_t member = f->is_float ? (in_file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE)
                       : f->is_unsigned ? (in_file ? H5T_STD_U64LE : H5T_NATIVE_UINT64)
                                        : (in_file ? H5T_STD_I64LE : H5T_NATIVE_INT64);
        if (H5Tinsert(type, f->name, in_file ? 8 * i : f->offset, member) < 0) {
            H5Tclose(type);
            return -1;
        }
    }
    return type;
}

hid_t sp_h5_stats_file_type(void) { return stats_type(1); }
hid_t sp_h5_stats_mem_type(void) { return stats_type(0); }

hid_t sp_h5_create_group(hid_t loc, const char *name)
{
    /* Tracking link creation order makes HDF5 store the group compactly
     * (links in the object header) even with the 1.0 superblock, and lets
     * h5py list the columns in the order we wrote them. */
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    if (gcpl < 0)
        return -1;
    hid_t g = -1;
    if (H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED) >= 0)
        g = H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    H5Pclose(gcpl);
    if (g < 0)
        note_failure();
    return g;
}

int sp_h5_exists(hid_t loc, const char *name)
{
    /* Check every prefix: H5Lexists fails on a missing intermediate group. */
    char path[512];
    if (snprintf(path, sizeof path, "%s", name) >= (int)sizeof path)
        return 0;
    for (char *slash = strchr(path, '/');; slash = strchr(slash + 1, '/')) {
        if (slash)
            *slash = '\0';
        if (H5Lexists(loc, path, H5P_DEFAULT) <= 0)
            return 0;
        if (!slash)
            return 1;
        *slash = '/';
    }
}

hid_t sp_h5_create_column(hid_t loc, const char *name, hid_t file_type, hsize_t n,
                          int compress)
{
    hsize_t dims[1] = {n};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t dset = -1;
    if (space < 0 || dcpl < 0)
        goto out;
    if (compress && n > 0) {
        hsize_t chunk[1] = {n < SP_H5_EVENT_CHUNK ? n : SP_H5_EVENT_CHUNK};
        if (H5Pset_chunk(dcpl, 1, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 ||
            H5Pset_deflate(dcpl, SP_GZIP_LEVEL) < 0)
            goto out;
    } else if (H5Pset_layout(dcpl, H5D_CONTIGUOUS) < 0) {
        goto out;
    }
    /* Every element gets written: no fill pass over the file (HDF5 needs
     * fill values for variable-length types). */
    if (H5Tdetect_class(file_type, H5T_VLEN) <= 0 && H5Tis_variable_str(file_type) <= 0 &&
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0)
        goto out;
    dset = H5Dcreate2(loc, name, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
out:
    if (dset < 0)
        note_failure();
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    return dset;
}

int sp_h5_put(hid_t dset, hid_t mem_type, hsize_t offset, hsize_t count, const void *data)
{
    if (count == 0)
        return 0;
    hsize_t start[1] = {offset}, len[1] = {count};
    hid_t fspace = H5Dget_space(dset);
    hid_t mspace = H5Screate_simple(1, len, NULL);
    int rc = -1;
    if (fspace >= 0 && mspace >= 0 &&
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, len, NULL) >= 0 &&
        H5Dwrite(dset, mem_type, mspace, fspace, H5P_DEFAULT, data) >= 0)
        rc = 0;
    else
        note_failure();
    if (mspace >= 0)
        H5Sclose(mspace);
    if (fspace >= 0)
        H5Sclose(fspace);
    return rc;
}

int sp_h5_column_length(hid_t loc, const char *name, hsize_t *n)
{
    if (!sp_h5_exists(loc, name))
        return 0;
    H5O_info_t info;
    if (H5Oget_info_by_name(loc, name, &info, H5P_DEFAULT) < 0 || info.type != H5O_TYPE_DATASET)
        return -1;
    hid_t dset = H5Dopen2(loc, name, H5P_DEFAULT);
    if (dset < 0)
        return -1;
    hid_t space = H5Dget_space(dset);
    int rc = -1;
    hsize_t dims[1];
    if (space >= 0 && H5Sget_simple_extent_ndims(space) == 1 &&
        H5Sget_simple_extent_dims(space, dims, NULL) == 1) {
        *n = dims[0];
        rc = 1;
    }
    if (space >= 0)
        H5Sclose(space);
    H5Dclose(dset);
    return rc;
}

/* A hostile file can declare a huge extent over a few bytes of storage:
 * refuse to allocate more than the storage could decompress to. */
static int plausible_size(hid_t dset, hsize_t n, size_t elem)
{
    if (n > ((hsize_t)1 << 40) / (elem ? elem : 1))
        return 0;
    hsize_t storage = H5Dget_storage_size(dset);
    hsize_t limit = storage * 1100 + ((hsize_t)1 << 20);
    return n * elem <= limit;
}

static hid_t open_column(hid_t loc, const char *name, hsize_t n)
{
    hsize_t have;
    if (sp_h5_column_length(loc, name, &have) != 1 || have != n)
        return -1;
    return H5Dopen2(loc, name, H5P_DEFAULT);
}

int sp_h5_read_column(hid_t loc, const char *name, hid_t mem_type, hsize_t n, void **out)
{
    *out = NULL;
    hid_t dset = open_column(loc, name, n);
    if (dset < 0)
        return -1;
    size_t elem = H5Tget_size(mem_type);
    int rc = -1;
    if (elem > 0 && plausible_size(dset, n, elem)) {
        void *buf = malloc(n * elem + 1);
        if (buf && (n == 0 || H5Dread(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0)) {
            *out = buf;
            rc = 0;
        } else {
            free(buf);
        }
    }
    H5Dclose(dset);
    return rc;
}

void sp_h5_free_strings(char **strings, size_t n)
{
    if (!strings)
        return;
    for (size_t i = 0; i < n; i++)
        free(strings[i]);
    free(strings);
}

/* HDF5 clears a 1 MiB type-conversion buffer for every dataset read that
 * converts (variable-length strings always do), which dominated reading
 * many small rank files: a buffer the size of the n values is enough. */
static herr_t read_values(hid_t obj, hid_t mtype, int is_attr, size_t n, void *buf, hid_t dxpl)
{
    if (is_attr)
        return H5Aread(obj, mtype, buf);
    size_t elem = H5Tget_size(mtype);
    size_t want = n * (elem > 16 ? elem : 16) + 256;
    if (dxpl != H5P_DEFAULT && want < ((size_t)1 << 20))
        H5Pset_buffer(dxpl, want, NULL, NULL); /* on failure the default size */
    return H5Dread(obj, mtype, H5S_ALL, H5S_ALL, dxpl, buf);
}

int sp_h5_bound_attribute_memory;

/* Sanitizers reserve terabytes of address space up front and map more
 * as they go: no address-space limit under them. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SP_NO_AS_LIMIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SP_NO_AS_LIMIT 1
#endif
#endif

/* A corrupt global heap can make HDF5 allocate (and clear) gigabytes for
 * one variable-length string attribute or dataset; HDF5 1.10 has no way to
 * ask the size first for attributes.  With sp_h5_bound_attribute_memory set
 * (the scopeprof command), such a read runs with the address space limited to
 * what the process has plus 1 GiB: HDF5's allocation fails and the read
 * reports an error instead of taking the machine's memory.  Returns 1 when
 * *saved must be restored. */
static int bound_address_space(struct rlimit *saved)
{
#ifdef SP_NO_AS_LIMIT
    (void)saved;
    return 0;
#else
    if (!sp_h5_bound_attribute_memory || getrlimit(RLIMIT_AS, saved) != 0)
        return 0;
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    int ok = f && fscanf(f, "%lu", &pages) == 1;
    if (f)
        fclose(f);
    if (!ok)
        return 0;
    rlim_t limit = (rlim_t)pages * 4096 + ((rlim_t)1 << 30);
    if (saved->rlim_cur != RLIM_INFINITY && saved->rlim_cur <= limit)
        return 0;
    struct rlimit bounded = {limit, saved->rlim_max};
    return setrlimit(RLIMIT_AS, &bounded) == 0;
#endif
}

/* A corrupt heap can claim gigabytes of variable-length string data, which
 * HDF5 would try to allocate.  Dataset reads get their strings from this
 * allocator, which refuses to hand out more than 1 GiB in all, so such a
 * read fails instead.  (Asking H5Dvlen_get_buf_size first did the same job,
 * but HDF5 1.10 clears a 1 MiB buffer per element there: a million region
 * names took longer than the read timeout.)  Attributes have no transfer
 * property list: see bound_address_space. */
struct vlen_budget {
    size_t left;
};

static void *budget_alloc(size_t size, void *info)
{
    struct vlen_budget *b = info;
    if (size > b->left)
        return NULL;
    void *mem = malloc(size ? size : 1);
    if (mem)
        b->left -= size;
    return mem;
}

static void budget_free(void *mem, void *info)
{
    (void)info;
    free(mem);
}
/* Copies of n strings read from a dataset or attribute `obj` whose file
 * type is `ftype`; `is_attr` selects the read call. */
static int read_string_values(hid_t obj, hid_t ftype, int is_attr, size_t n, char ***out)
{
    *out = NULL;
    if (H5Tget_class(ftype) != H5T_STRING)
        return -1;
    char **result = calloc(n ? n : 1, sizeof *result);
    if (!result)
        return -1;
    int rc = -1;
    htri_t variable = H5Tis_variable_str(ftype);
    hid_t mtype = H5Tcopy(H5T_C_S1);
    if (variable < 0 || mtype < 0)
        goto out;
    if (variable) {
        char **raw = calloc(n ? n : 1, sizeof *raw);
        if (!raw || H5Tset_size(mtype, H5T_VARIABLE) < 0 ||
            H5Tset_cset(mtype, H5Tget_cset(ftype)) < 0) {
            free(raw);
            goto out;
        }
        struct vlen_budget budget = {(size_t)1 << 30};
        hid_t dxpl = is_attr ? H5P_DEFAULT : H5Pcreate(H5P_DATASET_XFER);
        if (dxpl < 0 || (!is_attr && H5Pset_vlen_mem_manager(dxpl, budget_alloc, &budget,
                                                             budget_free, NULL) < 0)) {
            if (dxpl >= 0)
                H5Pclose(dxpl);
            free(raw);
            goto out;
        }
        struct rlimit saved;
        int bounded = is_attr && n > 0 && bound_address_space(&saved);
        herr_t st = n == 0 ? 0 : read_values(obj, mtype, is_attr, n, raw, dxpl);
        if (bounded)
            setrlimit(RLIMIT_AS, &saved);
        if (st >= 0) {
            rc = 0;
            for (size_t i = 0; i < n; i++)
                if (!(result[i] = strdup(raw[i] ? raw[i] : "")))
                    rc = -1;
        }
        for (size_t i = 0; i < n; i++) {
            if (raw[i] && is_attr)
                H5free_memory(raw[i]);
            else
                free(raw[i]);
        }
        if (!is_attr)
            H5Pclose(dxpl);
        free(raw);
    } else {
        size_t width = H5Tget_size(ftype);
        if (width == 0 || width > (1u << 20) || n > ((size_t)1 << 32) / width)
            goto out;
        char *raw = malloc(n * width + 1);
        if (!raw || H5Tset_size(mtype, width) < 0 ||
            H5Tset_strpad(mtype, H5T_STR_NULLPAD) < 0) {
            free(raw);
            goto out;
        }
        herr_t st = n == 0 ? 0 : read_values(obj, mtype, is_attr, n, raw, H5P_DEFAULT);
        if (st >= 0) {
            rc = 0;
            for (size_t i = 0; i < n; i++)
                if (!(result[i] = strndup(raw + i * width, width)))
                    rc = -1;
        }
        free(raw);
    }
out:
    if (mtype >= 0)
        H5Tclose(mtype);
    if (rc < 0)
        sp_h5_free_strings(result, n);
    else
        *out = result;
    return rc;
}

int sp_h5_read_strings(hid_t loc, const char *name, hsize_t n, char ***out)
{
    *out = NULL;
    hid_t dset = open_column(loc, name, n);
    if (dset < 0)
        return -1;
    hid_t ftype = H5Dget_type(dset);
    int rc = -1;
    if (ftype >= 0 && plausible_size(dset, n, 8))
        rc = read_string_values(dset, ftype, 0, (size_t)n, out);
    if (ftype >= 0)
        H5Tclose(ftype);
    H5Dclose(dset);
    return rc;
}

/* ---- attributes ---------------------------------------------------------- */

static int put_attr(hid_t obj, const char *name, hid_t ftype, hid_t mtype, hid_t space,
                    const void *data)
{
    if (space < 0)
        return -1;
    if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0)
        return -1;
    hid_t attr = H5Acreate2(obj, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    if (attr < 0) {
        note_failure();
        return -1;
    }
    int rc = 0;
    if (H5Awrite(attr, mtype, data) < 0) {
        note_failure();
        rc = -1;
    }
    if (H5Aclose(attr) < 0)
        rc = -1;
    return rc;
}

int sp_h5_attr_put_int(hid_t obj, const char *name, int64_t value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    int rc = put_attr(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, space, &value);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

int sp_h5_attr_put_float(hid_t obj, const char *name, double value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    int rc = put_attr(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, space, &value);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

int sp_h5_attr_put_string(hid_t obj, const char *name, const char *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t type = sp_h5_string_type();
    const char *data = value ? value : "";
    int rc = type < 0 ? -1 : put_attr(obj, name, type, type, space, &data);
    if (type >= 0)
        H5Tclose(type);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

int sp_h5_attr_put_strings(hid_t obj, const char *name, const char *const *values, size_t n)
{
    hsize_t dims[1] = {n};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t type = sp_h5_string_type();
    const char *empty[1] = {""};
    int rc = type < 0 ? -1 : put_attr(obj, name, type, type, space, n ? (const void *)values : empty);
    if (type >= 0)
        H5Tclose(type);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

int sp_h5_put_string_column(hid_t loc, const char *name, const char *const *values, size_t n)
{
    hid_t type = sp_h5_string_type();
    hid_t dset = type < 0 ? -1 : sp_h5_create_column(loc, name, type, n, 0);
    int rc = dset < 0 || sp_h5_put(dset, type, 0, n, values) < 0 ? -1 : 0;
    if (dset >= 0 && H5Dclose(dset) < 0)
        rc = -1;
    if (type >= 0)
        H5Tclose(type);
    return rc;
}

void sp_h5_meta_clear(sp_meta *meta)
{
    free(meta->key);
    free(meta->s);
    sp_h5_free_strings(meta->list, meta->list_len);
    memset(meta, 0, sizeof *meta);
}

int sp_h5_attr_get_meta(hid_t attr, sp_meta *out)
{
    memset(out, 0, sizeof *out);
    hid_t type = H5Aget_type(attr);
    hid_t space = H5Aget_space(attr);
    int rc = -1;
    if (type < 0 || space < 0)
        goto out;
    H5S_class_t shape = H5Sget_simple_extent_type(space);
    hssize_t n = H5Sget_simple_extent_npoints(space);
    int ndims = H5Sget_simple_extent_ndims(space);
    H5T_class_t cls = H5Tget_class(type);
    int scalar_like = shape == H5S_SCALAR || (ndims == 1 && n == 1);
    rc = 0;
    if ((cls == H5T_INTEGER || cls == H5T_ENUM) && scalar_like) {
        /* numpy bools are enums of int8: keep them as 0/1 */
        hid_t mtype = cls == H5T_ENUM ? H5T_NATIVE_INT8 : H5T_NATIVE_INT64;
        int64_t value = 0;
        int8_t small = 0;
        if (cls == H5T_ENUM) {
            hid_t base = H5Tget_super(type);
            int ok = base >= 0 && H5Tget_size(base) == 1;
            if (base >= 0)
                H5Tclose(base);
            if (!ok)
                goto out;
        }
        if (H5Aread(attr, mtype, cls == H5T_ENUM ? (void *)&small : (void *)&value) < 0) {
            rc = -1;
            goto out;
        }
        out->type = SP_META_INT;
        out->i = cls == H5T_ENUM ? small : value;
        rc = 1;
    } else if (cls == H5T_FLOAT && scalar_like) {
        if (H5Aread(attr, H5T_NATIVE_DOUBLE, &out->f) < 0) {
            rc = -1;
            goto out;
        }
        out->type = SP_META_FLOAT;
        rc = 1;
    } else if (cls == H5T_STRING && (shape == H5S_SCALAR || ndims == 1) && n >= 0 &&
               n <= (1 << 20)) {
        char **values;
        if (read_string_values(attr, type, 1, (size_t)n, &values) < 0) {
            rc = -1;
            goto out;
        }
        if (shape == H5S_SCALAR) {
            out->type = SP_META_STRING;
            out->s = values[0];
            free(values);
        } else {
            out->type = SP_META_STRINGS;
            out->list = values;
            out->list_len = (size_t)n;
        }
        rc = 1;
    }
out:
    if (type >= 0)
        H5Tclose(type);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

int sp_h5_table_column(hid_t file, sp_problems *p, const char *group, const char *name,
                       hid_t mem_type, hsize_t n, const char *ref, int required, void **out)
{
    *out = NULL;
    char path[256];
    snprintf(path, sizeof path, "%s/%s", group, name);
    hsize_t len = 0;
    int st = sp_h5_column_length(file, path, &len);
    if (st == 0) {
        if (!required)
            return 0;
        sp_problem(p, "%s is missing", path);
        return -1;
    }
    if (st < 0) {
        sp_problem(p, "%s is not a one-dimensional dataset", path);
        return -1;
    }
    if (len != n) {
        sp_problem(p, "%s holds %llu values but %s/%s holds %llu", path,
                   (unsigned long long)len, group, ref, (unsigned long long)n);
        return -1;
    }
    int rc = mem_type < 0 ? sp_h5_read_strings(file, path, n, (char ***)out)
                          : sp_h5_read_column(file, path, mem_type, n, out);
    if (rc < 0) {
        sp_problem(p, "%s cannot be read (wrong type, or damaged)", path);
        return -1;
    }
    return 1;
}
