/* cmd_report_html.h - the HTML page of `scopeprof report` (cmd_report_html.c). */
#ifndef SCOPEPROF_CLI_CMD_REPORT_HTML_H
#define SCOPEPROF_CLI_CMD_REPORT_HTML_H

#include <stddef.h>

#include "scopeprof/analysis.h"

/* Files, the run of each file (0-based, from --compare), the number of
 * runs, the output path; returns the exit status. */
int cmd_report_html(char **files, size_t num_files, const size_t *run_of, size_t num_runs,
                    const sp_selection *sel, const char *out_path);
/* FILE.html or FILE.htm (any case). */
int cli_is_html_path(const char *path);

#endif
