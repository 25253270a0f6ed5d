/* export_csv.c - one CSV row per call (RFC 4180 quoting), for spreadsheets
 * and pandas: rank, lane, ids, depth, region, call path, absolute times in
 * ns, exclusive time, source. */
#include <stdlib.h>
#include <string.h>

#include "export_stream.h"
#include "model/utf8.h"
#include "scopeprof/export.h"
#include "stream_calls.h"
#include "stream_parts.h"

/* Names are bytes; the file is UTF-8 text, invalid sequences as U+FFFD. */
static void field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        sp_utf8_write(out, s, strlen(s));
        return;
    }
    putc_unlocked('"', out);
    for (const char *quote; (quote = strchr(s, '"')); s = quote + 1) {
        sp_utf8_write(out, s, (size_t)(quote - s));
        fputs_unlocked("\"\"", out);
    }
    sp_utf8_write(out, s, strlen(s));
    putc_unlocked('"', out);
}

static const char header[] =
    "rank,lane,call_id,parent_id,depth,region,call_path,start_ns,end_ns,duration_ns,"
    "exclusive_ns,source_file,source_line\n";

/* One call's row. */
typedef struct csv_call {
    uint32_t rank, region;
    const char *lane;            /* NULL: the run has no lanes */
    int64_t call_id, parent_id, depth, start, end, exclusive;
    const char *path;
    const sp_row *row;
} csv_call;

static void number(FILE *out, int64_t v);

static void write_call(FILE *out, const sp_profile *profile, const csv_call *c)
{
    sp_write_int(out, c->rank);
    putc_unlocked(',', out);
    field(out, c->lane ? c->lane : "");
    number(out, c->call_id);
    number(out, c->parent_id);
    number(out, c->depth);
    putc_unlocked(',', out);
    field(out, profile->names[c->region]);
    putc_unlocked(',', out);
    field(out, c->path);
    number(out, c->start);
    number(out, c->end);
    number(out, c->end - c->start);
    number(out, c->exclusive);
    putc_unlocked(',', out);
    field(out, c->row && c->row->source_file ? c->row->source_file : "");
    putc_unlocked(',', out);
    if (c->row && c->row->source_line >= 0)
        sp_write_int(out, c->row->source_line);
    putc_unlocked('\n', out);
}

static void number(FILE *out, int64_t v)
{
    putc_unlocked(',', out);
    sp_write_int(out, v);
}

int sp_export_csv(FILE *out, const sp_profile *profile, const sp_export_options *options,
                  char *err, size_t errlen)
{
    const sp_selection *sel = options ? options->selection : NULL;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    size_t cap = 4096;
    char *path = malloc(cap);
    if (num_ranks < 0 || !path) {
        free(ranks);
        free(path);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    fputs(header, out);
    uint64_t events = 0;
    int rc = 0;
    for (long k = 0; k < num_ranks && rc == 0; k++) {
        sp_rank_data data;
        if (sp_rank_data_load(profile, ranks[k], sel, &data, err, errlen) < 0) {
            rc = -1;
            break;
        }
        const sp_calls *c = &data.calls;
        char label[512] = "";
        int64_t labelled = INT64_MIN;
        for (size_t i = 0; i < c->n; i++) {
            int64_t lane = c->lane ? c->lane[i] : -1;
            if (lane != labelled) { /* lanes repeat: label once per change */
                sp_lane_label(profile, data.rank, lane, label, sizeof label);
                labelled = lane;
            }
            size_t need = sp_call_path(c, (const char *const *)profile->names, i, NULL, path, cap);
            if (need + 1 > cap) {
                char *grown = realloc(path, need + 1);
                if (grown) {
                    path = grown;
                    cap = need + 1;
                    sp_call_path(c, (const char *const *)profile->names, i, NULL, path, cap);
                }
            }
            csv_call call = {
                .rank = data.rank, .region = c->region[i], .lane = c->lane ? label : NULL,
                .call_id = data.call_id[i], .parent_id = data.parent_id[i],
                .depth = c->depth[i], .start = c->start[i], .end = c->end[i],
                .exclusive = c->exclusive[i], .path = path,
                .row = sp_rank_data_row(profile, &data, i)};
            write_call(out, profile, &call);
        }
        events += c->n;
        sp_rank_data_free(&data);
    }
    free(path);
    free(ranks);
    if (rc == 0)
        sp_export_warn_events(options, events, "csv export");
    return rc;
}

/* ---- The same rows from a run source (docs/stream.md, "Exports") --------
 *
 * A row shows its call's exclusive time, known only at the call's exit,
 * after its descendants' rows.  A first pass over every selected rank (which
 * also makes the reader's checks before any byte is written) puts the
 * exclusive times in a spill file, 8 bytes per call, in the order of the
 * rows; the second writes the rows as the calls pass, the call path, depth
 * and parent id from the stack of kept calls open on the lane. */

typedef struct csv_pass {
    sx_run run;
    FILE *out;
    int writing;
    sx_spill spill;
    sx_stacks stacks;
    uint32_t rank;
    int64_t position, ordinal;
    char label[512];
    int64_t labelled;
    char *path;
    size_t cap;
    uint64_t events;
} csv_pass;

/* names of the open calls, then `region`, joined by " > " */
static int build_path(csv_pass *p, const sx_stack *stack, uint32_t region)
{
    const sp_profile *profile = p->run.profile;
    size_t need = strlen(profile->names[region]) + 1;
    for (size_t d = 0; d < stack->depth; d++)
        need += strlen(profile->names[stack->open[d].region]) + 3;
    if (need > p->cap) {
        char *grown = realloc(p->path, need);
        if (!grown)
            return -1;
        p->path = grown;
        p->cap = need;
    }
    char *at = p->path;
    for (size_t d = 0; d < stack->depth; d++) {
        const char *name = profile->names[stack->open[d].region];
        size_t len = strlen(name);
        memcpy(at, name, len);
        memcpy(at + len, " > ", 3);
        at += len + 3;
    }
    size_t len = strlen(profile->names[region]);
    memcpy(at, profile->names[region], len + 1);
    return 0;
}

static int csv_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    csv_pass *p = ctx;
    int64_t position = p->position++;
    *user = parent;
    if (!sp_stream_filter_keeps(&p->run.filter, call))
        return 0;
    *user = p->ordinal++;
    if (!p->writing)
        return 1;
    sx_stack *stack = sx_stacks_enter(&p->stacks, call->lane, parent, NULL, NULL);
    if (!stack || build_path(p, stack, call->region) < 0)
        return -1;
    if (call->lane != p->labelled) {
        sp_lane_label(p->run.profile, p->rank, call->lane, p->label, sizeof p->label);
        p->labelled = call->lane;
    }
    csv_call c = {
        .rank = p->rank, .region = call->region, .lane = p->run.src->any_thread ? p->label : NULL,
        .call_id = sx_call_id(&p->run, call, position),
        .parent_id = stack->depth ? stack->open[stack->depth - 1].call_id : -1,
        .depth = (int64_t)stack->depth, .start = call->start, .end = call->end,
        .path = p->path, .row = sx_run_row(&p->run, call->region)};
    if (sx_spill_next(&p->spill, &c.exclusive) < 0)
        return -1;
    sx_open o = {*user, c.call_id, call->region};
    if (sx_stack_push(stack, &o) < 0)
        return -1;
    write_call(p->out, p->run.profile, &c);
    p->events++;
    return ferror(p->out) ? -1 : 1;
}

