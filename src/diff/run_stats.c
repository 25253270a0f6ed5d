/* run_stats.c - one run's numbers per call path or region name, for the
 * comparing commands.  The run is read and reconstructed once, through the
 * report (src/report: selection, fallbacks, wall time, thread table):
 * streamed rank by rank when it can be (its call hook hands every call over
 * as it passes), else in memory (its per-rank hook hands every rank's calls
 * over).  run_collect.c aggregates them by path (sp_path_tree) with what a
 * comparison needs beyond the report's sums. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run_collect.h"
#include "scopeprof/diff.h"
#include "scopeprof/export.h"
#include "scopeprof/h5.h"
#include "scopeprof/report.h"
#include "scopeprof/stream.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int by_key(const void *a, const void *b, void *ctx)
{
    char **names = ctx;
    return strcmp(names[*(const size_t *)a], names[*(const size_t *)b]);
}

/* The keys: one per slot with calls, sorted, parents remapped. */
static int make_keys(sp_run_stats *run, run_collect *c, const sp_profile *profile)
{
    size_t slots = c->by_name ? profile->num_names : c->tree.n;
    if (slots > c->num_acc)
        slots = c->num_acc;
    char **text = calloc(slots ? slots : 1, sizeof *text);
    size_t *order = malloc((slots ? slots : 1) * sizeof *order);
    int64_t *index_of_slot = malloc((slots ? slots : 1) * sizeof *index_of_slot);
    size_t n = 0;
    int rc = -1;
    if (!text || !order || !index_of_slot)
        goto out;
    for (size_t s = 0; s < slots; s++) {
        index_of_slot[s] = -1;
        if (c->acc[s].calls == 0)
            continue;
        const char *name;
        const char *parent_text = NULL;
        if (c->by_name) {
            name = profile->names[s];
        } else {
            /* Parents are created before their children: their text exists. */
            const sp_path_node *nd = &c->tree.nodes[s];
            name = profile->names[nd->value];
            parent_text = nd->parent >= 0 ? text[nd->parent] : NULL;
        }
        size_t len = strlen(name) + (parent_text ? strlen(parent_text) + 3 : 0);
        if (!(text[s] = malloc(len + 1)))
            goto out;
        if (parent_text)
            snprintf(text[s], len + 1, "%s > %s", parent_text, name);
        else
            memcpy(text[s], name, len + 1);
        order[n++] = s;
    }
    qsort_r(order, n, sizeof *order, by_key, text);
    run->keys = calloc(n ? n : 1, sizeof *run->keys);
    if (!run->keys)
        goto out;
    for (size_t k = 0; k < n; k++)
        index_of_slot[order[k]] = (int64_t)k;
    for (size_t k = 0; k < n; k++) {
        size_t s = order[k];
        key_acc *a = &c->acc[s];
        sp_key_stats *key = &run->keys[k];
        key->key = text[s];
        text[s] = NULL;
        const char *name = c->by_name ? profile->names[s] : profile->names[c->tree.nodes[s].value];
        key->name = key->key + strlen(key->key) - strlen(name);
        key->parent = c->by_name || c->tree.nodes[s].parent < 0
                          ? -1
                          : index_of_slot[c->tree.nodes[s].parent];
        key->depth = key->parent >= 0 ? run->keys[key->parent].depth + 1 : 0;
        key->calls = a->calls;
        key->total = a->total;
        key->own = a->own;
        key->mean_incl = a->mean_incl;
        key->m2_incl = a->m2_incl;
        key->mean_own = a->mean_own;
        key->m2_own = a->m2_own;
        key->rank_max = a->rank_max;
        key->minimum = a->minimum;
        key->maximum = a->maximum;
        key->samples = a->samples;
        key->num_samples = a->num_samples;
        a->samples = NULL;
        qsort(key->samples, key->num_samples, sizeof *key->samples, cmp_i64);
        run->num_keys++;
    }
    rc = 0;
out:
    for (size_t s = 0; text && s < slots; s++)
        free(text[s]);
    free(text);
    free(order);
    free(index_of_slot);
    return rc;
}

