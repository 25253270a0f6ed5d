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
#include "path_tree_stream.h"
#include "scopeprof/export.h"

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

int sp_folded_build(const sp_profile *profile, const sp_export_options *options,
                    sp_path_tree *tree, uint64_t *calls_out, char *err, size_t errlen)
{
    const sp_selection *sel = options ? options->selection : NULL;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    sp_path_tree_init(tree);
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
        int grafted = sp_selection_grafts(sel) ? sp_rank_data_graft(profile, &data, NULL) : 0;
        if (grafted != 0) {
            sp_graft_failure(grafted, ranks[k], err, errlen);
            sp_rank_data_free(&data);
            rc = -1;
            break;
        }
        if (data.calls.n) {
            int64_t top = sp_path_tree_child(tree, -1, SP_PATH_RANK, ranks[k]);
            if (top < 0 || sp_path_tree_add(tree, profile, &data, top, 1, NULL) < 0) {
                snprintf(err, errlen, "out of memory aggregating rank %u", ranks[k]);
                rc = -1;
            }
            calls += data.calls.n;
        }
        sp_rank_data_free(&data);
    }
    free(ranks);
    *calls_out = calls;
    if (rc < 0)
        sp_path_tree_free(tree);
    return rc;
}

void sp_folded_shape(const sp_path_tree *tree, size_t *rank_nodes, int *several_lanes)
{
    *rank_nodes = 0;
    *several_lanes = 0;
    for (size_t k = 0; k < tree->n; k++) {
        const sp_path_node *nd = &tree->nodes[k];
        if (nd->kind == SP_PATH_RANK)
            ++*rank_nodes;
        if (nd->kind == SP_PATH_LANE && nd->next_sibling >= 0)
            *several_lanes = 1;
    }
}

void sp_folded_write(FILE *out, const sp_profile *profile, const sp_path_tree *tree,
                     int show_rank, int show_lane)
{
    for (size_t k = 0; k < tree->n; k++) {
        if (tree->nodes[k].kind != SP_PATH_REGION)
            continue;
        put_node(out, profile, tree, (int64_t)k, show_rank, show_lane);
        putc_unlocked(' ', out);
        sp_write_int(out, tree->nodes[k].exclusive_ns);
        putc_unlocked('\n', out);
    }
}

int sp_export_folded(FILE *out, const sp_profile *profile, const sp_export_options *options,
                     char *err, size_t errlen)
{
    sp_path_tree tree;
    uint64_t calls = 0;
    if (sp_folded_build(profile, options, &tree, &calls, err, errlen) < 0)
        return -1;
    if (calls == 0) {
        snprintf(err, errlen, "%s: no calls recorded for the selected ranks and filters",
                 profile->path ? profile->path : "profile");
        sp_path_tree_free(&tree);
        return -1;
    }
    size_t rank_nodes;
    int show_lane;
    sp_folded_shape(&tree, &rank_nodes, &show_lane);
    sp_folded_write(out, profile, &tree, rank_nodes > 1, show_lane);
    sp_export_warn_events(options, tree.n, "folded export");
    sp_path_tree_free(&tree);
    return 0;
}

/* ---- The same lines from a run source (docs/stream.md, "Exports") ----
 * The tree is built as the calls stream (path_tree_stream.c) and written
 * once every rank has streamed, so any problem still goes to the in-memory
 * path with nothing written. */
int sp_export_folded_stream(FILE *out, const struct sp_run_source *src,
                            const sp_export_options *options, char *why, size_t whylen)
{
    const sp_selection *sel = options ? options->selection : NULL;
    sp_path_tree tree;
    sp_path_tree_init(&tree);
    uint64_t calls = 0;
    int rc = sp_path_tree_stream(&tree, src, sel, 1, &calls, why, whylen);
    if (rc == 0 && calls == 0) {
        snprintf(why, whylen, "no calls: the in-memory path words it");
        rc = 1;
    }
    if (rc == 0) {
        size_t rank_nodes;
        int show_lane;
        sp_folded_shape(&tree, &rank_nodes, &show_lane);
        sp_folded_write(out, src->profile, &tree, rank_nodes > 1, show_lane);
        sp_export_warn_events(options, tree.n, "folded export");
    }
    sp_path_tree_free(&tree);
    return rc;
}
