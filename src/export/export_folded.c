/* export_folded.c - folded stacks ("a;b;c 1234", exclusive nanoseconds per
 * call path), the input of flamegraph.pl, inferno and speedscope's importer.
 *
 * When the export holds several ranks, each stack starts with a "rank R"
 * frame; when some rank has several lanes (threads, tasks), a lane label
 * frame follows.  A single-rank, single-lane export has plain stacks.
 * ';' and line breaks inside names would split frames: they become ','/' '. */
#include <stdlib.h>
#include <string.h>

#include "model/utf8.h"
#include "scopeprof/export.h"
#include "scopeprof/h5.h"
#include "scopeprof/report.h" /* sp_rank_clock_offset */
#include "scopeprof/stream.h"
#include "stream_filter.h"

static void put_frame(FILE *out, const char *name)
{
    for (const char *c = name; *c; c++) {
        if ((unsigned char)*c >= 0x80) {
            /* Names are bytes; the file is UTF-8 text (U+FFFD for the rest). */
            size_t k = sp_utf8_sequence((const unsigned char *)c, 4 /* stops at the NUL */);
            if (k) {
                fwrite_unlocked(c, 1, k, out);
                c += k - 1;
            } else {
                fputs_unlocked(SP_UTF8_REPLACEMENT, out);
            }
            continue;
        }
        putc_unlocked(*c == ';' ? ',' : (*c == '\n' || *c == '\r') ? ' ' : *c, out);
    }
}

static void put_node(FILE *out, const sp_profile *p, const sp_path_tree *t, int64_t node,
                     int show_rank, int show_lane)
{
    const sp_path_node *nd = &t->nodes[node];
    if (nd->parent >= 0) {
        put_node(out, p, t, nd->parent, show_rank, show_lane);
    }
    char label[512];
    switch (nd->kind) {
    case SP_PATH_RANK:
        if (!show_rank)
            return;
        fprintf(out, "rank %lld", (long long)nd->value);
        break;
    case SP_PATH_LANE:
        if (!show_lane)
            return;
        sp_lane_label(p, (uint32_t)t->nodes[nd->parent].value, nd->value, label, sizeof label);
        if (show_rank)
            putc_unlocked(';', out);
        put_frame(out, label);
        break;
    default:
        if (t->nodes[nd->parent].kind != SP_PATH_REGION ? (show_rank || show_lane) : 1)
            putc_unlocked(';', out);
        put_frame(out, p->names[nd->value]);
    }
}

/* One line per call path of the tree (its nodes in creation order). */
static void write_folded(FILE *out, const sp_profile *profile, const sp_path_tree *tree,
                         const sp_export_options *options)
{
    size_t rank_nodes = 0;
    int show_lane = 0;
    for (size_t k = 0; k < tree->n; k++) {
        const sp_path_node *nd = &tree->nodes[k];
        if (nd->kind == SP_PATH_RANK)
            rank_nodes++;
        if (nd->kind == SP_PATH_LANE && nd->next_sibling >= 0)
            show_lane = 1;
    }
    int show_rank = rank_nodes > 1;
    for (size_t k = 0; k < tree->n; k++) {
        if (tree->nodes[k].kind != SP_PATH_REGION)
            continue;
        put_node(out, profile, tree, (int64_t)k, show_rank, show_lane);
        putc_unlocked(' ', out);
        sp_write_int(out, tree->nodes[k].exclusive_ns);
        putc_unlocked('\n', out);
    }
    sp_export_warn_events(options, tree->n, "folded export");
}

