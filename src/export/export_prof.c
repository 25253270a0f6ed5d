/* export_prof.c - one rank as a Python pstats file (spec §7.2), written in
 * Python's marshal format (version 4 subset: dict, small tuple, int, long,
 * binary float, ascii/unicode strings) so `pstats.Stats(path)`, snakeviz and
 * friends load it without Python on the exporting side.
 *
 * pstats layout: {(file, line, name): (cc, nc, tt, ct, {caller: (nc, cc, tt,
 * ct)})}.  Caller tuples put nc first, exactly as cProfile writes them (the
 * entry itself puts cc first); pstats prints callers in that order. */
#include <stdlib.h>
#include <string.h>

#include "path_tree_stream.h"
#include "scopeprof/export.h"
#include "scopeprof/report.h" /* sp_rank_clock_offset */
#include "stream_filter.h"

/* ---- marshal ------------------------------------------------------------ */

static void put_u32(FILE *out, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    fwrite(b, 1, 4, out);
}

static void m_int(FILE *out, int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX) {
        fputc('i', out);
        put_u32(out, (uint32_t)(int32_t)v);
        return;
    }
    /* TYPE_LONG: signed digit count, then 15-bit digits, least significant first. */
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    uint16_t digits[5];
    int32_t n = 0;
    while (u) {
        digits[n++] = (uint16_t)(u & 0x7fff);
        u >>= 15;
    }
    fputc('l', out);
    put_u32(out, (uint32_t)(v < 0 ? -n : n));
    for (int32_t k = 0; k < n; k++) {
        fputc(digits[k] & 0xff, out);
        fputc(digits[k] >> 8, out);
    }
}

static void m_float(FILE *out, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    fputc('g', out);
    for (int k = 0; k < 8; k++)
        fputc((int)((bits >> (8 * k)) & 0xff), out);
}

static void m_str(FILE *out, const char *s)
{
    size_t n = strlen(s);
    int ascii = 1;
    for (size_t i = 0; i < n && ascii; i++)
        ascii = (unsigned char)s[i] < 0x80;
    if (ascii && n < 256) {
        fputc('z', out);
        fputc((int)n, out);
    } else {
        fputc(ascii ? 'a' : 'u', out);
        put_u32(out, (uint32_t)n);
    }
    fwrite(s, 1, n, out);
}

static void m_tuple(FILE *out, unsigned n)
{
    fputc(')', out);
    fputc((int)n, out);
}

static void m_key(FILE *out, const char *file, int64_t line, const char *name)
{
    m_tuple(out, 3);
    if (file && file[0] && line >= 0) {
        m_str(out, file);
        m_int(out, line);
    } else {
        m_str(out, "~");
        m_int(out, 0);
    }
    m_str(out, name);
}

/* One statistics 4-tuple; caller tuples swap cc and nc (see top). */
typedef struct stat4 {
    uint64_t cc, nc;
    int64_t tt_ns, ct_ns;
} stat4;

static void m_stat(FILE *out, const stat4 *s, int caller_order)
{
    m_int(out, (int64_t)(caller_order ? s->nc : s->cc));
    m_int(out, (int64_t)(caller_order ? s->cc : s->nc));
    m_float(out, (double)s->tt_ns / 1e9);
    m_float(out, (double)s->ct_ns / 1e9);
}

/* ---- call-path mode ----------------------------------------------------- */

/* "a > b > c" of a path node, into a growing buffer. */
static const char *path_name(const sp_profile *p, const sp_path_tree *t, int64_t node,
                             char **buf, size_t *cap)
{
    size_t len = 0;
    for (int64_t k = node; k >= 0; k = t->nodes[k].parent)
        len += strlen(p->names[t->nodes[k].value]) + 3;
    if (len + 1 > *cap) {
        char *grown = realloc(*buf, len + 1);
        if (!grown)
            return "?";
        *buf = grown;
        *cap = len + 1;
    }
    size_t at = len - 3; /* fill from the end: leaf last */
    (*buf)[at] = '\0';
    for (int64_t k = node; k >= 0; k = t->nodes[k].parent) {
        const char *name = p->names[t->nodes[k].value];
        size_t n = strlen(name);
        at -= n;
        memcpy(*buf + at, name, n);
        if (t->nodes[k].parent >= 0) {
            at -= 3;
            memcpy(*buf + at, " > ", 3);
        }
    }
    return *buf;
}

