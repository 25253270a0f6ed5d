/* h5_check.c - sp_h5_check: everything the reader validates (schema, row
 * bounds and overlaps, column lengths, region ids), then what only a full
 * check looks at: duplicate rows, summary statistics against the events,
 * lane ids against the lane tables, call ids, and nesting per rank. */
#include <stdlib.h>
#include <string.h>

#include "h5/h5_internal.h"
#include "scopeprof/callstack.h"

/* A (rank, id) pair, for lookups in lane tables and call ids. */
struct key {
    uint32_t rank;
    int64_t id;
};

static int by_key(const void *a, const void *b)
{
    const struct key *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int has_key(const struct key *keys, size_t n, uint32_t rank, int64_t id)
{
    struct key k = {rank, id};
    return bsearch(&k, keys, n, sizeof k, by_key) != NULL;
}

static const char *name_of(const sp_profile *prof, const sp_row *row)
{
    return prof->names[row->region];
}

/* Sorted (rank, id) keys; reports duplicates as `what`. */
static struct key *sorted_keys(struct key *keys, size_t n, const char *what, sp_problems *p)
{
    qsort(keys, n, sizeof *keys, by_key);
    for (size_t i = 1; i < n; i++)
        if (!by_key(&keys[i - 1], &keys[i]))
            sp_problem(p, "%s lists index %lld of rank %u twice", what,
                       (long long)keys[i].id, keys[i].rank);
    return keys;
}

/* Every event's lane id must be -1 or an index of the lane table for the
 * row's rank; one line per row at most. */
static void check_lane_column(const sp_profile *prof, const int64_t *ids, const struct key *keys,
                              size_t nkeys, const char *column, const char *table,
                              sp_problems *p)
{
    for (size_t r = 0; r < prof->num_rows; r++) {
        const sp_row *row = &prof->rows[r];
        uint64_t bad = 0;
        int64_t example = 0;
        for (uint64_t j = 0; j < row->count; j++) {
            int64_t id = ids[row->offset + j];
            if (id == -1 || (id >= 0 && has_key(keys, nkeys, row->rank, id)))
                continue;
            if (!bad++)
                example = id;
        }
        if (bad)
            sp_problem(p, "region '%s' of rank %u: %llu events have %s %lld (and others) "
                       "that %s does not list for that rank", name_of(prof, row), row->rank,
                       (unsigned long long)bad, column, (long long)example, table);
    }
}

static void check_lanes(const sp_profile *prof, sp_problems *p)
{
    if (prof->thread_ids && prof->has_thread_table) {
        struct key *keys = malloc((prof->num_threads + 1) * sizeof *keys);
        if (!keys) {
            sp_problem(p, "out of memory checking thread ids");
            return;
        }
        for (size_t i = 0; i < prof->num_threads; i++)
            keys[i] = (struct key){prof->threads[i].rank, prof->threads[i].index};
        sorted_keys(keys, prof->num_threads, "thread_table", p);
        check_lane_column(prof, prof->thread_ids, keys, prof->num_threads, "thread_ids",
                          "thread_table", p);
        free(keys);
    }
    if (prof->task_ids && prof->has_task_table) {
        struct key *keys = malloc((prof->num_tasks + 1) * sizeof *keys);
        if (!keys) {
            sp_problem(p, "out of memory checking task ids");
            return;
        }
        for (size_t i = 0; i < prof->num_tasks; i++)
            keys[i] = (struct key){prof->tasks[i].rank, prof->tasks[i].index};
        sorted_keys(keys, prof->num_tasks, "task_table", p);
        check_lane_column(prof, prof->task_ids, keys, prof->num_tasks, "task_ids", "task_table", p);
        free(keys);
    }
}

/* call_ids unique within a rank; parent_ids -1 or a call id of the rank. */
/* Every entry of `ids` (a column of call ids, may be NULL) is -1 or a call
 * of its row's rank (`seen`: span bytes per rank). */
static void dense_references(const sp_profile *prof, sp_problems *p, const int64_t *ids,
                             const char *what, const unsigned char *seen, uint64_t span)
{
    for (size_t r = 0; ids && r < prof->num_rows; r++) {
        const sp_row *row = &prof->rows[r];
        uint64_t bad = 0;
        int64_t example = 0;
        for (uint64_t j = 0; j < row->count; j++) {
            int64_t parent = ids[row->offset + j];
            if (parent == -1 ||
                (parent >= 0 && (uint64_t)parent < span &&
                 seen[(size_t)(row->rank * span + (uint64_t)parent)]))
                continue;
            if (!bad++)
                example = parent;
        }
        if (bad)
            sp_problem(p, "region '%s' of rank %u: %llu events have %s %lld (and "
                       "others) that is no call of that rank", name_of(prof, row), row->rank,
                       (unsigned long long)bad, what, (long long)example);
    }
}

/* The usual case, and every command now pays for this check: call ids are
 * 0..n-1 per rank (our writer, the Python package), so one byte per
 * possible (rank, id) finds duplicates and parents without sorting 16-byte
 * keys of every event.  Returns 0 when the ids are too sparse for it. */
static int check_dense_call_ids(const sp_profile *prof, sp_problems *p)
{
    int64_t top = -1;
    uint32_t ranks = 0;
    for (size_t r = 0; r < prof->num_rows; r++) {
        const sp_row *row = &prof->rows[r];
        if (row->count && row->rank + 1 > ranks)
            ranks = row->rank + 1;
        for (uint64_t j = 0; j < row->count; j++) {
            int64_t id = prof->call_ids[row->offset + j];
            if (id < 0)
                return 0;
            if (id > top)
                top = id;
        }
    }
    uint64_t span = (uint64_t)top + 1;
    if (ranks == 0 || span > (4 * (uint64_t)prof->num_events + 1024) / ranks)
        return 0;
    unsigned char *seen = calloc((size_t)(span * ranks), 1);
    if (!seen)
        return 0;
    size_t dups = 0;
    for (size_t r = 0; r < prof->num_rows; r++) {
        const sp_row *row = &prof->rows[r];
        for (uint64_t j = 0; j < row->count; j++) {
            int64_t id = prof->call_ids[row->offset + j];
            unsigned char *slot = &seen[(size_t)(row->rank * span + (uint64_t)id)];
            if (*slot && !dups++)
                sp_problem(p, "call id %lld appears more than once on rank %u (call ids must "
                           "be unique within a rank)", (long long)id, row->rank);
            *slot = 1;
        }
    }
    /* parents, and fork parents (docs/tasks.md): -1 or a call of the rank */
    dense_references(prof, p, prof->parent_ids, "parent id", seen, span);
    dense_references(prof, p, prof->fork_parent_ids, "fork parent id", seen, span);
    free(seen);
    return 1;
}

static void check_call_ids(const sp_profile *prof, sp_problems *p)
{
    if (!prof->call_ids || check_dense_call_ids(prof, p))
        return;
    size_t n = 0;
    struct key *keys = malloc((prof->num_events + 1) * sizeof *keys);
    if (!keys) {
        sp_problem(p, "out of memory checking call ids");
        return;
    }
    for (size_t r = 0; r < prof->num_rows; r++)
        for (uint64_t j = 0; j < prof->rows[r].count; j++)
            keys[n++] = (struct key){prof->rows[r].rank, prof->call_ids[prof->rows[r].offset + j]};
    qsort(keys, n, sizeof *keys, by_key);
    size_t dups = 0;
    for (size_t i = 1; i < n; i++)
        if (!by_key(&keys[i - 1], &keys[i]) && !dups++)
            sp_problem(p, "call id %lld appears more than once on rank %u (call ids must be "
                       "unique within a rank)", (long long)keys[i].id, keys[i].rank);
    for (size_t r = 0; prof->parent_ids && r < prof->num_rows; r++) {
        const sp_row *row = &prof->rows[r];
        uint64_t bad = 0;
        int64_t example = 0;
        for (uint64_t j = 0; j < row->count; j++) {
            int64_t parent = prof->parent_ids[row->offset + j];
            if (parent != -1 && !has_key(keys, n, row->rank, parent) && !bad++)
                example = parent;
        }
        if (bad)
            sp_problem(p, "region '%s' of rank %u: %llu events have parent id %lld (and "
                       "others) that is no call of that rank", name_of(prof, row), row->rank,
                       (unsigned long long)bad, (long long)example);
    }
    /* fork parents (docs/tasks.md): -1 or a call of the same rank */
    for (size_t r = 0; prof->fork_parent_ids && r < prof->num_rows; r++) {
        const sp_row *row = &prof->rows[r];
        uint64_t bad = 0;
        int64_t example = 0;
        for (uint64_t j = 0; j < row->count; j++) {
            int64_t fork = prof->fork_parent_ids[row->offset + j];
            if (fork != -1 && !has_key(keys, n, row->rank, fork) && !bad++)
                example = fork;
        }
        if (bad)
            sp_problem(p, "region '%s' of rank %u: %llu events have fork parent id %lld (and "
                       "others) that is no call of that rank", name_of(prof, row), row->rank,
                       (unsigned long long)bad, (long long)example);
    }
    free(keys);
}

static int by_rank_region(const void *a, const void *b, void *ctx)
{
    const sp_profile *prof = ctx;
    const sp_row *x = &prof->rows[*(const size_t *)a], *y = &prof->rows[*(const size_t *)b];
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->region != y->region)
        return x->region < y->region ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : *(const size_t *)a > *(const size_t *)b;
}

