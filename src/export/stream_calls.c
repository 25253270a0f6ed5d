/* stream_calls.c - the pieces the streamed chrome, speedscope and csv
 * exports share (stream_calls.h). */
#include "stream_calls.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scopeprof/report.h" /* sp_rank_clock_offset */

/* ---- the run -------------------------------------------------------------- */

int sx_run_begin(sx_run *run, const sp_run_source *src, const sp_export_options *options,
                 int reads_mpi, char *why, size_t whylen)
{
    return sx_run_begin_share(run, src, options, reads_mpi, 1, why, whylen);
}

int sx_run_begin_share(sx_run *run, const sp_run_source *src, const sp_export_options *options,
                       int reads_mpi, int check_others, char *why, size_t whylen)
{
    memset(run, 0, sizeof *run);
    run->raw_first = INT64_MAX;
    run->src = src;
    run->profile = src->profile;
    const char *reason =
        reads_mpi ? sp_run_source_unstreamable(src) : sp_run_source_unstreamable_calls(src);
    if (reason) {
        snprintf(why, whylen, "%s", reason);
        return 1;
    }
    const sp_selection *sel = options ? options->selection : NULL;
    int rc = sp_stream_filter_init(&run->filter, src, sel, why, whylen);
    if (rc != 0)
        return rc;
    run->filter_ready = 1;
    run->num_ranks = sp_selected_ranks(run->profile, sel, &run->ranks);
    run->row_of_region =
        malloc((run->profile->num_names ? run->profile->num_names : 1) * sizeof(int64_t));
    if (run->num_ranks < 0 || !run->row_of_region) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    if (!check_others)
        return 0;
    return sp_stream_check_run(src, run->ranks, run->num_ranks, &run->raw_first, why, whylen)
               ? 1
               : 0;
}

void sx_run_end(sx_run *run)
{
    if (run->filter_ready)
        sp_stream_filter_free(&run->filter);
    free(run->ranks);
    free(run->row_of_region);
    memset(run, 0, sizeof *run);
}

void sx_run_rank(sx_run *run, uint32_t rank)
{
    const sp_profile *p = run->profile;
    sp_stream_filter_rank(&run->filter, rank);
    for (size_t r = 0; r < p->num_names; r++)
        run->row_of_region[r] = -1;
    /* as rank_calls.c: the first row of a region (two are refused earlier) */
    for (size_t r = 0; r < p->num_rows; r++)
        if (p->rows[r].rank == rank && p->rows[r].region < p->num_names &&
            run->row_of_region[p->rows[r].region] < 0)
            run->row_of_region[p->rows[r].region] = (int64_t)r;
}

const sp_row *sx_run_row(const sx_run *run, uint32_t region)
{
    int64_t r = region < run->profile->num_names ? run->row_of_region[region] : -1;
    return r >= 0 ? &run->profile->rows[r] : NULL;
}

int sx_run_pass(sx_run *run, uint32_t rank, const sp_call_visitor *visitor, char *why,
                size_t whylen)
{
    sp_rank_stream_info info;
    int64_t offset = sp_rank_clock_offset(run->profile, rank);
    int rc = run->read_mpi ? sp_stream_rank_mpi(run->src, rank, offset, visitor, &info, why, whylen)
                           : sp_stream_rank(run->src, rank, offset, visitor, &info, why, whylen);
    if (rc == 0 && info.first_start != INT64_MAX && info.first_start + offset < run->raw_first)
        run->raw_first = info.first_start + offset;
    sp_rank_stream_info_free(&info);
    return rc;
}

int sx_run_any_column(const sx_run *run, int col)
{
    for (size_t f = 0; f < run->src->num_paths; f++)
        if (run->src->shapes[f].has[col])
            return 1;
    return 0;
}

int sx_run_any_await(const sx_run *run)
{
    for (size_t f = 0; f < run->src->num_paths; f++)
        if (run->src->shapes[f].has_await)
            return 1;
    return 0;
}

int64_t sx_call_id(const sx_run *run, const sp_stream_call *call, int64_t position)
{
    /* rank_calls.c uses stored ids when the rank has them (with or without
     * parent ids); the stream refuses a rank where only some calls have one. */
    (void)run;
    return call->call_id >= 0 ? call->call_id : position;
}

/* ---- lanes ------------------------------------------------------------------ */

int sx_lanes_note(sx_lanes *lanes, const sp_stream_call *call)
{
    size_t lo = 0, hi = lanes->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (lanes->v[mid].lane < call->lane)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == lanes->n || lanes->v[lo].lane != call->lane) {
        if (lanes->n == lanes->cap) {
            size_t cap = lanes->cap ? 2 * lanes->cap : 4;
            sx_lane *grown = realloc(lanes->v, cap * sizeof *grown);
            if (!grown)
                return -1;
            lanes->v = grown;
            lanes->cap = cap;
        }
        memmove(lanes->v + lo + 1, lanes->v + lo, (lanes->n - lo) * sizeof *lanes->v);
        lanes->v[lo] = (sx_lane){call->lane, call->start, call->end, 0};
        lanes->n++;
    }
    sx_lane *l = &lanes->v[lo];
    if (call->start < l->first_start)
        l->first_start = call->start;
    if (call->end > l->last_end)
        l->last_end = call->end;
    l->calls++;
    return 0;
}