/* The entries of a rank's call-path tree (regions at the top). */
static void write_tree(FILE *out, const sp_profile *profile, const sp_path_tree *tree,
                       const char *root_name)
{
    char *buf = NULL, *pbuf = NULL;
    size_t cap = 0, pcap = 0;
    for (size_t k = 0; k < tree->n; k++) {
        const sp_path_node *nd = &tree->nodes[k];
        stat4 s = {nd->calls, nd->calls, nd->exclusive_ns, nd->inclusive_ns};
        m_key(out, nd->source_file, nd->source_line,
              path_name(profile, tree, (int64_t)k, &buf, &cap));
        m_tuple(out, 5);
        m_stat(out, &s, 0);
        fputc('{', out);
        if (nd->parent >= 0) {
            const sp_path_node *pn = &tree->nodes[nd->parent];
            m_key(out, pn->source_file, pn->source_line,
                  path_name(profile, tree, nd->parent, &pbuf, &pcap));
        } else {
            m_key(out, NULL, 0, root_name);
        }
        m_tuple(out, 4);
        m_stat(out, &s, 1);
        fputc('0', out);
    }
    free(buf);
    free(pbuf);
}

static int write_call_paths(FILE *out, const sp_profile *profile, const sp_rank_data *data,
                            const char *root_name, char *err, size_t errlen)
{
    sp_path_tree tree;
    sp_path_tree_init(&tree);
    if (sp_path_tree_add(&tree, profile, data, -1, 0, NULL) < 0) {
        sp_path_tree_free(&tree);
        snprintf(err, errlen, "out of memory aggregating call paths");
        return -1;
    }
    write_tree(out, profile, &tree, root_name);
    sp_path_tree_free(&tree);
    return 0;
}

/* ---- name-aggregated mode ----------------------------------------------- */

#define ROOT_CALLER UINT32_MAX

/* Callers are written in the order the lane-by-lane walk first meets them
 * (lane ascending, then call order within the lane), which a stream that
 * interleaves the lanes knows as well: (first_lane, first_seq). */
typedef struct bucket {
    uint32_t region, caller; /* caller: region of the parent call, or ROOT_CALLER */
    int64_t first_lane;
    uint64_t first_seq;
    stat4 s;
} bucket;

typedef struct name_ctx {
    const sp_calls *calls;
    uint32_t *open;          /* per region: calls of it currently open (ancestors) */
    stat4 *region;           /* per region */
    bucket *buckets;         /* open addressing, `slots` entries, region UINT32_MAX = free */
    size_t slots, used;
    int64_t lane;            /* of the call being added */
    uint64_t seq;            /* calls added so far */
    int failed;
} name_ctx;

/* The bucket of (region, caller), created with the current call as its
 * first; NULL out of memory. */
static bucket *find_bucket(name_ctx *x, uint32_t region, uint32_t caller)
{
    if ((x->used + 1) * 2 > x->slots) {
        size_t slots = x->slots ? x->slots * 2 : 64;
        bucket *table = malloc(slots * sizeof *table);
        if (!table)
            return NULL;
        for (size_t s = 0; s < slots; s++)
            table[s].region = UINT32_MAX;
        for (size_t s = 0; s < x->slots; s++) {
            if (x->buckets[s].region == UINT32_MAX)
                continue;
            size_t h = ((size_t)x->buckets[s].region * 31u + x->buckets[s].caller) & (slots - 1);
            while (table[h].region != UINT32_MAX)
                h = (h + 1) & (slots - 1);
            table[h] = x->buckets[s];
        }
        free(x->buckets);
        x->buckets = table;
        x->slots = slots;
    }
    size_t h = ((size_t)region * 31u + caller) & (x->slots - 1);
    for (; x->buckets[h].region != UINT32_MAX; h = (h + 1) & (x->slots - 1))
        if (x->buckets[h].region == region && x->buckets[h].caller == caller)
            return &x->buckets[h];
    x->used++;
    x->buckets[h] = (bucket){
        .region = region, .caller = caller, .first_lane = x->lane, .first_seq = x->seq};
    return &x->buckets[h];
}

static void add_call(stat4 *s, int primitive, int64_t duration, int64_t exclusive)
{
    s->nc++;
    s->tt_ns += exclusive;
    if (primitive) {
        s->cc++;
        s->ct_ns += duration;
    }
}

/* A call is primitive when no ancestor belongs to the same region (cProfile's
 * definition), known exactly from the open-call counts of the walk. */
