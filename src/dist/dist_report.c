/* dist_report.c - `mpirun -np N scopeprof report`: the transport under
 * sp_report_remote (include/scopeprof/report.h).  Every process runs the
 * streamed report on its run source (dist_report_source.c: process 0 the
 * whole run, the others their block of files); a selected rank is streamed
 * by the process whose block holds its file, and process 0 adds every
 * rank's tree in rank order, taking the others' from their owners: the
 * report is the serial one.
 * Trees are sent as soon as they are made, not on request: a round trip
 * per rank cost more than the rank itself (protocol: dist.h). */
#include <stdlib.h>

#include "dist/dist.h"
#include "scopeprof/stream.h"

static int fetch(void *ctx, int from, uint8_t **buf, size_t *len)
{
    sp_dist_report *r = ctx;
    if (r->ended && r->ended[from])
        return 1;
    /* process 0 may wait while `from` streams: asleep, not spinning */
    if (sp_dist_recv_waiting(buf, len, from) != 0)
        return -1;
    if (*len)
        return 0;
    /* the end mark: `from` stopped before this rank (its report failed) */
    if (r->ended)
        r->ended[from] = 1;
    free(*buf);
    *buf = NULL;
    return 1;
}

static int deliver(void *ctx, const void *buf, size_t len)
{
    sp_dist_report *r = ctx;
    if (r->stopped)
        return 1;
    int told = sp_dist_poll(0);
    if (told < 0)
        return -1;
    if (told) { /* process 0 wants no more */
        r->stopped = 1;
        return sp_dist_wait(0) == 0 ? 1 : -1;
    }
    if (len == 0 || sp_dist_send(buf, len, 0) != 0)
        return -1;
    r->sent++;
    return 0;
}

/* The process whose block (sp_dist_block) holds file f of count. */
static int block_of(size_t f, size_t count, int size)
{
    size_t q = count / (size_t)size, rem = count % (size_t)size;
    if (f < rem * (q + 1))
        return (int)(f / (q + 1));
    return q ? (int)(rem + (f - rem * (q + 1)) / q) : 0;
}

static int owner(void *ctx, uint32_t rank)
{
    sp_dist_report *r = ctx;
    if (!r->whole_run) /* a block alone holds only this process's ranks */
        return r->remote.self;
    const sp_profile *p = r->src ? r->src->profile : NULL;
    size_t rows = p ? p->num_rows : 0;
    /* ranks come ascending, and rows mostly by rank: start where the last
     * one was found */
    for (size_t k = 0; k < rows; k++) {
        size_t at = (r->cursor + k) % rows;
        if (p->rows[at].rank == rank) {
            r->cursor = at;
            return block_of(r->src->row_file[at], r->num_files, r->remote.count);
        }
    }
    return 0;
}

void sp_dist_report_init(sp_dist_report *r, const sp_dist_session *s)
{
    *r = (sp_dist_report){
        .remote = {.self = s->rank, .count = s->size, .fetch = fetch, .deliver = deliver,
                   .owner = owner}};
    r->remote.ctx = r;
    if (s->rank == 0 && s->size > 1 && !(r->ended = calloc((size_t)s->size, 1)))
        sp_dist_abort(1); /* the others would wait for us forever */
}

int sp_dist_report_finish(sp_dist_report *r)
{
    static const uint8_t nothing = 0;
    if (r->remote.self != 0) {
        if (sp_dist_send(&nothing, 0, 0) != 0)
            return -1;
        if (!r->stopped) {
            r->stopped = 1;
            return sp_dist_wait(0);
        }
        return 0;
    }
    int rc = 0;
    for (int k = 1; k < r->remote.count; k++) {
        if (sp_dist_signal(k) != 0) {
            rc = -1;
            continue;
        }
        while (!r->ended[k]) { /* what k still sends, up to its end mark */
            uint8_t *buf = NULL;
            size_t len = 0;
            int got = sp_dist_recv_waiting(&buf, &len, k);
            free(buf);
            if (got != 0) {
                rc = -1;
                break;
            }
            if (len == 0)
                r->ended[k] = 1;
        }
    }
    free(r->ended);
    r->ended = NULL;
    return rc;
}
