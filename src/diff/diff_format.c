/* diff_format.c - a comparison as text (terminal), JSON and CSV (scripts,
 * CI).  The JSON keys and CSV columns are documented in docs/compare.md and
 * only ever gain new entries; scripts can rely on the existing ones. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/diff.h"
#include "scopeprof/export.h"
#include "scopeprof/report.h"

/* ---- notes ------------------------------------------------------------------- */

void sp_diff_notes(const sp_diff *diff, void (*note)(void *ctx, const char *line), void *ctx)
{
    char line[1200];
    size_t ranks_a = diff->num_a ? diff->a[0].num_ranks : 0;
    size_t ranks_b = diff->num_b ? diff->b[0].num_ranks : 0;
    int differ = ranks_a != ranks_b;
    for (size_t r = 1; r < diff->num_a; r++)
        differ |= diff->a[r].num_ranks != ranks_a;
    for (size_t r = 1; r < diff->num_b; r++)
        differ |= diff->b[r].num_ranks != ranks_b;
    if (differ) {
        snprintf(line, sizeof line,
                 "the runs have different rank counts (A %zu, B %zu): regions are matched by "
                 "%s and each run's numbers are summed over its ranks (select the same ranks "
                 "with --ranks to compare rank by rank)",
                 ranks_a, ranks_b, diff->by_name ? "name" : "call path");
        note(ctx, line);
    }
    for (int side = 0; side < 2; side++) {
        const sp_run_stats *runs = side ? diff->b : diff->a;
        size_t k = side ? diff->num_b : diff->num_a;
        for (size_t r = 0; r < k; r++)
            for (size_t w = 0; w < runs[r].num_warnings; w++) {
                snprintf(line, sizeof line, "%c: %s: left out: %s", side ? 'B' : 'A',
                         runs[r].description, runs[r].warnings[w]);
                note(ctx, line);
            }
    }
}

/* ---- text -------------------------------------------------------------------- */

static void value_text(char *buf, size_t len, sp_metric metric, double v, int sign)
{
    const char *plus = sign && v > 0 ? "+" : sign && v < 0 ? "-" : "";
    double a = sign ? fabs(v) : v;
    if (sp_metric_is_time(metric)) {
        char t[32];
        sp_format_duration((int64_t)(a + 0.5), t, sizeof t);
        snprintf(buf, len, "%s%s", plus, t);
    } else if (metric == SP_METRIC_CALLS) {
        if (a == floor(a))
            snprintf(buf, len, "%s%.0f", plus, a);
        else
            snprintf(buf, len, "%s%.1f", plus, a);
    } else {
        snprintf(buf, len, "%s%.3f", plus, a);
    }
}

