/* export_speedscope.c - speedscope's file format (spec §7.1): one evented
 * profile per (rank, lane), frames shared by name, one time origin for the
 * whole document so profiles line up.
 *
 * Frames are numbered in first-use order while the events stream out, so the
 * "shared" object is written after "profiles" (JSON key order is free). */
#include <stdlib.h>
#include <string.h>

#include "export_stream.h"
#include "lane_spill.h"
#include "scopeprof/export.h"
#include "scopeprof_config.h"
#include "stream_calls.h"

typedef struct frames {
    int64_t *of_region;   /* profile->num_names: frame index or -1 */
    uint32_t *region;     /* frame -> region */
    const char **file;    /* frame -> source file ("" unknown) */
    int64_t *line;        /* frame -> source line (-1 unknown) */
    size_t n;
} frames;

typedef struct walk_ctx {
    sp_json *j;
    const sp_profile *profile;
    const sp_rank_data *data;
    frames *frames;
    int64_t origin;
    uint64_t events;
} walk_ctx;

/* The frame of a call of `region` whose row is `row` (NULL: none). */
static int64_t frame_of(frames *f, uint32_t region, const sp_row *row)
{
    if (f->of_region[region] < 0) {
        f->of_region[region] = (int64_t)f->n;
        f->region[f->n] = region;
        f->file[f->n] = row && row->source_file ? row->source_file : "";
        f->line[f->n] = row ? row->source_line : -1;
        f->n++;
    } else if (!f->file[f->of_region[region]][0]) {
        /* Another rank may know the source the first one lacked. */
        if (row && row->source_file && row->source_file[0]) {
            f->file[f->of_region[region]] = row->source_file;
            f->line[f->of_region[region]] = row->source_line;
        }
    }
    return f->of_region[region];
}

static int64_t frame_for(walk_ctx *w, size_t call)
{
    return frame_of(w->frames, w->data->calls.region[call],
                    sp_rank_data_row(w->profile, w->data, call));
}

/* One event object. */
static void write_event(sp_json *j, const char *type, int64_t frame, int64_t at)
{
    sp_json_newline(j);
    sp_json_begin_object(j);
    sp_json_key(j, "type");
    sp_json_string(j, type);
    sp_json_key(j, "frame");
    sp_json_int(j, frame);
    sp_json_key(j, "at");
    sp_json_fixed(j, at, 9);
    sp_json_end_object(j);
}

static void event(walk_ctx *w, const char *type, size_t call, int64_t at)
{
    write_event(w->j, type, frame_for(w, call), at - w->origin);
    w->events++;
}

static int open_call(void *ctx, size_t call)
{
    walk_ctx *w = ctx;
    event(w, "O", call, w->data->calls.start[call]);
    return 0;
}

static int close_call(void *ctx, size_t call)
{
    walk_ctx *w = ctx;
    event(w, "C", call, w->data->calls.end[call]);
    return 0;
}

static void begin_profile(sp_json *j, const char *name, int64_t start, int64_t end)
{
    sp_json_newline(j);
    sp_json_begin_object(j);
    sp_json_key(j, "type");
    sp_json_string(j, "evented");
    sp_json_key(j, "name");
    sp_json_string(j, name);
    sp_json_key(j, "unit");
    sp_json_string(j, "seconds");
    sp_json_key(j, "startValue");
    sp_json_fixed(j, start, 9);
    sp_json_key(j, "endValue");
    sp_json_fixed(j, end, 9);
    sp_json_key(j, "events");
    sp_json_begin_array(j);
}

/* "rank R", or "rank R - <lane label>" when the run has lanes. */
static void profile_name(const sp_profile *profile, uint32_t rank, int has_lanes, int64_t lane,
                         char *name, size_t len)
{
    if (!has_lanes) {
        snprintf(name, len, "rank %u", rank);
    } else {
        char label[512];
        sp_lane_label(profile, rank, lane, label, sizeof label);
        snprintf(name, len, "rank %u - %s", rank, label);
    }
}

