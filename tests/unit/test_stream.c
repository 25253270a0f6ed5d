/* test_stream.c - the streaming writer (src/capture_stream.c) against the
 * in-memory path (sp_capture_to_profile + sp_h5_write): random captures of
 * properly nested calls on several threads and tasks, with many ties
 * (identical, touching and zero-length calls), partly in a spill file
 * written in the spill format and partly in memory chunks, written by both
 * and read back with our reader.  Everything must match except the call id
 * numbering: parents are compared as positions. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/capture.h"
#include "h5_test_util.h"
#include "scopeprof/h5.h"
#include "model/spill_format.h"

enum { MAX_EVENTS = 4096, MAX_CHUNKS = 4096, MAX_THREADS = 4, NUM_REGIONS = 6 };

static uint64_t rng_state;

static uint64_t rnd(uint64_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return n ? rng_state % n : 0;
}

/* A generated event with what recording order needs. */
struct gen_event {
    sp_event e;
    int64_t await;
    int64_t thread;
    uint64_t key;  /* random tie-break */
};

struct gen {
    struct gen_event ev[MAX_EVENTS];
    size_t n;
    /* chunks in writer order: spilled ones first (spill file order) */
    sp_capture_chunk chunks[MAX_CHUNKS];
    int spilled[MAX_CHUNKS];
    size_t num_chunks;
    sp_event chunk_events[MAX_EVENTS];
    int64_t chunk_await[MAX_EVENTS];
};

/* Properly nested calls inside [lo, hi] on one lane: children may touch
 * each other and the parent's ends, be zero-length or identical to it. */
static void gen_calls(struct gen *g, int64_t thread, int32_t task, int64_t lo, int64_t hi,
                      int depth)
{
    int children = depth > 4 ? 0 : (int)rnd(4);
    int64_t at = lo;
    for (int c = 0; c < children && g->n < MAX_EVENTS - 1; c++) {
        int64_t a = at + (int64_t)rnd((uint64_t)(hi - at + 1) / 2 + 1);
        if (a > hi)
            a = hi;
        int64_t b = a + (int64_t)rnd((uint64_t)(hi - a + 1));
        if (rnd(5) == 0)
            b = a; /* zero-length */
        if (rnd(6) == 0) {
            a = lo; /* identical to the parent */
            b = hi;
        }
        if (a < at)
            a = at;
        if (b < a)
            b = a;
        struct gen_event *ev = &g->ev[g->n++];
        ev->e = (sp_event){.start = 1000000 + a * 10, .end = 1000000 + b * 10,
                           .region = (uint32_t)rnd(NUM_REGIONS - 1), .task = task};
        ev->await = task >= 0 ? (int64_t)rnd(1000) : 0;
        ev->thread = thread;
        ev->key = rnd(UINT64_MAX);
        gen_calls(g, thread, task, a, b, depth + 1);
        at = b;
    }
}

static int by_thread_end_key(const void *pa, const void *pb)
{
    const struct gen_event *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->e.end != b->e.end)
        return a->e.end < b->e.end ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* Cut each thread's events (recording = end order) into chunks; a prefix
 * of each thread's chunks is spilled, spilled chunks of the threads
 * interleave in the spill file, chunks in memory follow thread by thread.
 * spill: 1 every chunk, -1 none, 0 a random prefix per thread. */