int sp_export_folded(FILE *out, const sp_profile *profile, const sp_export_options *options,
                     char *err, size_t errlen)
{
    const sp_selection *sel = options ? options->selection : NULL;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    sp_path_tree tree;
    sp_path_tree_init(&tree);
    uint64_t calls = 0;
    int rc = num_ranks < 0 ? -1 : 0;
    if (rc < 0)
        snprintf(err, errlen, "out of memory");
    for (long k = 0; k < num_ranks && rc == 0; k++) {
        sp_rank_data data;
        if (sp_rank_data_load(profile, ranks[k], sel, &data, err, errlen) < 0) {
            rc = -1;
            break;
        }
        if (sp_selection_grafts(sel) && sp_rank_data_graft(profile, &data, NULL) != 0) {
            snprintf(err, errlen, "out of memory grafting forked calls of rank %u", ranks[k]);
            sp_rank_data_free(&data);
            rc = -1;
            break;
        }
        if (data.calls.n) {
            int64_t top = sp_path_tree_child(&tree, -1, SP_PATH_RANK, ranks[k]);
            if (top < 0 || sp_path_tree_add(&tree, profile, &data, top, 1, NULL) < 0) {
                snprintf(err, errlen, "out of memory aggregating rank %u", ranks[k]);
                rc = -1;
            }
            calls += data.calls.n;
        }
        sp_rank_data_free(&data);
    }
    free(ranks);
    if (rc == 0 && calls == 0) {
        snprintf(err, errlen, "%s: no calls recorded for the selected ranks and filters",
                 profile->path ? profile->path : "profile");
        rc = -1;
    }
    if (rc == 0)
        write_folded(out, profile, &tree, options);
    sp_path_tree_free(&tree);
    return rc;
}

/* ---- The same lines from a run source (docs/stream.md, "Exports") ----
 * Each kept call is added to the path tree as it enters (nodes are created
 * in the order sp_path_tree_add creates them: the calls' sorted order), its
 * exclusive time as it exits.  Nothing is written before every rank has
 * streamed, so any problem still goes to the in-memory path. */

typedef struct folded_pass {
    sp_stream_filter filter;
    sp_path_tree *tree;
    uint32_t rank;
    int64_t rank_node;           /* -1: not created yet (no kept call so far) */
    int64_t cached_lane, cached_node;
    uint64_t calls;
} folded_pass;

static int folded_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    folded_pass *p = ctx;
    *user = parent;
    if (!sp_stream_filter_keeps(&p->filter, call))
        return 0;
    int64_t up = parent;
    if (up < 0) {
        if (p->rank_node < 0 &&
            (p->rank_node = sp_path_tree_child(p->tree, -1, SP_PATH_RANK, p->rank)) < 0)
            return -1;
        if (p->cached_node == -2 || call->lane != p->cached_lane) {
            p->cached_lane = call->lane;
            p->cached_node = sp_path_tree_child(p->tree, p->rank_node, SP_PATH_LANE, call->lane);
            if (p->cached_node < 0)
                return -1;
        }
        up = p->cached_node;
    }
    int64_t node = sp_path_tree_child(p->tree, up, SP_PATH_REGION, call->region);
    if (node < 0)
        return -1;
    sp_path_node *nd = &p->tree->nodes[node];
    nd->calls++;
    nd->inclusive_ns += call->end - call->start;
    p->calls++;
    *user = node;
    return 1;
}

static int folded_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    folded_pass *p = ctx;
    p->tree->nodes[user].exclusive_ns += call->exclusive;
    return 0;
}

/* A rank of a file with fork edges, grafted: the stream does not graft, so
 * the rank's file alone is read into memory (with the reader's checks) and
 * added as sp_export_folded adds it; memory is that of one file, whatever
 * the number of files.  The file alone must read as it does within the run:
 * not with --from/--to (the run's origin) nor with columns other files lack.
 * 0, 1 (export in memory: why), -1 out of memory. */
