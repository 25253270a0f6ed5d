/* export_report.c - `scopeprof report --format json|csv`: the report's
 * tables (src/report) for scripts.  Keys and columns are documented in
 * docs/compare.md ("Machine-readable report") and only ever gain new
 * entries. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/export.h"
#include "scopeprof/report.h"

/* Call path of every node ("a > b > c"); parents come before children. */
static char **node_paths(const sp_report *r)
{
    const sp_report_tree *t = &r->tree;
    char **paths = calloc(t->num_nodes ? t->num_nodes : 1, sizeof *paths);
    if (!paths)
        return NULL;
    for (size_t n = 0; n < t->num_nodes; n++) {
        const sp_report_node *node = &t->nodes[n];
        const char *name = r->profile->names[node->region];
        const char *parent = node->parent >= 0 ? paths[node->parent] : NULL;
        size_t len = strlen(name) + (parent ? strlen(parent) + 3 : 0) + 1;
        if (!(paths[n] = malloc(len))) {
            for (size_t k = 0; k < n; k++)
                free(paths[k]);
            free(paths);
            return NULL;
        }
        if (parent)
            snprintf(paths[n], len, "%s > %s", parent, name);
        else
            snprintf(paths[n], len, "%s", name);
    }
    return paths;
}

static void free_paths(char **paths, size_t n)
{
    for (size_t k = 0; paths && k < n; k++)
        free(paths[k]);
    free(paths);
}

/* Next node depth first (children by inclusive time), or -1. */
static int64_t next_node(const sp_report_tree *t, int64_t i)
{
    if (t->nodes[i].first_child >= 0)
        return t->nodes[i].first_child;
    while (i >= 0 && t->nodes[i].next_sibling < 0)
        i = t->nodes[i].parent;
    return i >= 0 ? t->nodes[i].next_sibling : -1;
}

static double percent_of_run(const sp_report *r, const sp_report_node *n)
{
    if (r->wall_ns <= 0 || r->tree.num_ranks == 0)
        return NAN;
    return 100.0 * (double)n->inclusive / ((double)r->wall_ns * (double)r->tree.num_ranks);
}

static void json_ns(sp_json *j, int64_t v)
{
    if (v < 0)
        sp_json_null(j); /* unknown */
    else
        sp_json_int(j, v);
}

