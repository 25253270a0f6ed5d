/* process_meta.c - metadata added to every file this process writes (MPI
 * library, clock synchronisation points, fork parent...), set by the
 * intercepting layer and merged into each capture by finalize.c. */
#include <stdlib.h>
#include <string.h>

#include "lifecycle.h"

static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t *const sp_meta_lock = &meta_lock;
static sp_meta *extra_meta;
static size_t num_extra_meta, extra_meta_cap;

static sp_meta *meta_slot(const char *key)
{
    for (size_t i = 0; i < num_extra_meta; i++)
        if (!strcmp(extra_meta[i].key, key)) {
            free(extra_meta[i].s);
            extra_meta[i].s = NULL;
            return &extra_meta[i];
        }
    if (num_extra_meta == extra_meta_cap) {
        size_t cap = extra_meta_cap ? extra_meta_cap * 2 : 16;
        sp_meta *grown = realloc(extra_meta, cap * sizeof *grown);
        if (!grown)
            return NULL;
        extra_meta = grown;
        extra_meta_cap = cap;
    }
    sp_meta *m = &extra_meta[num_extra_meta];
    memset(m, 0, sizeof *m);
    m->key = strdup(key);
    if (!m->key)
        return NULL;
    num_extra_meta++;
    return m;
}

void sp_process_meta_int(const char *key, int64_t value)
{
    pthread_mutex_lock(&meta_lock);
    sp_meta *m = meta_slot(key);
    if (m) {
        m->type = SP_META_INT;
        m->i = value;
    }
    pthread_mutex_unlock(&meta_lock);
}

void sp_process_meta_string(const char *key, const char *value)
{
    pthread_mutex_lock(&meta_lock);
    sp_meta *m = meta_slot(key);
    if (m) {
        m->type = SP_META_STRING;
        m->s = strdup(value ? value : "");
    }
    pthread_mutex_unlock(&meta_lock);
}

size_t sp_process_meta_count(void)
{
    pthread_mutex_lock(&meta_lock);
    size_t n = num_extra_meta;
    pthread_mutex_unlock(&meta_lock);
    return n;
}

void sp_process_meta_merge(sp_meta *meta, size_t *count, size_t cap)
{
    pthread_mutex_lock(&meta_lock);
    for (size_t i = 0; i < num_extra_meta; i++) {
        size_t j = 0;
        while (j < *count && strcmp(meta[j].key, extra_meta[i].key))
            j++;
        if (j == *count && *count == cap)
            continue; /* added since the caller sized its table */
        meta[j] = extra_meta[i];
        if (j == *count)
            (*count)++;
    }
    pthread_mutex_unlock(&meta_lock);
}
