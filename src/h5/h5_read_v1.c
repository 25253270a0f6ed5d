/* h5_read_v1.c - schema 1 (spec §1.1): one group per rank,
 * rank<N>/regions/<name>/{start_times, end_times[, gpu_durations, call_ids,
 * parent_ids]} with source_file / source_lineno / source_text / tags
 * attributes on the region group. */
#include <stdlib.h>
#include <string.h>

#include "h5/h5_internal.h"

struct name_list {
    char **names;
    size_t n, cap;
};

static void name_list_free(struct name_list *l)
{
    sp_h5_free_strings(l->names, l->n);
    memset(l, 0, sizeof *l);
}

static herr_t collect_groups(hid_t loc, const char *name, const H5L_info_t *info, void *data)
{
    (void)info;
    struct name_list *l = data;
    H5O_info_t oinfo;
    if (H5Oget_info_by_name(loc, name, &oinfo, H5P_DEFAULT) < 0 || oinfo.type != H5O_TYPE_GROUP)
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **grown = realloc(l->names, cap * sizeof *grown);
        if (!grown)
            return -1;
        l->names = grown;
        l->cap = cap;
    }
    if (!(l->names[l->n] = strdup(name)))
        return -1;
    l->n++;
    return 0;
}

static int list_groups(hid_t loc, const char *path, struct name_list *out)
{
    hid_t g = H5Gopen2(loc, path, H5P_DEFAULT);
    if (g < 0)
        return -1;
    hsize_t idx = 0;
    herr_t rc = H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_groups, out);
    H5Gclose(g);
    return rc < 0 ? -1 : 0;
}

/* "rank<digits>" -> rank, or -1. */
static int64_t rank_of(const char *name)
{
    if (strncmp(name, "rank", 4) || !name[4])
        return -1;
    int64_t rank = 0;
    for (const char *c = name + 4; *c; c++) {
        if (*c < '0' || *c > '9' || rank > UINT32_MAX / 10)
            return -1;
        rank = rank * 10 + (*c - '0');
    }
    return rank <= UINT32_MAX ? rank : -1;
}

struct rank_group {
    uint32_t rank;
    char *name;
};

static int by_rank(const void *a, const void *b)
{
    uint32_t x = ((const struct rank_group *)a)->rank, y = ((const struct rank_group *)b)->rank;
    return x < y ? -1 : x > y;
}

/* A string attribute (or list of strings for tags) of a region group. */
static int region_attr(hid_t group, const char *name, sp_meta *out)
{
    memset(out, 0, sizeof *out);
    if (H5Aexists(group, name) <= 0)
        return 0;
    hid_t attr = H5Aopen(group, name, H5P_DEFAULT);
    if (attr < 0)
        return -1;
    int rc = sp_h5_attr_get_meta(attr, out);
    H5Aclose(attr);
    return rc;
}

enum { OPT_GPU, OPT_CALL, OPT_PARENT, OPT_N };
static const char *const opt_names[OPT_N] = {"gpu_durations", "call_ids", "parent_ids"};

static int64_t **opt_column(sp_profile *profile, int c)
{
    return c == OPT_GPU ? &profile->gpu : c == OPT_CALL ? &profile->call_ids : &profile->parent_ids;
}

/* Grow every event column to hold `total` events. */
static int grow_events(sp_profile *profile, size_t total)
{
    int64_t **cols[2 + OPT_N] = {&profile->start, &profile->end, &profile->gpu,
                                 &profile->call_ids, &profile->parent_ids};
    for (int c = 0; c < 2 + OPT_N; c++) {
        if (!*cols[c] && c >= 2)
            continue;
        int64_t *grown = realloc(*cols[c], (total ? total : 1) * sizeof *grown);
        if (!grown)
            return -1;
        *cols[c] = grown;
    }
    return 0;
}

