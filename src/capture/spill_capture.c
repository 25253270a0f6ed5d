/* spill_capture.c - spill files (and the shim's handover) read back into a
 * capture for the writer process and `scopeprof recover` (spill_capture.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/spill_capture.h"
#include "model/spill_format.h"
#include "scope_profiler.h"
#include "scopeprof_config.h"

struct sp_spill_capture_owned {
    sp_capture_region *regions;
    size_t num_regions;
    uint64_t *open_calls;       /* num_regions */
    sp_capture_frame **frames;  /* num_regions, each SP_SPILL max 64 */
    sp_thread_row *threads;
    size_t num_threads;
    sp_task_row *tasks;
    size_t num_tasks, tasks_cap;
    sp_meta *meta;              /* typed (handover), else built here */
    size_t num_meta, meta_cap;
    char **strings;             /* everything copied, freed at the end */
    size_t num_strings, strings_cap;
    char **pairs;               /* META "key\0value\0" pairs of spill files */
    size_t num_pairs;
    const char **files;
    int32_t rank;
    sp_fork_edge *forks;        /* fork edges (OpenMP regions, threads started in a call) */
    size_t num_forks, forks_cap;
};

static char *keep(struct sp_spill_capture_owned *o, char *s)
{
    if (!s)
        return NULL;
    if (o->num_strings == o->strings_cap) {
        size_t cap = o->strings_cap ? o->strings_cap * 2 : 64;
        char **grown = realloc(o->strings, cap * sizeof *grown);
        if (!grown) {
            free(s);
            return NULL;
        }
        o->strings = grown;
        o->strings_cap = cap;
    }
    return o->strings[o->num_strings++] = s;
}

static char *copy(struct sp_spill_capture_owned *o, const void *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return keep(o, s);
}

static int grow(void **array, size_t *count, size_t need, size_t size)
{
    if (need <= *count)
        return 0;
    size_t cap = *count ? *count : 16;
    while (cap < need)
        cap *= 2;
    void *grown = realloc(*array, cap * size);
    if (!grown)
        return -1;
    memset((char *)grown + *count * size, 0, (cap - *count) * size);
    *array = grown;
    *count = cap;
    return 0;
}


/* More than 4 M regions is damage, not data: such a frame is ignored. */
#define SP_SPILL_MAX_REGION_ID (1u << 22)

static int region_slot(struct sp_spill_capture_owned *o, size_t *num_used, uint32_t id)
{
    size_t cap = o->num_regions, before = cap;
    if (grow((void **)&o->regions, &cap, (size_t)id + 1, sizeof *o->regions))
        return -1;
    size_t cap2 = before;
    if (grow((void **)&o->open_calls, &cap2, cap, sizeof *o->open_calls))
        return -1;
    size_t cap3 = before;
    if (grow((void **)&o->frames, &cap3, cap, sizeof *o->frames))
        return -1;
    for (size_t i = before; i < cap; i++)
        o->regions[i].source_line = -1;
    o->num_regions = cap;
    if ((size_t)id + 1 > *num_used)
        *num_used = (size_t)id + 1;
    return 0;
}

static int take_region(struct sp_spill_capture_owned *o, size_t *num_used, const unsigned char *p)
{
    sp_spill_region rec;
    memcpy(&rec, p, sizeof rec);
    if (rec.id > SP_SPILL_MAX_REGION_ID)
        return 0;
    if (region_slot(o, num_used, rec.id))
        return -1;
    sp_capture_region *reg = &o->regions[rec.id];
    reg->name = copy(o, p + sizeof rec, rec.name_len);
    reg->source_file = rec.file_len ? copy(o, p + sizeof rec + rec.name_len, rec.file_len) : NULL;
    reg->source_line = rec.file_len ? rec.source_line : -1;
    reg->callsite = (uintptr_t)rec.callsite;
    return reg->name && (!rec.file_len || reg->source_file) ? 0 : -1;
}

