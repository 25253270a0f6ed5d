/* cmd_report_html.c - `scopeprof report FILES -o report.html`: load the
 * runs (one, or several to compare: separated by --compare, or told apart
 * by their run ids) and write the HTML page (src/html/). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd_report_html.h"
#include "commands.h"
#include "html/html_report.h"
#include <strings.h>
#include "scopeprof/h5.h"
#include "scopeprof/stream.h"

#define CMD "report"

int cli_is_html_path(const char *path)
{
    size_t n = strlen(path);
    return (n > 5 && !strcasecmp(path + n - 5, ".html")) ||
           (n > 4 && !strcasecmp(path + n - 4, ".htm"));
}

/* Files of one run given together whose run ids differ: group them by run
 * id, in order of first appearance (files without one join the first). */
static size_t group_by_run_id(char **files, size_t num_files, size_t *run_of)
{
    char **ids = calloc(num_files, sizeof *ids);
    size_t runs = 0;
    for (size_t k = 0; k < num_files; k++) {
        char err[512];
        sp_profile *p = sp_h5_read(files[k], err, sizeof err);
        const char *id = p ? sp_profile_meta_string(p, "run_id") : NULL;
        size_t r = 0;
        while (id && ids && r < runs && (!ids[r] || strcmp(ids[r], id)))
            r++;
        if (!id)
            r = 0;
        if (r == runs && ids)
            ids[runs++] = id ? strdup(id) : NULL;
        run_of[k] = r;
        sp_profile_free(p);
    }
    for (size_t r = 0; ids && r < runs; r++)
        free(ids[r]);
    free(ids);
    return runs ? runs : 1;
}

/* Streamed unless SCOPEPROF_REPORT_IN_MEMORY=1 (docs/stream.md). */
static int stream_allowed(void)
{
    const char *force = getenv("SCOPEPROF_REPORT_IN_MEMORY");
    return !(force && !strcmp(force, "1"));
}

/* SCOPEPROF_REPORT_TRACE=1: which path each run took, on stderr. */
static void trace_path(size_t run, size_t num_runs, const char *why)
{
    const char *trace = getenv("SCOPEPROF_REPORT_TRACE");
    if (!trace || strcmp(trace, "1"))
        return;
    char which[48] = "";
    if (num_runs > 1)
        snprintf(which, sizeof which, "run %zu: ", run + 1);
    fprintf(stderr, "scopeprof report: html: %s%s%s\n", which, why ? "in memory: " : "streamed",
            why ? why : "");
}

/* Run r's source, when it opens and its run can stream: 0 (sources[r]
 * set), else 1 with why (the in-memory reader then words any problem). */
static int open_source(sp_run_source *src, const sp_html_input *in, char *why, size_t whylen)
{
    if (sp_run_source_open(src, in->files, in->num_files, why, whylen) != 0)
        return 1;
    /* MPI columns allowed: the page does not draw from them, and the run
     * source checked that they read (its `unreadable`) */
    const char *reason = sp_run_source_unstreamable_calls(src);
    if (!reason)
        return 0;
    snprintf(why, whylen, "%s", reason);
    sp_run_source_close(src);
    return 1;
}