void sx_lanes_free(sx_lanes *lanes)
{
    free(lanes->v);
    memset(lanes, 0, sizeof *lanes);
}

/* ---- open calls --------------------------------------------------------------- */

static sx_stack *stack_of(sx_stacks *s, int64_t lane)
{
    if (s->n && s->v[s->last].lane == lane)
        return &s->v[s->last];
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].lane == lane) {
            s->last = i;
            return &s->v[i];
        }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4;
        sx_stack *grown = realloc(s->v, cap * sizeof *grown);
        if (!grown)
            return NULL;
        s->v = grown;
        s->cap = cap;
    }
    s->v[s->n] = (sx_stack){.lane = lane};
    s->last = s->n;
    return &s->v[s->n++];
}

sx_stack *sx_stacks_enter(sx_stacks *s, int64_t lane, int64_t parent, sx_close_fn close,
                          void *ctx)
{
    sx_stack *stack = stack_of(s, lane);
    if (!stack)
        return NULL;
    while (stack->depth && stack->open[stack->depth - 1].ordinal != parent) {
        stack->depth--;
        if (close && close(ctx, &stack->open[stack->depth]) != 0)
            return NULL;
    }
    return stack;
}

int sx_stack_push(sx_stack *stack, const sx_open *call)
{
    if (stack->depth == stack->cap) {
        size_t cap = stack->cap ? 2 * stack->cap : 64;
        sx_open *grown = realloc(stack->open, cap * sizeof *grown);
        if (!grown)
            return -1;
        stack->open = grown;
        stack->cap = cap;
    }
    stack->open[stack->depth++] = *call;
    return 0;
}

int sx_stacks_close_all(sx_stacks *s, sx_close_fn close, void *ctx)
{
    for (size_t l = 0; l < s->n; l++)
        while (s->v[l].depth) {
            s->v[l].depth--;
            if (close && close(ctx, &s->v[l].open[s->v[l].depth]) != 0)
                return -1;
        }
    return 0;
}

void sx_stacks_free(sx_stacks *s)
{
    for (size_t l = 0; l < s->n; l++)
        free(s->v[l].open);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* ---- spill -------------------------------------------------------------------- */

#define SPILL_WINDOW ((size_t)1 << 16)

int sx_spill_open(sx_spill *s)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/scopeprof-export-XXXXXX", dir && dir[0] ? dir : "/tmp");
    s->fd = mkstemp(path);
    if (s->fd < 0)
        return -1;
    unlink(path);
    s->cap = SPILL_WINDOW;
    s->buf = calloc(s->cap, sizeof *s->buf);
    return s->buf ? 0 : -1;
}

static void write_at(sx_spill *s, const int64_t *v, size_t n, uint64_t ordinal)
{
    const char *p = (const char *)v;
    size_t left = n * sizeof *v;
    off_t at = (off_t)(ordinal * sizeof *v);
    while (left && !s->failed) {
        ssize_t w = pwrite(s->fd, p, left, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            s->failed = 1;
            break;
        }
        p += w;
        at += w;
        left -= (size_t)w;
    }
}

void sx_spill_set(sx_spill *s, uint64_t ordinal, int64_t value)
{
    if (ordinal < s->base) { /* open when its window was written out */
        write_at(s, &value, 1, ordinal);
        return;
    }
    while (ordinal >= s->base + s->cap) {
        write_at(s, s->buf, s->cap, s->base);
        s->base += s->cap;
    }
    s->buf[ordinal - s->base] = value;
    if (ordinal + 1 > s->end)
        s->end = ordinal + 1;
}

int sx_spill_finish(sx_spill *s)
{
    if (s->end > s->base)
        write_at(s, s->buf, (size_t)(s->end - s->base), s->base);
    s->read_at = 0;
    s->loaded = s->at = 0;
    return s->failed ? -1 : 0;
}

int sx_spill_next(sx_spill *s, int64_t *value)
{
    if (s->at == s->loaded) {
        s->read_at += s->loaded;
        uint64_t left = s->end > s->read_at ? s->end - s->read_at : 0;
        size_t want = left < s->cap ? (size_t)left : s->cap, got = 0;
        while (got < want * sizeof *s->buf) {
            ssize_t r = pread(s->fd, (char *)s->buf + got, want * sizeof *s->buf - got,
                              (off_t)(s->read_at * sizeof *s->buf + got));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return -1;
            got += (size_t)r;
        }
        s->loaded = want;
        s->at = 0;
        if (!want)
            return -1;
    }
    *value = s->buf[s->at++];
    return 0;
}

void sx_spill_close(sx_spill *s)
{
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}
