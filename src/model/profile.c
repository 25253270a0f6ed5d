/* profile.c - the in-memory profile: allocation, the name table, metadata
 * and per-row summary statistics.  Everything a profile points to is owned
 * by it and released by sp_profile_free. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/profile.h"

const char *const sp_event_extra_names[SP_EXTRA_N] = {
    "mpi_sent_bytes", "mpi_recv_bytes", "mpi_peer", "mpi_tag", "mpi_comm",
    "mpi_source", "mpi_recv_tag",
};

/* Hash index over profile->names (open addressing, slot = id + 1).  Loaders
 * may fill names[] themselves: names not yet indexed are added on the next
 * call, and a table that shrank is indexed again. */
struct sp_name_hash {
    uint32_t *slots;
    size_t cap;      /* slots: power of two, at least twice the names */
    size_t indexed;  /* names[0..indexed) are in slots */
    size_t names_cap; /* allocated length of names[] when it is names_at */
    char **names_at;  /* the array we sized; another one is taken as exact */
};

sp_profile *sp_profile_new(void)
{
    sp_profile *profile = calloc(1, sizeof *profile);
    if (profile)
        profile->schema_version = 3;
    return profile;
}

static void free_meta_value(sp_meta *meta)
{
    free(meta->s);
    meta->s = NULL;
    for (size_t i = 0; i < meta->list_len; i++)
        free(meta->list[i]);
    free(meta->list);
    meta->list = NULL;
    meta->list_len = 0;
}

void sp_profile_free(sp_profile *profile)
{
    if (!profile)
        return;
    free(profile->path);
    for (size_t i = 0; i < profile->num_names; i++)
        free(profile->names[i]);
    free(profile->names);
    if (profile->name_hash)
        free(profile->name_hash->slots);
    free(profile->name_hash);
    for (size_t i = 0; i < profile->num_rows; i++) {
        sp_row *row = &profile->rows[i];
        free(row->source_file);
        free(row->source_text);
        free(row->tags);
        free(row->event_metadata);
    }
    free(profile->rows);
    free(profile->start);
    free(profile->end);
    free(profile->gpu);
    free(profile->call_ids);
    free(profile->parent_ids);
    free(profile->thread_ids);
    free(profile->task_ids);
    free(profile->await_ns);
    for (int c = 0; c < SP_EXTRA_N; c++)
        free(profile->extra[c]);
    free(profile->fork_parent_ids);
    for (size_t i = 0; i < profile->num_threads; i++) {
        free(profile->threads[i].name);
        free(profile->threads[i].kind);
    }
    free(profile->threads);
    for (size_t i = 0; i < profile->num_tasks; i++) {
        free(profile->tasks[i].kind);
        free(profile->tasks[i].name);
        free(profile->tasks[i].coro_name);
    }
    free(profile->tasks);
    for (size_t i = 0; i < profile->num_meta; i++) {
        free(profile->meta[i].key);
        free_meta_value(&profile->meta[i]);
    }
    free(profile->meta);
    free(profile);
}

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void hash_insert(struct sp_name_hash *h, const char *name, size_t id)
{
    size_t s = hash_name(name) & (h->cap - 1);
    while (h->slots[s])
        s = (s + 1) & (h->cap - 1);
    h->slots[s] = (uint32_t)id + 1;
}

/* Make room for `want` names in names[] and in the index, and index every
 * name present.  A names[] array replaced by a loader is taken over and
 * indexed again from the start. */
static int hash_sync(sp_profile *profile, size_t want)
{
    struct sp_name_hash *h = profile->name_hash;
    if (profile->names != h->names_at || h->names_cap < want) {
        size_t cap = want < 16 ? 16 : 2 * want;
        char **names = realloc(profile->names, cap * sizeof *names);
        if (!names)
            return -1;
        if (profile->names != h->names_at)
            h->indexed = SIZE_MAX;
        profile->names = names;
        h->names_at = names;
        h->names_cap = cap;
    }
    if (h->indexed > profile->num_names || 2 * want > h->cap) {
        size_t cap = h->cap ? h->cap : 64;
        while (2 * want > cap)
            cap *= 2;
        uint32_t *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return -1;
        free(h->slots);
        h->slots = slots;
        h->cap = cap;
        h->indexed = 0;
    }
    for (; h->indexed < profile->num_names; h->indexed++)
        hash_insert(h, profile->names[h->indexed], h->indexed);
    return 0;
}

int64_t sp_profile_intern_name(sp_profile *profile, const char *name)
{
    if (profile->num_names >= UINT32_MAX - 1)
        return -1;
    if (!profile->name_hash && !(profile->name_hash = calloc(1, sizeof *profile->name_hash)))
        return -1;
    struct sp_name_hash *h = profile->name_hash;
    if (hash_sync(profile, profile->num_names + 1) != 0)
        return -1;
    size_t s = hash_name(name) & (h->cap - 1);
    for (; h->slots[s]; s = (s + 1) & (h->cap - 1))
        if (!strcmp(profile->names[h->slots[s] - 1], name))
            return h->slots[s] - 1;
    char *copy = strdup(name);
    if (!copy)
        return -1;
    profile->names[profile->num_names] = copy;
    h->slots[s] = (uint32_t)profile->num_names + 1;
    h->indexed = profile->num_names + 1;
    return (int64_t)profile->num_names++;
}

const sp_meta *sp_profile_meta(const sp_profile *profile, const char *key)
{
    for (size_t i = 0; i < profile->num_meta; i++)
        if (!strcmp(profile->meta[i].key, key))
            return &profile->meta[i];
    return NULL;
}

