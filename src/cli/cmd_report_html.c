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

int cmd_report_html(char **files, size_t num_files, const size_t *run_of, size_t num_runs,
                    const sp_selection *sel, const char *out_path)
{
    int status = 1;
    size_t *groups = malloc(num_files * sizeof *groups);
    sp_profile **profiles = calloc(num_files, sizeof *profiles);
    sp_html_input *inputs = calloc(num_files, sizeof *inputs);
    char **sorted = malloc(num_files * sizeof *sorted);
    char err[1024] = "";
    if (!groups || !profiles || !inputs || !sorted) {
        status = cli_file_error(CMD, NULL, "out of memory");
        goto out;
    }
    memcpy(groups, run_of, num_files * sizeof *groups);
    /* One run given without --compare: its files may still come from
     * several runs (different run ids), which the loader refuses. */
    if (num_runs == 1) {
        sp_profile *p = sp_load_run((const char *const *)files, num_files, err, sizeof err);
        if (p) {
            profiles[0] = p;
        } else if (strstr(err, "come from different runs")) {
            num_runs = group_by_run_id(files, num_files, groups);
        } else {
            status = cli_file_error(CMD, num_files == 1 ? files[0] : NULL, "%s", err);
            goto out;
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
    FILE *f = fopen(out_path, "wb");
    if (!f) {
        status = cli_file_error(CMD, out_path, "cannot create: %s", strerror(errno));
        goto out;
    }
    sp_html_limits limits = {.warnings = stderr};
    int failed = sp_html_report(f, inputs, num_runs, sel, &limits, err, sizeof err) < 0;
    int write_failed = ferror(f) | (fclose(f) != 0);
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
    free(profiles);
    free(inputs);
    free(sorted);
    free(groups);
    return status;
}