static int take_region_final(struct sp_spill_capture_owned *o, size_t *num_used,
                             const unsigned char *p)
{
    sp_spill_region_final rec;
    memcpy(&rec, p, sizeof rec);
    if (rec.id > SP_SPILL_MAX_REGION_ID)
        return 0;
    if (region_slot(o, num_used, rec.id))
        return -1;
    sp_capture_region *reg = &o->regions[rec.id];
    reg->dropped_calls = rec.dropped_calls;
    reg->dropped_total_ns = rec.dropped_total_ns;
    o->open_calls[rec.id] = rec.open_calls;
    free(o->frames[rec.id]);
    o->frames[rec.id] = NULL;
    reg->frames = NULL;
    reg->num_frames = 0;
    if (!rec.num_frames)
        return 0;
    sp_capture_frame *frames = calloc(rec.num_frames, sizeof *frames);
    if (!frames)
        return -1;
    o->frames[rec.id] = frames;
    const unsigned char *text = p + sizeof rec + rec.num_frames * sizeof(sp_spill_callframe);
    for (uint32_t i = 0; i < rec.num_frames; i++) {
        sp_spill_callframe f;
        memcpy(&f, p + sizeof rec + i * sizeof f, sizeof f);
        frames[i].address = f.address;
        if (f.path_len && !(frames[i].module_path = copy(o, text, f.path_len)))
            return -1;
        text += f.path_len;
        if (f.name_len && !(frames[i].module_name = copy(o, text, f.name_len)))
            return -1;
        text += f.name_len;
    }
    reg->frames = frames;
    reg->num_frames = rec.num_frames;
    return 0;
}

static int take_thread(struct sp_spill_capture_owned *o, size_t *num_used, const unsigned char *p)
{
    sp_spill_thread rec;
    memcpy(&rec, p, sizeof rec);
    if (rec.index < 0 || rec.index > (1 << 24))
        return 0; /* not a plausible dense index: ignored */
    size_t cap = o->num_threads, before = cap;
    if (grow((void **)&o->threads, &cap, (size_t)rec.index + 1, sizeof *o->threads))
        return -1;
    for (size_t i = before; i < cap; i++)
        o->threads[i].index = -1; /* not seen */
    o->num_threads = cap;
    if ((size_t)rec.index + 1 > *num_used)
        *num_used = (size_t)rec.index + 1;
    sp_thread_row *t = &o->threads[rec.index];
    int64_t end = t->index == rec.index ? t->end_ns : -1;
    int64_t cpu = t->index == rec.index ? t->cpu_ns : -1;
    /* A thread frame comes again at every spill; its end frame (kind, OpenMP
     * number) may have come before. */
    int64_t omp = t->index == rec.index ? t->omp_thread_num : -1;
    char *kind = t->index == rec.index ? t->kind : NULL;
    *t = (sp_thread_row){
        .index = rec.index,
        .ident = rec.ident,
        .native_id = rec.native_id,
        .daemon = (int8_t)rec.daemon,
        .start_ns = rec.start_ns,
        .end_ns = end,
        .cpu_ns = cpu,
        .name = copy(o, p + sizeof rec, rec.name_len),
        .kind = kind,
        .omp_thread_num = omp,
    };
    return t->name ? 0 : -1;
}

static void take_thread_end(struct sp_spill_capture_owned *o, const unsigned char *p)
{
    sp_spill_thread_end rec;
    memcpy(&rec, p, sizeof rec);
    if (rec.index < 0 || (size_t)rec.index >= o->num_threads ||
        o->threads[rec.index].index != rec.index)
        return;
    o->threads[rec.index].end_ns = rec.end_ns;
    o->threads[rec.index].cpu_ns = rec.cpu_ns;
    o->threads[rec.index].omp_thread_num = rec.omp_thread_num;
    if (rec.kind[0])
        o->threads[rec.index].kind = copy(o, rec.kind, strnlen(rec.kind, sizeof rec.kind));
}

static int take_task(struct sp_spill_capture_owned *o, const unsigned char *p)
{
    sp_spill_task rec;
    memcpy(&rec, p, sizeof rec);
    if (grow((void **)&o->tasks, &o->tasks_cap, o->num_tasks + 1, sizeof *o->tasks))
        return -1;
    const unsigned char *s = p + sizeof rec;
    sp_task_row *t = &o->tasks[o->num_tasks++];
    *t = (sp_task_row){
        .index = rec.index, .thread_index = rec.thread_index, .created_ns = rec.created_ns,
        .done_ns = rec.done_ns, .steps = rec.steps, .running_ns = rec.running_ns,
        .suspended_ns = rec.suspended_ns,
    };
    t->kind = copy(o, s, rec.kind_len);
    t->name = copy(o, s + rec.kind_len, rec.name_len);
    t->coro_name = rec.coro_len ? copy(o, s + rec.kind_len + rec.name_len, rec.coro_len) : NULL;
    return t->kind && t->name && (!rec.coro_len || t->coro_name) ? 0 : -1;
}

