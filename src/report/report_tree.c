/* report_tree.c - calls aggregated by call path.
 *
 * A node is identified by (parent node, region).  Calls arrive in start
 * order, so a call's parent was placed before it and the node of a call is
 * found with one hash lookup: no recursion and no path strings, whatever the
 * depth. */
#include <stdlib.h>
#include <string.h>

#include "report/report_internal.h"

static uint64_t slot_hash(int64_t parent, uint32_t region)
{
    /* splitmix64 finaliser: node ids and region ids are small and dense. */
    uint64_t x = ((uint64_t)parent << 32) ^ region ^ 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

int sp_report_tree_init(sp_report_tree *tree, uint32_t rank, int64_t lane)
{
    memset(tree, 0, sizeof *tree);
    tree->rank = rank;
    tree->lane = lane;
    tree->first_root = -1;
    tree->slot_mask = 63;
    tree->slots = malloc((tree->slot_mask + 1) * sizeof *tree->slots);
    if (!tree->slots)
        return -1;
    memset(tree->slots, 0xff, (tree->slot_mask + 1) * sizeof *tree->slots);
    return 0;
}

void sp_report_tree_free(sp_report_tree *tree)
{
    free(tree->nodes);
    free(tree->slots);
    memset(tree, 0, sizeof *tree);
    tree->first_root = -1;
}

static int grow_slots(sp_report_tree *tree)
{
    size_t cap = (tree->slot_mask + 1) * 2;
    int64_t *slots = malloc(cap * sizeof *slots);
    if (!slots)
        return -1;
    memset(slots, 0xff, cap * sizeof *slots);
    for (size_t n = 0; n < tree->num_nodes; n++) {
        const sp_report_node *node = &tree->nodes[n];
        size_t s = slot_hash(node->parent, node->region) & (cap - 1);
        while (slots[s] >= 0)
            s = (s + 1) & (cap - 1);
        slots[s] = (int64_t)n;
    }
    free(tree->slots);
    tree->slots = slots;
    tree->slot_mask = cap - 1;
    return 0;
}

/* Node (parent, region), created empty if missing; -1 when out of memory. */
static int64_t node_for(sp_report_tree *tree, int64_t parent, uint32_t region)
{
    size_t s = slot_hash(parent, region) & tree->slot_mask;
    for (; tree->slots[s] >= 0; s = (s + 1) & tree->slot_mask) {
        const sp_report_node *node = &tree->nodes[tree->slots[s]];
        if (node->parent == parent && node->region == region)
            return tree->slots[s];
    }
    /* Keep the table at most half full so probe chains stay short. */
    if ((tree->num_nodes + 1) * 2 > tree->slot_mask + 1) {
        if (grow_slots(tree) != 0)
            return -1;
        return node_for(tree, parent, region);
    }
    if (tree->num_nodes == tree->node_capacity) {
        size_t cap = tree->node_capacity ? tree->node_capacity * 2 : 16;
        sp_report_node *nodes = realloc(tree->nodes, cap * sizeof *nodes);
        if (!nodes)
            return -1;
        tree->nodes = nodes;
        tree->node_capacity = cap;
    }
    int64_t id = (int64_t)tree->num_nodes++;
    sp_report_node *node = &tree->nodes[id];
    memset(node, 0, sizeof *node);
    node->region = region;
    node->parent = parent;
    node->first_child = node->next_sibling = -1;
    node->minimum = INT64_MAX;
    node->maximum = INT64_MIN;
    if (parent >= 0) {
        const sp_report_node *p = &tree->nodes[parent];
        node->depth = p->depth + 1;
        node->recursive = p->recursive;
        for (int64_t a = parent; a >= 0 && !node->recursive; a = tree->nodes[a].parent)
            node->recursive = tree->nodes[a].region == region;
    }
    tree->slots[s] = id;
    return id;
}

static void node_add(sp_report_node *node, uint64_t calls, int64_t inclusive,
                     int64_t exclusive, int64_t minimum, int64_t maximum)
{
    node->calls += calls;
    node->inclusive += inclusive;
    node->exclusive += exclusive;
    if (minimum < node->minimum)
        node->minimum = minimum;
    if (maximum > node->maximum)
        node->maximum = maximum;
}

int64_t sp_report_tree_node(sp_report_tree *tree, int64_t parent, uint32_t region)
{
    return node_for(tree, parent, region);
}

void sp_report_node_add_call(sp_report_node *node, int64_t duration, int64_t exclusive)
{
    node_add(node, 1, duration, exclusive, duration, duration);
}

/* Adds the calls; node_of_call (calls->n) receives each call's node. */
static int add_calls(sp_report_tree *tree, const sp_calls *calls, int64_t lane,
                     int64_t *node_of_call)
{
    int filter = lane != SP_REPORT_ALL_LANES && calls->lane;
    for (size_t i = 0; i < calls->n; i++) {
        node_of_call[i] = -1;
        if (filter && calls->lane[i] != lane)
            continue;
        /* Parents precede children in start order; a parent on another lane
         * cannot happen, a parent filtered out leaves the call a root. */
        int64_t parent = calls->parent[i] >= 0 ? node_of_call[calls->parent[i]] : -1;
        int64_t id = node_for(tree, parent, calls->region[i]);
        if (id < 0)
            return -1;
        int64_t duration = calls->end[i] - calls->start[i];
        node_add(&tree->nodes[id], 1, duration, calls->exclusive[i], duration, duration);
        node_of_call[i] = id;
    }
    return 0;
}

int sp_report_tree_add_calls(sp_report_tree *tree, const sp_calls *calls, int64_t lane)
{
    if (calls->n == 0)
        return 0;
    int64_t *node_of_call = malloc(calls->n * sizeof *node_of_call);
    if (!node_of_call)
        return -1;
    int rc = add_calls(tree, calls, lane, node_of_call);
    free(node_of_call);
    return rc;
}

struct lane_time {
    int64_t node, lane, ns;
};

static int by_node_lane(const void *a, const void *b)
{
    const struct lane_time *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return (x->lane > y->lane) - (x->lane < y->lane);
}

int sp_report_tree_add_forks(sp_report_tree *tree, const sp_calls *calls,
                             const int64_t *fork_of, const int64_t *own_lane)
{
    if (!fork_of || !own_lane)
        return sp_report_tree_add_calls(tree, calls, SP_REPORT_ALL_LANES);
    if (calls->n == 0)
        return 0;
    size_t n = calls->n;
    int64_t *node_of_call = malloc(n * sizeof *node_of_call);
    struct lane_time *times = malloc(2 * n * sizeof *times);
    uint8_t *counted = calloc(n, 1);
    int rc = node_of_call && times && counted ? add_calls(tree, calls, SP_REPORT_ALL_LANES,
                                                          node_of_call)
                                              : -1;
    size_t k = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int64_t j = fork_of[i];
        /* a worker's call merged into its encountering thread's call */
        if (j < 0 || calls->region[j] != calls->region[i] || node_of_call[i] != node_of_call[j])
            continue;
        times[k++] = (struct lane_time){node_of_call[i], own_lane[i],
                                        calls->end[i] - calls->start[i]};
        if (!counted[j]) {
            counted[j] = 1;
            times[k++] = (struct lane_time){node_of_call[j], own_lane[j],
                                            calls->end[j] - calls->start[j]};
        }
        int64_t wait = calls->end[j] - calls->end[i];
        if (wait > 0)
            tree->nodes[node_of_call[j]].fork_barrier += wait;
    }
    qsort(times, k, sizeof *times, by_node_lane);
    for (size_t a = 0; a < k;) {
        size_t b = a;
        int64_t sum = 0;
        while (b < k && times[b].node == times[a].node && times[b].lane == times[a].lane)
            sum += times[b++].ns;
        sp_report_node *node = &tree->nodes[times[a].node];
        node->fork_lanes++;
        node->fork_lane_total += sum;
        if (sum > node->fork_lane_max)
            node->fork_lane_max = sum;
        a = b;
    }
    free(node_of_call);
    free(times);
    free(counted);
    return rc;
}

