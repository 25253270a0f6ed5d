/* h5_read_meta.c - the /metadata attributes (§1.8) and the optional
 * thread_table / task_table lane groups (§1.2). */
#include <stdlib.h>
#include <string.h>

#include "h5/h5_internal.h"

/* Far more attributes than any writer produces: a damaged header cannot
 * make us loop for ever. */
#define SP_MAX_META 65536

/* Lists too long for an attribute are datasets /metadata/<key> (see
 * SP_META_ATTR_MAX_STRINGS); files written before that hold attributes
 * only, and both forms read the same.  Members of other kinds are not ours:
 * skipped. */
static int read_metadata_datasets(hid_t file, sp_profile *profile, sp_problems *p)
{
    H5G_info_t info;
    if (H5Gget_info_by_name(file, "metadata", &info, H5P_DEFAULT) < 0) {
        sp_problem(p, "/metadata cannot be read");
        return -1;
    }
    if (info.nlinks == 0)
        return 0;
    if (info.nlinks > SP_MAX_META) {
        sp_problem(p, "/metadata holds %llu members, more than any profile",
                   (unsigned long long)info.nlinks);
        return -1;
    }
    sp_meta *grown = realloc(profile->meta, (profile->num_meta + info.nlinks) * sizeof *grown);
    if (!grown) {
        sp_problem(p, "out of memory");
        return -1;
    }
    profile->meta = grown;
    for (hsize_t i = 0; i < info.nlinks; i++) {
        char name[256], path[300];
        ssize_t len = H5Lget_name_by_idx(file, "metadata", H5_INDEX_NAME, H5_ITER_INC, i, name,
                                         sizeof name, H5P_DEFAULT);
        if (len < 0 || (size_t)len >= sizeof name)
            continue;
        snprintf(path, sizeof path, "metadata/%s", name);
        H5O_info_t oinfo;
        hsize_t n = 0;
        if (H5Oget_info_by_name(file, path, &oinfo, H5P_DEFAULT) < 0 ||
            oinfo.type != H5O_TYPE_DATASET || sp_h5_column_length(file, path, &n) != 1)
            continue;
        hid_t dset = H5Dopen2(file, path, H5P_DEFAULT);
        hid_t type = dset >= 0 ? H5Dget_type(dset) : -1;
        int is_string = type >= 0 && H5Tget_class(type) == H5T_STRING;
        if (type >= 0)
            H5Tclose(type);
        if (dset >= 0)
            H5Dclose(dset);
        if (!is_string)
            continue;
        sp_meta *m = &profile->meta[profile->num_meta];
        memset(m, 0, sizeof *m);
        if (sp_h5_read_strings(file, path, n, &m->list) < 0) {
            sp_problem(p, "/%s cannot be read (wrong type, or damaged)", path);
            return -1;
        }
        m->type = SP_META_STRINGS;
        m->list_len = (size_t)n;
        if (!(m->key = strdup(name))) {
            sp_h5_meta_clear(m);
            sp_problem(p, "out of memory");
            return -1;
        }
        profile->num_meta++;
    }
    return 0;
}

