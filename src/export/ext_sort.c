/* ext_sort.c - see ext_sort.h. */
#include "ext_sort.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "model/temp_file.h"
#include "mpi_flows.h" /* sp_sort_in_place */

/* MIN_RUN: records per run and per read buffer at the least (a tiny
 * budget, as the tests set, still makes several runs of a small run) */
enum { MAX_SIZE = 64, MIN_RUN = 4 };

typedef struct run {
    off_t at;                    /* first byte in the file */
    size_t count, read;          /* records; records read into buffers */
    char *buf;
    size_t buf_n, buf_i;         /* records in buf, next one */
} run;

struct sp_ext_sort {
    size_t size;
    int (*cmp)(const void *, const void *);
    size_t run_cap;              /* records gathered before a run is written */
    char *v;
    size_t n, cap, total;
    int fd;                      /* -1: no file yet */
    int no_file;                 /* creating one failed: stay in memory */
    int failed;
    run *runs;
    size_t num_runs, runs_cap;
    size_t *heap, heap_n;        /* runs by their head record */
    size_t mem_i;                /* not spilled: the next record of v */
    int finished;
    size_t budget;
    char out[MAX_SIZE];
};

sp_ext_sort *sp_ext_sort_new(size_t size, int (*cmp)(const void *, const void *), size_t budget)
{
    if (size == 0 || size > MAX_SIZE)
        return NULL;
    sp_ext_sort *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->size = size;
    s->cmp = cmp;
    s->budget = budget;
    s->run_cap = budget / size < MIN_RUN ? MIN_RUN : budget / size;
    s->fd = -1;
    return s;
}

static int open_file(sp_ext_sort *s)
{
    s->fd = sp_temp_file_open("scopeprof-flows");
    return s->fd < 0 ? -1 : 0;
}

/* The gathered records, sorted, as the next run of the file. */
static int write_run(sp_ext_sort *s)
{
    if (!s->n)
        return 0;
    if (s->num_runs == s->runs_cap) {
        size_t cap = s->runs_cap ? 2 * s->runs_cap : 16;
        run *grown = realloc(s->runs, cap * sizeof *grown);
        if (!grown)
            return -1;
        s->runs = grown;
        s->runs_cap = cap;
    }
    sp_sort_in_place(s->v, s->n, s->size, s->cmp);
    off_t at = 0;
    if (s->num_runs) {
        const run *last = &s->runs[s->num_runs - 1];
        at = last->at + (off_t)(last->count * s->size);
    }
    if (sp_temp_file_write(s->fd, s->v, s->n * s->size, at) != 0)
        return -1;
    s->runs[s->num_runs++] = (run){.at = at, .count = s->n};
    s->n = 0;
    return 0;
}

int sp_ext_sort_push(sp_ext_sort *s, const void *record)
{
    if (s->failed || s->finished)
        return -1;
    if (s->n == s->run_cap && !s->no_file) {
        if (s->fd < 0 && open_file(s) != 0)
            s->no_file = 1; /* in memory, past the budget */
        else if (write_run(s) != 0) {
            s->failed = 1;
            return -1;
        }
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        if (!s->no_file && cap > s->run_cap)
            cap = s->run_cap;
        if (cap <= s->cap)
            cap = s->cap + 1;
        char *grown = realloc(s->v, cap * s->size);
        if (!grown) {
            s->failed = 1;
            return -1;
        }
        s->v = grown;
        s->cap = cap;
    }
    memcpy(s->v + s->n * s->size, record, s->size);
    s->n++;
    s->total++;
    return 0;
}

size_t sp_ext_sort_count(const sp_ext_sort *s)
{
    return s->total;
}

int sp_ext_sort_spilled(const sp_ext_sort *s)
{
    return s->num_runs > 0;
}

void *sp_ext_sort_take(sp_ext_sort *s, size_t *n)
{
    *n = 0;
    if (s->num_runs || !s->n)
        return NULL;
    void *v = s->v;
    *n = s->n;
    s->v = NULL;
    s->n = s->cap = s->total = 0;
    return v;
}

static const char *head(const sp_ext_sort *s, size_t r)
{
    const run *x = &s->runs[r];
    return x->buf + x->buf_i * s->size;
}

static int heap_less(const sp_ext_sort *s, size_t a, size_t b)
{
    return s->cmp(head(s, s->heap[a]), head(s, s->heap[b])) < 0;
}