/* Over the calls of the paths with two calls or more (from the sample,
 * scaled to all calls): sum of (duration - median)^2 per ns of their time
 * (the rate), and the time above the median per ns (the delay share). */
static void delay_noise(sp_run_stats *run)
{
    double excess = 0, above = 0, time = 0;
    uint64_t calls = 0;
    for (size_t k = 0; k < run->num_keys; k++) {
        const sp_key_stats *key = &run->keys[k];
        if (key->num_samples < 2)
            continue;
        calls += key->calls;
        double median = (double)key->samples[key->num_samples / 2], sum = 0, up = 0;
        for (size_t i = 0; i < key->num_samples; i++) {
            double d = (double)key->samples[i] - median;
            sum += d * d;
            up += d > 0 ? d : 0;
        }
        double scale = (double)key->calls / (double)key->num_samples;
        excess += sum * scale;
        above += up * scale;
        time += key->total;
    }
    /* a handful of calls says nothing about the machine's interruptions */
    int known = time > 0 && calls >= SP_DIFF_MIN_NOISE_CALLS;
    run->noise_rate = known ? excess / time : NAN;
    run->delay_share = known ? above / time : NAN;
}

static int copy_header(sp_run_stats *run, const sp_report *report, const sp_profile *profile)
{
    run->num_ranks = report->num_ranks;
    run->ranks = malloc((report->num_ranks ? report->num_ranks : 1) * sizeof *run->ranks);
    if (!run->ranks)
        return -1;
    memcpy(run->ranks, report->ranks, report->num_ranks * sizeof *run->ranks);
    run->num_threads = report->num_threads;
    run->wall_ns = report->wall_ns;
    run->num_calls = report->num_calls;
    const char *label = sp_profile_meta_string(profile, "label");
    if (label && label[0] && !(run->label = strdup(label)))
        return -1;
    if (report->num_warnings) {
        run->warnings = calloc(report->num_warnings, sizeof *run->warnings);
        if (!run->warnings)
            return -1;
        for (size_t k = 0; k < report->num_warnings; k++) {
            if (!(run->warnings[k] = strdup(report->warnings[k].message)))
                return -1;
            run->num_warnings++;
        }
    }
    return 0;
}

/* The statistics from a report already built with the collector's hooks. */
static int finish(sp_run_stats *out, run_collect *c, const sp_report *report,
                  const sp_profile *profile)
{
    int rc = copy_header(out, report, profile) == 0 && make_keys(out, c, profile) == 0 ? 0 : -1;
    if (rc == 0)
        delay_noise(out);
    return rc;
}

/* Streamed: 0 (out filled), 1 when this run needs the in-memory path (why
 * set), -1 out of memory. */
static int load_streamed(char **paths, size_t count, const sp_selection *sel, int by_name,
                         sp_run_stats *out, char *why, size_t whylen)
{
    sp_run_source src;
    if (sp_run_source_open(&src, (const char *const *)paths, count, why, whylen) != 0)
        return 1; /* the in-memory reader words the problem */
    run_collect c;
    run_collect_init(&c, by_name);
    sp_report_call_hook hook = run_collect_hook(&c);
    sp_report_options opt = {.selection = sel, .on_rank = run_collect_on_rank, .on_rank_ctx = &c,
                             .call_hook = &hook};
    sp_report report;
    int rc = -1;
    if (by_name && run_collect_grow(&c, src.profile->num_names) != 0)
        goto out;
    rc = sp_report_build_stream(&src, &opt, &report, why, whylen);
    if (rc < 0 && c.too_many_pending) {
        snprintf(why, whylen, "more than 4 Mi calls of one path overlapping on other lanes");
        rc = 1;
    } else if (rc < 0) {
        rc = 1; /* the in-memory path says it again, in its words */
    }
    if (rc == 0) {
        rc = finish(out, &c, &report, src.profile);
        sp_report_free(&report);
    }
out:
    run_collect_free(&c);
    sp_run_source_close(&src);
    return rc;
}