static void write_profile(walk_ctx *w, const sp_lane_walk *walk, size_t lane)
{
    const sp_calls *c = &w->data->calls;
    sp_json *j = w->j;
    char name[600];
    profile_name(w->profile, w->data->rank, c->lane != NULL, walk->lanes[lane], name,
                 sizeof name);
    int64_t first = walk->first_root[lane], last_end = c->start[first];
    for (int64_t r = first; r >= 0; r = walk->next_sibling[r])
        if (c->end[r] > last_end)
            last_end = c->end[r];
    begin_profile(j, name, c->start[first] - w->origin, last_end - w->origin);
    sp_lane_walk_visit(walk, c, lane, open_call, close_call, w);
    sp_json_end_array(j);
    sp_json_end_object(j);
}

static void write_frames(sp_json *j, const sp_profile *profile, const frames *f)
{
    sp_json_key(j, "shared");
    sp_json_begin_object(j);
    sp_json_key(j, "frames");
    sp_json_begin_array(j);
    for (size_t k = 0; k < f->n; k++) {
        sp_json_newline(j);
        sp_json_begin_object(j);
        sp_json_key(j, "name");
        sp_json_string(j, profile->names[f->region[k]]);
        if (f->file[k][0]) {
            sp_json_key(j, "file");
            sp_json_string(j, f->file[k]);
            if (f->line[k] >= 0) {
                sp_json_key(j, "line");
                sp_json_int(j, f->line[k]);
            }
        }
        sp_json_end_object(j);
    }
    sp_json_end_array(j);
    sp_json_end_object(j);
}

static void begin_document(sp_json *j, FILE *out, const sp_profile *profile,
                           const sp_export_options *options)
{
    sp_json_init(j, out);
    sp_json_begin_object(j);
    sp_json_key(j, "$schema");
    sp_json_string(j, "https://www.speedscope.app/file-format-schema.json");
    sp_json_key(j, "exporter");
    sp_json_string(j, "scopeprof@" SCOPEPROF_VERSION);
    sp_json_key(j, "name");
    sp_json_string(j, sp_export_label(profile, options));
    sp_json_key(j, "profiles");
    sp_json_begin_array(j);
}

static void end_document(sp_json *j, FILE *out, const sp_profile *profile, const frames *f,
                         size_t active)
{
    sp_json_end_array(j);
    /* After the profiles, once known: key order does not matter in JSON. */
    sp_json_key(j, "activeProfileIndex");
    sp_json_int(j, (int64_t)active);
    write_frames(j, profile, f);
    sp_json_end_object(j);
    fputc('\n', out);
}

static int frames_alloc(frames *f, size_t num_names)
{
    size_t names = num_names ? num_names : 1;
    f->of_region = malloc(names * sizeof *f->of_region);
    f->region = malloc(names * sizeof *f->region);
    f->file = malloc(names * sizeof *f->file);
    f->line = malloc(names * sizeof *f->line);
    f->n = 0;
    if (!f->of_region || !f->region || !f->file || !f->line)
        return -1;
    for (size_t r = 0; r < num_names; r++)
        f->of_region[r] = -1;
    return 0;
}

static void frames_free(frames *f)
{
    free(f->of_region);
    free(f->region);
    free(f->file);
    free(f->line);
}