static void sift_down(sp_ext_sort *s, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->heap_n && heap_less(s, l, m))
            m = l;
        if (r < s->heap_n && heap_less(s, r, m))
            m = r;
        if (m == i)
            return;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

/* The next buffer of run r.  1 when it has one, 0 at its end, -1. */
static int refill(sp_ext_sort *s, size_t r)
{
    run *x = &s->runs[r];
    /* the runs' buffers share an eighth of the budget: two sorts are
     * merged while a third gathers (mpi_flows_external.c) */
    size_t cap = s->budget / 8 / s->size / s->num_runs;
    if (cap < MIN_RUN)
        cap = MIN_RUN;
    size_t n = x->count - x->read < cap ? x->count - x->read : cap;
    if (!n)
        return 0;
    if (!x->buf && !(x->buf = malloc(cap * s->size)))
        return -1;
    if (sp_temp_file_read(s->fd, x->buf, n * s->size, x->at + (off_t)(x->read * s->size)) != 0)
        return -1;
    x->read += n;
    x->buf_n = n;
    x->buf_i = 0;
    return 1;
}

int sp_ext_sort_rewind(sp_ext_sort *s)
{
    if (!s->finished || s->failed)
        return -1;
    s->mem_i = 0;
    if (!s->num_runs)
        return 0;
    s->heap_n = 0;
    for (size_t r = 0; r < s->num_runs; r++) {
        s->runs[r].read = 0;
        int got = refill(s, r);
        if (got < 0) {
            s->failed = 1;
            return -1;
        }
        if (got)
            s->heap[s->heap_n++] = r;
    }
    for (size_t i = s->heap_n / 2; i-- > 0;)
        sift_down(s, i);
    return 0;
}

int sp_ext_sort_finish(sp_ext_sort *s)
{
    if (s->failed || s->finished)
        return -1;
    s->finished = 1;
    if (!s->num_runs) {
        sp_sort_in_place(s->v, s->n, s->size, s->cmp);
        return sp_ext_sort_rewind(s);
    }
    if (write_run(s) != 0 || !(s->heap = malloc(s->num_runs * sizeof *s->heap))) {
        s->failed = 1;
        return -1;
    }
    free(s->v); /* the runs' buffers take its place */
    s->v = NULL;
    s->cap = 0;
    return sp_ext_sort_rewind(s);
}

const void *sp_ext_sort_next(sp_ext_sort *s)
{
    if (!s->finished || s->failed)
        return NULL;
    if (!s->num_runs) {
        if (s->mem_i == s->n)
            return NULL;
        return s->v + s->mem_i++ * s->size;
    }
    if (!s->heap_n)
        return NULL;
    size_t r = s->heap[0];
    memcpy(s->out, head(s, r), s->size);
    run *x = &s->runs[r];
    if (++x->buf_i == x->buf_n) {
        int got = refill(s, r);
        if (got < 0) {
            s->failed = 1;
            return NULL;
        }
        if (!got)
            s->heap[0] = s->heap[--s->heap_n];
    }
    sift_down(s, 0);
    return s->out;
}

int sp_ext_sort_failed(const sp_ext_sort *s)
{
    return s->failed;
}

void sp_ext_sort_free(sp_ext_sort *s)
{
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    for (size_t r = 0; r < s->num_runs; r++)
        free(s->runs[r].buf);
    free(s->runs);
    free(s->heap);
    free(s->v);
    free(s);
}

size_t sp_flows_budget(void)
{
    static const size_t fallback = (size_t)64 << 20;
    static int warned;
    const char *v = getenv("SCOPEPROF_FLOWS_BUDGET");
    if (!v || !v[0])
        return fallback;
    char *rest = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &rest, 10);
    unsigned shift = 0;
    if (rest && (*rest == 'K' || *rest == 'k'))
        shift = 10, rest++;
    else if (rest && (*rest == 'M' || *rest == 'm'))
        shift = 20, rest++;
    else if (rest && (*rest == 'G' || *rest == 'g'))
        shift = 30, rest++;
    if (errno || rest == v || *rest || v[0] == '-' || n == 0 || n > (SIZE_MAX >> shift) >> 1) {
        if (!warned)
            fprintf(stderr,
                    "scopeprof: SCOPEPROF_FLOWS_BUDGET=%s is not a size (bytes, or a number "
                    "with K, M or G): using 64M\n",
                    v);
        warned = 1;
        return fallback;
    }
    return (size_t)n << shift;
}