static int name_open(void *ctx, size_t i)
{
    name_ctx *x = ctx;
    const sp_calls *c = x->calls;
    uint32_t r = c->region[i];
    int primitive = x->open[r] == 0;
    int64_t duration = c->end[i] - c->start[i];
    add_call(&x->region[r], primitive, duration, c->exclusive[i]);
    uint32_t caller = c->parent[i] >= 0 ? c->region[c->parent[i]] : ROOT_CALLER;
    bucket *b = find_bucket(x, r, caller);
    if (!b) {
        x->failed = 1;
        return 1;
    }
    add_call(&b->s, primitive, duration, c->exclusive[i]);
    x->open[r]++;
    x->seq++;
    return 0;
}

static int name_close(void *ctx, size_t i)
{
    name_ctx *x = ctx;
    x->open[x->calls->region[i]]--;
    return 0;
}

static void region_key(FILE *out, const sp_profile *p, const sp_rank_data *d, uint32_t region)
{
    int64_t row = d->row_of_region[region];
    const sp_row *r = row >= 0 ? &p->rows[row] : NULL;
    m_key(out, r ? r->source_file : NULL, r ? r->source_line : -1, p->names[region]);
}

static int bucket_order(const void *a, const void *b)
{
    const bucket *x = a, *y = b;
    if (x->region != y->region)
        return x->region < y->region ? -1 : 1;
    if (x->first_lane != y->first_lane)
        return x->first_lane < y->first_lane ? -1 : 1;
    return x->first_seq < y->first_seq ? -1 : x->first_seq > y->first_seq;
}

/* The entries of x: regions in id order, each with its callers in the order
 * the walk first met them.  0, -1 out of memory. */
static int write_names(FILE *out, const sp_profile *profile, const sp_rank_data *data,
                       const name_ctx *x, const char *root_name)
{
    bucket *sorted = malloc((x->used ? x->used : 1) * sizeof *sorted);
    if (!sorted)
        return -1;
    size_t n = 0;
    for (size_t s = 0; s < x->slots; s++)
        if (x->buckets[s].region != UINT32_MAX)
            sorted[n++] = x->buckets[s];
    qsort(sorted, n, sizeof *sorted, bucket_order);
    size_t k = 0;
    for (uint32_t r = 0; r < profile->num_names; r++) {
        if (x->region[r].nc == 0)
            continue;
        region_key(out, profile, data, r);
        m_tuple(out, 5);
        m_stat(out, &x->region[r], 0);
        fputc('{', out);
        for (; k < n && sorted[k].region == r; k++) {
            const bucket *b = &sorted[k];
            if (b->caller == ROOT_CALLER)
                m_key(out, NULL, 0, root_name);
            else
                region_key(out, profile, data, b->caller);
            m_tuple(out, 4);
            m_stat(out, &b->s, 1);
        }
        fputc('0', out);
    }
    free(sorted);
    return 0;
}

/* x aggregated from a loaded rank, lane after lane.  0, -1 out of memory. */
static int names_of_rank(name_ctx *x, const sp_profile *profile, const sp_rank_data *data)
{
    size_t names = profile->num_names ? profile->num_names : 1;
    *x = (name_ctx){.calls = &data->calls,
                    .open = calloc(names, sizeof *x->open),
                    .region = calloc(names, sizeof *x->region)};
    sp_lane_walk walk;
    if (!x->open || !x->region || sp_lane_walk_build(&data->calls, &walk) < 0)
        return -1;
    for (size_t l = 0; l < walk.num_lanes && !x->failed; l++) {
        x->lane = walk.lanes[l];
        sp_lane_walk_visit(&walk, &data->calls, l, name_open, name_close, x);
    }
    sp_lane_walk_free(&walk);
    return x->failed ? -1 : 0;
}

static void name_ctx_free(name_ctx *x)
{
    free(x->open);
    free(x->region);
    free(x->buckets);
}

static int write_by_name(FILE *out, const sp_profile *profile, const sp_rank_data *data,
                         const char *root_name, char *err, size_t errlen)
{
    name_ctx x;
    int rc = names_of_rank(&x, profile, data);
    if (rc == 0)
        rc = write_names(out, profile, data, &x, root_name);
    if (rc < 0)
        snprintf(err, errlen, "out of memory aggregating rank %u by region", data->rank);
    name_ctx_free(&x);
    return rc;
}

/* The synthetic root entry: called once, its cumulative time is all root
 * calls'. */
