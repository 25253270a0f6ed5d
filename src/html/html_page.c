/* html_page.c - the HTML page: one self-contained file (styles, script and
 * data inline, nothing fetched), whose sections are plain tables readable
 * without JavaScript; the script (report.js, embedded at build time) makes
 * the tree collapsible and sortable and draws the flame graph, the timeline
 * and the heatmap from the JSON data block. */
#include <stdlib.h>
#include <string.h>

#include "html_assets.h"
#include "html_model.h"
#include "html_report.h"

#define STATIC_TREE_ROWS 400
#define HOTSPOT_ROWS 25

static void dur(FILE *out, int64_t ns)
{
    char buf[32];
    sp_format_duration(ns, buf, sizeof buf);
    fputs(buf, out);
}

static void pct(FILE *out, double share)
{
    if (share < 0)
        fputs("-", out);
    else
        fprintf(out, "%.1f %%", 100.0 * share);
}

static void fact(FILE *out, const char *id, const char *name, const char *value)
{
    fprintf(out, "<div class=\"fact\" id=\"fact-%s\"><dt>%s</dt><dd>", id, name);
    html_text(out, value && value[0] ? value : "-");
    fputs("</dd></div>\n", out);
}

static void node_path(FILE *out, const html_run *run, int64_t i)
{
    int64_t chain[256];
    size_t n = 0;
    for (; i >= 0 && n < 256; i = run->tree.nodes[i].parent)
        chain[n++] = i;
    while (n--) {
        html_text(out, run->profile->names[run->tree.nodes[chain[n]].value]);
        if (n)
            fputs(" &gt; ", out);
    }
}

/* ---- header ---------------------------------------------------------------- */

static void header(FILE *out, const html_run *run)
{
    const sp_profile *p = run->profile;
    const sp_report *r = &run->report;
    const char *label = sp_profile_meta_string(p, "label");
    fputs("<header id=\"run\"><h1>scopeprof report", out);
    if (label && label[0]) {
        fputs(": ", out);
        html_text(out, label);
    }
    fputs("</h1>\n<dl class=\"facts\">\n", out);
    char buf[1200];
    fact(out, "executable", "executable", sp_profile_meta_string(p, "executable"));
    fact(out, "label", "label", label);
    fact(out, "date", "date", sp_profile_meta_string(p, "timestamp"));
    fact(out, "host", "host", sp_profile_meta_string(p, "hostname"));
    snprintf(buf, sizeof buf, "%zu", r->num_ranks);
    fact(out, "ranks", "ranks", buf);
    snprintf(buf, sizeof buf, "%zu", r->num_threads);
    fact(out, "threads", "threads", buf);
    sp_format_duration(r->wall_ns, buf, sizeof buf);
    fact(out, "wall", "wall time", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)r->num_calls);
    fact(out, "calls", "calls", buf);
    if (run->inside_share >= 0)
        snprintf(buf, sizeof buf, "%.1f %%", 100.0 * run->inside_share);
    else
        snprintf(buf, sizeof buf, "-");
    fact(out, "inside", "inside regions", buf);
    int64_t hot;
    int64_t total = html_total_exclusive(run);
    if (html_hotspots(run, &hot, 1) && total > 0) {
        const sp_path_node *nd = &run->tree.nodes[hot];
        char d[32];
        sp_format_duration(nd->exclusive_ns, d, sizeof d);
        snprintf(buf, sizeof buf, "%s (%s, %.1f %%)", p->names[nd->value], d,
                 100.0 * (double)nd->exclusive_ns / (double)total);
        fact(out, "hotspot", "top hotspot", buf);
    } else {
        fact(out, "hotspot", "top hotspot", NULL);
    }
    const sp_report_cross_row *worst = html_worst_imbalance(run);
    if (worst) {
        char d[32];
        sp_format_duration((int64_t)((double)worst->inclusive_max - worst->inclusive_mean + 0.5),
                           d, sizeof d);
        snprintf(buf, sizeof buf, "%s (rank %u, +%s, max/mean %.2f)", p->names[worst->region],
                 worst->slowest_rank, d, worst->imbalance);
        fact(out, "imbalance", "worst imbalance", buf);
    } else {
        fact(out, "imbalance", "worst imbalance", r->num_ranks > 1 ? NULL : "- (one rank)");
    }
    double mpi = html_mpi_share(run);
    if (mpi >= 0) {
        snprintf(buf, sizeof buf, "%.1f %%", 100.0 * mpi);
        fact(out, "mpi", "MPI share", buf);
    }
    fputs("</dl>\n<section id=\"findings\"><h2>Findings</h2><ol>\n", out);
    char *lines[5];
    size_t n = html_findings(run, lines, 5);
    for (size_t k = 0; k < n; k++) {
        fputs("<li>", out);
        html_text(out, lines[k]);
        fputs("</li>\n", out);
        free(lines[k]);
    }
    fputs("</ol></section></header>\n", out);
}

