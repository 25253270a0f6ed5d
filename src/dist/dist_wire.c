/* dist_wire.c - see dist_wire.h. */
#include "dist/dist_wire.h"

#include <stdlib.h>
#include <string.h>

void sp_wire_bytes(sp_wire *w, const void *p, size_t n)
{
    if (w->failed)
        return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n)
            cap *= 2;
        uint8_t *grown = realloc(w->data, cap);
        if (!grown) {
            w->failed = 1;
            return;
        }
        w->data = grown;
        w->cap = cap;
    }
    if (n)
        memcpy(w->data + w->len, p, n);
    w->len += n;
}

void sp_wire_u64(sp_wire *w, uint64_t v) { sp_wire_bytes(w, &v, sizeof v); }
void sp_wire_i64(sp_wire *w, int64_t v) { sp_wire_bytes(w, &v, sizeof v); }
void sp_wire_f64(sp_wire *w, double v) { sp_wire_bytes(w, &v, sizeof v); }

void sp_wire_str(sp_wire *w, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    sp_wire_u64(w, n);
    sp_wire_bytes(w, s ? s : "", n);
}

void sp_wire_meta(sp_wire *w, const sp_meta *meta, size_t n)
{
    sp_wire_u64(w, n);
    for (size_t i = 0; i < n; i++) {
        const sp_meta *m = &meta[i];
        sp_wire_str(w, m->key);
        sp_wire_i64(w, m->type);
        sp_wire_i64(w, m->i);
        sp_wire_f64(w, m->f);
        sp_wire_u64(w, m->s != NULL);
        sp_wire_str(w, m->s);
        sp_wire_u64(w, m->list_len);
        for (size_t k = 0; k < m->list_len; k++)
            sp_wire_str(w, m->list[k]);
    }
}

void sp_wire_reader(sp_wire *w, const uint8_t *data, size_t len)
{
    memset(w, 0, sizeof *w);
    w->data = (uint8_t *)data;
    w->len = len;
}

static int take(sp_wire *w, void *out, size_t n)
{
    if (w->failed || w->len - w->pos < n) {
        w->failed = 1;
        memset(out, 0, n);
        return -1;
    }
    memcpy(out, w->data + w->pos, n);
    w->pos += n;
    return 0;
}

uint64_t sp_wire_get_u64(sp_wire *w)
{
    uint64_t v;
    take(w, &v, sizeof v);
    return v;
}

int64_t sp_wire_get_i64(sp_wire *w)
{
    int64_t v;
    take(w, &v, sizeof v);
    return v;
}

double sp_wire_get_f64(sp_wire *w)
{
    double v;
    take(w, &v, sizeof v);
    return v;
}

char *sp_wire_get_str(sp_wire *w)
{
    uint64_t n = sp_wire_get_u64(w);
    if (w->failed || w->len - w->pos < n) {
        w->failed = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        w->failed = 1;
        return NULL;
    }
    memcpy(s, w->data + w->pos, (size_t)n);
    s[n] = '\0';
    w->pos += (size_t)n;
    return s;
}

void sp_wire_meta_free(sp_meta *meta, size_t n)
{
    for (size_t i = 0; meta && i < n; i++) {
        free(meta[i].key);
        free(meta[i].s);
        for (size_t k = 0; k < meta[i].list_len; k++)
            free(meta[i].list[k]);
        free(meta[i].list);
    }
    free(meta);
}

sp_meta *sp_wire_get_meta(sp_wire *w, size_t *count)
{
    uint64_t n = sp_wire_get_u64(w);
    *count = 0;
    if (w->failed || n > w->len) /* each entry takes bytes: a bound on a damaged count */
        return NULL;
    sp_meta *meta = calloc(n ? (size_t)n : 1, sizeof *meta);
    if (!meta) {
        w->failed = 1;
        return NULL;
    }
    for (size_t i = 0; i < n && !w->failed; i++) {
        sp_meta *m = &meta[i];
        *count = i + 1;
        m->key = sp_wire_get_str(w);
        m->type = (sp_meta_type)sp_wire_get_i64(w);
        m->i = sp_wire_get_i64(w);
        m->f = sp_wire_get_f64(w);
        uint64_t has_s = sp_wire_get_u64(w);
        char *s = sp_wire_get_str(w);
        if (has_s)
            m->s = s;
        else
            free(s);
        uint64_t list_len = sp_wire_get_u64(w);
        if (w->failed || list_len > w->len) {
            w->failed = 1;
            break;
        }
        m->list = calloc(list_len ? (size_t)list_len : 1, sizeof *m->list);
        if (!m->list) {
            w->failed = 1;
            break;
        }
        for (size_t k = 0; k < list_len && !w->failed; k++) {
            m->list[k] = sp_wire_get_str(w);
            m->list_len = k + 1;
        }
        if (!list_len) {
            free(m->list);
            m->list = NULL;
        }
    }
    if (w->failed) {
        sp_wire_meta_free(meta, *count);
        *count = 0;
        return NULL;
    }
    *count = (size_t)n;
    return meta;
}

void sp_wire_free(sp_wire *w)
{
    free(w->data);
    memset(w, 0, sizeof *w);
}