static void make_chunks(struct gen *g, int threads, int spill)
{
    qsort(g->ev, g->n, sizeof *g->ev, by_thread_end_key);
    size_t begin[MAX_THREADS + 1] = {0};
    for (size_t i = 0; i < g->n; i++)
        begin[g->ev[i].thread + 1]++;
    for (int t = 0; t < threads; t++)
        begin[t + 1] += begin[t];
    /* per thread: list of (first, count) chunks */
    static size_t cut_first[MAX_THREADS][MAX_CHUNKS], cut_count[MAX_THREADS][MAX_CHUNKS];
    size_t cuts[MAX_THREADS] = {0}, spill_upto[MAX_THREADS];
    for (int t = 0; t < threads; t++) {
        for (size_t i = begin[t]; i < begin[t + 1];) {
            size_t len = 1 + rnd(7);
            if (len > begin[t + 1] - i)
                len = begin[t + 1] - i;
            cut_first[t][cuts[t]] = i;
            cut_count[t][cuts[t]++] = len;
            i += len;
        }
        spill_upto[t] = spill > 0 ? cuts[t] : spill < 0 ? 0 : rnd(cuts[t] + 1);
    }
    size_t used = 0, next[MAX_THREADS] = {0};
    g->num_chunks = 0;
    for (;;) { /* spilled: random interleaving */
        int open[MAX_THREADS], n_open = 0;
        for (int t = 0; t < threads; t++)
            if (next[t] < spill_upto[t])
                open[n_open++] = t;
        if (!n_open)
            break;
        int t = open[rnd((uint64_t)n_open)];
        size_t k = next[t]++;
        g->spilled[g->num_chunks] = 1;
        g->chunks[g->num_chunks++] = (sp_capture_chunk){.events = NULL,
                                                       .count = cut_count[t][k],
                                                       .thread = t,
                                                       .await_ns = (const int64_t *)(uintptr_t)cut_first[t][k]};
    }
    for (int t = 0; t < threads; t++)
        for (size_t k = spill_upto[t]; k < cuts[t]; k++) {
            g->spilled[g->num_chunks] = 0;
            g->chunks[g->num_chunks++] = (sp_capture_chunk){.count = cut_count[t][k], .thread = t,
                                                           .await_ns = (const int64_t *)(uintptr_t)cut_first[t][k]};
        }
    /* lay the events out chunk by chunk */
    for (size_t c = 0; c < g->num_chunks; c++) {
        size_t first = (size_t)(uintptr_t)g->chunks[c].await_ns;
        int any_task = 0;
        for (size_t i = 0; i < g->chunks[c].count; i++) {
            g->chunk_events[used + i] = g->ev[first + i].e;
            g->chunk_await[used + i] = g->ev[first + i].await;
            any_task |= g->ev[first + i].e.task >= 0;
        }
        g->chunks[c].events = &g->chunk_events[used];
        g->chunks[c].await_ns = any_task ? &g->chunk_await[used] : NULL;
        used += g->chunks[c].count;
    }
}

static void put_frame(FILE *f, uint16_t type, uint16_t flags, uint32_t count, int64_t thread,
                      const void *a, size_t alen, const void *b, size_t blen)
{
    sp_spill_frame h = {.sync = SP_SPILL_FRAME_SYNC, .type = type, .flags = flags,
                        .length = (uint32_t)(alen + blen), .count = count, .thread = thread};
    uint64_t sum = sp_spill_hash(SP_SPILL_HASH_INIT, &h, sizeof h);
    sum = sp_spill_hash(sum, a, alen);
    if (blen)
        sum = sp_spill_hash(sum, b, blen);
    h.checksum = sum;
    fwrite(&h, sizeof h, 1, f);
    fwrite(a, 1, alen, f);
    if (blen)
        fwrite(b, 1, blen, f);
}

/* The spilled chunks as a spill file; the capture keeps the others. */
static size_t write_spill(struct gen *g, const char *path, sp_capture_chunk *memory)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    sp_spill_header h = {.version = SP_SPILL_VERSION, .header_size = sizeof h,
                         .event_size = sizeof(sp_event), .byte_order = SP_SPILL_BYTE_ORDER,
                         .pid = 1, .rank = 0, .start_time_ns = 1000000};
    memcpy(h.magic, SP_SPILL_MAGIC, sizeof h.magic);
    h.checksum = sp_spill_hash(SP_SPILL_HASH_INIT, &h, offsetof(sp_spill_header, checksum));
    fwrite(&h, sizeof h, 1, f);
    const char meta[] = "hostname\0test\0";
    put_frame(f, SP_SPILL_FRAME_META, 0, 0, 0, meta, sizeof meta - 1, NULL, 0);
    size_t n_memory = 0;
    for (size_t c = 0; c < g->num_chunks; c++) {
        const sp_capture_chunk *ch = &g->chunks[c];
        if (!g->spilled[c]) {
            memory[n_memory++] = *ch;
            continue;
        }
        put_frame(f, SP_SPILL_FRAME_EVENTS, ch->await_ns ? SP_SPILL_FLAG_AWAIT : 0,
                  (uint32_t)ch->count, ch->thread, ch->events, ch->count * sizeof(sp_event),
                  ch->await_ns, ch->await_ns ? ch->count * sizeof(int64_t) : 0);
    }
    fclose(f);
    return n_memory;
}