/* ---- hotspots ---------------------------------------------------------------- */

static void hotspots(FILE *out, const html_run *run)
{
    int64_t hot[HOTSPOT_ROWS];
    size_t n = html_hotspots(run, hot, HOTSPOT_ROWS);
    int64_t total = html_total_exclusive(run), shown = 0;
    fputs("<section id=\"hotspots\"><h2>Hotspots</h2>\n<p class=\"note\">Own (exclusive) time "
          "by call path, over all selected ranks and threads; the rows add up to the time "
          "inside regions.</p>\n<table class=\"data\" id=\"hotspots-table\"><thead><tr>"
          "<th class=\"name\">call path</th><th>own time</th><th>share</th><th>calls</th><th>leaf</th>"
          "</tr></thead><tbody>\n", out);
    for (size_t k = 0; k < n; k++) {
        const sp_path_node *nd = &run->tree.nodes[hot[k]];
        shown += nd->exclusive_ns;
        fprintf(out, "<tr data-node=\"%lld\"><td class=\"name\">", (long long)hot[k]);
        node_path(out, run, hot[k]);
        fputs("</td><td>", out);
        dur(out, nd->exclusive_ns);
        fputs("</td><td>", out);
        pct(out, total > 0 ? (double)nd->exclusive_ns / (double)total : -1);
        fprintf(out, "</td><td>%llu</td><td>%s</td></tr>\n", (unsigned long long)nd->calls,
                nd->first_child < 0 ? "yes" : "");
    }
    if (run->tree.n > n) {
        fprintf(out, "<tr class=\"other\"><td>(%zu other call paths)</td><td>",
                run->tree.n - n);
        dur(out, total - shown);
        fputs("</td><td>", out);
        pct(out, total > 0 ? (double)(total - shown) / (double)total : -1);
        fputs("</td><td></td><td></td></tr>\n", out);
    }
    fputs("</tbody><tfoot><tr><td>total inside regions</td><td>", out);
    dur(out, total);
    fputs("</td><td>100 %</td><td></td><td></td></tr></tfoot></table></section>\n", out);
}

/* ---- call tree ---------------------------------------------------------------- */

static const sp_path_tree *sort_tree; /* qsort has no context argument */
static int by_inclusive(const void *a, const void *b)
{
    int64_t x = sort_tree->nodes[*(const int64_t *)a].inclusive_ns;
    int64_t y = sort_tree->nodes[*(const int64_t *)b].inclusive_ns;
    return (x < y) - (x > y);
}

/* Depth-first order, children by inclusive time (what the script shows
 * first, too). */