static void write_root(FILE *out, const char *root_name, int64_t roots_ns)
{
    stat4 root = {1, 1, 0, roots_ns};
    m_key(out, NULL, 0, root_name);
    m_tuple(out, 5);
    m_stat(out, &root, 0);
    fputc('{', out);
    fputc('0', out);
}

int sp_export_prof(FILE *out, const sp_profile *profile, uint32_t rank,
                   const sp_export_options *options, char *err, size_t errlen)
{
    sp_rank_data data;
    const sp_selection *sel = options ? options->selection : NULL;
    if (sp_rank_data_load(profile, rank, sel, &data, err, errlen) < 0)
        return -1;
    int grafted = sp_selection_grafts(sel) ? sp_rank_data_graft(profile, &data, NULL) : 0;
    if (grafted != 0) {
        sp_graft_failure(grafted, rank, err, errlen);
        sp_rank_data_free(&data);
        return -1;
    }
    char root_name[512];
    snprintf(root_name, sizeof root_name, "<%s rank %u>", sp_export_label(profile, options), rank);
    fputc('{', out);
    int rc = 0;
    if (data.calls.n) {
        int64_t roots_ns = 0;
        for (size_t i = 0; i < data.calls.n; i++)
            if (data.calls.parent[i] < 0)
                roots_ns += data.calls.end[i] - data.calls.start[i];
        write_root(out, root_name, roots_ns);
        rc = (options && !options->call_paths)
                 ? write_by_name(out, profile, &data, root_name, err, errlen)
                 : write_call_paths(out, profile, &data, root_name, err, errlen);
    }
    fputc('0', out);
    if (rc == 0)
        sp_export_warn_events(options, data.calls.n, "prof export");
    sp_rank_data_free(&data);
    return rc;
}

/* ---- on the stream ------------------------------------------------------ */

/* The open kept calls of one lane: their regions and callers (a stack),
 * and how many of each region are open (cProfile's "primitive" is judged
 * within the lane, as the in-memory walk goes lane after lane). */
typedef struct open_call {
    uint32_t region, caller;
} open_call;

typedef struct lane_open {
    int64_t lane;
    uint32_t *open;
    open_call *stack;
    size_t depth, cap;
} lane_open;

struct sp_prof_stream {
    const sp_run_source *src;
    const sp_export_options *options;
    sp_stream_filter filter;
    /* the rank being streamed, by name */
    name_ctx names;
    lane_open *lanes;
    size_t num_lanes, cached;
    uint64_t calls;
    int64_t roots_ns;
    int replayed;            /* calls not delivered nested (a scattered rank) */
};

static lane_open *open_of_lane(sp_prof_stream *s, int64_t lane)
{
    if (s->cached < s->num_lanes && s->lanes[s->cached].lane == lane)
        return &s->lanes[s->cached];
    for (size_t l = 0; l < s->num_lanes; l++)
        if (s->lanes[l].lane == lane) {
            s->cached = l;
            return &s->lanes[l];
        }
    size_t names = s->src->profile->num_names ? s->src->profile->num_names : 1;
    lane_open *grown = realloc(s->lanes, (s->num_lanes + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    s->lanes = grown;
    uint32_t *open = calloc(names, sizeof *open);
    if (!open)
        return NULL;
    s->lanes[s->num_lanes] = (lane_open){.lane = lane, .open = open};
    s->cached = s->num_lanes++;
    return &s->lanes[s->cached];
}

/* A kept call's user word is its depth among the kept calls of its lane:
 * the open calls are then exactly its ancestors when the stream delivers
 * the calls nested, which a rank replayed from memory (far out of time
 * order: every enter, then every exit) does not do. */
static int name_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    sp_prof_stream *s = ctx;
    *user = parent;
    if (!sp_stream_filter_keeps(&s->filter, call))
        return 0;
    lane_open *l = open_of_lane(s, call->lane);
    if (!l)
        return -1;
    size_t d = parent < 0 ? 0 : (size_t)parent + 1;
    if (l->depth != d) {
        s->replayed = 1;
        return -1;
    }
    if (d == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        open_call *grown = realloc(l->stack, cap * sizeof *grown);
        if (!grown)
            return -1;
        l->stack = grown;
        l->cap = cap;
    }
    uint32_t r = call->region;
    uint32_t caller = d ? l->stack[d - 1].region : ROOT_CALLER;
    int primitive = l->open[r] == 0;
    int64_t duration = call->end - call->start;
    s->names.lane = call->lane;
    bucket *b = find_bucket(&s->names, r, caller);
    if (!b)
        return -1;
    /* the exclusive time is added at the exit */
    add_call(&s->names.region[r], primitive, duration, 0);
    add_call(&b->s, primitive, duration, 0);
    l->open[r]++;
    l->stack[l->depth++] = (open_call){r, caller};
    s->names.seq++;
    s->calls++;
    if (parent < 0)
        s->roots_ns += duration;
    *user = (int64_t)d;
    return 1;
}

static int name_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    sp_prof_stream *s = ctx;
    lane_open *l = open_of_lane(s, call->lane);
    if (!l)
        return -1;
    if (l->depth != (size_t)user + 1) {
        s->replayed = 1;
        return -1;
    }
    open_call c = l->stack[--l->depth];
    bucket *b = find_bucket(&s->names, c.region, c.caller);
    if (!b)
        return -1;
    s->names.region[c.region].tt_ns += call->exclusive;
    b->s.tt_ns += call->exclusive;
    l->open[c.region]--;
    return 0;
}

