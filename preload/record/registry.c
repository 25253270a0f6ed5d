/* registry.c - profilers and their region tables.
 *
 * Region registration is thread-safe and done once per name: a hash from
 * name to id, changed under the profiler's lock and read without it (an
 * existing name costs a hash and a compare: the Fortran name API looks up
 * on every call).  The table is never changed in place but for filling an
 * empty slot (published with release); a grown table replaces it and the
 * old one is retired, never freed.  Region records are stored in fixed
 * blocks that never move, so the hot path can read them without a lock
 * once it has seen the id. */
#include <stdlib.h>
#include <string.h>

#include "recorder.h"

struct sp_profiler *sp_default;
pthread_mutex_t sp_profilers_lock = PTHREAD_MUTEX_INITIALIZER;
struct sp_profiler **sp_profilers;
int sp_num_profilers;
static int profilers_cap;

struct sp_profiler *sp_profiler_new(const char *prefix, int rank, int is_default)
{
    struct sp_profiler *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    /* Absolute now: the program may chdir() before the file is written. */
    p->prefix = sp_output_prefix_absolute(prefix ? prefix : "scope_profile");
    p->given_prefix = strdup(prefix ? prefix : "scope_profile");
    if (!p->prefix || !p->given_prefix) {
        free(p->prefix);
        free(p->given_prefix);
        free(p);
        return NULL;
    }
    p->busy_tag = SP_LANE_BUSY;
    p->rank = rank;
    p->is_default = is_default;
    p->start_ns = sp_clock_ns();
    pthread_mutex_init(&p->lock, NULL);

    pthread_mutex_lock(&sp_profilers_lock);
    if (sp_num_profilers == profilers_cap) {
        int cap = profilers_cap ? profilers_cap * 2 : 8;
        struct sp_profiler **grown = realloc(sp_profilers, (size_t)cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&sp_profilers_lock);
            free(p->prefix);
            free(p);
            return NULL;
        }
        sp_profilers = grown;
        profilers_cap = cap;
    }
    p->slot = sp_num_profilers;
    sp_profilers[sp_num_profilers++] = p;
    pthread_mutex_unlock(&sp_profilers_lock);
    SP_STORE(p->active, 1);
    return p;
}

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* table[0] is the capacity, slots follow; a slot holds id + 1, 0 = empty. */
static void hash_insert(uint32_t *table, uint32_t cap, uint32_t h, uint32_t id)
{
    for (uint32_t i = h & (cap - 1);; i = (i + 1) & (cap - 1))
        if (!table[1 + i]) {
            SP_RELEASE(table[1 + i], id + 1);
            return;
        }
}

static int grow_hash(struct sp_profiler *p)
{
    uint32_t cap = p->hash_cap ? p->hash_cap * 2 : 64;
    uint32_t *table = calloc((size_t)cap + 1, sizeof *table);
    if (!table)
        return -1;
    table[0] = cap;
    for (uint32_t id = 0; id < p->num_regions; id++)
        hash_insert(table, cap, hash_name(sp_region_get(p, id)->name), id);
    /* Lock-free readers may still probe the old table: retired. */
    SP_RELEASE(p->hash, table);
    p->hash_cap = cap;
    return 0;
}

int sp_region_find(struct sp_profiler *p, const char *name, const char *file, int want_frames)
{
    if (!name)
        return -1;
    uint32_t *table = SP_ACQUIRE(p->hash);
    if (!table)
        return -1;
    uint32_t cap = table[0], h = hash_name(name);
    for (uint32_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
        uint32_t e = SP_ACQUIRE(table[1 + i]);
        if (!e)
            return -1;
        struct sp_region *r = sp_region_get(p, e - 1);
        if (strcmp(r->name, name) != 0)
            continue;
        /* What is still to be filled in is done under the lock. */
        if ((file && !SP_ACQUIRE(r->source_file)) || (want_frames && !SP_ACQUIRE(r->num_frames)))
            return -1;
        return (int)(e - 1);
    }
}