int sp_h5_read_metadata(hid_t file, sp_profile *profile, sp_problems *p)
{
    if (!sp_h5_exists(file, "metadata"))
        return 0;
    H5O_info_t info;
    if (H5Oget_info_by_name(file, "metadata", &info, H5P_DEFAULT) < 0 ||
        info.type != H5O_TYPE_GROUP) {
        sp_problem(p, "/metadata is not a group");
        return -1;
    }
    if (info.num_attrs > SP_MAX_META) {
        sp_problem(p, "/metadata holds %llu attributes, more than any profile",
                   (unsigned long long)info.num_attrs);
        return -1;
    }
    profile->meta = calloc(info.num_attrs ? info.num_attrs : 1, sizeof *profile->meta);
    if (!profile->meta) {
        sp_problem(p, "out of memory");
        return -1;
    }
    for (hsize_t i = 0; i < info.num_attrs; i++) {
        hid_t attr = H5Aopen_by_idx(file, "metadata", H5_INDEX_NAME, H5_ITER_INC, i,
                                    H5P_DEFAULT, H5P_DEFAULT);
        if (attr < 0) {
            sp_problem(p, "/metadata attribute %llu cannot be opened", (unsigned long long)i);
            return -1;
        }
        sp_meta *m = &profile->meta[profile->num_meta];
        int rc = sp_h5_attr_get_meta(attr, m);
        ssize_t len = rc == 1 ? H5Aget_name(attr, 0, NULL) : -1;
        if (rc == 1 && len >= 0 && (m->key = malloc((size_t)len + 1)) &&
            H5Aget_name(attr, (size_t)len + 1, m->key) >= 0) {
            profile->num_meta++;
        } else {
            sp_h5_meta_clear(m);
            if (rc != 0) {
                /* An unsupported type is skipped; an unreadable one is damage. */
                H5Aclose(attr);
                sp_problem(p, "/metadata attribute %llu cannot be read", (unsigned long long)i);
                return -1;
            }
        }
        H5Aclose(attr);
    }
    return read_metadata_datasets(file, profile, p);
}

static int64_t at_i64(const int64_t *column, hsize_t i, int64_t dflt)
{
    return column ? column[i] : dflt;
}

static char *take_string(char **strings, hsize_t i)
{
    if (!strings)
        return strdup("");
    char *s = strings[i];
    strings[i] = NULL;
    return s;
}

static int read_thread_table(hid_t file, sp_profile *profile, sp_problems *p)
{
    const char *g = "thread_table", *ref = "ranks";
    hsize_t n = 0;
    if (sp_h5_column_length(file, "thread_table/ranks", &n) <= 0) {
        sp_problem(p, "thread_table/ranks is missing or not one-dimensional");
        return -1;
    }
    uint32_t *ranks = NULL;
    int64_t *index = NULL, *ident = NULL, *native = NULL, *start = NULL, *end = NULL, *cpu = NULL;
    int8_t *daemon = NULL;
    char **name = NULL, **kind = NULL;
    int64_t *omp = NULL;
    long before = p->count;
    sp_h5_table_column(file, p, g, "ranks", H5T_NATIVE_UINT32, n, ref, 1, (void **)&ranks);
    sp_h5_table_column(file, p, g, "index", H5T_NATIVE_INT64, n, ref, 1, (void **)&index);
    sp_h5_table_column(file, p, g, "ident", H5T_NATIVE_INT64, n, ref, 0, (void **)&ident);
    sp_h5_table_column(file, p, g, "native_id", H5T_NATIVE_INT64, n, ref, 0, (void **)&native);
    sp_h5_table_column(file, p, g, "daemon", H5T_NATIVE_INT8, n, ref, 0, (void **)&daemon);
    sp_h5_table_column(file, p, g, "start_ns", H5T_NATIVE_INT64, n, ref, 0, (void **)&start);
    sp_h5_table_column(file, p, g, "end_ns", H5T_NATIVE_INT64, n, ref, 0, (void **)&end);
    sp_h5_table_column(file, p, g, "cpu_ns", H5T_NATIVE_INT64, n, ref, 0, (void **)&cpu);
    sp_h5_table_column(file, p, g, "name", -1, n, ref, 0, (void **)&name);
    sp_h5_table_column(file, p, g, "kind", -1, n, ref, 0, (void **)&kind);
    sp_h5_table_column(file, p, g, "omp_thread_num", H5T_NATIVE_INT64, n, ref, 0, (void **)&omp);
    int rc = p->count > before ? -1 : 0;
    if (rc == 0) {
        profile->threads = calloc(n ? n : 1, sizeof *profile->threads);
        if (!profile->threads) {
            sp_problem(p, "out of memory");
            rc = -1;
        }
    }
    for (hsize_t i = 0; rc == 0 && i < n; i++) {
        sp_thread_row *t = &profile->threads[i];
        t->rank = ranks[i];
        t->index = index[i];
        t->ident = at_i64(ident, i, -1);
        t->native_id = at_i64(native, i, -1);
        t->daemon = daemon ? daemon[i] : 0;
        t->start_ns = at_i64(start, i, -1);
        t->end_ns = at_i64(end, i, -1);
        t->cpu_ns = at_i64(cpu, i, -1);
        t->name = take_string(name, i);
        t->kind = take_string(kind, i);
        t->omp_thread_num = at_i64(omp, i, -1);
        profile->num_threads++;
        if (!t->name || !t->kind) {
            sp_problem(p, "out of memory");
            rc = -1;
        }
    }
    if (rc == 0)
        profile->has_thread_table = 1;
    free(ranks);
    free(index);
    free(ident);
    free(native);
    free(daemon);
    free(start);
    free(end);
    free(cpu);
    sp_h5_free_strings(name, n);
    sp_h5_free_strings(kind, n);
    free(omp);
    return rc;
}