int sp_export_speedscope(FILE *out, const sp_profile *profile, const sp_export_options *options,
                         char *err, size_t errlen)
{
    const sp_selection *sel = options ? options->selection : NULL;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    size_t names = profile->num_names ? profile->num_names : 1;
    frames f = {
        .of_region = malloc(names * sizeof *f.of_region),
        .region = malloc(names * sizeof *f.region),
        .file = malloc(names * sizeof *f.file),
        .line = malloc(names * sizeof *f.line),
    };
    int rc = -1;
    if (num_ranks < 0 || !f.of_region || !f.region || !f.file || !f.line) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    for (size_t r = 0; r < profile->num_names; r++)
        f.of_region[r] = -1;

    sp_json j;
    begin_document(&j, out, profile, options);
    walk_ctx w = {.j = &j, .profile = profile, .frames = &f,
                  .origin = sp_selection_first_start(profile, sel)};
    size_t profiles = 0, active = 0;
    for (long k = 0; k < num_ranks; k++) {
        sp_rank_data data;
        if (sp_rank_data_load(profile, ranks[k], sel, &data, err, errlen) < 0)
            goto done;
        sp_lane_walk walk;
        if (sp_lane_walk_build(&data.calls, &walk) < 0) {
            sp_rank_data_free(&data);
            snprintf(err, errlen, "out of memory walking rank %u", ranks[k]);
            goto done;
        }
        w.data = &data;
        for (size_t lane = 0; lane < walk.num_lanes; lane++, profiles++) {
            /* Open on the first rank's main thread (thread index 0), not on
             * whichever lane sorts first (a worker thread's). */
            if (k == 0 && data.calls.lane && walk.lanes[lane] == sp_lane_id(0, -1))
                active = profiles;
            write_profile(&w, &walk, lane);
        }
        sp_lane_walk_free(&walk);
        sp_rank_data_free(&data);
    }
    end_document(&j, out, profile, &f, active);
    if (profiles == 0) {
        snprintf(err, errlen, "%s: no calls recorded for the selected ranks and filters",
                 profile->path ? profile->path : "profile");
        goto done;
    }
    sp_export_warn_events(options, w.events, "speedscope export");
    rc = 0;
done:
    free(ranks);
    free(f.of_region);
    free(f.region);
    free(f.file);
    free(f.line);
    return rc;
}

/* ---- The same document from a run source (docs/stream.md, "Exports") ----
 *
 * The document's time origin is the earliest kept call of the selection and
 * each profile starts with its lane's first start and last end: a first
 * pass over every selected rank learns those (and makes the reader's
 * checks, before any byte is written).  Profiles are then written lane by
 * lane: one writing pass over the rank, the first lane's events written as
 * they come and the other lanes' set aside (lane_spill.h), then written
 * lane after lane, as perfetto does; when no temporary file can be made,
 * one pass over the rank per lane, writing that lane's calls and dropping
 * the others' (which changes nothing on this lane).  An event closes a call once the stream gives a kept call that is
 * not inside it, or at the end of the rank; the stream's own exits are not
 * used, since a rank replayed from memory gives them last. */

typedef struct speedscope_pass {
    sx_run run;
    sp_json *j;
    frames *frames;
    int64_t origin;
    sx_lanes *lanes;             /* NULL: writing */
    int64_t target;              /* the lane being written */
    int64_t ordinal;
    sx_stacks stacks;
    uint64_t events;
    int failed;
    /* one writing pass for the rank's lanes: the others set aside; NULL:
     * one pass per lane */
    sx_lane_spill *spill;
    const sx_lanes *rank_lanes;  /* the rank's lanes, ascending (lane index) */
    size_t closing;              /* lane index of the calls being closed */
} speedscope_pass;

static size_t ss_lane_index(const speedscope_pass *p, int64_t lane)
{
    size_t lo = 0, hi = p->rank_lanes->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->rank_lanes->v[mid].lane < lane)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* An open or close event at t of lane index li: written (the pass's own
 * lane) or set aside (the others, one writing pass for the rank). */
static int ss_event(speedscope_pass *p, size_t li, int open, uint32_t region, int64_t t)
{
    if (p->spill && li > 0) {
        sx_lane_spill_put(p->spill, li, t, open, region, 0);
        return 0;
    }
    write_event(p->j, open ? "O" : "C", frame_of(p->frames, region, sx_run_row(&p->run, region)),
                t - p->origin);
    p->events++;
    return 0;
}