static sp_meta *new_meta(struct sp_spill_capture_owned *o)
{
    if (grow((void **)&o->meta, &o->meta_cap, o->num_meta + 1 + SP_SPILL_CAPTURE_META_SPARE,
             sizeof *o->meta))
        return NULL;
    return &o->meta[o->num_meta++];
}

/* One typed entry: key\0, then num_values \0-ended strings. */
static int take_meta_typed(struct sp_spill_capture_owned *o, const unsigned char *p, size_t len)
{
    sp_spill_meta rec;
    memcpy(&rec, p, sizeof rec);
    if (rec.type != SP_META_INT && rec.type != SP_META_FLOAT && rec.type != SP_META_STRING &&
        rec.type != SP_META_STRINGS)
        return 0; /* unknown type: ignored */
    const char *at = (const char *)p + sizeof rec, *end = (const char *)p + len;
    const char *strings[1 + 4096];
    if (rec.num_values > 4096)
        return 0;
    for (uint32_t i = 0; i <= rec.num_values; i++) {
        size_t n = strnlen(at, (size_t)(end - at));
        if (at + n >= end)
            return 0; /* malformed: ignored */
        strings[i] = at;
        at += n + 1;
    }
    sp_meta *m = new_meta(o);
    if (!m)
        return -1;
    memset(m, 0, sizeof *m);
    m->type = (sp_meta_type)rec.type;
    m->i = rec.i;
    m->f = rec.f;
    if (!(m->key = copy(o, strings[0], strlen(strings[0]))))
        return -1;
    if (m->type == SP_META_STRING)
        m->s = copy(o, strings[1], strlen(strings[1]));
    if (m->type == SP_META_STRINGS) {
        m->list = calloc(rec.num_values ? rec.num_values : 1, sizeof *m->list);
        if (!keep(o, (char *)m->list))
            return -1;
        for (uint32_t i = 0; i < rec.num_values; i++)
            if (!(m->list[i] = copy(o, strings[i + 1], strlen(strings[i + 1]))))
                return -1;
        m->list_len = rec.num_values;
    }
    return m->type == SP_META_STRING && !m->s ? -1 : 0;
}

/* "key\0value\0" pairs of a spill file; an odd trailing piece is ignored. */
static int take_meta_pairs(struct sp_spill_capture_owned *o, const char *p, size_t len)
{
    size_t at = 0;
    while (at < len) {
        const char *key = p + at;
        size_t klen = strnlen(key, len - at);
        if (at + klen + 1 >= len)
            break;
        const char *value = key + klen + 1;
        size_t vlen = strnlen(value, len - at - klen - 1);
        if (at + klen + 1 + vlen >= len)
            break;
        char **grown = realloc(o->pairs, (o->num_pairs + 2) * sizeof *grown);
        if (!grown)
            return -1;
        o->pairs = grown;
        if (!(o->pairs[o->num_pairs] = copy(o, key, klen)) ||
            !(o->pairs[o->num_pairs + 1] = copy(o, value, vlen)))
            return -1;
        o->num_pairs += 2;
        at += klen + 1 + vlen + 1;
    }
    return 0;
}

static int take_capture(sp_spill_capture *c, const unsigned char *p)
{
    struct sp_spill_capture_owned *o = c->owned;
    sp_spill_capture_frame rec;
    memcpy(&rec, p, sizeof rec);
    c->complete = 1;
    c->summary_only = rec.summary_only;
    c->capture.rank = rec.rank;
    c->capture.verbose = rec.verbose;
    c->capture.track_threads = rec.track_threads;
    c->capture.start_time_ns = rec.start_time_ns;
    c->capture.max_memory = rec.max_memory;
    c->capture.path = copy(o, p + sizeof rec, rec.path_len);
    c->why = copy(o, p + sizeof rec + rec.path_len, rec.why_len);
    return c->capture.path && c->why ? 0 : -1;
}

