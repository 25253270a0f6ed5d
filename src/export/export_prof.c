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

#include "scopeprof/export.h"

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
    char *buf = NULL, *pbuf = NULL;
    size_t cap = 0, pcap = 0;
    for (size_t k = 0; k < tree.n; k++) {
        const sp_path_node *nd = &tree.nodes[k];
        stat4 s = {nd->calls, nd->calls, nd->exclusive_ns, nd->inclusive_ns};
        m_key(out, nd->source_file, nd->source_line,
              path_name(profile, &tree, (int64_t)k, &buf, &cap));
        m_tuple(out, 5);
        m_stat(out, &s, 0);
        fputc('{', out);
        if (nd->parent >= 0) {
            const sp_path_node *pn = &tree.nodes[nd->parent];
            m_key(out, pn->source_file, pn->source_line,
                  path_name(profile, &tree, nd->parent, &pbuf, &pcap));
        } else {
            m_key(out, NULL, 0, root_name);
        }
        m_tuple(out, 4);
        m_stat(out, &s, 1);
        fputc('0', out);
    }
    free(buf);
    free(pbuf);
    sp_path_tree_free(&tree);
    return 0;
}

/* ---- name-aggregated mode ----------------------------------------------- */

#define ROOT_CALLER UINT32_MAX

typedef struct bucket {
    uint32_t region, caller; /* caller: region of the parent call, or ROOT_CALLER */
    stat4 s;
} bucket;

typedef struct name_ctx {
    const sp_calls *calls;
    uint32_t *open;          /* per region: calls of it currently open (ancestors) */
    stat4 *region;           /* per region */
    bucket *buckets;         /* open addressing, `slots` entries, region UINT32_MAX = free */
    size_t slots, used;
    int failed;
} name_ctx;

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
    x->buckets[h] = (bucket){.region = region, .caller = caller};
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

static int write_by_name(FILE *out, const sp_profile *profile, const sp_rank_data *data,
                         const char *root_name, char *err, size_t errlen)
{
    size_t names = profile->num_names ? profile->num_names : 1;
    name_ctx x = {.calls = &data->calls,
                  .open = calloc(names, sizeof *x.open),
                  .region = calloc(names, sizeof *x.region)};
    sp_lane_walk walk;
    int walked = 0, rc = -1;
    if (!x.open || !x.region || sp_lane_walk_build(&data->calls, &walk) < 0)
        goto done;
    walked = 1;
    for (size_t l = 0; l < walk.num_lanes && !x.failed; l++)
        sp_lane_walk_visit(&walk, &data->calls, l, name_open, name_close, &x);
    if (x.failed)
        goto done;
    for (uint32_t r = 0; r < profile->num_names; r++) {
        if (x.region[r].nc == 0)
            continue;
        region_key(out, profile, data, r);
        m_tuple(out, 5);
        m_stat(out, &x.region[r], 0);
        fputc('{', out);
        for (size_t s = 0; s < x.slots; s++) {
            const bucket *b = &x.buckets[s];
            if (b->region != r)
                continue;
            if (b->caller == ROOT_CALLER)
                m_key(out, NULL, 0, root_name);
            else
                region_key(out, profile, data, b->caller);
            m_tuple(out, 4);
            m_stat(out, &b->s, 1);
        }
        fputc('0', out);
    }
    rc = 0;
done:
    if (rc < 0)
        snprintf(err, errlen, "out of memory aggregating rank %u by region", data->rank);
    if (walked)
        sp_lane_walk_free(&walk);
    free(x.open);
    free(x.region);
    free(x.buckets);
    return rc;
}

int sp_export_prof(FILE *out, const sp_profile *profile, uint32_t rank,
                   const sp_export_options *options, char *err, size_t errlen)
{
    sp_rank_data data;
    const sp_selection *sel = options ? options->selection : NULL;
    if (sp_rank_data_load(profile, rank, sel, &data, err, errlen) < 0)
        return -1;
    if (sp_selection_grafts(sel) && sp_rank_data_graft(profile, &data, NULL) != 0) {
        snprintf(err, errlen, "out of memory grafting forked calls of rank %u", rank);
        sp_rank_data_free(&data);
        return -1;
    }
    char root_name[512];
    snprintf(root_name, sizeof root_name, "<%s rank %u>", sp_export_label(profile, options), rank);
    fputc('{', out);
    int rc = 0;
    if (data.calls.n) {
        /* Synthetic root: called once, its cumulative time is all root calls. */
        stat4 root = {1, 1, 0, 0};
        for (size_t i = 0; i < data.calls.n; i++)
            if (data.calls.parent[i] < 0)
                root.ct_ns += data.calls.end[i] - data.calls.start[i];
        m_key(out, NULL, 0, root_name);
        m_tuple(out, 5);
        m_stat(out, &root, 0);
        fputc('{', out);
        fputc('0', out);
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