static int ss_replay_event(void *ctx, int64_t t, int open, uint32_t region, uint64_t event)
{
    (void)event;
    speedscope_pass *p = ctx;
    write_event(p->j, open ? "O" : "C", frame_of(p->frames, region, sx_run_row(&p->run, region)),
                t - p->origin);
    p->events++;
    return ferror(p->j->out) ? -1 : 0;
}

static int ss_close(speedscope_pass *p, const sx_open *o, int64_t end)
{
    return ss_event(p, p->closing, 0, o->region, end);
}

/* The close callback: the call's end is kept in its call_id slot (a
 * speedscope event needs no id). */
static int ss_close_cb(void *ctx, const sx_open *o)
{
    return ss_close(ctx, o, o->call_id);
}

static int ss_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    speedscope_pass *p = ctx;
    *user = parent;
    if (!sp_stream_filter_keeps(&p->run.filter, call))
        return 0;
    if (p->lanes) {
        if (call->start < p->origin)
            p->origin = call->start;
        return sx_lanes_note(p->lanes, call) < 0 ? -1 : 0;
    }
    size_t li = 0;
    if (p->spill) {
        li = ss_lane_index(p, call->lane);
        if (li == p->rank_lanes->n || p->rank_lanes->v[li].lane != call->lane)
            return 0; /* no lane of the first pass (as a pass per lane would drop it) */
    } else if (call->lane != p->target) {
        return 0;
    }
    p->closing = li;
    sx_stack *stack = sx_stacks_enter(&p->stacks, call->lane, parent, ss_close_cb, p);
    sx_open o = {p->ordinal, call->end, call->region};
    if (!stack || sx_stack_push(stack, &o) < 0 ||
        ss_event(p, li, 1, call->region, call->start) != 0)
        return -1;
    *user = p->ordinal++;
    return ferror(p->j->out) ? -1 : 1;
}

static int ss_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    (void)ctx;
    (void)call;
    (void)user;
    return 0;
}

/* Close what is still open on every lane at the end of the rank (one
 * writing pass: each lane's closes go where its events go). */
static int ss_close_every_lane(speedscope_pass *p)
{
    for (size_t l = 0; l < p->stacks.n; l++) {
        sx_stack *st = &p->stacks.v[l];
        if (st->depth)
            p->closing = ss_lane_index(p, st->lane);
        while (st->depth) {
            st->depth--;
            if (ss_close_cb(p, &st->open[st->depth]) != 0)
                return -1;
        }
    }
    return 0;
}

/* The profile of the rank's l-th lane begins (index: its number in the
 * document; *active: the profile the viewer opens on). */
static void ss_begin_lane(speedscope_pass *p, const sp_run_source *src, long k, size_t l,
                          size_t index, size_t *active)
{
    const sx_lane *lane = &p->rank_lanes->v[l];
    /* Open on the first rank's main thread (thread index 0). */
    if (k == 0 && src->any_thread && lane->lane == sp_lane_id(0, -1))
        *active = index;
    char name[600];
    profile_name(src->profile, p->run.ranks[k], src->any_thread, lane->lane, name, sizeof name);
    begin_profile(p->j, name, lane->first_start - p->origin, lane->last_end - p->origin);
}