static size_t tree_order(const sp_path_tree *t, int64_t *order)
{
    size_t n = t->n, count = 0;
    int64_t *stack = malloc((n ? n : 1) * sizeof *stack), *kids = malloc((n ? n : 1) * sizeof *kids);
    if (!stack || !kids) {
        free(stack), free(kids);
        return 0;
    }
    size_t top = 0, nk = 0;
    for (int64_t i = sp_path_tree_first_top(t); i >= 0; i = t->nodes[i].next_sibling)
        kids[nk++] = i;
    sort_tree = t;
    qsort(kids, nk, sizeof *kids, by_inclusive);
    while (nk)
        stack[top++] = kids[--nk];
    while (top) {
        int64_t i = stack[--top];
        order[count++] = i;
        nk = 0;
        for (int64_t c = t->nodes[i].first_child; c >= 0; c = t->nodes[c].next_sibling)
            kids[nk++] = c;
        qsort(kids, nk, sizeof *kids, by_inclusive);
        while (nk)
            stack[top++] = kids[--nk];
    }
    free(stack), free(kids);
    return count;
}

static void call_tree(FILE *out, const html_run *run)
{
    const sp_path_tree *t = &run->tree;
    fputs("<section id=\"call-tree\"><h2>Call tree</h2>\n<p class=\"note\">Calls merged by "
          "call path over the selected ranks and threads. incl = with children, excl = "
          "without; mean, min, max and p95 of one call.</p>\n<div id=\"tree-controls\"></div>\n"
          "<table class=\"data\" id=\"tree-table\"><thead><tr><th data-key=\"name\">region</th>"
          "<th data-key=\"incl\">incl</th><th data-key=\"excl\">excl</th>"
          "<th data-key=\"calls\">calls</th><th data-key=\"mean\">mean</th>"
          "<th data-key=\"min\">min</th><th data-key=\"max\">max</th>"
          "<th data-key=\"p95\">p95</th><th data-key=\"site\">call site</th></tr></thead>"
          "<tbody>\n", out);
    int64_t *order = malloc((t->n ? t->n : 1) * sizeof *order);
    uint32_t *depth = malloc((t->n ? t->n : 1) * sizeof *depth);
    size_t n = order && depth ? tree_order(t, order) : 0;
    for (size_t i = 0; i < t->n && depth; i++)
        depth[i] = t->nodes[i].parent < 0 ? 0 : depth[t->nodes[i].parent] + 1;
    size_t shown = n < STATIC_TREE_ROWS ? n : STATIC_TREE_ROWS;
    for (size_t k = 0; k < shown; k++) {
        int64_t i = order[k];
        const sp_path_node *nd = &t->nodes[i];
        const html_tree_stats *s = &run->stats[i];
        fprintf(out, "<tr data-node=\"%lld\"><td class=\"name\" style=\"padding-left:%.1fem\">",
                (long long)i, 0.3 + 1.2 * (depth[i] > 30 ? 30 : depth[i]));
        html_text(out, run->profile->names[nd->value]);
        fputs("</td><td>", out);
        dur(out, nd->inclusive_ns);
        fputs("</td><td>", out);
        dur(out, nd->exclusive_ns);
        fprintf(out, "</td><td>%llu</td><td>", (unsigned long long)nd->calls);
        dur(out, nd->calls ? (int64_t)((double)nd->inclusive_ns / (double)nd->calls + 0.5) : -1);
        fputs("</td><td>", out);
        dur(out, s->minimum);
        fputs("</td><td>", out);
        dur(out, s->maximum);
        fputs("</td><td>", out);
        dur(out, s->p95);
        fputs("</td><td class=\"site\">", out);
        if (nd->source_file && nd->source_file[0]) {
            const char *base = strrchr(nd->source_file, '/');
            html_text(out, base ? base + 1 : nd->source_file);
            if (nd->source_line >= 0)
                fprintf(out, ":%lld", (long long)nd->source_line);
        }
        fputs("</td></tr>\n", out);
    }
    if (n > shown)
        fprintf(out, "<tr class=\"other\"><td colspan=\"9\">(%zu more call paths: open the "
                     "page with JavaScript to see them all)</td></tr>\n", n - shown);
    fputs("</tbody></table></section>\n", out);
    free(order);
    free(depth);
}

/* ---- load balance, threads, MPI ------------------------------------------------- */

