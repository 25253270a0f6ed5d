/* validate_stream.c - `scopeprof validate` of a sound file in bounded
 * memory: the skeleton read, then every rank streamed with nesting
 * required.  Whatever looks wrong is handed to the full checker
 * (sp_h5_check), which lists every problem in its own words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scopeprof/stream.h"

static int skip_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    (void)ctx;
    (void)call;
    *user = parent;
    return 0;
}

static int skip_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    (void)ctx;
    (void)call;
    (void)user;
    return 0;
}

int sp_stream_validate(const char *path, char *why, size_t whylen)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "not a regular file");
        return 1;
    }
    sp_run_source src;
    char err[1024];
    const char *args[] = {path};
    if (sp_run_source_open(&src, args, 1, err, sizeof err) != 0) {
        snprintf(why, whylen, "%s", err);
        return 1;
    }
    int rc = 0;
    const sp_profile *p = src.profile;
    /* Columns this path does not read are left to the checker. */
    if (p->aggregate || src.shapes[0].has_other || src.shapes[0].has_fork) {
        snprintf(why, whylen, "aggregate layout, fork edges or MPI columns");
        rc = 1;
    }
    uint32_t *done = malloc((p->num_rows + 1) * sizeof *done);
    size_t num_done = 0;
    if (!done)
        rc = 1;
    for (size_t r = 0; rc == 0 && r < p->num_rows; r++) {
        uint32_t rank = p->rows[r].rank;
        int seen = 0;
        for (size_t k = 0; k < num_done && !seen; k++)
            seen = done[k] == rank;
        if (seen)
            continue;
        done[num_done++] = rank;
        sp_call_visitor none = {skip_enter, skip_exit, NULL};
        sp_rank_stream_info info;
        rc = sp_stream_rank(&src, rank, 0, &none, &info, why, whylen) ? 1 : 0;
        sp_rank_stream_info_free(&info);
    }
    if (rc == 0 && sp_run_source_unstreamable(&src) &&
        !strcmp(sp_run_source_unstreamable(&src), "two rows for one rank and region")) {
        snprintf(why, whylen, "two rows for one rank and region");
        rc = 1;
    }
    free(done);
    sp_run_source_close(&src);
    return rc;
}