static size_t columns(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

static void cell(FILE *out, const char *s, size_t width)
{
    fputc(' ', out);
    for (size_t c = columns(s); c < width; c++)
        fputc(' ', out);
    fputs(s, out);
}

static void print_run(FILE *out, char side, size_t index, size_t count, const sp_run_stats *run)
{
    char wall[32];
    sp_format_duration(run->wall_ns, wall, sizeof wall);
    char tag[16];
    if (count > 1)
        snprintf(tag, sizeof tag, "%c%zu", side, index + 1);
    else
        snprintf(tag, sizeof tag, "%c", side);
    fprintf(out, "  %-3s %s", tag, run->description);
    if (run->label)
        fprintf(out, " (%s)", run->label);
    fprintf(out, "\n      ranks %zu", run->num_ranks);
    if (run->num_threads)
        fprintf(out, "   threads %zu", run->num_threads);
    else
        fprintf(out, "   threads -");
    fprintf(out, "   wall %s   calls %llu\n", wall, (unsigned long long)run->num_calls);
}

static void print_note(void *ctx, const char *line)
{
    fprintf((FILE *)ctx, "  note: %s\n", line);
}

static const char *metric_words(sp_metric m)
{
    switch (m) {
    case SP_METRIC_TOTAL: return "total time (sum of the call durations)";
    case SP_METRIC_OWN: return "own time (exclusive: without children)";
    case SP_METRIC_MEAN: return "mean call duration";
    case SP_METRIC_CALLS: return "number of calls";
    case SP_METRIC_P50: return "median call duration";
    case SP_METRIC_P95: return "95th percentile of the call durations";
    case SP_METRIC_IMBALANCE: return "imbalance (largest / mean rank total)";
    case SP_METRIC_P99: return "99th percentile of the call durations";
    case SP_METRIC_MIN: return "shortest call";
    case SP_METRIC_MAX: return "longest call";
    }
    return "?";
}

#define NAME_W 28 /* 80 columns in all */

int sp_diff_write_text(FILE *out, const sp_diff *diff, const sp_diff_output *opt)
{
    const char *bold = opt->color ? "\033[1m" : "", *dim = opt->color ? "\033[2m" : "",
               *reset = opt->color ? "\033[0m" : "", *red = opt->color ? "\033[31m" : "",
               *blue = opt->color ? "\033[34m" : "";
    fprintf(out, "%sscopeprof %s%s: %s; matched by %s\n", bold,
            opt->command ? opt->command : "diff", reset, metric_words(diff->metric),
            diff->by_name ? "name" : "call path");
    for (size_t r = 0; r < diff->num_a; r++)
        print_run(out, 'A', r, diff->num_a, &diff->a[r]);
    for (size_t r = 0; r < diff->num_b; r++)
        print_run(out, 'B', r, diff->num_b, &diff->b[r]);
    sp_diff_notes(diff, print_note, out);
    fprintf(out, "\n%s%-*s", dim, NAME_W, "region");
    cell(out, diff->num_a > 1 ? "A (mean)" : "A", 9);
    cell(out, diff->num_b > 1 ? "B (mean)" : "B", 9);
    cell(out, "change", 9);
    cell(out, "%", 7);
    cell(out, "90% interval", 13);
    fprintf(out, "%s\n", reset);
    size_t hidden = 0;
    for (size_t k = 0; k < diff->num_rows; k++) {
        const sp_diff_row *row = &diff->rows[k];
        if (!sp_diff_row_shown(row, opt->threshold)) {
            hidden++;
            continue;
        }
        fputs(row->key, out);
        size_t used = columns(row->key);
        if (used > NAME_W) {
            fputc('\n', out);
            used = 0;
        }
        for (; used < NAME_W; used++)
            fputc(' ', out);
        char buf[64];
        if (row->status == SP_DIFF_NEW)
            cell(out, "-", 9);
        else
            value_text(buf, sizeof buf, diff->metric, row->a, 0), cell(out, buf, 9);
        if (row->status == SP_DIFF_REMOVED)
            cell(out, "-", 9);
        else
            value_text(buf, sizeof buf, diff->metric, row->b, 0), cell(out, buf, 9);
        value_text(buf, sizeof buf, diff->metric, row->delta, 1);
        cell(out, buf, 9);
        const char *colour = row->delta > 0 ? red : row->delta < 0 ? blue : "";
        if (row->status == SP_DIFF_NEW)
            snprintf(buf, sizeof buf, "new");
        else if (row->status == SP_DIFF_REMOVED)
            snprintf(buf, sizeof buf, "removed");
        else if (isfinite(row->pct))
            snprintf(buf, sizeof buf, "%+.1f%%", row->pct);
        else
            snprintf(buf, sizeof buf, "-");
        fputs(colour, out);
        cell(out, buf, 7);
        fputs(opt->color ? reset : "", out);
        if (isfinite(row->pct_low) && fabs(row->pct_low) < 100 && fabs(row->pct_high) < 100)
            snprintf(buf, sizeof buf, "%+.1f..%+.1f", row->pct_low, row->pct_high);
        else if (isfinite(row->pct_low))
            snprintf(buf, sizeof buf, "%+.0f..%+.0f", row->pct_low, row->pct_high);
        else
            snprintf(buf, sizeof buf, "%s", row->status == SP_DIFF_BOTH ? "?" : "");
        cell(out, buf, 13);
        if (opt->gate && row->flagged)
            fprintf(out, "  %sREGRESSION%s", red, reset);
        fputc('\n', out);
    }
    if (hidden)
        fprintf(out, "%s(%zu region%s changed by less than %g %%: hidden by --threshold)%s\n", dim,
                hidden, hidden == 1 ? "" : "s", opt->threshold, reset);
    return ferror(out) ? -1 : 0;
}

/* ---- JSON -------------------------------------------------------------------- */

static void json_number(sp_json *j, double v, sp_metric metric)
{
    /* times and counts are whole numbers of ns / calls when they come from
     * one run; the mean over runs keeps its fraction */
    if (isfinite(v) && metric != SP_METRIC_IMBALANCE && v == floor(v) && fabs(v) < 9e15)
        sp_json_int(j, (int64_t)v);
    else
        sp_json_double(j, v);
}

static void json_side(sp_json *j, const sp_run_stats *runs, size_t count)
{
    sp_json_begin_array(j);
    for (size_t r = 0; r < count; r++) {
        const sp_run_stats *run = &runs[r];
        sp_json_begin_object(j);
        sp_json_key(j, "input");
        sp_json_string(j, run->description);
        sp_json_key(j, "files");
        sp_json_uint(j, run->num_files);
        sp_json_key(j, "label");
        sp_json_string(j, run->label);
        sp_json_key(j, "ranks");
        sp_json_begin_array(j);
        for (size_t k = 0; k < run->num_ranks; k++)
            sp_json_uint(j, run->ranks[k]);
        sp_json_end_array(j);
        sp_json_key(j, "threads");
        sp_json_uint(j, run->num_threads);
        sp_json_key(j, "wall_ns");
        sp_json_int(j, run->wall_ns);
        sp_json_key(j, "calls");
        sp_json_uint(j, run->num_calls);
        sp_json_end_object(j);
    }
    sp_json_end_array(j);
}

static void json_note(void *ctx, const char *line)
{
    sp_json_string((sp_json *)ctx, line);
}

static const char *status_name(sp_diff_status s)
{
    return s == SP_DIFF_NEW ? "new" : s == SP_DIFF_REMOVED ? "removed" : "matched";
}

static const char *noise_name(sp_diff_noise n)
{
    return n == SP_NOISE_RUNS ? "runs" : n == SP_NOISE_CALLS ? "calls" : "none";
}

int sp_diff_write_json(FILE *out, const sp_diff *diff, const sp_diff_output *opt)
{
    sp_json j;
    sp_json_init(&j, out);
    sp_json_begin_object(&j);
    sp_json_key(&j, "scopeprof");
    sp_json_string(&j, opt->command ? opt->command : "diff");
    sp_json_key(&j, "format_version");
    sp_json_int(&j, 1);
    sp_json_key(&j, "metric");
    sp_json_string(&j, sp_metric_name(diff->metric));
    sp_json_key(&j, "unit");
    sp_json_string(&j, sp_metric_is_time(diff->metric) ? "ns"
                       : diff->metric == SP_METRIC_CALLS ? "calls"
                                                         : "ratio");
    sp_json_key(&j, "match");
    sp_json_string(&j, diff->by_name ? "name" : "path");
    sp_json_key(&j, "threshold_pct");
    sp_json_double(&j, opt->threshold);
    sp_json_key(&j, "a");
    json_side(&j, diff->a, diff->num_a);
    sp_json_key(&j, "b");
    json_side(&j, diff->b, diff->num_b);
    sp_json_key(&j, "notes");
    sp_json_begin_array(&j);
    sp_diff_notes(diff, json_note, &j);
    sp_json_end_array(&j);
    size_t flagged = 0;
    sp_json_key(&j, "regions");
    sp_json_begin_array(&j);
    for (size_t k = 0; k < diff->num_rows; k++) {
        const sp_diff_row *row = &diff->rows[k];
        flagged += row->flagged != 0;
        if (!sp_diff_row_shown(row, opt->threshold))
            continue;
        sp_json_newline(&j);
        sp_json_begin_object(&j);
        sp_json_key(&j, "key");
        sp_json_string(&j, row->key);
        sp_json_key(&j, "name");
        sp_json_string(&j, row->name);
        sp_json_key(&j, "depth");
        sp_json_uint(&j, row->depth);
        sp_json_key(&j, "status");
        sp_json_string(&j, status_name(row->status));
        sp_json_key(&j, "a");
        json_number(&j, row->a, diff->metric);
        sp_json_key(&j, "b");
        json_number(&j, row->b, diff->metric);
        sp_json_key(&j, "delta");
        json_number(&j, row->delta, diff->metric);
        sp_json_key(&j, "pct");
        sp_json_double(&j, row->pct);
        sp_json_key(&j, "pct_low");
        sp_json_double(&j, row->pct_low);
        sp_json_key(&j, "pct_high");
        sp_json_double(&j, row->pct_high);
        sp_json_key(&j, "noise");
        sp_json_string(&j, noise_name(row->noise));
        sp_json_key(&j, "calls_a");
        sp_json_uint(&j, row->calls_a);
        sp_json_key(&j, "calls_b");
        sp_json_uint(&j, row->calls_b);
        if (opt->gate) {
            sp_json_key(&j, "flagged");
            sp_json_bool(&j, row->flagged);
        }
        sp_json_end_object(&j);
    }
    sp_json_end_array(&j);
    if (opt->gate) {
        sp_json_key(&j, "max_regression_pct");
        sp_json_double(&j, opt->max_pct);
        sp_json_key(&j, "flagged");
        sp_json_uint(&j, flagged);
    }
    sp_json_end_object(&j);
    fputc('\n', out);
    return ferror(out) ? -1 : 0;
}

/* ---- CSV --------------------------------------------------------------------- */

static void csv_field(FILE *out, const char *s)
{
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

static void csv_number(FILE *out, double v)
{
    fputc(',', out);
    if (!isfinite(v))
        return; /* empty field: unknown */
    if (v == floor(v) && fabs(v) < 9e15)
        fprintf(out, "%.0f", v);
    else
        fprintf(out, "%.17g", v);
}

int sp_diff_write_csv(FILE *out, const sp_diff *diff, const sp_diff_output *opt)
{
    fputs("key,name,depth,status,metric,a,b,delta,pct,pct_low,pct_high,noise,calls_a,calls_b",
          out);
    fputs(opt->gate ? ",flagged\n" : "\n", out);
    for (size_t k = 0; k < diff->num_rows; k++) {
        const sp_diff_row *row = &diff->rows[k];
        if (!sp_diff_row_shown(row, opt->threshold))
            continue;
        csv_field(out, row->key);
        fputc(',', out);
        csv_field(out, row->name);
        fprintf(out, ",%u,%s,%s", row->depth, status_name(row->status),
                sp_metric_name(diff->metric));
        csv_number(out, row->a);
        csv_number(out, row->b);
        csv_number(out, row->delta);
        csv_number(out, row->pct);
        csv_number(out, row->pct_low);
        csv_number(out, row->pct_high);
        fprintf(out, ",%s,%llu,%llu", noise_name(row->noise), (unsigned long long)row->calls_a,
                (unsigned long long)row->calls_b);
        if (opt->gate)
            fprintf(out, ",%d", row->flagged != 0);
        fputc('\n', out);
    }
    return ferror(out) ? -1 : 0;
}