static void load_balance(FILE *out, const html_run *run)
{
    const sp_report *r = &run->report;
    fputs("<section id=\"load-balance\"><h2>Load balance</h2>\n", out);
    if (r->num_ranks < 2) {
        fputs("<p class=\"note\">One rank selected: nothing to balance.</p></section>\n", out);
        return;
    }
    fprintf(out, "<p class=\"note\">Inclusive time per rank (recursion counted once) over "
                 "%zu ranks; a rank without calls of a region counts as 0. Excess = slowest "
                 "rank minus the mean: the time the others wait.</p>\n", r->num_ranks);
    fputs("<table class=\"data\" id=\"balance-table\"><thead><tr><th class=\"name\">region</th><th>mean</th>"
          "<th>min</th><th>max</th><th>slowest rank</th><th>max/mean</th><th>excess</th>"
          "</tr></thead><tbody>\n", out);
    for (size_t k = 0; k < r->num_cross; k++) {
        const sp_report_cross_row *c = &r->cross[k];
        fprintf(out, "<tr data-region=\"%u\"><td class=\"name\">", c->region);
        html_text(out, run->profile->names[c->region]);
        fputs("</td><td>", out);
        dur(out, (int64_t)(c->inclusive_mean + 0.5));
        fputs("</td><td>", out);
        dur(out, c->inclusive_min);
        fputs("</td><td>", out);
        dur(out, c->inclusive_max);
        fprintf(out, "</td><td>%u</td><td>%.2f</td><td>", c->slowest_rank, c->imbalance);
        dur(out, (int64_t)((double)c->inclusive_max - c->inclusive_mean + 0.5));
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table>\n<h3>Ranks &times; regions</h3><div id=\"heatmap\">"
          "<noscript><p class=\"note\">The heatmap needs JavaScript; the table above has "
          "the numbers.</p></noscript></div></section>\n", out);
}

static void threads(FILE *out, const html_run *run)
{
    const sp_report *r = &run->report;
    fputs("<section id=\"threads\"><h2>Threads</h2>\n", out);
    if (!r->num_threads) {
        fputs("<p class=\"note\">No thread table in these files.</p></section>\n", out);
        return;
    }
    fputs("<table class=\"data\" id=\"threads-table\"><thead><tr><th>rank</th><th class=\"name\">thread</th>"
          "<th>kind</th><th>wall</th><th>CPU</th><th>CPU/wall</th><th>calls</th></tr></thead>"
          "<tbody>\n", out);
    for (size_t k = 0; k < r->num_threads; k++) {
        const sp_report_thread_row *t = &r->threads[k];
        fprintf(out, "<tr><td>%u</td><td class=\"name\">", t->rank);
        if (t->name && t->name[0])
            html_text(out, t->name);
        else
            fprintf(out, "thread %lld", (long long)t->index);
        fprintf(out, "</td><td>%s</td><td>", html_thread_kind(run->profile, t));
        dur(out, t->wall_ns);
        fputs("</td><td>", out);
        dur(out, t->cpu_ns);
        fputs("</td><td>", out);
        if (t->cpu_percent < 0)
            fputs("-", out);
        else
            fprintf(out, "%.1f %%", t->cpu_percent);
        fprintf(out, "</td><td>%llu</td></tr>\n", (unsigned long long)t->calls);
    }
    fputs("</tbody></table></section>\n", out);
}

