/* html_report.c - sp_html_report: build the model of every run, then write
 * the page (html_page.c). */
#include <stdlib.h>
#include <string.h>

#include "html_model.h"
#include "html_report.h"

int sp_html_write(FILE *out, const html_run *runs, size_t num_runs);

int sp_html_report(FILE *out, const sp_html_input *inputs, size_t num_runs,
                   const sp_selection *selection, const sp_html_limits *limits,
                   size_t *fallback, char *err, size_t errlen)
{
    if (num_runs == 0) {
        snprintf(err, errlen, "no run to report");
        return -1;
    }
    html_run *runs = calloc(num_runs, sizeof *runs);
    if (!runs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    html_options opt = {.selection = selection};
    if (limits) {
        opt.bin_budget = limits->timeline_bins;
        opt.exact_budget = limits->timeline_calls;
    }
    int rc = 0;
    size_t built = 0;
    for (; built < num_runs && rc == 0; built++) {
        const sp_html_input *in = &inputs[built];
        rc = in->source ? html_run_build_stream(&runs[built], in->source, in->files,
                                                in->num_files, &opt, err, errlen)
                        : html_run_build(&runs[built], in->profile, in->files, in->num_files,
                                         &opt, err, errlen);
        if (rc > 0) { /* not built: the caller reads it in memory */
            *fallback = built;
            break;
        }
    }
    if (rc > 0) {
        for (size_t k = 0; k < built; k++)
            html_run_free(&runs[k]);
        free(runs);
        return 1;
    }
    /* once every run is built: a run read again in memory warns once */
    for (size_t b = 0; rc == 0 && b < built; b++) {
        const sp_report *r = &runs[b].report;
        for (size_t k = 0; limits && limits->warnings && k < r->num_warnings; k++)
            fprintf(limits->warnings, "scopeprof report: warning: %s (its calls are counted "
                    "from the file's per-region totals; it is not in the tree or the "
                    "timeline)\n", r->warnings[k].message);
    }
    if (rc == 0 && sp_html_write(out, runs, num_runs) < 0) {
        snprintf(err, errlen, "write failed");
        rc = -1;
    }
    for (size_t k = 0; k < built; k++)
        html_run_free(&runs[k]);
    free(runs);
    return rc;
}