int sp_prof_stream_open(sp_prof_stream **out, const struct sp_run_source *src,
                        const sp_export_options *options, uint32_t **ranks, long *num_ranks,
                        char *why, size_t whylen)
{
    *out = NULL;
    *ranks = NULL;
    *num_ranks = 0;
    /* (MPI columns are not part of this output: the stream leaves them) */
    const char *reason = sp_run_source_unstreamable_calls(src);
    if (reason) {
        snprintf(why, whylen, "%s", reason);
        return 1;
    }
    sp_prof_stream *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->src = src;
    s->options = options;
    const sp_selection *sel = options ? options->selection : NULL;
    int rc = sp_stream_filter_init(&s->filter, src, sel, why, whylen);
    if (rc == 0 && (*num_ranks = sp_selected_ranks(src->profile, sel, ranks)) < 0)
        rc = -1;
    if (rc == 0 && *num_ranks == 0) {
        snprintf(why, whylen, "no rank selected: the in-memory path words it");
        rc = 1;
    }
    if (rc == 0 && sp_stream_check_run(src, *ranks, *num_ranks, NULL, why, whylen))
        rc = 1;
    if (rc != 0) {
        free(*ranks);
        *ranks = NULL;
        *num_ranks = 0;
        sp_prof_stream_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* By name from a rank's grafted call-path tree with its lanes on top
 * (sp_path_tree_stream_rank, with_ranks: the nodes in the order the
 * in-memory path creates them, grafted on the stream).  That path walks the
 * grafted calls lane after lane (the lane of each tree's root), so a call's
 * open ancestors are its node's path: a node's calls are primitive when no
 * region node above it has its region, and its caller is its parent node's
 * region.  A (region, caller) bucket is first met at its node with the
 * smallest (lane, creation index): within a lane the nodes are created in
 * the walk's order.  0, -1 out of memory. */
static int names_of_tree(name_ctx *x, const sp_path_tree *tree, size_t names, int64_t *roots_ns)
{
    *x = (name_ctx){.region = calloc(names, sizeof *x->region)};
    if (!x->region)
        return -1;
    for (size_t k = 0; k < tree->n; k++) {
        const sp_path_node *nd = &tree->nodes[k];
        if (nd->kind != SP_PATH_REGION)
            continue;
        uint32_t r = (uint32_t)nd->value;
        int64_t up = nd->parent;
        uint32_t caller = up >= 0 && tree->nodes[up].kind == SP_PATH_REGION
                              ? (uint32_t)tree->nodes[up].value
                              : ROOT_CALLER;
        int primitive = 1;
        for (; up >= 0 && tree->nodes[up].kind == SP_PATH_REGION; up = tree->nodes[up].parent)
            if (tree->nodes[up].value == nd->value)
                primitive = 0;
        x->lane = up >= 0 && tree->nodes[up].kind == SP_PATH_LANE ? tree->nodes[up].value : -1;
        x->seq = k;
        bucket *b = find_bucket(x, r, caller);
        if (!b)
            return -1;
        if (x->lane < b->first_lane || (x->lane == b->first_lane && k < b->first_seq)) {
            b->first_lane = x->lane;
            b->first_seq = k;
        }
        stat4 calls = {primitive ? nd->calls : 0, nd->calls, nd->exclusive_ns,
                       primitive ? nd->inclusive_ns : 0};
        stat4 *into[2] = {&x->region[r], &b->s};
        for (int t = 0; t < 2; t++) {
            into[t]->cc += calls.cc;
            into[t]->nc += calls.nc;
            into[t]->tt_ns += calls.tt_ns;
            into[t]->ct_ns += calls.ct_ns;
        }
        if (caller == ROOT_CALLER)
            *roots_ns += nd->inclusive_ns;
    }
    return 0;
}

/* One rank by name, on the stream: a file with fork edges that is grafted
 * through its grafted call-path tree (names_of_tree), any other call by
 * call.  0, 1, -1. */
static int names_streamed(sp_prof_stream *s, FILE *out, uint32_t rank, long file,
                          const char *root_name, char *why, size_t whylen)
{
    const sp_profile *skeleton = s->src->profile;
    const sp_selection *sel = s->options ? s->options->selection : NULL;
    size_t names = skeleton->num_names ? skeleton->num_names : 1;
    int rc = 0;
    sp_rank_data data = {0};
    data.row_of_region = malloc(names * sizeof *data.row_of_region);
    if (!data.row_of_region)
        return -1;
    sp_stream_rows_of_rank(skeleton, rank, data.row_of_region);
    if (file >= 0 && s->src->shapes[file].has_fork && sp_selection_grafts(sel)) {
        sp_path_tree tree;
        sp_path_tree_init(&tree);
        rc = sp_path_tree_stream_rank(&tree, s->src, &s->filter, rank, 1, &s->calls, why,
                                      whylen);
        if (rc == 0)
            rc = names_of_tree(&s->names, &tree, names, &s->roots_ns);
        sp_path_tree_free(&tree);
    } else {
        s->names = (name_ctx){.region = calloc(names, sizeof *s->names.region)};
        if (!s->names.region)
            rc = -1;
        if (rc == 0 && file >= 0) {
            sp_stream_filter_rank(&s->filter, rank);
            sp_call_visitor visitor = {name_enter, name_exit, s};
            sp_rank_stream_info info;
            rc = sp_stream_rank(s->src, rank, sp_rank_clock_offset(skeleton, rank), &visitor,
                                &info, why, whylen);
            sp_rank_stream_info_free(&info);
            if (rc < 0 && s->replayed) {
                snprintf(why, whylen, "rank %u: calls far out of time order (replayed from "
                                      "memory, not nested)", rank);
                s->replayed = 0;
                rc = 1;
            }
        }
    }
    if (rc == 0 && s->calls) {
        write_root(out, root_name, s->roots_ns);
        rc = write_names(out, skeleton, &data, &s->names, root_name);
    }
    free(data.row_of_region);
    for (size_t l = 0; l < s->num_lanes; l++) {
        free(s->lanes[l].open);
        free(s->lanes[l].stack);
    }
    free(s->lanes);
    s->lanes = NULL;
    s->num_lanes = s->cached = 0;
    name_ctx_free(&s->names);
    memset(&s->names, 0, sizeof s->names);
    return rc;
}

int sp_prof_stream_rank(sp_prof_stream *s, FILE *out, uint32_t rank, uint64_t *calls,
                        char *why, size_t whylen)
{
    const sp_profile *skeleton = s->src->profile;
    char root_name[512];
    snprintf(root_name, sizeof root_name, "<%s rank %u>", sp_export_label(skeleton, s->options),
             rank);
    s->calls = 0;
    s->roots_ns = 0;
    fputc('{', out);
    int rc;
    if (s->options && !s->options->call_paths) {
        rc = names_streamed(s, out, rank, sp_stream_rank_file(s->src, rank), root_name, why,
                            whylen);
    } else {
        sp_path_tree tree;
        sp_path_tree_init(&tree);
        rc = sp_path_tree_stream_rank(&tree, s->src, &s->filter, rank, 0, &s->calls, why,
                                      whylen);
        if (rc == 0 && s->calls) {
            for (int64_t t = sp_path_tree_first_top(&tree); t >= 0;
                 t = tree.nodes[t].next_sibling)
                s->roots_ns += tree.nodes[t].inclusive_ns;
            write_root(out, root_name, s->roots_ns);
            write_tree(out, skeleton, &tree, root_name);
        }
        sp_path_tree_free(&tree);
    }
    fputc('0', out);
    *calls = s->calls;
    if (rc < 0)
        snprintf(why, whylen, "out of memory");
    return rc;
}

void sp_prof_stream_close(sp_prof_stream *s)
{
    if (!s)
        return;
    sp_stream_filter_free(&s->filter);
    free(s);
}
