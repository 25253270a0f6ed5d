/* html_report.h - `scopeprof report -o report.html`: one self-contained
 * HTML page of one run, or of several runs compared with the first. */
#ifndef SP_HTML_REPORT_H
#define SP_HTML_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "scopeprof/analysis.h"
#include "scopeprof/profile.h"

/* One run: its profile and the files it was read from; or, to stream it in
 * bounded memory (docs/stream.md), its run source (profile: the source's
 * skeleton). */
struct sp_run_source;
typedef struct sp_html_input {
    const sp_profile *profile;
    const char *const *files;
    size_t num_files;
    const struct sp_run_source *source; /* NULL: profile holds the whole run */
} sp_html_input;

typedef struct sp_html_limits {
    size_t timeline_bins;     /* pre-aggregated timeline cells; 0 = default */
    size_t timeline_calls;    /* single calls kept for the timeline; 0 = default */
    FILE *warnings;           /* ranks that could not be reconstructed; NULL: quiet */
} sp_html_limits;

/* Write the page.  Returns 0, or -1 with a one-line message in err; 1
 * (nothing written) when run *fallback, given with a source, must be read
 * in memory instead (err says why: the caller loads it and calls again). */
int sp_html_report(FILE *out, const sp_html_input *runs, size_t num_runs,
                   const sp_selection *selection, const sp_html_limits *limits,
                   size_t *fallback, char *err, size_t errlen);

#endif /* SP_HTML_REPORT_H */
