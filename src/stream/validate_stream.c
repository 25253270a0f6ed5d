/* validate_stream.c - `scopeprof validate` of a sound file in bounded
 * memory: the skeleton read, every rank streamed with nesting required,
 * and the columns the stream does not read (MPI columns, await_ns), which
 * the run source reads in windows when it opens, as the checker's reader
 * reads every column.  Whatever looks wrong is handed to the full checker
 * (sp_h5_check), which lists every problem in its own words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scopeprof/stream.h"

/* The call ids of one rank, for its fork parent ids (docs/tasks.md: -1 or
 * a call of the same rank): one bit per possible id, as the checker's dense
 * case keeps a byte.  Ids beyond `limit` are too sparse for it: the checker
 * then sorts them. */
typedef struct call_ids {
    unsigned char *bits;
    uint64_t limit;
    int sparse;
    /* a call named as fork parent before it was met: only then can fork
     * parent ids form a cycle with the call tree (every other edge leads
     * to a call met earlier), which the checker looks for */
    int forked_before_parent;
} call_ids;

static int has_id(const call_ids *ids, int64_t id)
{
    return id >= 0 && (uint64_t)id < ids->limit && (ids->bits[id / 8] >> (id % 8) & 1);
}

static int skip_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    call_ids *ids = ctx;
    *user = parent;
    if (ids && ids->bits && call->call_id >= 0) {
        if ((uint64_t)call->call_id < ids->limit)
            ids->bits[call->call_id / 8] |= (unsigned char)(1u << (call->call_id % 8));
        else
            ids->sparse = 1;
        int64_t fork = call->fork_parent_id;
        if (fork >= 0 && fork != call->call_id && !has_id(ids, fork))
            ids->forked_before_parent = 1;
    }
    return 0;
}

static int skip_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    (void)ctx;
    (void)call;
    (void)user;
    return 0;
}

#define OTHER_WINDOW 65536

/* Every fork parent id of `rank` is -1 or one of its calls. */
static int check_fork_parents(const sp_run_source *src, uint32_t rank, const call_ids *ids,
                              char *why, size_t whylen)
{
    const sp_profile *p = src->profile;
    char err[1024];
    sp_h5_event_reader *r = sp_h5_event_reader_open(src->paths[0], &src->shapes[0], 1 << 20, err,
                                                    sizeof err);
    int64_t *window = r ? malloc(OTHER_WINDOW * sizeof *window) : NULL;
    int rc = window ? 0 : 1;
    if (rc)
        snprintf(why, whylen, "%s", r ? "out of memory" : err);
    for (size_t row = 0; rc == 0 && row < p->num_rows; row++) {
        if (p->rows[row].rank != rank)
            continue;
        for (uint64_t j = 0; rc == 0 && j < p->rows[row].count; j += OTHER_WINDOW) {
            size_t n = p->rows[row].count - j < OTHER_WINDOW ? (size_t)(p->rows[row].count - j)
                                                             : OTHER_WINDOW;
            if (sp_h5_event_reader_read(r, SP_H5_COL_FORK, p->rows[row].offset + j, n, window)) {
                snprintf(why, whylen, "events/fork_parent_ids does not read");
                rc = 1;
            }
            for (size_t k = 0; rc == 0 && k < n; k++) {
                int64_t v = window[k];
                if (v != -1 && !has_id(ids, v)) {
                    snprintf(why, whylen, "a fork parent id is no call of its rank");
                    rc = 1;
                }
            }
        }
    }
    free(window);
    sp_h5_event_reader_close(r);
    return rc;
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
    if (p->aggregate) {
        snprintf(why, whylen, "aggregate layout");
        rc = 1;
    }
    /* Fork parent ids name calls of their rank when there are call ids to
     * refer to (without, the checker does not check that either); with or
     * without, they must not form a cycle with the call tree (the calls
     * are numbered as the readers number them: sp_stream_rank_forks). */
    int has_fork = src.shapes[0].has_fork;
    int forks = has_fork && src.shapes[0].has[SP_H5_COL_CALL];
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
        call_ids ids = {0};
        if (has_fork) {
            uint64_t calls = 0;
            for (size_t k = 0; k < p->num_rows; k++)
                calls += p->rows[k].rank == rank ? p->rows[k].count : 0;
            ids.limit = 4 * calls + 1024;
            if (!(ids.bits = calloc((size_t)(ids.limit / 8 + 1), 1))) {
                snprintf(why, whylen, "out of memory");
                rc = 1;
                break;
            }
        }
        sp_call_visitor none = {skip_enter, skip_exit, &ids};
        sp_rank_stream_info info;
        rc = (has_fork ? sp_stream_rank_forks(&src, rank, 0, &none, NULL, &info, why, whylen)
                       : sp_stream_rank(&src, rank, 0, &none, &info, why, whylen))
                 ? 1
                 : 0;
        sp_rank_stream_info_free(&info);
        if (rc == 0 && has_fork && ids.sparse) {
            snprintf(why, whylen, "call ids too sparse for a bitmap");
            rc = 1;
        }
        if (rc == 0 && forks)
            rc = check_fork_parents(&src, rank, &ids, why, whylen);
        /* (after: a fork parent id that is no call is not met either) */
        if (rc == 0 && ids.forked_before_parent) {
            snprintf(why, whylen, "a call forked by a call that starts after it");
            rc = 1;
        }
        free(ids.bits);
    }
    if (rc == 0 && sp_run_source_unstreamable(&src) &&
        !strcmp(sp_run_source_unstreamable(&src), "two rows for one rank and region")) {
        snprintf(why, whylen, "two rows for one rank and region");
        rc = 1;
    }
    /* await_ns and the MPI columns: read whole when the source opened */
    if (rc == 0 && src.unreadable[0]) {
        snprintf(why, whylen, "%s", src.unreadable);
        rc = 1;
    }
    free(done);
    sp_run_source_close(&src);
    return rc;
}