static int graft_rank_from_file(folded_pass *p, const sp_run_source *src,
                                const sp_selection *sel, uint32_t rank, long file, char *why,
                                size_t whylen)
{
    const sp_h5_event_shape *sh = &src->shapes[file];
    if ((sel && (sel->has_from || sel->has_to)) || src->any_thread != sh->has[SP_H5_COL_THREAD] ||
        src->any_task != sh->has[SP_H5_COL_TASK] ||
        src->any_parent != sh->has[SP_H5_COL_PARENT]) {
        snprintf(why, whylen, "rank %u: fork edges with --from/--to or mixed columns", rank);
        return 1;
    }
    char err[1024];
    sp_profile *full = sp_h5_read(src->paths[file], err, sizeof err);
    if (!full) {
        snprintf(why, whylen, "%s", err);
        return 1;
    }
    sp_rank_data data;
    if (sp_rank_data_load(full, rank, sel, &data, why, whylen) != 0) {
        sp_profile_free(full);
        return 1;
    }
    int rc = sp_rank_data_graft(full, &data, NULL) != 0 ? -1 : 0;
    /* the run's region ids (the skeleton interned every name in the run's
     * order, so this finds them); the streamed tree keeps no source lines
     * (folded prints none), so no row either */
    sp_profile *skeleton = (sp_profile *)src->profile;
    for (size_t i = 0; rc == 0 && i < data.calls.n; i++) {
        int64_t id = sp_profile_intern_name(skeleton, full->names[data.calls.region[i]]);
        if (id < 0)
            rc = -1;
        else
            data.calls.region[i] = (uint32_t)id;
    }
    int64_t *no_rows = NULL;
    if (rc == 0 && data.calls.n) {
        no_rows = malloc((skeleton->num_names ? skeleton->num_names : 1) * sizeof *no_rows);
        if (!no_rows)
            rc = -1;
        for (size_t r = 0; no_rows && r < skeleton->num_names; r++)
            no_rows[r] = -1;
        free(data.row_of_region);
        data.row_of_region = no_rows;
        int64_t top = rc == 0 ? sp_path_tree_child(p->tree, -1, SP_PATH_RANK, rank) : -1;
        if (top < 0 || sp_path_tree_add(p->tree, full, &data, top, 1, NULL) < 0)
            rc = -1;
        p->calls += data.calls.n;
    }
    sp_rank_data_free(&data);
    sp_profile_free(full);
    return rc;
}

int sp_export_folded_stream(FILE *out, const struct sp_run_source *src,
                            const sp_export_options *options, char *why, size_t whylen)
{
    const sp_profile *profile = src->profile;
    const sp_selection *sel = options ? options->selection : NULL;
    const char *reason = sp_run_source_unstreamable(src);
    if (reason) {
        snprintf(why, whylen, "%s", reason);
        return 1;
    }
    sp_path_tree tree;
    sp_path_tree_init(&tree);
    folded_pass p = {.tree = &tree};
    int rc = sp_stream_filter_init(&p.filter, src, sel, why, whylen);
    if (rc != 0)
        return rc;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    if (num_ranks < 0)
        rc = -1;
    if (rc == 0 && sp_stream_check_run(src, ranks, num_ranks, why, whylen))
        rc = 1;
    sp_call_visitor visitor = {folded_enter, folded_exit, &p};
    for (long k = 0; k < num_ranks && rc == 0; k++) {
        long file = sp_stream_rank_file(src, ranks[k]);
        if (file < 0)
            continue; /* no rows: no calls */
        if (src->shapes[file].has_fork && sp_selection_grafts(sel)) {
            rc = graft_rank_from_file(&p, src, sel, ranks[k], file, why, whylen);
            continue;
        }
        p.rank = ranks[k];
        p.rank_node = -1;
        p.cached_node = -2;
        sp_stream_filter_rank(&p.filter, ranks[k]);
        sp_rank_stream_info info;
        rc = sp_stream_rank(src, ranks[k], sp_rank_clock_offset(profile, ranks[k]), &visitor,
                            &info, why, whylen);
        sp_rank_stream_info_free(&info);
    }
    if (rc < 0)
        snprintf(why, whylen, "out of memory");
    if (rc == 0 && p.calls == 0) {
        snprintf(why, whylen, "no calls: the in-memory path words it");
        rc = 1;
    }
    if (rc == 0)
        write_folded(out, profile, &tree, options);
    sp_path_tree_free(&tree);
    sp_stream_filter_free(&p.filter);
    free(ranks);
    return rc;
}