int sp_export_report_json(FILE *out, const sp_report *r, const char *const *files,
                          size_t num_files)
{
    char **paths = node_paths(r);
    if (!paths)
        return -1;
    const sp_profile *p = r->profile;
    sp_json j;
    sp_json_init(&j, out);
    sp_json_begin_object(&j);
    sp_json_key(&j, "scopeprof");
    sp_json_string(&j, "report");
    sp_json_key(&j, "format_version");
    sp_json_int(&j, 1);
    sp_json_key(&j, "label");
    sp_json_string(&j, sp_profile_meta_string(p, "label"));
    sp_json_key(&j, "files");
    sp_json_begin_array(&j);
    for (size_t k = 0; k < num_files; k++)
        sp_json_string(&j, files[k]);
    sp_json_end_array(&j);
    sp_json_key(&j, "ranks");
    sp_json_begin_array(&j);
    for (size_t k = 0; k < r->num_ranks; k++)
        sp_json_uint(&j, r->ranks[k]);
    sp_json_end_array(&j);
    sp_json_key(&j, "wall_ns");
    json_ns(&j, r->wall_ns);
    sp_json_key(&j, "calls");
    sp_json_uint(&j, r->num_calls);

    sp_json_key(&j, "flat");
    sp_json_begin_array(&j);
    for (size_t k = 0; k < r->num_flat; k++) {
        const sp_report_flat_row *f = &r->flat[k];
        sp_json_newline(&j);
        sp_json_begin_object(&j);
        sp_json_key(&j, "region");
        sp_json_string(&j, p->names[f->region]);
        sp_json_key(&j, "calls");
        sp_json_uint(&j, f->calls);
        sp_json_key(&j, "inclusive_ns");
        json_ns(&j, f->inclusive);
        sp_json_key(&j, "total_ns");
        json_ns(&j, f->total);
        sp_json_key(&j, "exclusive_ns");
        json_ns(&j, f->exclusive);
        sp_json_key(&j, "mean_ns");
        sp_json_double(&j, f->mean);
        sp_json_key(&j, "min_ns");
        json_ns(&j, f->minimum);
        sp_json_key(&j, "max_ns");
        json_ns(&j, f->maximum);
        sp_json_key(&j, "source_file");
        sp_json_string(&j, r->source_file[f->region]);
        sp_json_key(&j, "source_line");
        sp_json_int(&j, r->source_line[f->region]);
        sp_json_end_object(&j);
    }
    sp_json_end_array(&j);

    sp_json_key(&j, "tree");
    sp_json_begin_array(&j);
    for (int64_t i = r->has_tree ? r->tree.first_root : -1; i >= 0; i = next_node(&r->tree, i)) {
        const sp_report_node *n = &r->tree.nodes[i];
        sp_json_newline(&j);
        sp_json_begin_object(&j);
        sp_json_key(&j, "path");
        sp_json_string(&j, paths[i]);
        sp_json_key(&j, "region");
        sp_json_string(&j, p->names[n->region]);
        sp_json_key(&j, "depth");
        sp_json_uint(&j, n->depth);
        sp_json_key(&j, "parent");
        sp_json_string(&j, n->parent >= 0 ? paths[n->parent] : NULL);
        sp_json_key(&j, "calls");
        sp_json_uint(&j, n->calls);
        sp_json_key(&j, "inclusive_ns");
        sp_json_int(&j, n->inclusive);
        sp_json_key(&j, "exclusive_ns");
        sp_json_int(&j, n->exclusive);
        sp_json_key(&j, "min_ns");
        sp_json_int(&j, n->minimum);
        sp_json_key(&j, "max_ns");
        sp_json_int(&j, n->maximum);
        sp_json_key(&j, "percent_of_run");
        sp_json_double(&j, percent_of_run(r, n));
        sp_json_end_object(&j);
    }
    sp_json_end_array(&j);

    sp_json_key(&j, "ranks_table");
    sp_json_begin_array(&j);
    for (size_t k = 0; k < r->num_cross; k++) {
        const sp_report_cross_row *c = &r->cross[k];
        sp_json_newline(&j);
        sp_json_begin_object(&j);
        sp_json_key(&j, "region");
        sp_json_string(&j, p->names[c->region]);
        sp_json_key(&j, "ranks_with_calls");
        sp_json_uint(&j, c->ranks_with_calls);
        sp_json_key(&j, "calls_min");
        sp_json_uint(&j, c->calls_min);
        sp_json_key(&j, "calls_mean");
        sp_json_double(&j, c->calls_mean);
        sp_json_key(&j, "calls_max");
        sp_json_uint(&j, c->calls_max);
        sp_json_key(&j, "inclusive_min_ns");
        json_ns(&j, c->inclusive_min);
        sp_json_key(&j, "inclusive_mean_ns");
        sp_json_double(&j, c->inclusive_mean);
        sp_json_key(&j, "inclusive_max_ns");
        json_ns(&j, c->inclusive_max);
        sp_json_key(&j, "exclusive_min_ns");
        json_ns(&j, c->exclusive_min);
        sp_json_key(&j, "exclusive_mean_ns");
        if (c->exclusive_mean < 0)
            sp_json_null(&j);
        else
            sp_json_double(&j, c->exclusive_mean);
        sp_json_key(&j, "exclusive_max_ns");
        json_ns(&j, c->exclusive_max);
        sp_json_key(&j, "imbalance");
        sp_json_double(&j, c->imbalance);
        sp_json_key(&j, "slowest_rank");
        sp_json_uint(&j, c->slowest_rank);
        sp_json_end_object(&j);
    }
    sp_json_end_array(&j);

    sp_json_key(&j, "threads");
    sp_json_begin_array(&j);
    for (size_t k = 0; k < r->num_threads; k++) {
        const sp_report_thread_row *t = &r->threads[k];
        sp_json_begin_object(&j);
        sp_json_key(&j, "rank");
        sp_json_uint(&j, t->rank);
        sp_json_key(&j, "index");
        sp_json_int(&j, t->index);
        sp_json_key(&j, "name");
        sp_json_string(&j, t->name);
        sp_json_key(&j, "wall_ns");
        json_ns(&j, t->wall_ns);
        sp_json_key(&j, "cpu_ns");
        json_ns(&j, t->cpu_ns);
        sp_json_key(&j, "calls");
        sp_json_uint(&j, t->calls);
        sp_json_end_object(&j);
    }
    sp_json_end_array(&j);

    sp_json_key(&j, "warnings");
    sp_json_begin_array(&j);
    for (size_t k = 0; k < r->num_warnings; k++) {
        sp_json_begin_object(&j);
        sp_json_key(&j, "rank");
        sp_json_uint(&j, r->warnings[k].rank);
        sp_json_key(&j, "message");
        sp_json_string(&j, r->warnings[k].message);
        sp_json_end_object(&j);
    }
    sp_json_end_array(&j);
    sp_json_end_object(&j);
    fputc('\n', out);
    free_paths(paths, r->tree.num_nodes);
    return ferror(out) ? -1 : 0;
}

