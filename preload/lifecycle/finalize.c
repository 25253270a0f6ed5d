/* finalize.c - hand a profiler's recorded calls to the writer process.
 *
 * Collecting takes the locks of the slow paths only; threads that are still
 * recording keep going (a call they close after the snapshot is simply not
 * in this file).
 * The handover (handover.c) goes through the spill file; the writer process
 * is run by writer_process.c, the fallback module loaded by writer_loader.c. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lifecycle.h"
#include "scopeprof_config.h"
#include "spill.h"
#include "record/mpi_side.h"

/* ---- collecting a capture ------------------------------------------------ */

struct collected {
    sp_capture_chunk *chunks;     /* events NULL: they are in spans */
    struct sp_chunk_span *spans;  /* per chunk: where its events are */
    size_t num_chunks, chunks_cap;
    sp_capture_region *regions;
    sp_thread_row *threads;
    sp_task_row *tasks;
    sp_meta *meta;
    size_t num_meta;
    char *strings[16];
    int num_strings;
    uint64_t events;
    uint64_t aggregated;  /* dropped calls counted without events by design */
    uint64_t *open_calls; /* per region */
    sp_capture_frame *frames; /* SP_CALLSITE_FRAMES per region */
    sp_capture_mpi *mpi;      /* MPI side data of every lane */
    size_t num_mpi, mpi_cap;
    int mpi_failed;
};

static void add_mpi(void *ctx, const sp_capture_mpi *r)
{
    struct collected *c = ctx;
    if (c->num_mpi == c->mpi_cap) {
        size_t cap = c->mpi_cap ? c->mpi_cap * 2 : 1024;
        sp_capture_mpi *grown = realloc(c->mpi, cap * sizeof *grown);
        if (!grown) {
            c->mpi_failed = 1;
            return;
        }
        c->mpi = grown;
        c->mpi_cap = cap;
    }
    c->mpi[c->num_mpi++] = *r;
}

static int add_chunk(struct collected *c, const struct sp_chunk *k, uint32_t skip,
                     uint32_t count, int64_t thread)
{
    if (skip >= count)
        return 0;
    if (c->num_chunks == c->chunks_cap) {
        size_t cap = c->chunks_cap ? c->chunks_cap * 2 : 64;
        sp_capture_chunk *grown = realloc(c->chunks, cap * sizeof *grown);
        if (!grown)
            return -1;
        c->chunks = grown;
        struct sp_chunk_span *spans = realloc(c->spans, cap * sizeof *spans);
        if (!spans)
            return -1;
        c->spans = spans;
        c->chunks_cap = cap;
    }
    c->spans[c->num_chunks] = (struct sp_chunk_span){k, skip, count};
    c->chunks[c->num_chunks++] =
        (sp_capture_chunk){NULL, k->await_ns ? k->await_ns + skip : NULL, count - skip, thread};
    count -= skip;
    c->events += count;
    return 0;
}