int sp_region_find_n(struct sp_profiler *p, const char *name, size_t *length, int want_frames)
{
    uint32_t *table = SP_ACQUIRE(p->hash);
    /* FNV-1a as hash_name, over the name up to a NUL or length bytes:
     * the name is then what a copy cut at length would hold. */
    uint32_t h = 2166136261u;
    size_t n = 0, most = *length; /* a local: name's bytes could alias *length */
    for (; n < most && name[n]; n++)
        h = (h ^ (unsigned char)name[n]) * 16777619u;
    *length = n;
    if (!table)
        return -1;
    uint32_t cap = table[0];
    for (uint32_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
        uint32_t e = SP_ACQUIRE(table[1 + i]);
        if (!e)
            return -1;
        struct sp_region *r = sp_region_get(p, e - 1);
        /* equal over n bytes means r->name holds n bytes: [n] is in it */
        if (strncmp(r->name, name, n) != 0 || r->name[n] != '\0')
            continue;
        if (want_frames && !SP_ACQUIRE(r->num_frames))
            return -1;
        return (int)(e - 1);
    }
}

/* Give a region its location: the first writer wins, later ones may only
 * fill in what is still unknown (the reference's backfill rule). */
static void set_location(struct sp_region *r, const char *file, int line,
                         const uintptr_t *frames, int num_frames)
{
    if (file && !r->source_file) {
        r->source_line = line;
        SP_RELEASE(r->source_file, strdup(file));
    }
    if (num_frames > 0 && !r->num_frames) {
        memcpy(r->frames, frames, (size_t)num_frames * sizeof *frames);
        r->callsite = frames[0];
        SP_RELEASE(r->num_frames, num_frames);
    }
}

int sp_region_lookup(struct sp_profiler *p, const char *name, const char *file,
                     int line, const uintptr_t *frames, int num_frames, int want_frames)
{
    int need_frames = want_frames && num_frames <= 0;
    uint32_t h = hash_name(name);
    pthread_mutex_lock(&p->lock);
    for (uint32_t i = p->hash_cap ? h & (p->hash_cap - 1) : 0; p->hash_cap;
         i = (i + 1) & (p->hash_cap - 1)) {
        uint32_t e = p->hash[1 + i];
        if (!e)
            break;
        struct sp_region *r = sp_region_get(p, e - 1);
        if (!strcmp(r->name, name)) {
            if (need_frames && !r->num_frames) {
                pthread_mutex_unlock(&p->lock);
                return SP_REGION_NEEDS_FRAMES;
            }
            set_location(r, file, line, frames, num_frames);
            pthread_mutex_unlock(&p->lock);
            return (int)(e - 1);
        }
    }
    if (need_frames) {
        pthread_mutex_unlock(&p->lock);
        return SP_REGION_NEEDS_FRAMES;
    }
    uint32_t id = p->num_regions;
    if (id == 0) {
        /* Recording starts: a missing output directory is made (or the
         * fallback said) now, not after the run. */
        char *ready = sp_output_prefix_ready(p->prefix, p->rank);
        if (ready) {
            /* the fallback: the working directory */
            const char *base = strrchr(ready, '/');
            char *given = strdup(base ? base + 1 : ready);
            if (given) {
                free(p->given_prefix);
                p->given_prefix = given;
            }
            free(p->prefix);
            p->prefix = ready;
            free(p->path);
            p->path = NULL;
        }
        sp_timer_init();
        void (*first_region)(void) = SP_LOAD(sp_record_hooks.first_region);
        if (first_region)
            first_region(); /* the exit hook (lifecycle/process_exit.c) */
    }
    if (id / SP_REGION_BLOCK >= SP_MAX_REGION_BLOCKS)
        goto fail;
    if ((id + 1) * 2 > p->hash_cap && grow_hash(p) != 0)
        goto fail;
    struct sp_region **block = p->blocks[id / SP_REGION_BLOCK];
    if (!block) {
        block = calloc(SP_REGION_BLOCK, sizeof *block);
        if (!block)
            goto fail;
        p->blocks[id / SP_REGION_BLOCK] = block;
    }
    struct sp_region *r = calloc(1, sizeof *r);
    if (!r || !(r->name = strdup(name))) {
        free(r);
        goto fail;
    }
    r->source_line = -1;
    r->wanted = sp_config_region_wanted(name);
    set_location(r, file, line, frames, num_frames);
    block[id % SP_REGION_BLOCK] = r;
    hash_insert(p->hash, p->hash_cap, h, id);
    SP_RELEASE(p->num_regions, id + 1);
    pthread_mutex_unlock(&p->lock);
    return (int)id;
fail:
    pthread_mutex_unlock(&p->lock);
    return -1;
}