static int read_task_table(hid_t file, sp_profile *profile, sp_problems *p)
{
    const char *g = "task_table", *ref = "ranks";
    hsize_t n = 0;
    if (sp_h5_column_length(file, "task_table/ranks", &n) <= 0) {
        sp_problem(p, "task_table/ranks is missing or not one-dimensional");
        return -1;
    }
    static const char *const int_names[7] = {"index", "thread_index", "created_ns", "done_ns",
                                             "steps", "running_ns", "suspended_ns"};
    static const char *const str_names[3] = {"kind", "name", "coro_name"};
    uint32_t *ranks = NULL;
    int64_t *ints[7] = {0};
    char **strs[3] = {0};
    long before = p->count;
    sp_h5_table_column(file, p, g, "ranks", H5T_NATIVE_UINT32, n, ref, 1, (void **)&ranks);
    for (int c = 0; c < 7; c++)
        sp_h5_table_column(file, p, g, int_names[c], H5T_NATIVE_INT64, n, ref, c == 0,
                           (void **)&ints[c]);
    for (int c = 0; c < 3; c++)
        sp_h5_table_column(file, p, g, str_names[c], -1, n, ref, 0, (void **)&strs[c]);
    int rc = p->count > before ? -1 : 0;
    if (rc == 0) {
        profile->tasks = calloc(n ? n : 1, sizeof *profile->tasks);
        if (!profile->tasks) {
            sp_problem(p, "out of memory");
            rc = -1;
        }
    }
    for (hsize_t i = 0; rc == 0 && i < n; i++) {
        sp_task_row *t = &profile->tasks[i];
        t->rank = ranks[i];
        t->index = ints[0][i];
        t->thread_index = at_i64(ints[1], i, -1);
        t->created_ns = at_i64(ints[2], i, -1);
        t->done_ns = at_i64(ints[3], i, -1);
        t->steps = at_i64(ints[4], i, 0);
        t->running_ns = at_i64(ints[5], i, 0);
        t->suspended_ns = at_i64(ints[6], i, 0);
        t->kind = take_string(strs[0], i);
        t->name = take_string(strs[1], i);
        t->coro_name = take_string(strs[2], i);
        profile->num_tasks++;
        if (!t->kind || !t->name || !t->coro_name) {
            sp_problem(p, "out of memory");
            rc = -1;
        }
    }
    if (rc == 0)
        profile->has_task_table = 1;
    free(ranks);
    for (int c = 0; c < 7; c++)
        free(ints[c]);
    for (int c = 0; c < 3; c++)
        sp_h5_free_strings(strs[c], n);
    return rc;
}

int sp_h5_read_lanes(hid_t file, sp_profile *profile, sp_problems *p)
{
    if (sp_h5_exists(file, "thread_table") && read_thread_table(file, profile, p) < 0)
        return -1;
    if (sp_h5_exists(file, "task_table") && read_task_table(file, profile, p) < 0)
        return -1;
    return 0;
}