int sp_profile_meta_int(const sp_profile *profile, const char *key, int64_t *out)
{
    const sp_meta *meta = sp_profile_meta(profile, key);
    if (!meta || meta->type != SP_META_INT)
        return -1;
    *out = meta->i;
    return 0;
}

const char *sp_profile_meta_string(const sp_profile *profile, const char *key)
{
    const sp_meta *meta = sp_profile_meta(profile, key);
    return meta && meta->type == SP_META_STRING ? meta->s : NULL;
}

/* The entry for `key`, emptied for a new value (created if missing). */
static sp_meta *meta_slot(sp_profile *profile, const char *key)
{
    sp_meta *meta = (sp_meta *)sp_profile_meta(profile, key);
    if (meta) {
        free_meta_value(meta);
        return meta;
    }
    char *copy = strdup(key);
    sp_meta *grown = realloc(profile->meta, (profile->num_meta + 1) * sizeof *grown);
    if (!copy || !grown) {
        free(copy);
        if (grown)
            profile->meta = grown;
        return NULL;
    }
    profile->meta = grown;
    meta = &grown[profile->num_meta++];
    memset(meta, 0, sizeof *meta);
    meta->key = copy;
    return meta;
}

int sp_profile_set_meta_int(sp_profile *profile, const char *key, int64_t value)
{
    sp_meta *meta = meta_slot(profile, key);
    if (!meta)
        return -1;
    meta->type = SP_META_INT;
    meta->i = value;
    return 0;
}

int sp_profile_set_meta_float(sp_profile *profile, const char *key, double value)
{
    sp_meta *meta = meta_slot(profile, key);
    if (!meta)
        return -1;
    meta->type = SP_META_FLOAT;
    meta->f = value;
    return 0;
}

int sp_profile_set_meta_string(sp_profile *profile, const char *key, const char *value)
{
    char *copy = strdup(value ? value : "");
    sp_meta *meta = copy ? meta_slot(profile, key) : NULL;
    if (!meta) {
        free(copy);
        return -1;
    }
    meta->type = SP_META_STRING;
    meta->s = copy;
    return 0;
}

int sp_profile_set_meta_strings(sp_profile *profile, const char *key,
                                const char *const *values, size_t count)
{
    char **list = calloc(count ? count : 1, sizeof *list);
    if (!list)
        return -1;
    for (size_t i = 0; i < count; i++) {
        list[i] = strdup(values[i] ? values[i] : "");
        if (!list[i]) {
            while (i--)
                free(list[i]);
            free(list);
            return -1;
        }
    }
    sp_meta *meta = meta_slot(profile, key);
    if (!meta) {
        for (size_t i = 0; i < count; i++)
            free(list[i]);
        free(list);
        return -1;
    }
    meta->type = SP_META_STRINGS;
    meta->list = list;
    meta->list_len = count;
    return 0;
}

/* Durations and sums wrap instead of overflowing: a damaged or hostile file
 * may hold absurd timestamps, and must give absurd numbers, not undefined
 * behaviour. */
static int64_t wrap_sub(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

static int64_t wrap_add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

void sp_summary_begin(sp_summary_acc *acc, int64_t total, uint64_t count)
{
    memset(acc, 0, sizeof *acc);
    acc->count = count;
    if (count)
        acc->mean = (double)total / (double)count;
}

void sp_summary_add(sp_summary_acc *acc, const int64_t *start, const int64_t *end,
                    const int64_t *gpu, size_t n)
{
    sp_summary_stats *out = &acc->stats;
    if (n && acc->seen == 0) {
        int64_t first = wrap_sub(end[0], start[0]);
        out->first = first;
        out->minimum = first;
        out->maximum = first;
        out->start_minimum = start[0];
        out->end_maximum = end[0];
    }
    for (size_t i = 0; i < n; i++) {
        int64_t d = wrap_sub(end[i], start[i]);
        out->total = wrap_add(out->total, d);
        if (d < out->minimum)
            out->minimum = d;
        if (d > out->maximum)
            out->maximum = d;
        if (start[i] < out->start_minimum)
            out->start_minimum = start[i];
        if (end[i] > out->end_maximum)
            out->end_maximum = end[i];
        if (gpu && gpu[i] >= 0) {
            out->gpu_count++;
            out->gpu_total = wrap_add(out->gpu_total, gpu[i]);
        }
        double dev = (double)d - acc->mean;
        acc->m2 += dev * dev;
    }
    if (n) {
        out->last = wrap_sub(end[n - 1], start[n - 1]);
        acc->seen += n;
    }
}

void sp_summary_end(sp_summary_acc *acc, sp_summary_stats *out)
{
    *out = acc->stats;
    if (acc->seen) {
        out->mean = acc->mean;
        out->m2 = acc->m2;
    }
}

void sp_summary_compute(const int64_t *start, const int64_t *end,
                        const int64_t *gpu, size_t count, sp_summary_stats *out)
{
    /* Two passes like numpy's mean()/var(): the mean first, then squared
     * deviations from it, which stays accurate for long runs of similar
     * durations where a one-pass sum of squares would cancel. */
    int64_t total = 0;
    for (size_t i = 0; i < count; i++)
        total = wrap_add(total, wrap_sub(end[i], start[i]));
    sp_summary_acc acc;
    sp_summary_begin(&acc, total, count);
    sp_summary_add(&acc, start, end, gpu, count);
    sp_summary_end(&acc, out);
}

int64_t sp_profile_origin_ns(const sp_profile *profile)
{
    int64_t origin;
    if (sp_profile_meta_int(profile, "start_time_ns", &origin) == 0)
        return origin;
    if (profile->num_events == 0 || !profile->start)
        return 0;
    origin = profile->start[0];
    for (size_t i = 1; i < profile->num_events; i++)
        if (profile->start[i] < origin)
            origin = profile->start[i];
    return origin;
}