struct fixture {
    char dir[256], spill[300], a[300], b[300];
    sp_capture_region regions[NUM_REGIONS];
    sp_thread_row threads[MAX_THREADS];
    sp_task_row tasks[4];
    sp_meta meta[2];
    sp_capture_chunk memory[MAX_CHUNKS];
    const char *files[1];
    sp_capture cap;
};

static const char *region_names[NUM_REGIONS] = {"r0", "r1", "r2", "r3", "r4", "never"};

static void fixture_init(struct fixture *fx, struct gen *g, int threads, int tasks,
                         int track_threads, int with_spill)
{
    make_temp_dir(fx->dir, sizeof fx->dir);
    snprintf(fx->spill, sizeof fx->spill, "%s/p.h5.spill.1", fx->dir);
    snprintf(fx->a, sizeof fx->a, "%s/memory.h5", fx->dir);
    snprintf(fx->b, sizeof fx->b, "%s/stream.h5", fx->dir);
    for (int r = 0; r < NUM_REGIONS; r++)
        fx->regions[r] = (sp_capture_region){.name = region_names[r], .source_line = -1,
                                             .source_file = r == 1 ? "src/one.c" : NULL};
    for (int t = 0; t < threads; t++)
        fx->threads[t] = (sp_thread_row){.index = t, .ident = 100 + t, .native_id = 200 + t,
                                         .start_ns = t, .end_ns = -1, .cpu_ns = 5,
                                         .name = (char *)"worker"};
    for (int k = 0; k < tasks; k++)
        fx->tasks[k] = (sp_task_row){.index = k, .thread_index = k % threads, .created_ns = k,
                                     .done_ns = -1, .steps = 3, .kind = (char *)"task",
                                     .name = (char *)"t", .coro_name = (char *)""};
    fx->meta[0] = (sp_meta){.key = (char *)"label", .type = SP_META_STRING, .s = (char *)"x"};
    fx->meta[1] = (sp_meta){.key = (char *)"mpi_rank", .type = SP_META_INT, .i = 0};
    size_t n_memory = g->num_chunks;
    if (with_spill) {
        n_memory = write_spill(g, fx->spill, fx->memory);
    } else {
        memcpy(fx->memory, g->chunks, g->num_chunks * sizeof *g->chunks);
    }
    fx->files[0] = fx->spill;
    fx->cap = (sp_capture){
        .abi = SP_CAPTURE_ABI,
        .path = fx->a,
        .rank = 0,
        .track_threads = track_threads,
        .start_time_ns = 1000000,
        .num_regions = NUM_REGIONS,
        .regions = fx->regions,
        .num_chunks = n_memory,
        .chunks = fx->memory,
        .num_spill_files = with_spill ? 1 : 0,
        .spill_files = fx->files,
        .num_threads = (size_t)threads,
        .threads = fx->threads,
        .num_tasks = (size_t)tasks,
        .tasks = fx->tasks,
        .num_meta = 2,
        .meta = fx->meta,
    };
}

/* inverse[id] = position of the call with that id; ids are a permutation
 * of 0..n-1 in both files (sorted order, or positions). */
static int64_t *positions_of_ids(const sp_profile *p)
{
    size_t n = p->num_events;
    int64_t *inverse = malloc((n ? n : 1) * sizeof *inverse);
    cr_assert_not_null(inverse);
    for (size_t i = 0; i < n; i++)
        inverse[i] = -1;
    for (size_t i = 0; i < n; i++) {
        int64_t id = p->call_ids[i];
        cr_assert(id >= 0 && (size_t)id < n, "call id %lld out of range", (long long)id);
        cr_assert_eq(inverse[id], -1, "call id %lld appears twice", (long long)id);
        inverse[id] = (int64_t)i;
    }
    return inverse;
}

static void same_column(const int64_t *a, const int64_t *b, size_t n, const char *what)
{
    cr_assert_eq(a == NULL, b == NULL, "%s present in one file only", what);
    for (size_t i = 0; a && i < n; i++)
        cr_assert_eq(a[i], b[i], "%s differs at event %zu: %lld vs %lld", what, i,
                     (long long)a[i], (long long)b[i]);
}