static int load_in_memory(char **paths, size_t count, const char *input,
                          const sp_selection *sel, int by_name, sp_run_stats *out, char *err,
                          size_t errlen)
{
    sp_profile *profile = sp_load_run((const char *const *)paths, count, err, errlen);
    if (!profile)
        return -1;
    if (profile->aggregate) {
        snprintf(err, errlen, "%s: the file keeps totals per region only (aggregate layout); "
                              "comparing needs the recorded calls", input);
        sp_profile_free(profile);
        return -1;
    }
    run_collect c;
    run_collect_init(&c, by_name);
    sp_report_options opt = {.selection = sel, .on_rank = run_collect_on_rank, .on_rank_ctx = &c};
    sp_report report;
    if (sp_report_build(profile, &opt, &report, err, errlen) != 0) {
        run_collect_free(&c);
        sp_profile_free(profile);
        return -1;
    }
    int rc = finish(out, &c, &report, profile);
    /* the keys are copies: the profile (all the events) can go */
    sp_report_free(&report);
    run_collect_free(&c);
    sp_profile_free(profile);
    if (rc != 0)
        snprintf(err, errlen, "out of memory computing the statistics of %s", input);
    return rc;
}

int sp_run_stats_load(const char *input, const sp_selection *sel, int by_name,
                      sp_run_stats *out, char *err, size_t errlen)
{
    return sp_run_stats_load_how(input, sel, by_name, SP_RUN_STATS_STREAM, out, err, errlen);
}

int sp_run_stats_load_how(const char *input, const sp_selection *sel, int by_name,
                          sp_run_stats_path how, sp_run_stats *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->wall_ns = -1;
    char **paths;
    size_t count;
    if (sp_run_inputs(input, &paths, &count, err, errlen) != 0)
        return -1;
    out->num_files = count;
    if (!(out->description = strdup(input))) {
        snprintf(err, errlen, "out of memory");
        sp_run_inputs_free(paths, (long)count);
        return -1;
    }
    char why[512] = "forced (SCOPEPROF_DIFF_IN_MEMORY=1)";
    int rc = 1;
    if (how == SP_RUN_STATS_STREAM) {
        rc = load_streamed(paths, count, sel, by_name, out, why, sizeof why);
        if (rc < 0)
            snprintf(err, errlen, "out of memory computing the statistics of %s", input);
        if (rc == 1) { /* start again from nothing */
            char *description = out->description;
            out->description = NULL;
            sp_run_stats_free(out);
            out->description = description;
            out->num_files = count;
            out->wall_ns = -1;
        }
    }
    out->streamed = rc == 0;
    if (rc == 1) {
        snprintf(out->path_note, sizeof out->path_note, "%s", why);
        rc = load_in_memory(paths, count, input, sel, by_name, out, err, errlen);
    }
    sp_run_inputs_free(paths, (long)count);
    if (rc != 0)
        sp_run_stats_free(out);
    return rc;
}

void sp_run_stats_free(sp_run_stats *run)
{
    for (size_t k = 0; k < run->num_keys; k++) {
        free(run->keys[k].key);
        free(run->keys[k].samples);
    }
    free(run->keys);
    for (size_t k = 0; k < run->num_warnings; k++)
        free(run->warnings[k]);
    free(run->warnings);
    free(run->ranks);
    free(run->label);
    free(run->description);
    memset(run, 0, sizeof *run);
}

