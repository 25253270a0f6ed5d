/* html_findings.c - the 3 to 5 sentences at the top of the report, each
 * about something worth acting on, most useful first: the top hotspot, the
 * worst load imbalance, time outside any region, MPI share, threads that
 * wait, regions so short that per-call cost matters.  When fewer than three
 * apply, the next biggest own times fill in. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_model.h"

static size_t add(char **lines, size_t n, size_t max, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static size_t add(char **lines, size_t n, size_t max, const char *fmt, ...)
{
    if (n >= max)
        return n;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    lines[n] = strdup(buf);
    return lines[n] ? n + 1 : n;
}

/* Call path of a tree node, "a > b > c" (shortened from the left). */
static void node_path(const html_run *run, int64_t i, char *buf, size_t len)
{
    char tmp[1024] = "";
    buf[0] = 0;
    for (int depth = 0; i >= 0 && depth < 64; depth++) {
        const sp_path_node *nd = &run->tree.nodes[i];
        snprintf(tmp, sizeof tmp, "%s%s%s", run->profile->names[nd->value], buf[0] ? " > " : "",
                 buf);
        snprintf(buf, len, "%s", tmp);
        i = nd->parent;
    }
}

/* Tree nodes by exclusive time, descending (the hotspots). */
size_t html_hotspots(const html_run *run, int64_t *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < run->tree.n; i++) {
        int64_t e = run->tree.nodes[i].exclusive_ns;
        size_t k = n < max ? n++ : max;
        if (k == max && (max == 0 || e <= run->tree.nodes[out[max - 1]].exclusive_ns))
            continue;
        if (k == max)
            k = max - 1;
        while (k > 0 && run->tree.nodes[out[k - 1]].exclusive_ns < e) {
            out[k] = out[k - 1];
            k--;
        }
        out[k] = (int64_t)i;
    }
    return n;
}

int64_t html_total_exclusive(const html_run *run)
{
    int64_t t = 0;
    for (size_t i = 0; i < run->tree.n; i++)
        t += run->tree.nodes[i].exclusive_ns;
    return t;
}

/* The worst imbalance: the region whose slowest rank exceeds the mean by
 * the most time (what the other ranks wait), among those with max/mean
 * above 1.05; else the largest max/mean.  NULL with one rank. */
const sp_report_cross_row *html_worst_imbalance(const html_run *run)
{
    const sp_report *r = &run->report;
    const sp_report_cross_row *worst = NULL, *ratio = NULL;
    for (size_t k = 0; k < r->num_cross; k++) {
        const sp_report_cross_row *c = &r->cross[k];
        if (!ratio || c->imbalance > ratio->imbalance)
            ratio = c;
        if (c->imbalance > 1.05 &&
            (!worst || (double)c->inclusive_max - c->inclusive_mean >
                           (double)worst->inclusive_max - worst->inclusive_mean))
            worst = c;
    }
    return worst ? worst : ratio;
}

size_t html_findings(const html_run *run, char **lines, size_t max)
{
    const sp_report *r = &run->report;
    const sp_profile *p = run->profile;
    size_t n = 0;
    char path[1024], a[32], b[32];
    int64_t total = html_total_exclusive(run);
    int64_t hot[4];
    size_t num_hot = html_hotspots(run, hot, 4);
    if (num_hot && total > 0) {
        const sp_path_node *nd = &run->tree.nodes[hot[0]];
        node_path(run, hot[0], path, sizeof path);
        sp_format_duration(nd->exclusive_ns, a, sizeof a);
        n = add(lines, n, max,
                "Top hotspot: %s spends %s of own time, %.1f %% of all time inside regions "
                "(%llu calls): the first place to optimise.",
                path, a, 100.0 * (double)nd->exclusive_ns / (double)total,
                (unsigned long long)nd->calls);
    }
    const sp_report_cross_row *worst = html_worst_imbalance(run);
    if (worst && worst->imbalance > 1.05) {
        sp_format_duration((int64_t)((double)worst->inclusive_max - worst->inclusive_mean + 0.5),
                           a, sizeof a);
        n = add(lines, n, max,
                "Load imbalance: rank %u spends %s more than the mean in %s (max/mean %.2f); "
                "the other ranks wait for it at the next synchronisation.",
                worst->slowest_rank, a, p->names[worst->region], worst->imbalance);
    }
    if (run->inside_share >= 0 && run->inside_share < 0.8)
        n = add(lines, n, max,
                "Only %.1f %% of the ranks' wall time is inside a region: the rest is "
                "unmeasured; mark the main phases to see where it goes.",
                100.0 * run->inside_share);
    double mpi = html_mpi_share(run);
    if (mpi >= 0.1)
        n = add(lines, n, max,
                "MPI takes %.1f %% of the wall time: look at the MPI section for the calls and "
                "the ranks that wait.", 100.0 * mpi);
    for (size_t k = 0; k < r->num_threads && n < max; k++) {
        const sp_report_thread_row *t = &r->threads[k];
        if (t->cpu_percent >= 0 && t->cpu_percent < 50 && t->wall_ns > 1000000 && t->calls) {
            n = add(lines, n, max,
                    "Thread %s of rank %u is on the CPU only %.0f %% of its wall time: it waits "
                    "(locks, I/O, idle workers).", t->name && t->name[0] ? t->name : "?",
                    t->rank, t->cpu_percent);
            break;
        }
    }
    for (size_t k = 0; k < r->num_flat && n < max; k++) {
        const sp_report_flat_row *f = &r->flat[k];
        if (f->calls >= 100000 && f->mean < 1000 && f->mean > 0) {
            n = add(lines, n, max,
                    "%s is called %llu times at %.0f ns per call: each marker pair costs tens "
                    "of ns, so exclude it or mark the loop around it.", p->names[f->region],
                    (unsigned long long)f->calls, f->mean);
            break;
        }
    }
    for (size_t k = 1; k < num_hot && n < 3 && total > 0; k++) {
        const sp_path_node *nd = &run->tree.nodes[hot[k]];
        node_path(run, hot[k], path, sizeof path);
        sp_format_duration(nd->exclusive_ns, b, sizeof b);
        n = add(lines, n, max, "Next hotspot: %s, %s of own time (%.1f %%).", path, b,
                100.0 * (double)nd->exclusive_ns / (double)total);
    }
    if (n == 0)
        n = add(lines, n, max, "No call was recorded for the selected ranks and filters.");
    return n;
}