/* Both paths on the fixture's capture; returns 1 if the calls nest. */
static int compare_paths(struct fixture *fx, uint64_t window)
{
    char err[1024] = "", warn_a[4096] = "", warn_b[4096] = "";
    sp_profile *mem = sp_capture_to_profile(&fx->cap, warn_a, sizeof warn_a, err, sizeof err);
    cr_assert_not_null(mem, "%s", err);
    cr_assert_eq(sp_h5_write(fx->a, mem, err, sizeof err), 0, "%s", err);
    sp_profile_free(mem);
    fx->cap.path = fx->b;
    uint64_t written = 0;
    int rc = sp_capture_write_stream(&fx->cap, window, &written, warn_b, sizeof warn_b, err,
                                     sizeof err);
    fx->cap.path = fx->a;
    cr_assert_eq(rc, 0, "streaming refused (%d): %s", rc, err);
    cr_assert_eq(!warn_a[0], !warn_b[0], "warnings differ:\n  memory: %s\n  stream: %s",
                 warn_a, warn_b);

    sp_profile *a = sp_h5_read(fx->a, err, sizeof err);
    cr_assert_not_null(a, "%s", err);
    sp_profile *b = sp_h5_read(fx->b, err, sizeof err);
    cr_assert_not_null(b, "%s", err);
    cr_assert_eq(written, b->num_events);
    cr_assert_eq(a->num_names, b->num_names);
    for (size_t i = 0; i < a->num_names; i++)
        cr_assert_str_eq(a->names[i], b->names[i]);
    cr_assert_eq(a->num_rows, b->num_rows);
    for (size_t r = 0; r < a->num_rows; r++) {
        const sp_row *x = &a->rows[r], *y = &b->rows[r];
        cr_assert_eq(x->region, y->region);
        cr_assert_eq(x->offset, y->offset);
        cr_assert_eq(x->count, y->count);
        cr_assert_eq(x->exclusive_total, y->exclusive_total, "row %zu exclusive %lld vs %lld", r,
                     (long long)x->exclusive_total, (long long)y->exclusive_total);
        cr_assert_eq(x->source_line, y->source_line);
        cr_assert_str_eq(x->source_file, y->source_file);
        cr_assert_eq(memcmp(&x->stats, &y->stats, sizeof x->stats), 0,
                     "row %zu summary statistics differ (m2 %.17g vs %.17g)", r, x->stats.m2,
                     y->stats.m2);
    }
    cr_assert_eq(a->num_events, b->num_events);
    size_t n = a->num_events;
    same_column(a->start, b->start, n, "start");
    same_column(a->end, b->end, n, "end");
    same_column(a->thread_ids, b->thread_ids, n, "thread_ids");
    same_column(a->task_ids, b->task_ids, n, "task_ids");
    same_column(a->await_ns, b->await_ns, n, "await_ns");
    cr_assert_eq(a->call_ids == NULL, b->call_ids == NULL);
    cr_assert_eq(a->parent_ids == NULL, b->parent_ids == NULL);
    if (a->parent_ids) {
        int64_t *pos_a = positions_of_ids(a), *pos_b = positions_of_ids(b);
        for (size_t i = 0; i < n; i++) {
            int64_t pa = a->parent_ids[i] < 0 ? -1 : pos_a[a->parent_ids[i]];
            cr_assert(b->parent_ids[i] < (int64_t)n, "parent id out of range");
            int64_t pb = b->parent_ids[i] < 0 ? -1 : pos_b[b->parent_ids[i]];
            cr_assert_eq(pa, pb, "event %zu: parent at %lld in memory, %lld streamed", i,
                         (long long)pa, (long long)pb);
        }
        cr_assert_eq(a->fork_parent_ids == NULL, b->fork_parent_ids == NULL,
                     "fork_parent_ids in one file only");
        for (size_t i = 0; a->fork_parent_ids && i < n; i++) {
            int64_t fa = a->fork_parent_ids[i] < 0 ? -1 : pos_a[a->fork_parent_ids[i]];
            int64_t fb = b->fork_parent_ids[i] < 0 ? -1 : pos_b[b->fork_parent_ids[i]];
            cr_assert_eq(fa, fb, "event %zu: fork parent at %lld in memory, %lld streamed", i,
                         (long long)fa, (long long)fb);
        }
        free(pos_a);
        free(pos_b);
    }
    cr_assert_eq(a->num_threads, b->num_threads);
    cr_assert_eq(a->num_tasks, b->num_tasks);
    cr_assert_eq(a->num_meta, b->num_meta);
    for (size_t m = 0; m < a->num_meta; m++)
        cr_assert_str_eq(a->meta[m].key, b->meta[m].key);
    int nested = a->parent_ids != NULL;
    sp_profile_free(a);
    sp_profile_free(b);
    return nested;
}