int cmd_report_html(char **files, size_t num_files, const size_t *run_of, size_t num_runs,
                    const sp_selection *sel, const char *out_path)
{
    int status = 1;
    size_t *groups = malloc(num_files * sizeof *groups);
    sp_profile **profiles = calloc(num_files, sizeof *profiles);
    sp_run_source *sources = calloc(num_files, sizeof *sources);
    sp_html_input *inputs = calloc(num_files, sizeof *inputs);
    char **sorted = malloc(num_files * sizeof *sorted);
    char err[1024] = "";
    FILE *f = NULL;
    int stream = stream_allowed();
    if (!groups || !profiles || !sources || !inputs || !sorted) {
        status = cli_file_error(CMD, NULL, "out of memory");
        goto out;
    }
    memcpy(groups, run_of, num_files * sizeof *groups);
    /* One run given without --compare: its files may still come from
     * several runs (different run ids), which the loader refuses. */
    if (num_runs == 1) {
        sp_html_input all = {.files = (const char *const *)files, .num_files = num_files};
        char why[1024];
        if (stream && open_source(&sources[0], &all, why, sizeof why) == 0) {
            profiles[0] = NULL; /* streamed: the source holds the skeleton */
        } else {
            sp_profile *p = sp_load_run((const char *const *)files, num_files, err, sizeof err);
            if (p) {
                profiles[0] = p;
            } else if (strstr(err, "come from different runs")) {
                num_runs = group_by_run_id(files, num_files, groups);
            } else {
                if (stream) /* which path, then the in-memory reader's words */
                    trace_path(0, 1, why);
                status = cli_file_error(CMD, num_files == 1 ? files[0] : NULL, "%s", err);
                goto out;
            }
            if (stream && num_runs == 1)
                trace_path(0, 1, why);
        }
    }
    size_t used = 0;
    for (size_t r = 0; r < num_runs; r++) {
        size_t first = used;
        for (size_t k = 0; k < num_files; k++)
            if (groups[k] == r)
                sorted[used++] = files[k];
        inputs[r].files = (const char *const *)sorted + first;
        inputs[r].num_files = used - first;
        char why[1024] = "forced (SCOPEPROF_REPORT_IN_MEMORY=1)";
        if (!profiles[r] && !sources[r].profile && stream &&
            open_source(&sources[r], &inputs[r], why, sizeof why) != 0 && num_runs > 1)
            trace_path(r, num_runs, why);
        if (sources[r].profile) {
            inputs[r].source = &sources[r];
            inputs[r].profile = sources[r].profile;
            continue;
        }
        if (!profiles[r]) {
            profiles[r] = sp_load_run(inputs[r].files, inputs[r].num_files, err, sizeof err);
            if (!profiles[r]) {
                status = cli_file_error(CMD, inputs[r].num_files == 1 ? inputs[r].files[0] : NULL,
                                        "%s", err);
                goto out;
            }
        }
        inputs[r].profile = profiles[r];
    }
    f = fopen(out_path, "wb");
    if (!f) {
        status = cli_file_error(CMD, out_path, "cannot create: %s", strerror(errno));
        goto out;
    }
    sp_html_limits limits = {.warnings = stderr};
    int rc;
    size_t fallback;
    /* A run that cannot be streamed after all (a problem in a rank, which
     * the in-memory path words) is read in memory, and the page built again. */
    while ((rc = sp_html_report(f, inputs, num_runs, sel, &limits, &fallback, err,
                                sizeof err)) > 0) {
        trace_path(fallback, num_runs, err);
        sp_run_source_close(&sources[fallback]);
        inputs[fallback].source = NULL;
        profiles[fallback] = sp_load_run(inputs[fallback].files, inputs[fallback].num_files, err,
                                         sizeof err);
        if (!profiles[fallback]) {
            fclose(f);
            f = NULL;
            unlink(out_path);
            status = cli_file_error(
                CMD, inputs[fallback].num_files == 1 ? inputs[fallback].files[0] : NULL, "%s",
                err);
            goto out;
        }
        inputs[fallback].profile = profiles[fallback];
    }
    for (size_t r = 0; r < num_runs; r++)
        if (inputs[r].source)
            trace_path(r, num_runs, NULL);
    int failed = rc < 0;
    int write_failed = ferror(f) | (fclose(f) != 0);
    f = NULL;
    if (failed || write_failed) {
        unlink(out_path);
        status = failed ? cli_file_error(CMD, NULL, "%s", err)
                        : cli_file_error(CMD, out_path, "write failed: %s", strerror(errno));
        goto out;
    }
    printf("wrote %s\n", out_path);
    status = 0;
out:
    for (size_t r = 0; profiles && r < num_files; r++)
        if (profiles[r])
            sp_profile_free(profiles[r]);
    for (size_t r = 0; sources && r < num_files; r++)
        if (sources[r].profile)
            sp_run_source_close(&sources[r]);
    free(profiles);
    free(sources);
    free(inputs);
    free(sorted);
    free(groups);
    return status;
}