static void mpi(FILE *out, const html_run *run)
{
    double share = html_mpi_share(run);
    if (share < 0)
        return;
    const sp_report *r = &run->report;
    const sp_profile *p = run->profile;
    fputs("<section id=\"mpi\"><h2>MPI</h2>\n<p class=\"note\">MPI calls recorded as regions "
          "named after the C bindings. Share = time in the call / wall time of the selected "
          "ranks.</p>\n<table class=\"data\" id=\"mpi-table\"><thead><tr><th class=\"name\">call</th>"
          "<th>calls</th><th>time</th><th>share of wall</th><th>mean</th><th>max</th>"
          "</tr></thead><tbody>\n", out);
    double wall = 0;
    for (size_t k = 0; k < r->num_ranks; k++)
        wall += (double)(run->rank_wall_ns[k] > 0 ? run->rank_wall_ns[k] : r->wall_ns);
    for (size_t k = 0; k < r->num_flat; k++) {
        const sp_report_flat_row *f = &r->flat[k];
        if (!html_is_mpi_region(p->names[f->region]))
            continue;
        fputs("<tr><td class=\"name\">", out);
        html_text(out, p->names[f->region]);
        fprintf(out, "</td><td>%llu</td><td>", (unsigned long long)f->calls);
        dur(out, f->inclusive);
        fputs("</td><td>", out);
        pct(out, wall > 0 ? (double)f->inclusive / wall : -1);
        fputs("</td><td>", out);
        dur(out, (int64_t)(f->mean + 0.5));
        fputs("</td><td>", out);
        dur(out, f->maximum);
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table><div id=\"mpi-ranks\"></div></section>\n", out);
}

/* ---- page --------------------------------------------------------------------- */

int sp_html_write(FILE *out, const html_run *runs, size_t num_runs)
{
    const html_run *run = &runs[0];
    const char *label = sp_profile_meta_string(run->profile, "label");
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"scopeprof\">\n<title>scopeprof report", out);
    if (label && label[0]) {
        fputs(": ", out);
        html_text(out, label);
    }
    fputs("</title>\n<style>\n", out);
    fputs(html_report_css, out);
    fputs("</style>\n</head>\n<body>\n", out);
    header(out, run);
    fputs("<nav id=\"sections\">", out);
    if (num_runs > 1)
        fputs("<a href=\"#comparison\">Comparison</a> ", out);
    fputs("<a href=\"#hotspots\">Hotspots</a> <a href=\"#call-tree\">Call tree</a> "
          "<a href=\"#flame-graph\">Flame graph</a> <a href=\"#timeline\">Timeline</a> "
          "<a href=\"#load-balance\">Load balance</a> <a href=\"#threads\">Threads</a>", out);
    if (html_mpi_share(run) >= 0)
        fputs(" <a href=\"#mpi\">MPI</a>", out);
    fputs("</nav>\n<main>\n", out);
    if (num_runs > 1) {
        fprintf(out, "<section id=\"comparison\"><h2>Comparison</h2>\n<p class=\"note\">%zu "
                     "runs, the first as baseline; the sections below show the baseline. "
                     "Change = (run - baseline) / baseline of the inclusive time.</p>\n",
                num_runs);
        html_compare_table(out, runs, num_runs);
        fputs("</section>\n", out);
    }
    hotspots(out, run);
    call_tree(out, run);
    fputs("<section id=\"flame-graph\"><h2>Flame graph</h2>\n<noscript><p class=\"note\">The "
          "flame graph is drawn by JavaScript; the call tree above has its numbers.</p>"
          "</noscript><div id=\"flame\"></div></section>\n", out);
    fputs("<section id=\"timeline\"><h2>Timeline</h2>\n<noscript><p class=\"note\">The "
          "timeline is drawn by JavaScript.</p></noscript><div id=\"timeline-view\"></div>"
          "</section>\n", out);
    load_balance(out, run);
    threads(out, run);
    mpi(out, run);
    fputs("</main>\n<script type=\"application/json\" id=\"sp-data\">\n", out);
    sp_json j;
    sp_json_init(&j, out);
    sp_json_begin_object(&j);
    sp_json_key(&j, "version");
    sp_json_int(&j, 1);
    sp_json_key(&j, "runs");
    sp_json_begin_array(&j);
    for (size_t k = 0; k < num_runs; k++) {
        sp_json_newline(&j);
        html_run_json(&j, &runs[k]);
    }
    sp_json_end_array(&j);
    sp_json_key(&j, "compare");
    if (num_runs > 1)
        html_compare_json(&j, runs, num_runs);
    else
        sp_json_null(&j);
    sp_json_end_object(&j);
    fputs("\n</script>\n<script>\n", out);
    fputs(html_report_js, out);
    fputs("</script>\n</body></html>\n", out);
    return ferror(out) ? -1 : 0;
}