/* The events of one rank's rows (indices into prof->rows, in the order
 * given), as the reconstruction takes them. */
typedef struct rank_events {
    size_t n;
    int64_t *start, *end, *threads, *tasks;
    uint32_t *region;
    uint64_t *event; /* each one's position in the event columns */
} rank_events;

static void rank_events_free(rank_events *g)
{
    free(g->start);
    free(g->end);
    free(g->threads);
    free(g->tasks);
    free(g->region);
    free(g->event);
    memset(g, 0, sizeof *g);
}

/* 0, or -1 out of memory (g freed). */
static int gather_rank(const sp_profile *prof, const size_t *rows, size_t count, rank_events *g)
{
    memset(g, 0, sizeof *g);
    for (size_t k = 0; k < count; k++)
        g->n += prof->rows[rows[k]].count;
    size_t n = g->n + 1;
    g->start = malloc(n * sizeof *g->start);
    g->end = malloc(n * sizeof *g->end);
    g->threads = prof->thread_ids ? malloc(n * sizeof *g->threads) : NULL;
    g->tasks = prof->task_ids ? malloc(n * sizeof *g->tasks) : NULL;
    g->region = malloc(n * sizeof *g->region);
    g->event = malloc(n * sizeof *g->event);
    if (!g->start || !g->end || !g->region || !g->event || (prof->thread_ids && !g->threads) ||
        (prof->task_ids && !g->tasks)) {
        rank_events_free(g);
        return -1;
    }
    size_t i = 0;
    for (size_t k = 0; k < count; k++) {
        const sp_row *row = &prof->rows[rows[k]];
        for (uint64_t j = 0; j < row->count; j++, i++) {
            uint64_t e = row->offset + j;
            g->start[i] = prof->start[e];
            g->end[i] = prof->end[e];
            g->region[i] = row->region;
            g->event[i] = e;
            if (g->threads)
                g->threads[i] = prof->thread_ids[e];
            if (g->tasks)
                g->tasks[i] = prof->task_ids[e];
        }
    }
    return 0;
}