int sp_report_tree_merge(sp_report_tree *into, const sp_report_tree *from)
{
    if (from->num_nodes == 0)
        return 0;
    int64_t *map = malloc(from->num_nodes * sizeof *map);
    if (!map)
        return -1;
    for (size_t n = 0; n < from->num_nodes; n++) {
        const sp_report_node *src = &from->nodes[n];
        int64_t id = node_for(into, src->parent >= 0 ? map[src->parent] : -1, src->region);
        if (id < 0) {
            free(map);
            return -1;
        }
        node_add(&into->nodes[id], src->calls, src->inclusive, src->exclusive,
                 src->minimum, src->maximum);
        sp_report_node *dst = &into->nodes[id];
        dst->fork_lanes += src->fork_lanes;
        dst->fork_lane_total += src->fork_lane_total;
        dst->fork_barrier += src->fork_barrier;
        if (src->fork_lane_max > dst->fork_lane_max)
            dst->fork_lane_max = src->fork_lane_max;
        map[n] = id;
    }
    free(map);
    return 0;
}

static int by_inclusive_desc(const void *a, const void *b, void *ctx)
{
    const sp_report_node *sort_nodes = ctx;
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    int64_t ix = sort_nodes[x].inclusive, iy = sort_nodes[y].inclusive;
    if (ix != iy)
        return ix > iy ? -1 : 1;
    return (x > y) - (x < y);
}

int sp_report_tree_order(sp_report_tree *tree)
{
    tree->first_root = -1;
    if (tree->num_nodes == 0)
        return 0;
    int64_t *order = malloc(tree->num_nodes * sizeof *order);
    if (!order)
        return -1;
    for (size_t n = 0; n < tree->num_nodes; n++)
        order[n] = (int64_t)n;
    qsort_r(order, tree->num_nodes, sizeof *order, by_inclusive_desc, tree->nodes);
    /* Link in reverse so each list comes out in sorted order. */
    for (size_t n = 0; n < tree->num_nodes; n++)
        tree->nodes[n].first_child = -1;
    for (size_t k = tree->num_nodes; k-- > 0;) {
        sp_report_node *node = &tree->nodes[order[k]];
        int64_t *head = node->parent >= 0 ? &tree->nodes[node->parent].first_child
                                          : &tree->first_root;
        node->next_sibling = *head;
        *head = order[k];
    }
    free(order);
    return 0;
}

int64_t sp_report_tree_find(const sp_report_tree *tree, const sp_profile *profile,
                            const char *path)
{
    int64_t parent = -1;
    const char *p = path;
    for (;;) {
        const char *sep = strstr(p, " > ");
        size_t len = sep ? (size_t)(sep - p) : strlen(p);
        int64_t found = -1;
        for (size_t n = 0; n < tree->num_nodes && found < 0; n++) {
            const sp_report_node *node = &tree->nodes[n];
            const char *name = profile->names[node->region];
            if (node->parent == parent && strlen(name) == len && !memcmp(name, p, len))
                found = (int64_t)n;
        }
        if (found < 0 || !sep)
            return found;
        parent = found;
        p = sep + 3;
    }
}