static int take_forks(struct sp_spill_capture_owned *o, const void *payload, uint32_t count)
{
    if (o->num_forks + count > o->forks_cap) {
        size_t cap = o->forks_cap ? o->forks_cap : 256;
        while (cap < o->num_forks + count)
            cap *= 2;
        sp_fork_edge *grown = realloc(o->forks, cap * sizeof *grown);
        if (!grown)
            return -1;
        o->forks = grown;
        o->forks_cap = cap;
    }
    memcpy(o->forks + o->num_forks, payload, (size_t)count * sizeof *o->forks);
    o->num_forks += count;
    return 0;
}

static int read_file(sp_spill_capture *c, const char *path, size_t *regions_used,
                     size_t *threads_used, int first, char *err, size_t errlen)
{
    struct sp_spill_capture_owned *o = c->owned;
    sp_spill_reader *reader = sp_spill_open(path, err, errlen);
    if (!reader)
        return -1;
    const sp_spill_header *h = sp_spill_file_header(reader);
    if (first) {
        c->capture.start_time_ns = h->start_time_ns;
        c->pid = h->pid;
        o->rank = h->rank;
        c->size = 1;
        c->last_end = h->start_time_ns;
    }
    sp_spill_frame frame;
    const void *payload;
    int rc, bad = 0;
    while (!bad && (rc = sp_spill_next(reader, &frame, &payload, err, errlen)) == 1) {
        switch (frame.type) {
        case SP_SPILL_FRAME_META:
            bad = take_meta_pairs(o, payload, frame.length);
            break;
        case SP_SPILL_FRAME_PROCESS: {
            sp_spill_process proc;
            memcpy(&proc, payload, sizeof proc);
            o->rank = proc.rank;
            c->size = proc.size;
            break;
        }
        case SP_SPILL_FRAME_REGION:
            bad = take_region(o, regions_used, payload);
            break;
        case SP_SPILL_FRAME_THREAD:
            bad = take_thread(o, threads_used, payload);
            break;
        case SP_SPILL_FRAME_REGION_FINAL:
            bad = take_region_final(o, regions_used, payload);
            break;
        case SP_SPILL_FRAME_THREAD_END:
            take_thread_end(o, payload);
            break;
        case SP_SPILL_FRAME_TASK:
            bad = take_task(o, payload);
            break;
        case SP_SPILL_FRAME_META_TYPED:
            bad = take_meta_typed(o, payload, frame.length);
            break;
        case SP_SPILL_FRAME_CAPTURE:
            bad = take_capture(c, payload);
            break;
        case SP_SPILL_FRAME_FORKS:
            bad = take_forks(o, payload, frame.count);
            break;
        case SP_SPILL_FRAME_EVENTS: {
            const sp_event *e = payload;
            for (uint32_t i = 0; i < frame.count; i++) {
                if (e[i].region >= *regions_used || !o->regions[e[i].region].name) {
                    snprintf(err, errlen, "%s: an event refers to region %u, which the file "
                             "does not define (damaged spill file)", path, e[i].region);
                    sp_spill_close(reader);
                    return -1;
                }
                if (e[i].end > c->last_end)
                    c->last_end = e[i].end;
            }
            c->events += frame.count;
            break;
        }
        }
    }
    if (bad) {
        snprintf(err, errlen, "%s: out of memory", path);
        sp_spill_close(reader);
        return -1;
    }
    c->torn_bytes += sp_spill_torn_bytes(reader);
    sp_spill_close(reader);
    return rc < 0 ? -1 : 0;
}

/* Placeholders where a killed run left a gap, and the basic metadata of a
 * spill file that was never handed over. */
