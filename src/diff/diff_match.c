/* diff_match.c - the keys of two sides of runs matched, the change of the
 * metric and its confidence interval, the regression gate.  The method is
 * described in include/scopeprof/diff.h and docs/compare.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/diff.h"

double sp_t95(double df)
{
    /* One-sided 95 % quantiles of Student's t for 1..30 degrees of freedom. */
    static const double t[30] = {6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860,
                                 1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753, 1.746,
                                 1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711,
                                 1.708, 1.706, 1.703, 1.701, 1.699, 1.697};
    if (df <= 0 || df > 30)
        return 1.6448536;
    size_t k = (size_t)df; /* fractional df rounded down: wider, safer */
    return t[k < 1 ? 0 : k - 1];
}

/* One side's estimate of a key's metric. */
typedef struct side_estimate {
    double mean;          /* over the side's runs, absent = 0 */
    double var;           /* variance of that mean */
    int has_var;
    int run_based;        /* var from the runs' spread (k >= 2) */
    double run_rel_var;   /* sample variance / mean^2 (run_based only) */
    uint64_t calls;
    int present;          /* in some run */
} side_estimate;

static side_estimate estimate(const sp_run_stats *runs, size_t k, const char *key,
                              sp_metric metric)
{
    side_estimate e = {0};
    double sum = 0, sum_sq = 0, pc_var = 0;
    int pc_ok = 1;
    for (size_t r = 0; r < k; r++) {
        const sp_key_stats *ks = sp_run_stats_find(&runs[r], key);
        double v = 0;
        if (ks) {
            e.present = 1;
            e.calls += ks->calls;
            v = sp_key_metric(&runs[r], ks, metric);
            double se = sp_key_metric_se(&runs[r], ks, metric);
            if (isfinite(se))
                pc_var += se * se;
            else
                pc_ok = 0;
        }
        /* absent from a run: it took 0 there, exactly */
        sum += v;
        sum_sq += v * v;
    }
    e.mean = sum / (double)k;
    pc_var /= (double)k * (double)k;
    if (k >= 2) {
        double s2 = (sum_sq - sum * sum / (double)k) / (double)(k - 1);
        if (s2 < 0)
            s2 = 0; /* rounding */
        double rv = s2 / (double)k;
        e.var = pc_ok && pc_var > rv ? pc_var : rv;
        e.has_var = 1;
        e.run_based = 1;
        e.run_rel_var = e.mean != 0 ? s2 / (e.mean * e.mean) : 0;
    } else {
        e.var = pc_var;
        e.has_var = pc_ok && e.present;
    }
    return e;
}

/* A single run on one side borrows the relative run-to-run spread of the
 * other side (same program, same machine: same noise, scaled). */
static void borrow(side_estimate *single, const side_estimate *other)
{
    if (single->run_based || !other->run_based)
        return;
    double v = other->run_rel_var * single->mean * single->mean;
    single->var = single->has_var && single->var > v ? single->var : v;
    single->has_var = 1;
}

static void compare(sp_diff_row *row, side_estimate a, side_estimate b, size_t ka, size_t kb)
{
    row->a = a.mean;
    row->b = b.mean;
    row->delta = b.mean - a.mean;
    row->calls_a = a.calls;
    row->calls_b = b.calls;
    row->status = a.present && b.present ? SP_DIFF_BOTH : a.present ? SP_DIFF_REMOVED
                                                                    : SP_DIFF_NEW;
    row->pct = a.mean != 0 ? 100.0 * row->delta / a.mean : NAN;
    row->pct_low = row->pct_high = NAN;
    row->noise = SP_NOISE_NONE;
    if (row->status != SP_DIFF_BOTH || a.mean == 0)
        return;
    borrow(&a, &b);
    borrow(&b, &a);
    if (!a.has_var || !b.has_var)
        return;
    double df = (a.run_based ? (double)ka - 1 : 0) + (b.run_based ? (double)kb - 1 : 0);
    double ratio = b.mean / a.mean;
    /* delta method for the ratio of two independent means */
    double se = sqrt(b.var + ratio * ratio * a.var) / fabs(a.mean);
    double half = 100.0 * sp_t95(df) * se;
    row->pct_low = row->pct - half;
    row->pct_high = row->pct + half;
    row->noise = a.run_based || b.run_based ? SP_NOISE_RUNS : SP_NOISE_CALLS;
}