static void generate(struct gen *g, int threads, int tasks)
{
    g->n = 0;
    for (int t = 0; t < threads; t++)
        gen_calls(g, t, -1, 0, 20 + (int64_t)rnd(30), 0);
    for (int k = 0; k < tasks; k++)
        gen_calls(g, (int64_t)(k % threads), k, 0, 20 + (int64_t)rnd(30), 0);
}

Test(stream, matches_the_in_memory_path_on_random_nested_captures, .timeout = 600)
{
    static struct gen g;
    static struct fixture fx;
    rng_state = 0x9e3779b97f4a7c15ull;
    int nested = 0;
    for (int round = 0; round < 400; round++) {
        int threads = 1 + (int)rnd(MAX_THREADS);
        int tasks = (int)rnd(4);
        generate(&g, threads, tasks);
        make_chunks(&g, threads, round % 5 == 0);
        fixture_init(&fx, &g, threads, tasks, 1, round % 7 != 3);
        uint64_t windows[] = {1, 2, 3, 7, 64, 0};
        nested += compare_paths(&fx, windows[round % 6]);
        remove_tree(fx.dir);
    }
    cr_assert_eq(nested, 400, "random nested captures gave a nesting warning");
}

/* Fork edges (issue 15) name calls by (thread, region, ordinal): both
 * writers resolve them to the same calls, spilled or not; edges naming no
 * recorded call are dropped by both. */
Test(stream, fork_edges_resolve_to_the_same_calls, .timeout = 600)
{
    static struct gen g;
    static struct fixture fx;
    static sp_fork_edge edges[64];
    rng_state = 0x2545F4914F6CDD1Dull;
    int with_column = 0;
    for (int round = 0; round < 120; round++) {
        int threads = 1 + (int)rnd(MAX_THREADS);
        generate(&g, threads, 0);
        make_chunks(&g, threads, round % 5 == 0);
        fixture_init(&fx, &g, threads, 0, 1, round % 3 != 0);
        size_t n = 1 + (size_t)rnd(64);
        for (size_t k = 0; k < n; k++)
            edges[k] = (sp_fork_edge){
                .child_thread = (int64_t)rnd((uint64_t)threads),
                .child_ordinal = rnd(4) == 0 ? -1 : (int64_t)rnd(8),
                .parent_thread = (int64_t)rnd((uint64_t)threads),
                .parent_ordinal = (int64_t)rnd(8),
                .child_region = (uint32_t)rnd(NUM_REGIONS),
                .parent_region = (uint32_t)rnd(NUM_REGIONS),
            };
        fx.cap.num_fork_edges = n;
        fx.cap.fork_edges = edges;
        cr_assert(compare_paths(&fx, 1 + rnd(64)));
        char err[512];
        sp_profile *b = sp_h5_read(fx.b, err, sizeof err);
        cr_assert_not_null(b, "%s", err);
        with_column += b->fork_parent_ids != NULL;
        sp_profile_free(b);
        remove_tree(fx.dir);
    }
    cr_assert_gt(with_column, 60, "only %d rounds linked a call", with_column);
}

Test(stream, one_lane_without_thread_tracking)
{
    static struct gen g;
    static struct fixture fx;
    rng_state = 12345;
    for (int round = 0; round < 60; round++) {
        generate(&g, 1, 0);
        make_chunks(&g, 1, 0);
        fixture_init(&fx, &g, 1, 0, 0, 1);
        cr_assert(compare_paths(&fx, 1 + rnd(5)));
        remove_tree(fx.dir);
    }
}

