/* run_collect_stream.c - the run's per-key accumulators fed call by call
 * by the streamed report (sp_report_call_hook).  A call's duration is known
 * when it enters, in the order of the in-memory reconstruction; its
 * exclusive time only when it exits, and calls of one key can exit out of
 * that order (the same path open on two lanes, a region inside itself by
 * name).  The exclusive times wait in a queue per key until the earlier
 * calls of the key have exited, so every accumulator sees the in-memory
 * order.  On one lane a path never overlaps itself: a queue holds one call
 * there. */
#include <stdlib.h>
#include <string.h>

#include "run_collect.h"

/* Calls waiting over all keys before the stream gives up (the in-memory
 * path then runs): 16 bytes each, 64 MiB. */
#define MAX_PENDING ((size_t)1 << 22)

static int hook_rank_begin(void *ctx, uint32_t rank)
{
    run_collect *c = ctx;
    (void)rank;
    run_collect_begin_rank(c);
    c->num_mapped = 0;
    return 0;
}

static int hook_rank_end(void *ctx, uint32_t rank)
{
    run_collect *c = ctx;
    (void)rank;
    run_collect_end_rank(c);
    return c->num_pending == 0 ? 0 : -1; /* every call exited */
}

/* The key of the rank tree's node: its path, made the first time the
 * node is seen in the rank (nodes are numbered in the order they are
 * made, so a new node is the next one); by name, its region. */
static int64_t slot_of(run_collect *c, const sp_report_tree *tree, int64_t node)
{
    if (c->by_name)
        return tree->nodes[node].region;
    if ((size_t)node < c->num_mapped)
        return c->slot_of_node[node];
    if ((size_t)node != c->num_mapped)
        return -1;
    if (c->num_mapped == c->map_cap) {
        size_t cap = c->map_cap ? 2 * c->map_cap : 256;
        int64_t *grown = realloc(c->slot_of_node, cap * sizeof *grown);
        if (!grown)
            return -1;
        c->slot_of_node = grown;
        c->map_cap = cap;
    }
    const sp_report_node *nd = &tree->nodes[node];
    int64_t parent = nd->parent >= 0 ? c->slot_of_node[nd->parent] : -1;
    int64_t slot = sp_path_tree_child(&c->tree, parent, SP_PATH_REGION, nd->region);
    if (slot < 0)
        return -1;
    c->slot_of_node[c->num_mapped++] = slot;
    return slot;
}

static int queue_push(run_collect *c, pending_queue *q, uint64_t call_index)
{
    if (q->head == q->n)
        q->head = q->n = 0;
    if (q->n == q->cap) {
        if (q->head > 0) { /* slide the waiting calls down */
            memmove(q->v, q->v + q->head, (q->n - q->head) * sizeof *q->v);
            q->n -= q->head;
            q->head = 0;
        } else {
            size_t cap = q->cap ? 2 * q->cap : 4;
            pending_call *grown = realloc(q->v, cap * sizeof *grown);
            if (!grown)
                return -1;
            q->v = grown;
            q->cap = cap;
        }
    }
    q->v[q->n++] = (pending_call){call_index, 0, 0};
    c->num_pending++;
    return 0;
}

static int hook_call(void *ctx, const sp_stream_call *call, const sp_report_tree *tree,
                     int64_t node, int exit)
{
    run_collect *c = ctx;
    int64_t slot = slot_of(c, tree, node);
    if (slot < 0 || run_collect_grow(c, (size_t)slot + 1) != 0)
        return -1;
    pending_queue *q = &c->pending[slot];
    if (!exit) {
        if (c->num_pending >= MAX_PENDING) {
            c->too_many_pending = 1;
            return -1;
        }
        if (run_collect_duration(c, (size_t)slot, call->end - call->start) != 0)
            return -1;
        return queue_push(c, q, call->call_index);
    }
    /* The oldest call (its exit drains the queue), else from the newest:
     * calls that pile up behind an open one exit soon after they enter. */
    size_t i = q->head;
    if (i < q->n && q->v[i].call_index != call->call_index)
        for (i = q->n; i-- > q->head && q->v[i].call_index != call->call_index;)
            ;
    if (i >= q->n || i < q->head)
        return -1; /* an exit that never entered: cannot happen */
    q->v[i].exclusive = call->exclusive;
    q->v[i].done = 1;
    while (q->head < q->n && q->v[q->head].done) {
        run_collect_own(c, (size_t)slot, q->v[q->head].exclusive);
        q->head++;
        c->num_pending--;
    }
    return 0;
}

sp_report_call_hook run_collect_hook(run_collect *c)
{
    return (sp_report_call_hook){hook_rank_begin, hook_call, hook_rank_end, NULL, c};
}