static sp_call_input rank_input(const sp_profile *prof, const rank_events *g)
{
    return (sp_call_input){
        .n = g->n, .start = g->start, .end = g->end, .region = g->region,
        .thread_ids = g->threads, .task_ids = g->tasks,
        .region_names = (const char *const *)prof->names, .num_regions = prof->num_names,
    };
}

/* Rebuild the call tree of one rank (rows order[lo..hi)) on its lanes.
 * Calls that do not nest are a problem only when `nesting_required` (the
 * check command; the other commands show such a rank flat, with a
 * warning).  Stored call_ids/parent_ids must describe the tree the times
 * give: flame and export follow them, so a disagreement is damage. */
static void check_rank_tree(const sp_profile *prof, const size_t *order, size_t lo, size_t hi,
                            int nesting_required, sp_problems *p)
{
    rank_events g;
    if (gather_rank(prof, order + lo, hi - lo, &g) != 0) {
        sp_problem(p, "out of memory checking nesting");
        return;
    }
    size_t n = g.n;
    uint32_t rank = prof->rows[order[lo]].rank;
    const uint64_t *event = g.event;
    size_t with_ids = 0;
    for (size_t i = 0; i < n && prof->call_ids && prof->parent_ids; i++)
        with_ids += prof->call_ids[event[i]] >= 0;
    if (n == 0)
        goto out;
    if (with_ids > 0 && with_ids < n) {
        sp_problem(p, "rank %u stores call_ids for only %zu of its %zu calls", rank, with_ids, n);
        goto out;
    }
    sp_call_input input = rank_input(prof, &g);
    sp_calls calls;
    char why[512];
    if (sp_calls_build(&input, &calls, why, sizeof why) < 0) {
        if (nesting_required)
            sp_problem(p, "rank %u: %s", rank, why);
        goto out;
    }
    for (size_t c = 0; with_ids && c < calls.n; c++) {
        uint64_t e = event[calls.input_pos[c]];
        int64_t parent = calls.parent[c];
        /* A call at the root of its lane (a task, a worker thread) may keep
         * an edge to the call that started it, on another lane. */
        if (parent < 0)
            continue;
        int64_t expected = prof->call_ids[event[calls.input_pos[parent]]];
        if (prof->parent_ids[e] != expected) {
            sp_problem(p, "rank %u: call %lld of '%s' [%lld, %lld] ns has stored parent id "
                       "%lld but its timestamps nest it under call id %lld: the "
                       "call_ids/parent_ids columns disagree with the recorded times",
                       rank, (long long)prof->call_ids[e], prof->names[calls.region[c]],
                       (long long)calls.start[c], (long long)calls.end[c],
                       (long long)prof->parent_ids[e], (long long)expected);
            break;
        }
    }
    sp_calls_free(&calls);
out:
    rank_events_free(&g);
}

