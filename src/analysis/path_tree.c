/* path_tree.c - calls aggregated by call path (the flame graph, folded
 * stacks and pstats call-path mode all need "same ancestors, same region").
 * Nodes live in one array, found through an open-addressing hash keyed by
 * (parent node, kind, value), so memory grows with distinct paths only. */
#include <stdlib.h>
#include <string.h>

#include "scopeprof/export.h"

void sp_path_tree_init(sp_path_tree *tree)
{
    memset(tree, 0, sizeof *tree);
}

void sp_path_tree_free(sp_path_tree *tree)
{
    free(tree->nodes);
    free(tree->table);
    sp_path_tree_init(tree);
}

static uint64_t key_hash(int64_t parent, int kind, int64_t value)
{
    uint64_t h = (uint64_t)parent * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)value + ((uint64_t)kind << 56)) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 31;
    return h * 0x165667B19E3779F9ull;
}

static int rehash(sp_path_tree *tree, size_t slots)
{
    int64_t *table = malloc(slots * sizeof *table);
    if (!table)
        return -1;
    for (size_t s = 0; s < slots; s++)
        table[s] = -1;
    for (size_t i = 0; i < tree->n; i++) {
        const sp_path_node *nd = &tree->nodes[i];
        size_t s = key_hash(nd->parent, nd->kind, nd->value) & (slots - 1);
        while (table[s] >= 0)
            s = (s + 1) & (slots - 1);
        table[s] = (int64_t)i;
    }
    free(tree->table);
    tree->table = table;
    tree->slots = slots;
    return 0;
}

int64_t sp_path_tree_first_top(const sp_path_tree *tree)
{
    for (size_t i = 0; i < tree->n; i++)
        if (tree->nodes[i].parent < 0)
            return (int64_t)i;
    return -1;
}

int64_t sp_path_tree_child(sp_path_tree *tree, int64_t parent, int kind, int64_t value)
{
    if (tree->slots) {
        size_t s = key_hash(parent, kind, value) & (tree->slots - 1);
        for (; tree->table[s] >= 0; s = (s + 1) & (tree->slots - 1)) {
            const sp_path_node *nd = &tree->nodes[tree->table[s]];
            if (nd->parent == parent && nd->kind == kind && nd->value == value)
                return tree->table[s];
        }
    }
    if ((tree->n + 1) * 2 > tree->slots && rehash(tree, tree->slots ? tree->slots * 2 : 64) < 0)
        return -1;
    if (tree->n == tree->cap) {
        size_t cap = tree->cap ? tree->cap * 2 : 64;
        sp_path_node *grown = realloc(tree->nodes, cap * sizeof *grown);
        if (!grown)
            return -1;
        tree->nodes = grown;
        tree->cap = cap;
    }
    int64_t id = (int64_t)tree->n++;
    tree->nodes[id] = (sp_path_node){
        .parent = parent, .kind = kind, .value = value,
        .first_child = -1, .last_child = -1, .next_sibling = -1,
        .source_file = "", .source_line = -1,
    };
    /* Link into the parent's children (or the top list) in first-seen order. */
    if (parent >= 0) {
        sp_path_node *p = &tree->nodes[parent];
        if (p->last_child >= 0)
            tree->nodes[p->last_child].next_sibling = id;
        else
            p->first_child = id;
        p->last_child = id;
    } else {
        for (int64_t t = sp_path_tree_first_top(tree); t >= 0 && t != id;
             t = tree->nodes[t].next_sibling)
            if (tree->nodes[t].next_sibling < 0) {
                tree->nodes[t].next_sibling = id;
                break;
            }
    }
    size_t s = key_hash(parent, kind, value) & (tree->slots - 1);
    while (tree->table[s] >= 0)
        s = (s + 1) & (tree->slots - 1);
    tree->table[s] = id;
    return id;
}

int sp_path_tree_add(sp_path_tree *tree, const sp_profile *profile, const sp_rank_data *data,
                     int64_t top, int per_lane, int64_t *node_of_call)
{
    const sp_calls *c = &data->calls;
    int64_t *nodes = node_of_call;
    if (!nodes && c->n && !(nodes = malloc(c->n * sizeof *nodes)))
        return -1;
    int rc = 0;
    /* Cache of the last lane node: lanes change rarely between roots. */
    int64_t cached_lane = 0, cached_node = -2;
    for (size_t i = 0; i < c->n; i++) {
        int64_t parent;
        if (c->parent[i] >= 0) {
            parent = nodes[c->parent[i]];
        } else if (per_lane) {
            int64_t lane = c->lane ? c->lane[i] : -1;
            if (cached_node == -2 || lane != cached_lane) {
                cached_lane = lane;
                cached_node = sp_path_tree_child(tree, top, SP_PATH_LANE, lane);
            }
            parent = cached_node;
        } else {
            parent = top;
        }
        int64_t node = parent < -1 ? -1 : sp_path_tree_child(tree, parent, SP_PATH_REGION, c->region[i]);
        if (node < 0 || (per_lane && cached_node < 0 && c->parent[i] < 0)) {
            rc = -1;
            break;
        }
        nodes[i] = node;
        sp_path_node *nd = &tree->nodes[node];
        if (nd->calls == 0) {
            const sp_row *row = sp_rank_data_row(profile, data, i);
            if (row) {
                nd->source_file = row->source_file ? row->source_file : "";
                nd->source_line = row->source_line;
            }
        }
        nd->calls++;
        nd->inclusive_ns += c->end[i] - c->start[i];
        nd->exclusive_ns += c->exclusive[i];
    }
    if (nodes != node_of_call)
        free(nodes);
    return rc;
}
