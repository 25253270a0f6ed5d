/* dist_report.c - `mpirun -np N scopeprof report`: the transport under
 * sp_report_remote (include/scopeprof/report.h).  Every process runs the
 * streamed report on the same inputs; selected rank k is streamed by
 * process k % N, and process 0 adds every rank's tree in rank order,
 * fetching the others' from their owners: the report is the serial one.
 * MPI keeps the order of the messages between two processes, so a
 * question and its answer need no tags of their own. */
#include <stdlib.h>

#include "dist/dist.h"

enum { STOP = 0, NEXT = 1 };

static int fetch(void *ctx, int from, uint8_t **buf, size_t *len)
{
    (void)ctx;
    static const uint8_t next = NEXT;
    if (sp_dist_send(&next, 1, from) != 0)
        return -1;
    /* process 0 may wait while `from` streams: asleep, not spinning */
    return sp_dist_recv_waiting(buf, len, from);
}

static int deliver(void *ctx, const void *buf, size_t len)
{
    sp_dist_report *r = ctx;
    if (r->stopped)
        return 1;
    uint8_t *question = NULL;
    size_t n = 0;
    if (sp_dist_recv_waiting(&question, &n, 0) != 0) {
        free(question);
        return -1;
    }
    int stop = n != 1 || question[0] != NEXT;
    free(question);
    if (stop) {
        r->stopped = 1;
        return 1;
    }
    if (sp_dist_send(buf, len, 0) != 0)
        return -1;
    r->sent++;
    return 0;
}

void sp_dist_report_init(sp_dist_report *r, const sp_dist_session *s)
{
    *r = (sp_dist_report){
        .remote = {.self = s->rank, .count = s->size, .fetch = fetch, .deliver = deliver}};
    r->remote.ctx = r;
}

int sp_dist_report_finish(sp_dist_report *r)
{
    if (r->remote.self != 0)
        return sp_report_remote_drain(&r->remote);
    static const uint8_t stop = STOP;
    int rc = 0;
    for (int k = 1; k < r->remote.count; k++)
        if (sp_dist_send(&stop, 1, k) != 0)
            rc = -1;
    return rc;
}