static int by_size_t(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* (call id, position in the reconstruction), sorted by id. */
struct id_at {
    int64_t id;
    int64_t at;
};

static int by_id(const void *a, const void *b)
{
    const struct id_at *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Fork parent ids that form a cycle with the call tree: the readers graft
 * a lane's root under its fork parent (docs/tasks.md), and a root forked,
 * through fork parents and ancestors, by a call under it has no place in
 * any tree (the report refuses such a rank).  Each call has one edge up: its
 * parent, or, at the root of its lane, the call its fork parent id names
 * (stored call ids, else the positions in the reconstruction, as the
 * readers number calls: the rank's rows in file order).  A call forked by
 * itself is no edge (the readers leave it a root). */
static void check_fork_cycles(const sp_profile *prof, const size_t *order, size_t lo, size_t hi,
                              sp_problems *p)
{
    size_t rows = hi - lo;
    size_t *in_file = malloc((rows + 1) * sizeof *in_file);
    rank_events g = {0};
    if (in_file) {
        memcpy(in_file, order + lo, rows * sizeof *in_file);
        qsort(in_file, rows, sizeof *in_file, by_size_t);
    }
    if (!in_file || gather_rank(prof, in_file, rows, &g) != 0) {
        free(in_file);
        sp_problem(p, "out of memory checking fork parent ids");
        return;
    }
    free(in_file);
    size_t n = g.n;
    uint32_t rank = prof->rows[order[lo]].rank;
    const uint64_t *event = g.event;
    struct id_at *ids = malloc((n + 1) * sizeof *ids);
    int64_t *up = malloc((n + 1) * sizeof *up);
    unsigned char *state = calloc(n + 1, 1);
    sp_calls calls = {0};
    int built = 0;
    if (!ids || !up || !state) {
        sp_problem(p, "out of memory checking fork parent ids");
        goto out;
    }
    if (n == 0)
        goto out;
    size_t stored = 0;
    for (size_t i = 0; i < n && prof->call_ids; i++)
        stored += prof->call_ids[event[i]] >= 0;
    sp_call_input input = rank_input(prof, &g);
    char why[512];
    if (sp_calls_build(&input, &calls, why, sizeof why) < 0)
        goto out; /* calls that do not nest: named by check_rank_tree */
    built = 1;
    for (size_t c = 0; c < calls.n; c++)
        ids[c] = (struct id_at){stored ? prof->call_ids[event[calls.input_pos[c]]] : (int64_t)c,
                                (int64_t)c};
    qsort(ids, calls.n, sizeof *ids, by_id);
    for (size_t c = 0; c < calls.n; c++) {
        up[c] = calls.parent[c];
        int64_t fork = prof->fork_parent_ids[event[calls.input_pos[c]]];
        if (up[c] >= 0 || fork < 0)
            continue;
        struct id_at want = {fork, 0};
        const struct id_at *found = bsearch(&want, ids, calls.n, sizeof *ids, by_id);
        if (found && found->at != (int64_t)c)
            up[c] = found->at;
    }
    /* state: 0 unseen, 1 on the walk now, 2 done (leads to a root) */
    for (size_t c = 0; c < calls.n; c++) {
        int64_t at = (int64_t)c;
        while (at >= 0 && state[at] == 0) {
            state[at] = 1;
            at = up[at];
        }
        if (at >= 0 && state[at] == 1) {
            uint64_t e = event[calls.input_pos[at]];
            sp_problem(p, "rank %u: its fork parent ids form a cycle: '%s' call %lld [%lld, "
                       "%lld] ns is forked, through fork parents and their callers, by a call "
                       "under it; the file is damaged (--no-graft shows each lane as recorded)",
                       rank, prof->names[calls.region[at]],
                       (long long)(stored ? prof->call_ids[e] : at), (long long)calls.start[at],
                       (long long)calls.end[at]);
            break;
        }
        for (at = (int64_t)c; at >= 0 && state[at] == 1; at = up[at])
            state[at] = 2;
    }
out:
    if (built)
        sp_calls_free(&calls);
    rank_events_free(&g);
    free(ids);
    free(up);
    free(state);
}

/* A call that ends before it starts: no reader can give it a duration. */
static void check_durations(const sp_profile *prof, sp_problems *p)
{
    for (size_t r = 0; !prof->aggregate && r < prof->num_rows; r++) {
        const sp_row *row = &prof->rows[r];
        uint64_t bad = 0;
        int64_t example = 0;
        for (uint64_t j = 0; j < row->count; j++) {
            int64_t d = (int64_t)((uint64_t)prof->end[row->offset + j] -
                                  (uint64_t)prof->start[row->offset + j]);
            if (d < 0 && !bad++)
                example = d;
        }
        if (bad)
            sp_problem(p, "region '%s' of rank %u: %llu calls end before they start "
                       "(duration %lld ns)", name_of(prof, row), row->rank,
                       (unsigned long long)bad, (long long)example);
    }
}

/* Duplicate rows, summary statistics, the call tree of every rank. */
static void check_rows(const sp_profile *prof, int nesting_required, sp_problems *p)
{
    size_t *order = malloc((prof->num_rows + 1) * sizeof *order);
    if (!order) {
        sp_problem(p, "out of memory checking rows");
        return;
    }
    for (size_t i = 0; i < prof->num_rows; i++)
        order[i] = i;
    qsort_r(order, prof->num_rows, sizeof *order, by_rank_region, (void *)prof);
    for (size_t k = 1; k < prof->num_rows; k++) {
        const sp_row *a = &prof->rows[order[k - 1]], *b = &prof->rows[order[k]];
        if (a->rank == b->rank && a->region == b->region)
            sp_problem(p, "region '%s' has two rows for rank %u", name_of(prof, b), b->rank);
    }
    for (size_t i = 0; !prof->aggregate && i < prof->num_rows; i++) {
        const sp_row *row = &prof->rows[i];
        sp_summary_stats want;
        if (!row->count)
            continue;
        sp_summary_compute(prof->start + row->offset, prof->end + row->offset,
                           prof->gpu ? prof->gpu + row->offset : NULL, (size_t)row->count, &want);
        const sp_summary_stats *s = &row->stats;
        if (s->total != want.total || s->minimum != want.minimum || s->maximum != want.maximum ||
            s->start_minimum != want.start_minimum || s->end_maximum != want.end_maximum ||
            s->gpu_count != want.gpu_count)
            sp_problem(p, "summary_statistics of region '%s' of rank %u disagree with its "
                       "events (total %lld, events say %lld)", name_of(prof, row), row->rank,
                       (long long)s->total, (long long)want.total);
    }
    for (size_t lo = 0; !prof->aggregate && lo < prof->num_rows;) {
        size_t hi = lo + 1;
        while (hi < prof->num_rows && prof->rows[order[hi]].rank == prof->rows[order[lo]].rank)
            hi++;
        check_rank_tree(prof, order, lo, hi, nesting_required, p);
        /* the checker's alone: a reader's graft names a cycle itself */
        if (prof->fork_parent_ids && nesting_required)
            check_fork_cycles(prof, order, lo, hi, p);
        lo = hi;
    }
    free(order);
}

void sp_h5_validate_profile(const sp_profile *prof, int nesting_required, sp_problems *p)
{
    /* Like calls that do not nest: the shim can record them (a clock that
     * stepped back), our writer keeps them and the other commands show the
     * rank flat with a warning; check refuses them. */
    if (nesting_required)
        check_durations(prof, p);
    check_lanes(prof, p);
    check_call_ids(prof, p);
    check_rows(prof, nesting_required, p);
}

long sp_h5_check(const char *path, sp_check_report_fn report, void *ctx,
                 char *err, size_t errlen)
{
    /* Not there, or not HDF5 at all: nothing to list problems of. */
    sp_problems opening = {.path = path, .err = err, .errlen = errlen};
    hid_t file = sp_h5_open_read(path, &opening);
    if (file < 0)
        return -1;
    H5Fclose(file);

    /* The reader applies sp_h5_validate_profile as for every command;
     * check alone also requires every rank's calls to nest. */
    sp_problems p = {.path = path, .err = err, .errlen = errlen, .report = report, .ctx = ctx,
                     .nesting_required = 1};
    sp_profile *prof = sp_h5_read_problems(path, &p);
    if (!prof)
        return p.count ? p.count : 1;
    sp_profile_free(prof);
    return p.count;
}