/* Two calls of one lane that cross: both paths drop the call tree. */
Test(stream, nesting_error_drops_the_tree_in_both)
{
    static struct gen g;
    static struct fixture fx;
    rng_state = 777;
    for (int round = 0; round < 40; round++) {
        int threads = 1 + (int)rnd(3);
        generate(&g, threads, (int)rnd(3));
        struct gen_event *x = &g.ev[g.n++], *y = &g.ev[g.n++];
        int64_t t = (int64_t)rnd((uint64_t)threads);
        *x = (struct gen_event){.e = {.start = 1000000 + 1000, .end = 1000000 + 1200,
                                      .region = 2, .task = -1}, .thread = t};
        *y = (struct gen_event){.e = {.start = 1000000 + 1100, .end = 1000000 + 1300,
                                      .region = 3, .task = -1}, .thread = t};
        make_chunks(&g, threads, 0);
        fixture_init(&fx, &g, threads, 3, 1, 1);
        cr_assert_eq(compare_paths(&fx, 1 + rnd(4)), 0);
        remove_tree(fx.dir);
    }
}

Test(stream, a_call_ending_before_it_starts_drops_the_tree_in_both)
{
    static struct gen g;
    static struct fixture fx;
    rng_state = 4242;
    generate(&g, 2, 0);
    g.ev[g.n++] = (struct gen_event){.e = {.start = 1000000 + 900, .end = 1000000 + 800,
                                           .region = 0, .task = -1}, .thread = 1};
    make_chunks(&g, 2, 0);
    fixture_init(&fx, &g, 2, 0, 1, 1);
    cr_assert_eq(compare_paths(&fx, 3), 0);
    remove_tree(fx.dir);
}

/* A task that ran on two threads with its calls' ends going back in the
 * writer's order: streaming declines, nothing is written. */
Test(stream, declines_a_lane_whose_ends_go_back)
{
    static struct gen g;
    static struct fixture fx;
    rng_state = 99;
    g.n = 0;
    g.ev[g.n++] = (struct gen_event){.e = {.start = 1000000 + 500, .end = 1000000 + 600,
                                           .region = 0, .task = 0}, .thread = 0};
    g.ev[g.n++] = (struct gen_event){.e = {.start = 1000000 + 100, .end = 1000000 + 200,
                                           .region = 1, .task = 0}, .thread = 1};
    make_chunks(&g, 2, -1); /* thread 0's chunk, then thread 1's */
    fixture_init(&fx, &g, 2, 1, 1, 1);
    char err[512] = "", warning[512] = "";
    fx.cap.path = fx.b;
    cr_assert_eq(sp_capture_write_stream(&fx.cap, 0, NULL, warning, sizeof warning, err,
                                         sizeof err), 1, "%s", err);
    cr_assert_eq(access(fx.b, F_OK), -1, "a file was written");
    remove_tree(fx.dir);
}

/* Enough events for compressed, chunked columns and several windows of
 * whole chunks. */
Test(stream, large_capture_in_whole_chunk_windows, .timeout = 300)
{
    enum { N = 100000 };
    static sp_event events[N];
    static struct fixture fx;
    struct gen *g = calloc(1, sizeof *g);
    /* batches of nested calls: batch [0, 100), then four children */
    size_t n = 0;
    for (int64_t b = 0; n < N; b++) {
        int64_t base = 1000000 + b * 1000;
        for (int k = 0; k < 4 && n < N - 1; k++)
            events[n++] = (sp_event){base + 10 + k * 20, base + 25 + k * 20, (uint32_t)(k % 3), -1};
        events[n++] = (sp_event){base, base + 100, 4, -1};
    }
    fixture_init(&fx, g, 1, 0, 1, 1);
    /* half spilled in frames of 4096, half in memory */
    FILE *f = fopen(fx.spill, "ab");
    cr_assert_not_null(f);
    size_t spilled = N / 2 / 4096 * 4096;
    for (size_t at = 0; at < spilled; at += 4096)
        put_frame(f, SP_SPILL_FRAME_EVENTS, 0, 4096, 0, events + at, 4096 * sizeof(sp_event),
                  NULL, 0);
    fclose(f);
    fx.memory[0] = (sp_capture_chunk){.events = events + spilled, .count = N - spilled};
    fx.cap.num_chunks = 1;
    cr_assert(compare_paths(&fx, 16384));
    int shuffle = 0, deflate = 0;
    cr_assert_eq(dataset_filters(fx.b, "events/durations", &shuffle, &deflate), 2);
    cr_assert(shuffle && deflate);
    remove_tree(fx.dir);
    free(g);
}

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key)))
            kb = atol(line + strlen(key));
    if (f)
        fclose(f);
    return kb;
}

