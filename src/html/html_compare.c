/* html_compare.c - the comparison of several runs, the first as baseline:
 * per region name, calls, inclusive and exclusive time in every run and the
 * change against the baseline.  Computed from the report model only and
 * kept in this one file, so it can call `scopeprof diff`'s code (src/diff/)
 * once that exists, without touching the rest of the page. */
#include <stdlib.h>
#include <string.h>

#include "html_model.h"

/* The flat row of region `name` in a run, or NULL. */
static const sp_report_flat_row *find(const html_run *run, const char *name)
{
    const sp_profile *p = run->profile;
    for (size_t k = 0; k < run->report.num_flat; k++)
        if (!strcmp(p->names[run->report.flat[k].region], name))
            return &run->report.flat[k];
    return NULL;
}

/* Region names of every run, baseline order first, each once. */
static size_t names_of(const html_run *runs, size_t num_runs, const char ***out)
{
    size_t cap = 0, n = 0;
    for (size_t r = 0; r < num_runs; r++)
        cap += runs[r].report.num_flat;
    const char **v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v) {
        *out = NULL;
        return 0;
    }
    for (size_t r = 0; r < num_runs; r++)
        for (size_t k = 0; k < runs[r].report.num_flat; k++) {
            const char *name = runs[r].profile->names[runs[r].report.flat[k].region];
            size_t j = 0;
            while (j < n && strcmp(v[j], name))
                j++;
            if (j == n)
                v[n++] = name;
        }
    *out = v;
    return n;
}

void html_compare_json(sp_json *j, const html_run *runs, size_t num_runs)
{
    const char **names;
    size_t n = names_of(runs, num_runs, &names);
    sp_json_begin_object(j);
    sp_json_key(j, "wall");
    sp_json_begin_array(j);
    for (size_t r = 0; r < num_runs; r++)
        sp_json_int(j, runs[r].report.wall_ns);
    sp_json_end_array(j);
    sp_json_key(j, "rows");
    sp_json_begin_array(j);
    for (size_t k = 0; k < n; k++) {
        sp_json_newline(j);
        sp_json_begin_object(j);
        sp_json_key(j, "name");
        html_json_string(j, names[k]);
        sp_json_key(j, "runs");
        sp_json_begin_array(j);
        for (size_t r = 0; r < num_runs; r++) {
            const sp_report_flat_row *f = find(&runs[r], names[k]);
            if (!f) {
                sp_json_null(j);
                continue;
            }
            sp_json_begin_array(j);
            sp_json_uint(j, f->calls);
            sp_json_int(j, f->inclusive);
            sp_json_int(j, f->exclusive);
            sp_json_end_array(j);
        }
        sp_json_end_array(j);
        sp_json_end_object(j);
    }
    sp_json_end_array(j);
    sp_json_end_object(j);
    free(names);
}

static void change_cell(FILE *out, int64_t base, int64_t now)
{
    if (base <= 0 || now < 0) {
        fputs("<td>-</td>", out);
        return;
    }
    double pct = 100.0 * ((double)now - (double)base) / (double)base;
    fprintf(out, "<td class=\"%s\">%+.1f %%</td>", pct > 5 ? "worse" : pct < -5 ? "better" : "",
            pct);
}

void html_compare_table(FILE *out, const html_run *runs, size_t num_runs)
{
    const char **names;
    size_t n = names_of(runs, num_runs, &names);
    fputs("<table class=\"data\" id=\"compare-table\"><thead><tr><th>region</th>", out);
    for (size_t r = 0; r < num_runs; r++) {
        const char *label = sp_profile_meta_string(runs[r].profile, "label");
        fprintf(out, "<th>%s %zu", r ? "run" : "baseline", r + 1);
        if (label && label[0]) {
            fputs(": ", out);
            html_text(out, label);
        }
        fputs(" inclusive</th>", out);
        if (r)
            fputs("<th>change</th>", out);
    }
    fputs("</tr></thead><tbody>\n", out);
    char buf[32];
    fputs("<tr><td>(wall time)</td>", out);
    for (size_t r = 0; r < num_runs; r++) {
        sp_format_duration(runs[r].report.wall_ns, buf, sizeof buf);
        fprintf(out, "<td>%s</td>", buf);
        if (r)
            change_cell(out, runs[0].report.wall_ns, runs[r].report.wall_ns);
    }
    fputs("</tr>\n", out);
    /* Runs on different rank counts: strong-scaling speedup and efficiency
     * of the wall time against the baseline (as the Python report's
     * --scaling strong). */
    int scaling = 0;
    for (size_t r = 1; r < num_runs; r++)
        scaling |= runs[r].report.num_ranks != runs[0].report.num_ranks;
    if (scaling) {
        fputs("<tr id=\"compare-ranks\"><td>(ranks)</td>", out);
        for (size_t r = 0; r < num_runs; r++)
            fprintf(out, "<td>%zu</td>%s", runs[r].report.num_ranks, r ? "<td></td>" : "");
        fputs("</tr>\n<tr id=\"compare-speedup\"><td>(speedup, efficiency)</td><td>1.00</td>",
              out);
        for (size_t r = 1; r < num_runs; r++) {
            double base = (double)runs[0].report.wall_ns, now = (double)runs[r].report.wall_ns;
            double speedup = now > 0 ? base / now : 0;
            double more = runs[0].report.num_ranks
                              ? (double)runs[r].report.num_ranks / (double)runs[0].report.num_ranks
                              : 0;
            fprintf(out, "<td>%.2f</td><td>%.0f %%</td>", speedup,
                    more > 0 ? 100.0 * speedup / more : 0);
        }
        fputs("</tr>\n", out);
    }
    for (size_t k = 0; k < n; k++) {
        fputs("<tr><td>", out);
        html_text(out, names[k]);
        fputs("</td>", out);
        const sp_report_flat_row *base = find(&runs[0], names[k]);
        for (size_t r = 0; r < num_runs; r++) {
            const sp_report_flat_row *f = find(&runs[r], names[k]);
            sp_format_duration(f ? f->inclusive : -1, buf, sizeof buf);
            fprintf(out, "<td>%s</td>", buf);
            if (r)
                change_cell(out, base ? base->inclusive : -1, f ? f->inclusive : -1);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
    free(names);
}
