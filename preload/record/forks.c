/* forks.c - the fork edges of every profiler (forks.h).  Edges arrive once
 * per worker and parallel region or per thread created, so a lock is fine. */
#include <stdlib.h>
#include <string.h>

#include "forks.h"

struct kept_edge {
    struct sp_profiler *profiler;
    sp_fork_edge edge;
};

static pthread_mutex_t forks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kept_edge *edges;
static size_t num_edges, edges_cap;
static int oom_reported;

int sp_fork_open_parent(struct sp_profiler *p, sp_fork_edge *edge)
{
    struct sp_thread *t = sp_tls_thread;
    if (!p || !t || (uint32_t)p->slot >= t->num_lanes || !t->lanes[p->slot])
        return -1;
    struct sp_lane *lane = t->lanes[p->slot];
    uint32_t depth = sp_lane_depth(lane);
    if (!depth)
        return -1;
    uint32_t region = lane->stack[depth - 1].region;
    edge->parent_thread = t->index;
    edge->parent_region = region;
    edge->parent_ordinal = sp_lane_kept_calls(lane, region);
    return 0;
}

int64_t sp_fork_last_ordinal(struct sp_profiler *p, uint32_t region)
{
    struct sp_thread *t = sp_tls_thread;
    if (!p || !t || (uint32_t)p->slot >= t->num_lanes || !t->lanes[p->slot])
        return -1;
    struct sp_lane *lane = t->lanes[p->slot];
    int64_t kept = sp_lane_kept_calls(lane, region);
    return kept > 0 ? kept - 1 : -1;
}

void sp_fork_add(struct sp_profiler *p, const sp_fork_edge *edge)
{
    pthread_mutex_lock(&forks_lock);
    if (num_edges == edges_cap) {
        size_t cap = edges_cap ? edges_cap * 2 : 256;
        struct kept_edge *grown = realloc(edges, cap * sizeof *grown);
        if (!grown) {
            int report = !oom_reported;
            oom_reported = 1;
            pthread_mutex_unlock(&forks_lock);
            if (report)
                sp_log("out of memory keeping fork edges; some worker calls will not be "
                       "shown under the call that forked them");
            return;
        }
        edges = grown;
        edges_cap = cap;
    }
    edges[num_edges++] = (struct kept_edge){p, *edge};
    pthread_mutex_unlock(&forks_lock);
}

sp_fork_edge *sp_forks_since(struct sp_profiler *p, size_t *cursor, size_t *count)
{
    *count = 0;
    pthread_mutex_lock(&forks_lock);
    size_t n = 0, from = *cursor <= num_edges ? *cursor : num_edges;
    for (size_t i = from; i < num_edges; i++)
        n += edges[i].profiler == p;
    sp_fork_edge *out = n ? malloc(n * sizeof *out) : NULL;
    if (out) {
        for (size_t i = from; i < num_edges; i++)
            if (edges[i].profiler == p)
                out[(*count)++] = edges[i].edge;
    }
    if (out || !n)
        *cursor = num_edges;
    pthread_mutex_unlock(&forks_lock);
    return out;
}