static int fill_gaps(sp_spill_capture *c, size_t regions_used, size_t threads_used)
{
    struct sp_spill_capture_owned *o = c->owned;
    char name[48];
    for (size_t i = 0; i < regions_used; i++)
        if (!o->regions[i].name) {
            snprintf(name, sizeof name, "(region %zu)", i);
            if (!(o->regions[i].name = copy(o, name, strlen(name))))
                return -1;
        }
    for (size_t i = 0; i < threads_used; i++)
        if (o->threads[i].index != (int64_t)i || !o->threads[i].name) {
            snprintf(name, sizeof name, "thread %zu", i);
            o->threads[i] = (sp_thread_row){.index = (int64_t)i, .start_ns = -1, .end_ns = -1,
                                            .cpu_ns = -1, .name = copy(o, name, strlen(name))};
            if (!o->threads[i].name)
                return -1;
        }
    if (c->complete)
        return 0;
    c->capture.rank = o->rank;
    c->capture.track_threads = 1;
    sp_spill_capture_meta_str(c, "source", "native");
    sp_spill_capture_meta_str(c, "source_language", "c");
    sp_spill_capture_meta_int(c, "trace_format_version", SP_FORMAT_VERSION);
    sp_spill_capture_meta_int(c, "mpi_rank", o->rank);
    sp_spill_capture_meta_int(c, "mpi_size", c->size > 0 ? c->size : 1);
    sp_spill_capture_meta_int(c, "pid", c->pid);
    sp_spill_capture_meta_int(c, "start_time_ns", c->capture.start_time_ns);
    sp_spill_capture_meta_int(c, "finalize_time_ns", c->last_end);
    sp_spill_capture_meta_str(c, "clock", "CLOCK_MONOTONIC");
    sp_spill_capture_meta_str(c, "scopeprof_version", SCOPEPROF_VERSION);
    for (size_t i = 0; i + 1 < o->num_pairs; i += 2)
        sp_spill_capture_meta_str(c, o->pairs[i], o->pairs[i + 1]);
    return o->meta ? 0 : -1;
}

int sp_spill_capture_load(const char *const *files, size_t n, sp_spill_capture *c,
                          char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->why = "";
    struct sp_spill_capture_owned *o = calloc(1, sizeof *o);
    if (!o || !(o->files = calloc(n ? n : 1, sizeof *o->files))) {
        free(o);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->owned = o;
    size_t regions_used = 0, threads_used = 0;
    for (size_t i = 0; i < n; i++) {
        o->files[i] = files[i];
        if (read_file(c, files[i], &regions_used, &threads_used, i == 0, err, errlen) != 0)
            return -1;
    }
    if (fill_gaps(c, regions_used, threads_used) != 0) {
        snprintf(err, errlen, "%s: out of memory", n ? files[0] : "");
        return -1;
    }
    c->capture.abi = SP_CAPTURE_ABI;
    c->capture.num_regions = regions_used;
    c->capture.regions = o->regions;
    c->open_calls = o->open_calls;
    c->capture.num_threads = threads_used;
    c->capture.threads = o->threads;
    c->capture.num_tasks = o->num_tasks;
    c->capture.tasks = o->tasks;
    c->capture.num_fork_edges = o->num_forks;
    c->capture.fork_edges = o->forks;
    c->capture.num_meta = o->num_meta;
    c->capture.meta = o->meta;
    c->meta_cap = o->meta_cap;
    c->capture.num_spill_files = n;
    c->capture.spill_files = o->files;
    return 0;
}

static sp_meta *add_meta(sp_spill_capture *c, const char *key)
{
    struct sp_spill_capture_owned *o = c->owned;
    sp_meta *m = NULL;
    for (size_t i = 0; i < o->num_meta && !m; i++)
        if (!strcmp(o->meta[i].key, key))
            m = &o->meta[i];
    if (!m && !(m = new_meta(o)))
        return NULL;
    memset(m, 0, sizeof *m);
    m->key = (char *)key;
    c->capture.meta = o->meta;
    c->capture.num_meta = o->num_meta;
    c->meta_cap = o->meta_cap;
    return m;
}

void sp_spill_capture_meta_str(sp_spill_capture *c, const char *key, const char *value)
{
    sp_meta *m = add_meta(c, key);
    if (m) {
        m->type = SP_META_STRING;
        m->s = (char *)value;
    }
}

void sp_spill_capture_meta_int(sp_spill_capture *c, const char *key, int64_t value)
{
    sp_meta *m = add_meta(c, key);
    if (m) {
        m->type = SP_META_INT;
        m->i = value;
    }
}

void sp_spill_capture_free(sp_spill_capture *c)
{
    struct sp_spill_capture_owned *o = c->owned;
    if (!o)
        return;
    for (size_t i = 0; i < o->num_regions; i++)
        free(o->frames ? o->frames[i] : NULL);
    free(o->frames);
    free(o->regions);
    free(o->open_calls);
    free(o->threads);
    free(o->tasks);
    free(o->meta);
    for (size_t i = 0; i < o->num_strings; i++)
        free(o->strings[i]);
    free(o->strings);
    free(o->pairs);
    free(o->files);
    free(o->forks);
    free(o);
    memset(c, 0, sizeof *c);
}
