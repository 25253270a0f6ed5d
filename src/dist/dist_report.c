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
#include <string.h>
#include <time.h>

#include "dist/dist.h"
#include "scopeprof/stream.h"

static int fetch(void *ctx, int from, uint8_t **buf, size_t *len)
{
    sp_dist_report *r = ctx;
    if (r->ended && r->ended[from])
        return 1;
    if (r->asked && !r->asked[from]) { /* its trees are wanted from now on */
        if (sp_dist_go(from) != 0)
            return -1;
        r->asked[from] = 1;
    }
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

/* Process 0 takes a block's trees only once it is done with the blocks
 * before it: a send it does not receive yet spins in MPI (both MPIs
 * busy-wait in a blocking send once their buffers are full), taking CPU
 * from process 0 on a shared node.  So the trees are held here until
 * process 0 says "go" (sp_dist_go), up to HOLD_BYTES; past that the
 * process waits for the go asleep. */
enum { HOLD_BYTES = 64 << 20 };

static int hold(sp_dist_report *r, const void *buf, size_t len)
{
    if (r->num_held == r->held_cap) {
        size_t cap = r->held_cap ? 2 * r->held_cap : 64;
        sp_dist_held *grown = realloc(r->held, cap * sizeof *grown);
        if (!grown)
            return -1;
        r->held = grown;
        r->held_cap = cap;
    }
    uint8_t *copy = malloc(len);
    if (!copy)
        return -1;
    memcpy(copy, buf, len);
    r->held[r->num_held++] = (sp_dist_held){copy, len};
    r->held_bytes += len;
    return 0;
}

/* The held trees to process 0, in order.  0 or -1. */
static int flush(sp_dist_report *r)
{
    int rc = 0;
    for (size_t k = 0; k < r->num_held; k++) {
        if (rc == 0 && sp_dist_send(r->held[k].buf, r->held[k].len, 0) != 0)
            rc = -1;
        free(r->held[k].buf);
    }
    r->num_held = 0;
    r->held_bytes = 0;
    return rc;
}

static void drop_held(sp_dist_report *r)
{
    for (size_t k = 0; k < r->num_held; k++)
        free(r->held[k].buf);
    free(r->held);
    r->held = NULL;
    r->num_held = r->held_cap = r->held_bytes = 0;
}

/* Until process 0 says go (1) or stop (0, the stop taken), asleep when
 * `sleep`; with !sleep one look (2: neither yet).  -1 MPI failed. */
static int go_or_stop(sp_dist_report *r, int sleep)
{
    struct timespec nap = {0, 2000000};
    for (;;) {
        int told = sp_dist_poll(0);
        if (told < 0)
            return -1;
        if (told) { /* process 0 wants no more */
            r->stopped = 1;
            return sp_dist_wait(0) == 0 ? 0 : -1;
        }
        if (!r->go) {
            int go = sp_dist_go_taken(0);
            if (go < 0)
                return -1;
            r->go = go;
        }
        if (r->go)
            return 1;
        if (!sleep)
            return 2;
        nanosleep(&nap, NULL);
    }
}

static int deliver(void *ctx, const void *buf, size_t len)
{
    sp_dist_report *r = ctx;
    if (r->stopped)
        return 1;
    if (len == 0)
        return -1;
    int state = go_or_stop(r, 0);
    if (state == 2 && r->held_bytes + len <= HOLD_BYTES) {
        if (hold(r, buf, len) != 0)
            return -1;
        r->sent++;
        return 0;
    }
    if (state == 2)
        state = go_or_stop(r, 1);
    if (state <= 0)
        return state < 0 ? -1 : 1;
    if (flush(r) != 0 || sp_dist_send(buf, len, 0) != 0)
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
    if (s->rank == 0 && s->size > 1 &&
        (!(r->ended = calloc((size_t)s->size, 1)) || !(r->asked = calloc((size_t)s->size, 1))))
        sp_dist_abort(1); /* the others would wait for us forever */
}

int sp_dist_report_finish(sp_dist_report *r)
{
    static const uint8_t nothing = 0;
    if (r->remote.self != 0) {
        /* held trees go once process 0 wants them; a stop drops them */
        int state = r->stopped ? 0 : r->num_held ? go_or_stop(r, 1) : 1;
        int rc = state < 0 || (state == 1 && flush(r) != 0) ? -1 : 0;
        drop_held(r);
        if (sp_dist_send(&nothing, 0, 0) != 0)
            return -1;
        if (!r->stopped) {
            r->stopped = 1;
            if (sp_dist_wait(0) != 0)
                rc = -1;
        }
        /* a go sent before the stop, not taken yet */
        if (!r->go && sp_dist_go_taken(0) < 0)
            rc = -1;
        return rc;
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
    free(r->asked);
    r->ended = NULL;
    r->asked = NULL;
    return rc;
}