static int csv_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    csv_pass *p = ctx;
    if (!p->writing)
        sx_spill_set(&p->spill, (uint64_t)user, call->exclusive);
    return 0;
}

int sp_export_csv_stream(FILE *out, const sp_run_source *src, const sp_export_options *options,
                         char *why, size_t whylen)
{
    sp_csv_part whole = {.first = 0, .count = -1, .header = 1, .check_others = 1};
    int rc = sp_export_csv_stream_part(out, src, options, &whole, why, whylen);
    if (rc == 0)
        sp_export_warn_events(options, whole.events, "csv export");
    return rc;
}

int sp_export_csv_stream_part(FILE *out, const sp_run_source *src,
                              const sp_export_options *options, sp_csv_part *part, char *why,
                              size_t whylen)
{
    csv_pass p = {.out = out};
    p.spill.fd = -1;
    part->events = 0;
    int rc = sx_run_begin_share(&p.run, src, options, 0, part->check_others, why, whylen);
    long first = part->first, end = p.run.num_ranks;
    if (part->count >= 0 && first + part->count < end)
        end = first + part->count;
    if (rc == 0 && sx_spill_open(&p.spill) < 0) {
        snprintf(why, whylen, "no temporary file for the exclusive times (TMPDIR)");
        rc = 1;
    }
    sp_call_visitor visitor = {csv_enter, csv_exit, &p};
    for (long k = first; k < end && rc == 0; k++) {
        sx_run_rank(&p.run, p.run.ranks[k]);
        rc = sx_run_pass(&p.run, p.run.ranks[k], &visitor, why, whylen);
    }
    if (rc == 0 && sx_spill_finish(&p.spill) < 0) {
        snprintf(why, whylen, "the temporary file of the exclusive times cannot be written");
        rc = 1;
    }
    if (rc < 0) { /* nothing written yet: the in-memory path may still do */
        if (!why[0])
            snprintf(why, whylen, "out of memory");
        rc = 1;
    }
    /* a part of a distributed export: every part's first pass must have
     * gone well before any writes (src/dist/dist_export_stream.c) */
    if (part->agree && part->agree(part->ctx, rc, &p.out, why, whylen) != 0)
        rc = 1;
    out = p.out;
    if (rc == 0) {
        p.writing = 1;
        if (part->header)
            fputs(header, out);
    }
    p.ordinal = 0;
    for (long k = first; k < end && rc == 0; k++) {
        p.rank = p.run.ranks[k];
        p.position = 0;
        p.labelled = INT64_MIN;
        sx_stacks_close_all(&p.stacks, NULL, NULL);
        sx_run_rank(&p.run, p.rank);
        if (sx_run_pass(&p.run, p.rank, &visitor, why, whylen) != 0)
            rc = -1;
    }
    if (p.writing && rc == 0 && ferror(out))
        rc = -1;
    if (p.writing && rc < 0)
        snprintf(why, whylen, "write failed, out of memory, or the files changed");
    part->events = p.events;
    free(p.path);
    sx_spill_close(&p.spill);
    sx_stacks_free(&p.stacks);
    sx_run_end(&p.run);
    return rc;
}