/* ---- CSV: one table per document ------------------------------------------ */

static void csv_text(FILE *out, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void csv_ns(FILE *out, int64_t v)
{
    fputc(',', out);
    if (v >= 0)
        fprintf(out, "%lld", (long long)v);
}

static void csv_double(FILE *out, double v)
{
    fputc(',', out);
    if (isfinite(v))
        fprintf(out, "%.17g", v);
}

int sp_export_report_csv(FILE *out, const sp_report *r, sp_report_table table)
{
    const sp_profile *p = r->profile;
    if (table == SP_REPORT_TABLE_FLAT) {
        fputs("region,calls,inclusive_ns,total_ns,exclusive_ns,mean_ns,min_ns,max_ns,"
              "source_file,source_line\n", out);
        for (size_t k = 0; k < r->num_flat; k++) {
            const sp_report_flat_row *f = &r->flat[k];
            csv_text(out, p->names[f->region]);
            fprintf(out, ",%llu", (unsigned long long)f->calls);
            csv_ns(out, f->inclusive);
            csv_ns(out, f->total);
            csv_ns(out, f->exclusive);
            csv_double(out, f->mean);
            csv_ns(out, f->minimum);
            csv_ns(out, f->maximum);
            fputc(',', out);
            csv_text(out, r->source_file[f->region]);
            fprintf(out, ",%lld\n", (long long)r->source_line[f->region]);
        }
    } else if (table == SP_REPORT_TABLE_TREE) {
        char **paths = node_paths(r);
        if (!paths)
            return -1;
        fputs("path,region,depth,parent,calls,inclusive_ns,exclusive_ns,min_ns,max_ns,"
              "percent_of_run\n", out);
        for (int64_t i = r->has_tree ? r->tree.first_root : -1; i >= 0;
             i = next_node(&r->tree, i)) {
            const sp_report_node *n = &r->tree.nodes[i];
            csv_text(out, paths[i]);
            fputc(',', out);
            csv_text(out, p->names[n->region]);
            fprintf(out, ",%u,", n->depth);
            csv_text(out, n->parent >= 0 ? paths[n->parent] : NULL);
            fprintf(out, ",%llu", (unsigned long long)n->calls);
            csv_ns(out, n->inclusive);
            csv_ns(out, n->exclusive);
            csv_ns(out, n->minimum);
            csv_ns(out, n->maximum);
            csv_double(out, percent_of_run(r, n));
            fputc('\n', out);
        }
        free_paths(paths, r->tree.num_nodes);
    } else {
        fputs("region,ranks_with_calls,calls_min,calls_mean,calls_max,inclusive_min_ns,"
              "inclusive_mean_ns,inclusive_max_ns,exclusive_min_ns,exclusive_mean_ns,"
              "exclusive_max_ns,imbalance,slowest_rank\n", out);
        for (size_t k = 0; k < r->num_cross; k++) {
            const sp_report_cross_row *c = &r->cross[k];
            csv_text(out, p->names[c->region]);
            fprintf(out, ",%zu,%llu", c->ranks_with_calls, (unsigned long long)c->calls_min);
            csv_double(out, c->calls_mean);
            fprintf(out, ",%llu", (unsigned long long)c->calls_max);
            csv_ns(out, c->inclusive_min);
            csv_double(out, c->inclusive_mean);
            csv_ns(out, c->inclusive_max);
            csv_ns(out, c->exclusive_min);
            csv_double(out, c->exclusive_mean < 0 ? NAN : c->exclusive_mean);
            csv_ns(out, c->exclusive_max);
            csv_double(out, c->imbalance);
            fprintf(out, ",%u\n", c->slowest_rank);
        }
    }
    return ferror(out) ? -1 : 0;
}