const sp_key_stats *sp_run_stats_find(const sp_run_stats *run, const char *key)
{
    size_t lo = 0, hi = run->num_keys;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(run->keys[mid].key, key);
        if (c == 0)
            return &run->keys[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ---- metrics --------------------------------------------------------------- */

static const char *const metric_names[] = {"total", "own", "mean", "calls", "p50",
                                           "p95", "imbalance", "p99", "min", "max"};

int sp_metric_parse(const char *text, sp_metric *out)
{
    for (size_t k = 0; k < sizeof metric_names / sizeof *metric_names; k++)
        if (!strcmp(text, metric_names[k])) {
            *out = (sp_metric)k;
            return 0;
        }
    if (!strcmp(text, "avg")) {
        *out = SP_METRIC_MEAN;
        return 0;
    }
    if (!strcmp(text, "exclusive")) {
        *out = SP_METRIC_OWN;
        return 0;
    }
    return -1;
}

const char *sp_metric_name(sp_metric metric)
{
    return (size_t)metric < sizeof metric_names / sizeof *metric_names ? metric_names[metric]
                                                                       : "?";
}

int sp_metric_is_time(sp_metric metric)
{
    return metric != SP_METRIC_CALLS && metric != SP_METRIC_IMBALANCE;
}

/* Percentile p of the sorted sample, linear between neighbours. */
static double quantile(const sp_key_stats *k, double p)
{
    if (k->num_samples == 0)
        return 0;
    double pos = p * (double)(k->num_samples - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= k->num_samples)
        return (double)k->samples[k->num_samples - 1];
    double f = pos - (double)i;
    return (double)k->samples[i] * (1 - f) + (double)k->samples[i + 1] * f;
}

/* Distribution-free: the ranks n p +- z sqrt(n p (1 - p)) bound the
 * percentile with ~90 % confidence; half that span over z is its error. */
static double quantile_se(const sp_key_stats *k, double p)
{
    double n = (double)k->num_samples;
    if (k->num_samples < 2)
        return NAN;
    const double z = 1.6448536;
    double half = z * sqrt(n * p * (1 - p));
    double lo = floor(n * p - half), hi = ceil(n * p + half);
    if (lo < 0)
        lo = 0;
    if (hi > n - 1)
        hi = n - 1;
    return ((double)k->samples[(size_t)hi] - (double)k->samples[(size_t)lo]) / (2 * z);
}

double sp_key_metric(const sp_run_stats *run, const sp_key_stats *key, sp_metric metric)
{
    switch (metric) {
    case SP_METRIC_TOTAL: return key->total;
    case SP_METRIC_OWN: return key->own;
    case SP_METRIC_MEAN: return key->calls ? key->total / (double)key->calls : 0;
    case SP_METRIC_CALLS: return (double)key->calls;
    case SP_METRIC_P50: return quantile(key, 0.50);
    case SP_METRIC_P95: return quantile(key, 0.95);
    case SP_METRIC_P99: return quantile(key, 0.99);
    case SP_METRIC_MIN: return (double)key->minimum;
    case SP_METRIC_MAX: return (double)key->maximum;
    case SP_METRIC_IMBALANCE: {
        double mean = run->num_ranks ? key->total / (double)run->num_ranks : 0;
        return mean > 0 ? key->rank_max / mean : 0;
    }
    }
    return 0;
}

static double larger(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a > b ? a : b;
}

double sp_key_metric_se(const sp_run_stats *run, const sp_key_stats *key, sp_metric metric)
{
    double n = (double)key->calls;
    if (metric == SP_METRIC_CALLS)
        return 0;
    if (metric == SP_METRIC_IMBALANCE || key->calls == 0)
        return NAN;
    /* the delay noise of the time spent (NAN without an estimate) */
    double delay = larger(sqrt(run->noise_rate * key->total), run->delay_share * key->total);
    double delay_own = larger(sqrt(run->noise_rate * key->own), run->delay_share * key->own);
    if (key->calls < 2) {
        /* one call: every metric of it is its duration (own: its own time) */
        return metric == SP_METRIC_OWN ? delay_own : delay;
    }
    double var_incl = key->m2_incl / (n - 1), var_own = key->m2_own / (n - 1);
    switch (metric) {
    case SP_METRIC_TOTAL: return larger(sqrt(n * var_incl), delay);
    case SP_METRIC_OWN: return larger(sqrt(n * var_own), delay_own);
    case SP_METRIC_MEAN: return larger(sqrt(var_incl / n), delay / n);
    /* percentiles of many calls are robust to delays: order statistics */
    case SP_METRIC_P50: return quantile_se(key, 0.50);
    case SP_METRIC_P95: return quantile_se(key, 0.95);
    case SP_METRIC_P99: return quantile_se(key, 0.99);
    default: return NAN; /* min, max: extremes have no usable standard error */
    }
}