/* Memory: a window's worth, not the capture's.  1.2 M spilled calls
 * (29 MB of events; the in-memory path needs about 100 bytes per call)
 * written in 16,384-event windows: the peak grows by a few MB. */
Test(stream, memory_does_not_grow_with_the_calls, .timeout = 300)
{
    static struct fixture fx;
    struct gen *g = calloc(1, sizeof *g);
    fixture_init(&fx, g, 1, 0, 1, 1);
    FILE *f = fopen(fx.spill, "ab");
    cr_assert_not_null(f);
    static sp_event chunk[4096];
    const int64_t chunks = 300;
    for (int64_t c = 0; c < chunks; c++) {
        for (int64_t i = 0; i < 4096; i++) {
            int64_t t = 1000000 + (c * 4096 + i) * 100;
            chunk[i] = (sp_event){t, t + 50, (uint32_t)(i % 5), -1};
        }
        put_frame(f, SP_SPILL_FRAME_EVENTS, 0, 4096, 0, chunk, sizeof chunk, NULL, 0);
    }
    fclose(f);
    fx.cap.num_chunks = 0;
    fx.cap.path = fx.b;
    char err[512] = "", warning[512] = "";
    uint64_t written = 0;
    FILE *reset = fopen("/proc/self/clear_refs", "w");
    if (!reset || fputs("5", reset) < 0 || fclose(reset) != 0)
        cr_skip_test("cannot reset the peak resident size here");
    long before_kb = status_kb("VmRSS:");
    cr_assert_eq(sp_capture_write_stream(&fx.cap, 16384, &written, warning, sizeof warning, err,
                                         sizeof err), 0, "%s", err);
    long peak_kb = status_kb("VmHWM:");
    cr_assert_eq(written, (uint64_t)chunks * 4096);
#ifndef __SANITIZE_ADDRESS__
    cr_assert_lt(peak_kb - before_kb, 16 * 1024, "the write took %ld kB more", peak_kb - before_kb);
#else
    (void)peak_kb;
    (void)before_kb;
#endif
    remove_tree(fx.dir);
    free(g);
}

/* Full disk: the space is reserved before HDF5 writes, so the write stops
 * at once with one line naming the file, leaves no temporary file and does
 * not touch the previous profile. */
Test(stream, full_disk_is_found_before_writing, .timeout = 120)
{
    static struct fixture fx;
    struct gen *g = calloc(1, sizeof *g);
    fixture_init(&fx, g, 1, 0, 1, 1);
    FILE *f = fopen(fx.spill, "ab");
    cr_assert_not_null(f);
    static sp_event chunk[4096];
    for (int64_t c = 0; c < 25; c++) {
        for (int64_t i = 0; i < 4096; i++) {
            int64_t t = 1000000 + (c * 4096 + i) * 100;
            chunk[i] = (sp_event){t, t + 50, (uint32_t)(i % 5), -1};
        }
        put_frame(f, SP_SPILL_FRAME_EVENTS, 0, 4096, 0, chunk, sizeof chunk, NULL, 0);
    }
    fclose(f);
    char small[300];
    snprintf(small, sizeof small, "%s/small", fx.dir);
    cr_assert_eq(mkdir(small, 0755), 0);
    if (mount("tmpfs", small, "tmpfs", 0, "size=1m") != 0) {
        remove_tree(fx.dir);
        cr_skip_test("cannot mount a small tmpfs here");
    }
    char out[400], previous[] = "previous profile";
    snprintf(out, sizeof out, "%s/p.h5", small);
    FILE *old = fopen(out, "w");
    cr_assert_not_null(old);
    fputs(previous, old);
    fclose(old);
    fx.cap.num_chunks = 0;
    fx.cap.path = out;
    char err[1024] = "", warning[512] = "";
    int rc = sp_capture_write_stream(&fx.cap, 0, NULL, warning, sizeof warning, err, sizeof err);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(err, out) && strstr(err, "No space left"), "%s", err);
    cr_assert_null(strchr(err, '\n'), "%s", err);
    DIR *d = opendir(small);
    int entries = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        entries += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    cr_assert_eq(entries, 1, "a temporary file was left behind");
    char text[64] = "";
    old = fopen(out, "r");
    cr_assert_not_null(fgets(text, sizeof text, old));
    fclose(old);
    cr_assert_str_eq(text, previous);
    umount(small);
    remove_tree(fx.dir);
    free(g);
}