/* Chunks of every lane, open calls counted per region. */
static int collect_lanes(struct sp_profiler *p, struct collected *c, uint32_t num_regions)
{
    int rc = 0;
    pthread_mutex_lock(&p->lock);
    for (struct sp_lane *lane = p->lanes; lane && rc == 0; lane = lane->next_in_profiler) {
        pthread_mutex_lock(&lane->lock);
        for (struct sp_chunk *k = lane->head; k && rc == 0; k = k->next) {
            size_t count = k == lane->tail ? sp_lane_used(lane) : k->count;
            size_t skip = k == lane->head ? lane->head_skip : 0;
            if (skip > count)
                skip = count;
            sp_chunk_convert(k, count);
            rc = add_chunk(c, k, (uint32_t)skip, (uint32_t)count, lane->thread->index);
        }
        sp_mpi_side_each(lane, add_mpi, c);
        if (c->mpi_failed)
            rc = -1;
        uint32_t depth = sp_lane_depth(lane);
        for (uint32_t d = 0; d < depth; d++) {
            uint32_t region = SP_LOAD(lane->stack[d].region);
            if (region < num_regions)
                c->open_calls[region]++;
        }
        for (uint32_t r = 0; r < SP_ACQUIRE(lane->num_counters) && r < num_regions; r++) {
            c->regions[r].dropped_calls += (uint64_t)SP_LOAD(lane->counters[r].dropped);
            c->aggregated += (uint64_t)SP_LOAD(lane->counters[r].aggregated);
            c->regions[r].dropped_total_ns +=
                sp_timer_duration_ns(SP_LOAD(lane->counters[r].dropped_ns));
        }
        pthread_mutex_unlock(&lane->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

static char *keep(struct collected *c, char *s)
{
    if (s && c->num_strings < (int)(sizeof c->strings / sizeof *c->strings))
        c->strings[c->num_strings++] = s;
    return s;
}

static char *read_file_text(const char *path, int nul_to_space)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    while (s) {
        size_t got = fread(s + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
        if (n + 1 >= cap) {
            char *grown = realloc(s, cap * 2);
            if (!grown)
                break;
            s = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (!s)
        return NULL;
    s[n] = '\0';
    if (nul_to_space) {
        while (n > 0 && s[n - 1] == '\0')
            n--;
        s[n] = '\0';
        for (size_t i = 0; i < n; i++)
            if (s[i] == '\0')
                s[i] = ' ';
    }
    return s;
}

static void meta_int(struct collected *c, const char *key, int64_t v)
{
    sp_meta *m = &c->meta[c->num_meta++];
    memset(m, 0, sizeof *m);
    m->key = (char *)key;
    m->type = SP_META_INT;
    m->i = v;
}

static void meta_str(struct collected *c, const char *key, const char *v)
{
    if (!v)
        return;
    sp_meta *m = &c->meta[c->num_meta++];
    memset(m, 0, sizeof *m);
    m->key = (char *)key;
    m->type = SP_META_STRING;
    m->s = (char *)v;
}

static void collect_metadata(struct sp_profiler *p, struct collected *c, int64_t finalize_ns)
{
    size_t meta_cap = 40 + sp_process_meta_count();
    c->meta = calloc(meta_cap, sizeof *c->meta);
    if (!c->meta)
        return;
    static char host[256], stamp[64], label[512], run_id[400];
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (sp_cfg.label) {
        snprintf(label, sizeof label, "%s", sp_cfg.label);
    } else {
        const char *base = strrchr(p->prefix, '/');
        snprintf(label, sizeof label, "%s", base ? base + 1 : p->prefix);
    }
    snprintf(run_id, sizeof run_id, "%s-%d-%lld", host, sp_proc.pid,
             (long long)sp_proc.start_realtime_ns);

    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';

    meta_str(c, "source", "native");
    meta_str(c, "source_language", "c");
    meta_int(c, "trace_format_version", SP_FORMAT_VERSION);
    meta_int(c, "mpi_rank", p->rank);
    meta_int(c, "mpi_size", sp_proc.size);
    meta_str(c, "hostname", host);
    meta_str(c, "timestamp", stamp);
    meta_str(c, "label", label);
    meta_int(c, "start_time_ns", p->start_ns);
    meta_int(c, "finalize_time_ns", finalize_ns);
    meta_str(c, "executable", keep(c, strdup(exe)));
    meta_str(c, "command_line", keep(c, read_file_text("/proc/self/cmdline", 1)));
    meta_int(c, "pid", sp_proc.pid);
    meta_str(c, "scopeprof_version", SCOPEPROF_VERSION);
    meta_str(c, "scope_profiler_version", "scopeprof-" SCOPEPROF_VERSION);
    meta_str(c, "clock", "CLOCK_MONOTONIC");
    meta_str(c, "timer", sp_timer_name());
    meta_int(c, "track_threads", sp_cfg.track_threads);
    meta_int(c, "rank_from_mpi", sp_proc.rank_from_mpi);
    meta_str(c, "run_id", run_id);

    /* Process-wide additions (MPI library, clock synchronisation...) win. */
    sp_process_meta_merge(c->meta, &c->num_meta, meta_cap);
}

static void collect_threads(struct sp_profiler *p, struct collected *c, size_t *count)
{
    pthread_mutex_lock(&sp_threads_lock);
    *count = (size_t)sp_num_threads;
    c->threads = calloc(*count ? *count : 1, sizeof *c->threads);
    for (size_t i = 0; c->threads && i < *count; i++) {
        const struct sp_thread *t = sp_threads[i];
        sp_thread_row *row = &c->threads[i];
        row->index = t->index;
        row->ident = (int64_t)t->ident;
        row->native_id = t->tid;
        row->daemon = (int8_t)t->daemon;
        row->start_ns = t->start_ns - p->start_ns;
        row->end_ns = t->alive ? -1 : t->end_ns - p->start_ns;
        row->cpu_ns = SP_LOAD(t->cpu_ns);
        row->name = (char *)t->name;
        row->kind = (char *)t->kind;
        row->omp_thread_num = t->omp_thread_num;
    }
    if (!c->threads)
        *count = 0;
    pthread_mutex_unlock(&sp_threads_lock);
}

static void release(struct collected *c)
{
    free(c->chunks);
    free(c->spans);
    free(c->regions);
    free(c->threads);
    free(c->tasks);
    free(c->meta);
    free(c->open_calls);
    free(c->frames);
    free(c->mpi);
    for (int i = 0; i < c->num_strings; i++)
        free(c->strings[i]);
}

/* The registration frames of every region, located in their modules for
 * the writer (callsite.h).  Frames are copied under the profiler's lock
 * (they may be backfilled) and located outside it: dladdr takes the
 * loader's lock, which a library constructor registering a region holds. */
static void locate_callsites(struct sp_profiler *p, struct collected *c, uint32_t num_regions)
{
    if (!sp_cfg.callsites || !num_regions)
        return;
    uintptr_t *raw = calloc((size_t)num_regions * SP_CALLSITE_FRAMES, sizeof *raw);
    int *counts = calloc(num_regions, sizeof *counts);
    c->frames = calloc((size_t)num_regions * SP_CALLSITE_FRAMES, sizeof *c->frames);
    if (!raw || !counts || !c->frames) {
        free(raw);
        free(counts);
        return;
    }
    pthread_mutex_lock(&p->lock);
    for (uint32_t r = 0; r < num_regions; r++) {
        const struct sp_region *reg = sp_region_get(p, r);
        counts[r] = reg->num_frames;
        memcpy(raw + (size_t)r * SP_CALLSITE_FRAMES, reg->frames, sizeof reg->frames);
    }
    pthread_mutex_unlock(&p->lock);
    for (uint32_t r = 0; r < num_regions; r++) {
        sp_capture_frame *out = c->frames + (size_t)r * SP_CALLSITE_FRAMES;
        c->regions[r].frames = out;
        c->regions[r].num_frames =
            sp_callsite_locate(raw + (size_t)r * SP_CALLSITE_FRAMES, counts[r], out);
    }
    free(raw);
    free(counts);
}

/* Regions still open, said by the shim itself when no writer process can
 * say it with the call site. */
static void log_open_regions(const sp_capture *cap, const uint64_t *open_calls, const char *why)
{
    for (size_t r = 0; r < cap->num_regions; r++)
        if (open_calls[r])
            sp_log("region '%s' still open at %s (depth %llu); its last call(s) are dropped",
                   cap->regions[r].name, why, (unsigned long long)open_calls[r]);
}

/* The capture goes to the writer process through the spill-file format
 * (handover.c); the writer's one line comes back.  Returns 0 when the
 * whole profile was written; otherwise the lines are said here and the
 * spill file is kept when it holds more than what was written. */
static int hand_over(struct sp_profiler *p, int final, const sp_capture *cap,
                     const struct sp_chunk_span *spans, const uint64_t *open_calls, uint64_t open_total, const char *why,
                     char *err, size_t errlen)
{
    const char *spill_file = sp_spill_path(p);
    char spill_copy[PATH_MAX] = "";
    if (spill_file)
        snprintf(spill_copy, sizeof spill_copy, "%s", spill_file);
    sp_spill_file *f = sp_spill_handover_begin(p, final);
    if (!f) {
        int open_errno = errno;
        const char *slash = strrchr(cap->path, '/');
        int dir_len = slash ? (int)(slash - cap->path) : 1;
        sp_log("no profile written: %s: cannot create a file in directory '%.*s': %s (check "
               "that the directory exists and is writable)", cap->path, dir_len,
               slash ? cap->path : ".", strerror(open_errno));
        (void)err;
        (void)errlen;
        if (final)
            sp_spill_finish(p, 0);
        return -1;
    }
    int summary_only = 0;
    const char *files[2];
    size_t n = 0;
    const char *handover = sp_spill_handover_path(f);
    if (spill_copy[0] && strcmp(spill_copy, handover))
        files[n++] = spill_copy;
    files[n++] = handover;
    char line[4200] = "";
    int written = 0;
    if (sp_handover_write(f, cap, spans, open_calls, why, &summary_only) != 0) {
        snprintf(line, sizeof line, "error %s: cannot hand the recorded calls to the writer "
                 "(%s: %s)", cap->path, handover, strerror(errno));
        if (final && open_total)
            log_open_regions(cap, open_calls, why);
    } else if (sp_writer_process_run("write", files, n, line, sizeof line) != 0) {
        /* No writer process: the module, where it is safe. */
        char msg[4096] = "";
        int outcome = sp_writer_module_write(files, n, msg, sizeof msg);
        if (outcome == -2) {
            char reason[1200];
            snprintf(reason, sizeof reason, "%s", line);
            snprintf(line, sizeof line, "error %s: %s; %s", cap->path, reason, msg);
            if (final && open_total)
                log_open_regions(cap, open_calls, why);
        } else {
            snprintf(line, sizeof line, "%s%s%s", outcome == 0 ? "ok" : outcome == 1 ? "partial"
                     : "error", msg[0] ? " " : "", msg);
        }
    }
    if (!strncmp(line, "ok", 2)) {
        written = 1;
        if (line[2] == ' ' && line[3])
            sp_log("%s", line + 3); /* e.g. the disk had room for the counts only */
    } else if (!strncmp(line, "partial ", 8)) {
        sp_log("%s", line + 8);
    } else {
        sp_log("no profile written: %s", !strncmp(line, "error ", 6) ? line + 6 : line);
    }
    sp_spill_handover_end(p, f, final, written);
    return written ? 0 : -1;
}

static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
/* fork.c holds both locks across fork(): a child never inherits them taken
 * (nor the writer's HDF5 in the middle of a file). */
pthread_mutex_t *const sp_write_lock = &write_lock;

/* An OpenMP worker ends its share of a parallel region when it reaches the
 * region's closing barrier, but a runtime may let the primary thread leave
 * that barrier (and the program exit) a moment before the worker's callback
 * has run (seen with libomp's nested teams on a loaded machine): its call
 * would then be dropped as still open.  At exit, give such workers up to
 * 20 ms to close their calls. */
static int omp_worker_still_open(struct sp_profiler *p)
{
    int open = 0;
    pthread_mutex_lock(&p->lock);
    for (struct sp_lane *lane = p->lanes; lane && !open; lane = lane->next_in_profiler) {
        pthread_mutex_lock(&lane->lock);
        int busy = !SP_LOAD(lane->retired) && sp_lane_depth(lane) > 0;
        pthread_mutex_unlock(&lane->lock);
        if (!busy)
            continue;
        pthread_mutex_lock(&sp_threads_lock);
        open = lane->thread->alive && !strcmp(lane->thread->kind, "openmp");
        pthread_mutex_unlock(&sp_threads_lock);
    }
    pthread_mutex_unlock(&p->lock);
    return open;
}

static void let_omp_workers_close(struct sp_profiler *p)
{
    for (int waited = 0; waited < 20 && omp_worker_still_open(p); waited++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

int sp_profiler_write(struct sp_profiler *p, int final, const char *why)
{
    if (final)
        let_omp_workers_close(p);
    int64_t finalize_ns = sp_clock_ns();
    pthread_mutex_lock(&write_lock);
    if (!SP_LOAD(p->active)) {
        pthread_mutex_unlock(&write_lock);
        return 0;
    }
    if (final)
        SP_STORE(p->active, 0);
    /* No spill may reuse a chunk while its events are being written, and
     * the spill file must not grow between collecting and reading it. */
    sp_spill_lock();
    const char *spill_file = sp_spill_path(p);

    sp_threads_refresh();
    uint32_t num_regions = SP_ACQUIRE(p->num_regions);
    struct collected c;
    memset(&c, 0, sizeof c);
    c.regions = calloc(num_regions ? num_regions : 1, sizeof *c.regions);
    c.open_calls = calloc(num_regions ? num_regions : 1, sizeof *c.open_calls);
    int rc = -1, final_done = 0;
    char err[1024] = "";
    if (!c.regions || !c.open_calls || collect_lanes(p, &c, num_regions) != 0) {
        snprintf(err, sizeof err, "out of memory while collecting the recorded calls");
        goto done;
    }
    locate_callsites(p, &c, num_regions);
    uint64_t dropped = 0, open_total = 0;
    for (uint32_t r = 0; r < num_regions; r++) {
        struct sp_region *reg = sp_region_get(p, r);
        c.regions[r].name = reg->name;
        c.regions[r].source_file = reg->source_file;
        c.regions[r].source_line = reg->source_line;
        c.regions[r].callsite = reg->callsite;
        dropped += c.regions[r].dropped_calls;
        if (!final)
            c.open_calls[r] = 0; /* a flush says nothing of calls still running */
        open_total += c.open_calls[r];
    }
    if (final && dropped > c.aggregated)
        sp_log("the memory cap (SCOPE_PROFILER_MAX_MEMORY) stopped the timeline: %llu calls "
               "were counted but not kept as events", (unsigned long long)(dropped - c.aggregated));

    /* Silent where nothing was recorded: shells, launchers and children
     * inherit LD_PRELOAD. */
    if (c.events == 0 && dropped == 0 && !spill_file && !p->explicit_init) {
        rc = 0;
        goto done;
    }

    size_t num_threads = 0;
    if (sp_cfg.track_threads)
        collect_threads(p, &c, &num_threads);
    size_t num_tasks = 0;
    c.tasks = sp_tasks_snapshot(p->start_ns, &num_tasks);
    collect_metadata(p, &c, finalize_ns);

    const char *path = sp_profiler_path(p);
    if (!path) {
        snprintf(err, sizeof err, "the output path for prefix '%s' is too long", p->prefix);
        goto done;
    }
    sp_capture cap = {
        .abi = SP_CAPTURE_ABI,
        .path = path,
        .rank = p->rank,
        .verbose = sp_cfg.verbose,
        .track_threads = sp_cfg.track_threads,
        .start_time_ns = p->start_ns,
        .num_regions = num_regions,
        .regions = c.regions,
        .num_chunks = c.num_chunks,
        .chunks = c.chunks,
        .num_threads = num_threads,
        .threads = c.threads,
        .num_tasks = num_tasks,
        .tasks = c.tasks,
        .num_meta = c.num_meta,
        .meta = c.meta,
        .max_memory = sp_cfg.max_memory,
        .num_mpi = c.num_mpi,
        .mpi = c.mpi,
    };
    /* Fork edges reach the writer in the handover's FORKS frames (spill.c,
     * write_tables), like the spilled ones. */
    rc = hand_over(p, final, &cap, c.spans, c.open_calls, open_total, why, err, sizeof err);
    if (rc == 0)
        sp_debug("wrote %s (%llu calls, %s)", path, (unsigned long long)c.events, why);
    /* hand_over has finished the spill file and said what went wrong */
    if (rc != 0)
        err[0] = '\0';
    final_done = 1;

done:
    if (rc != 0 && err[0])
        sp_log("no profile written: %s", err);
    if (final && !final_done)
        sp_spill_finish(p, rc == 0);
    sp_spill_unlock();
    release(&c);
    pthread_mutex_unlock(&write_lock);
    return rc;
}

void sp_finalize_all(const char *why)
{
    pthread_mutex_lock(&sp_profilers_lock);
    int n = sp_num_profilers;
    struct sp_profiler **list = malloc((size_t)(n ? n : 1) * sizeof *list);
    if (list && n)
        memcpy(list, sp_profilers, (size_t)n * sizeof *list);
    pthread_mutex_unlock(&sp_profilers_lock);
    if (!list)
        return;
    for (int i = 0; i < n; i++)
        if (SP_LOAD(list[i]->active))
            sp_profiler_write(list[i], 1, why);
    free(list);
}