int sp_export_speedscope_stream(FILE *out, const sp_run_source *src,
                                const sp_export_options *options, char *why, size_t whylen)
{
    frames f = {0};
    speedscope_pass p = {.frames = &f, .origin = INT64_MAX};
    sp_json j;
    p.j = &j;
    int rc = sx_run_begin(&p.run, src, options, 0, why, whylen);
    sx_lanes *lanes = NULL;
    if (rc == 0 && (frames_alloc(&f, src->profile->num_names) < 0 ||
                    !(lanes = calloc((size_t)p.run.num_ranks + 1, sizeof *lanes))))
        rc = -1;
    sp_call_visitor visitor = {ss_enter, ss_exit, &p};
    size_t profiles = 0;
    for (long k = 0; k < p.run.num_ranks && rc == 0; k++) {
        p.lanes = &lanes[k];
        sx_run_rank(&p.run, p.run.ranks[k]);
        rc = sx_run_pass(&p.run, p.run.ranks[k], &visitor, why, whylen);
        profiles += lanes[k].n;
    }
    p.lanes = NULL;
    if (rc == 0 && profiles == 0) {
        snprintf(why, whylen, "no calls: the in-memory path words it");
        rc = 1;
    }
    if (rc < 0) { /* nothing written yet: the in-memory path may still do */
        if (!why[0])
            snprintf(why, whylen, "out of memory");
        rc = 1;
    }
    int writing = rc == 0;
    if (writing)
        begin_document(&j, out, src->profile, options);
    size_t active = 0, index = 0;
    for (long k = 0; k < p.run.num_ranks && rc == 0; k++) {
        uint32_t rank = p.run.ranks[k];
        sx_run_rank(&p.run, rank);
        p.rank_lanes = &lanes[k];
        /* several lanes: one pass for all of them when a spill can be made */
        if (lanes[k].n > 1 && (p.spill = sx_lane_spill_open(lanes[k].n))) {
            ss_begin_lane(&p, src, k, 0, index, &active);
            p.target = lanes[k].v[0].lane;
            p.ordinal = 0;
            if (sx_run_pass(&p.run, rank, &visitor, why, whylen) != 0 ||
                ss_close_every_lane(&p) != 0)
                rc = -1;
            sp_json_end_array(&j);
            sp_json_end_object(&j);
            for (size_t l = 1; l < lanes[k].n && rc == 0; l++) {
                ss_begin_lane(&p, src, k, l, index + l, &active);
                if (sx_lane_spill_lost(p.spill, l)) {
                    /* the spill lost it (a full disk): streamed on its own */
                    sx_lane_spill *spill = p.spill;
                    p.spill = NULL;
                    p.target = lanes[k].v[l].lane;
                    p.ordinal = 0;
                    if (sx_run_pass(&p.run, rank, &visitor, why, whylen) != 0 ||
                        sx_stacks_close_all(&p.stacks, ss_close_cb, &p) != 0)
                        rc = -1;
                    p.spill = spill;
                } else if (sx_lane_spill_replay(p.spill, l, ss_replay_event, &p) != 0) {
                    rc = -1;
                }
                sp_json_end_array(&j);
                sp_json_end_object(&j);
            }
            index += lanes[k].n;
            sx_lane_spill_close(p.spill);
            p.spill = NULL;
            continue;
        }
        for (size_t l = 0; l < lanes[k].n && rc == 0; l++, index++) {
            const sx_lane *lane = &lanes[k].v[l];
            ss_begin_lane(&p, src, k, l, index, &active);
            p.target = lane->lane;
            p.ordinal = 0;
            if (sx_run_pass(&p.run, rank, &visitor, why, whylen) != 0 ||
                sx_stacks_close_all(&p.stacks, ss_close_cb, &p) != 0)
                rc = -1;
            sp_json_end_array(&j);
            sp_json_end_object(&j);
        }
    }
    if (writing) {
        end_document(&j, out, src->profile, &f, active);
        if (rc == 0 && ferror(out))
            rc = -1;
        if (rc < 0)
            snprintf(why, whylen, "write failed, out of memory, or the files changed");
    }
    if (rc == 0)
        sp_export_warn_events(options, p.events, "speedscope export");
    for (long k = 0; lanes && k < p.run.num_ranks; k++)
        sx_lanes_free(&lanes[k]);
    free(lanes);
    frames_free(&f);
    sx_stacks_free(&p.stacks);
    sx_run_end(&p.run);
    return rc;
}