static int read_region(hid_t file, sp_profile *profile, uint32_t rank, const char *rank_name,
                       const char *region, sp_problems *p)
{
    char path[1024];
    if (snprintf(path, sizeof path, "%s/regions/%s", rank_name, region) >= (int)sizeof path) {
        sp_problem(p, "region name too long in %s", rank_name);
        return -1;
    }
    hid_t g = H5Gopen2(file, path, H5P_DEFAULT);
    if (g < 0) {
        sp_problem(p, "%s cannot be opened", path);
        return -1;
    }
    hsize_t n = 0;
    int64_t *cols[2 + OPT_N] = {0};
    long before = p->count;
    if (sp_h5_column_length(g, "start_times", &n) != 1)
        sp_problem(p, "%s/start_times is missing or not one-dimensional", path);
    else {
        sp_h5_table_column(file, p, path, "start_times", H5T_NATIVE_INT64, n, "start_times", 1,
                           (void **)&cols[0]);
        sp_h5_table_column(file, p, path, "end_times", H5T_NATIVE_INT64, n, "start_times", 1,
                           (void **)&cols[1]);
        for (int c = 0; c < OPT_N; c++)
            sp_h5_table_column(file, p, path, opt_names[c], H5T_NATIVE_INT64, n, "start_times",
                               0, (void **)&cols[2 + c]);
    }
    sp_meta file_attr, line_attr, text_attr, tags_attr;
    int rc = p->count > before ? -1 : 0;
    if (region_attr(g, "source_file", &file_attr) < 0 ||
        region_attr(g, "source_lineno", &line_attr) < 0 ||
        region_attr(g, "source_text", &text_attr) < 0 || region_attr(g, "tags", &tags_attr) < 0) {
        if (rc == 0)
            sp_problem(p, "%s has an unreadable attribute", path);
        rc = -1;
    }
    H5Gclose(g);
    size_t base = profile->num_events;
    int64_t region_id = rc == 0 ? sp_profile_intern_name(profile, region) : -1;
    sp_row *rows = rc == 0 ? realloc(profile->rows, (profile->num_rows + 1) * sizeof *rows) : NULL;
    if (rows)
        profile->rows = rows;
    if (rc == 0 && (region_id < 0 || !rows || grow_events(profile, base + n) < 0)) {
        sp_problem(p, "out of memory");
        rc = -1;
    }
    for (int c = 0; rc == 0 && c < OPT_N; c++) {
        int64_t **col = opt_column(profile, c);
        if (cols[2 + c] && !*col) {
            /* First region carrying the column: earlier events get "missing". */
            if (!(*col = malloc((base + n ? base + n : 1) * sizeof **col))) {
                sp_problem(p, "out of memory");
                rc = -1;
                break;
            }
            for (size_t i = 0; i < base; i++)
                (*col)[i] = -1;
        }
    }
    if (rc == 0) {
        int64_t **dst[2 + OPT_N] = {&profile->start, &profile->end, &profile->gpu,
                                    &profile->call_ids, &profile->parent_ids};
        for (int c = 0; c < 2 + OPT_N; c++) {
            if (!*dst[c])
                continue;
            for (hsize_t i = 0; i < n; i++)
                (*dst[c])[base + i] = cols[c] ? cols[c][i] : -1;
        }
        profile->num_events = base + n;
        sp_row *r = &profile->rows[profile->num_rows];
        memset(r, 0, sizeof *r);
        r->region = (uint32_t)region_id;
        r->rank = rank;
        r->offset = base;
        r->count = n;
        r->source_line = line_attr.type == SP_META_INT ? line_attr.i : -1;
        r->exclusive_total = -1;
        r->source_file = strdup(file_attr.type == SP_META_STRING ? file_attr.s : "");
        r->source_text = strdup(text_attr.type == SP_META_STRING ? text_attr.s : "");
        if (tags_attr.type == SP_META_STRINGS)
            r->tags = sp_json_string_list((const char *const *)tags_attr.list, tags_attr.list_len);
        else if (tags_attr.type == SP_META_STRING)
            r->tags = sp_json_string_list((const char *const *)&tags_attr.s, 1);
        else
            r->tags = strdup("[]");
        r->event_metadata = strdup("[]");
        profile->num_rows++;
        if (!r->source_file || !r->source_text || !r->tags || !r->event_metadata) {
            sp_problem(p, "out of memory");
            rc = -1;
        } else if (n) {
            sp_summary_compute(profile->start + base, profile->end + base,
                               profile->gpu ? profile->gpu + base : NULL, n, &r->stats);
        }
    }
    for (int c = 0; c < 2 + OPT_N; c++)
        free(cols[c]);
    sp_h5_meta_clear(&file_attr);
    sp_h5_meta_clear(&line_attr);
    sp_h5_meta_clear(&text_attr);
    sp_h5_meta_clear(&tags_attr);
    return rc;
}

int sp_h5_read_v1(hid_t file, sp_profile *profile, sp_problems *p)
{
    struct name_list top = {0};
    if (list_groups(file, "/", &top) < 0) {
        name_list_free(&top);
        sp_problem(p, SP_UNREADABLE_MSG);
        return -1;
    }
    struct rank_group *ranks = calloc(top.n ? top.n : 1, sizeof *ranks);
    size_t nranks = 0;
    if (!ranks) {
        name_list_free(&top);
        sp_problem(p, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < top.n; i++) {
        int64_t r = rank_of(top.names[i]);
        if (r >= 0)
            ranks[nranks++] = (struct rank_group){(uint32_t)r, top.names[i]};
    }
    qsort(ranks, nranks, sizeof *ranks, by_rank);
    int rc = 0;
    /* Schema 1 is only recognised by its layout: without rank<N> groups or
     * a metadata group this is some other program's HDF5 file. */
    if (nranks == 0 && !sp_h5_exists(file, "metadata")) {
        sp_problem(p, "not a scope-profiler profile (no scope_profiler_schema attribute and no "
                      "rank<N> groups): give scopeprof the files a profiled run wrote");
        rc = -1;
    }
    for (size_t k = 0; rc == 0 && k < nranks; k++) {
        char path[128];
        snprintf(path, sizeof path, "%s/regions", ranks[k].name);
        if (!sp_h5_exists(file, path))
            continue;
        struct name_list regions = {0};
        if (list_groups(file, path, &regions) < 0) {
            sp_problem(p, "%s cannot be listed", path);
            rc = -1;
        }
        for (size_t i = 0; rc == 0 && i < regions.n; i++)
            rc = read_region(file, profile, ranks[k].rank, ranks[k].name, regions.names[i], p);
        name_list_free(&regions);
    }
    free(ranks);
    name_list_free(&top);
    return rc;
}