static int by_string(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The key and its name/depth in whichever run has it. */
static const sp_key_stats *any_key(const sp_run_stats *runs, size_t k, const char *key)
{
    for (size_t r = 0; r < k; r++) {
        const sp_key_stats *ks = sp_run_stats_find(&runs[r], key);
        if (ks)
            return ks;
    }
    return NULL;
}

int sp_diff_build(const sp_run_stats *a, size_t num_a, const sp_run_stats *b, size_t num_b,
                  sp_metric metric, sp_diff *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->metric = metric;
    out->a = a;
    out->b = b;
    out->num_a = num_a;
    out->num_b = num_b;
    size_t total = 0;
    for (size_t r = 0; r < num_a; r++)
        total += a[r].num_keys;
    for (size_t r = 0; r < num_b; r++)
        total += b[r].num_keys;
    const char **keys = malloc((total ? total : 1) * sizeof *keys);
    out->rows = calloc(total ? total : 1, sizeof *out->rows);
    if (!keys || !out->rows) {
        free(keys);
        free(out->rows);
        out->rows = NULL;
        snprintf(err, errlen, "out of memory matching the runs");
        return -1;
    }
    size_t n = 0;
    for (size_t r = 0; r < num_a; r++)
        for (size_t k = 0; k < a[r].num_keys; k++)
            keys[n++] = a[r].keys[k].key;
    for (size_t r = 0; r < num_b; r++)
        for (size_t k = 0; k < b[r].num_keys; k++)
            keys[n++] = b[r].keys[k].key;
    qsort(keys, n, sizeof *keys, by_string);
    for (size_t k = 0; k < n; k++) {
        if (k > 0 && !strcmp(keys[k], keys[k - 1]))
            continue;
        sp_diff_row *row = &out->rows[out->num_rows++];
        const sp_key_stats *ks = any_key(b, num_b, keys[k]);
        if (!ks)
            ks = any_key(a, num_a, keys[k]);
        row->key = ks->key;
        row->name = ks->name;
        row->depth = ks->depth;
        compare(row, estimate(a, num_a, keys[k], metric), estimate(b, num_b, keys[k], metric),
                num_a, num_b);
    }
    free(keys);
    return 0;
}

void sp_diff_free(sp_diff *diff)
{
    free(diff->rows);
    memset(diff, 0, sizeof *diff);
}

static int cmp_desc(double x, double y)
{
    return (x < y) - (x > y);
}

static int row_cmp(const void *x, const void *y, void *ctx)
{
    const sp_diff_row *p = x, *q = y;
    sp_diff_sort key = *(const sp_diff_sort *)ctx;
    int c = 0;
    if (key == SP_DIFF_SORT_DELTA) {
        c = cmp_desc(fabs(p->delta), fabs(q->delta));
    } else if (key == SP_DIFF_SORT_PCT) {
        /* new and removed (no percentage) first, then the largest changes */
        int pn = !isfinite(p->pct), qn = !isfinite(q->pct);
        c = pn != qn ? qn - pn : pn ? 0 : cmp_desc(fabs(p->pct), fabs(q->pct));
    }
    return c ? c : strcmp(p->key, q->key);
}

void sp_diff_sort_rows(sp_diff *diff, sp_diff_sort key)
{
    qsort_r(diff->rows, diff->num_rows, sizeof *diff->rows, row_cmp, &key);
}

int sp_diff_parse_sort(const char *text, sp_diff_sort *out)
{
    static const char *const names[] = {"delta", "pct", "name"};
    for (size_t k = 0; k < 3; k++)
        if (!strcmp(text, names[k])) {
            *out = (sp_diff_sort)k;
            return 0;
        }
    return -1;
}

size_t sp_diff_judge(sp_diff *diff, double max_pct, int fail_on_new, int ignore_noise)
{
    size_t flagged = 0;
    for (size_t k = 0; k < diff->num_rows; k++) {
        sp_diff_row *row = &diff->rows[k];
        if (row->status == SP_DIFF_NEW)
            row->flagged = fail_on_new;
        else if (row->status == SP_DIFF_BOTH)
            row->flagged = isfinite(row->pct) && row->pct > max_pct &&
                           (ignore_noise || (isfinite(row->pct_low) && row->pct_low > max_pct));
        else
            row->flagged = 0;
        flagged += row->flagged != 0;
    }
    return flagged;
}

int sp_diff_row_shown(const sp_diff_row *row, double threshold)
{
    if (row->status != SP_DIFF_BOTH)
        return 1;
    if (threshold <= 0)
        return 1;
    return !isfinite(row->pct) || fabs(row->pct) >= threshold;
}
