/* export_speedscope.c - speedscope's file format (spec §7.1): one evented
 * profile per (rank, lane), frames shared by name, one time origin for the
 * whole document so profiles line up.
 *
 * Frames are numbered in first-use order while the events stream out, so the
 * "shared" object is written after "profiles" (JSON key order is free). */
#include <stdlib.h>
#include <string.h>

#include "scopeprof/export.h"
#include "scopeprof_config.h"

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

static int64_t frame_for(walk_ctx *w, size_t call)
{
    uint32_t region = w->data->calls.region[call];
    frames *f = w->frames;
    if (f->of_region[region] < 0) {
        const sp_row *row = sp_rank_data_row(w->profile, w->data, call);
        f->of_region[region] = (int64_t)f->n;
        f->region[f->n] = region;
        f->file[f->n] = row && row->source_file ? row->source_file : "";
        f->line[f->n] = row ? row->source_line : -1;
        f->n++;
    } else if (!f->file[f->of_region[region]][0]) {
        /* Another rank may know the source the first one lacked. */
        const sp_row *row = sp_rank_data_row(w->profile, w->data, call);
        if (row && row->source_file && row->source_file[0]) {
            f->file[f->of_region[region]] = row->source_file;
            f->line[f->of_region[region]] = row->source_line;
        }
    }
    return f->of_region[region];
}

static void event(walk_ctx *w, const char *type, size_t call, int64_t at)
{
    sp_json *j = w->j;
    sp_json_newline(j);
    sp_json_begin_object(j);
    sp_json_key(j, "type");
    sp_json_string(j, type);
    sp_json_key(j, "frame");
    sp_json_int(j, frame_for(w, call));
    sp_json_key(j, "at");
    sp_json_fixed(j, at - w->origin, 9);
    sp_json_end_object(j);
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

static void write_profile(walk_ctx *w, const sp_lane_walk *walk, size_t lane)
{
    const sp_calls *c = &w->data->calls;
    sp_json *j = w->j;
    char name[600];
    if (!c->lane) {
        snprintf(name, sizeof name, "rank %u", w->data->rank);
    } else {
        char label[512];
        sp_lane_label(w->profile, w->data->rank, walk->lanes[lane], label, sizeof label);
        snprintf(name, sizeof name, "rank %u - %s", w->data->rank, label);
    }
    int64_t first = walk->first_root[lane], last_end = c->start[first];
    for (int64_t r = first; r >= 0; r = walk->next_sibling[r])
        if (c->end[r] > last_end)
            last_end = c->end[r];
    sp_json_newline(j);
    sp_json_begin_object(j);
    sp_json_key(j, "type");
    sp_json_string(j, "evented");
    sp_json_key(j, "name");
    sp_json_string(j, name);
    sp_json_key(j, "unit");
    sp_json_string(j, "seconds");
    sp_json_key(j, "startValue");
    sp_json_fixed(j, c->start[first] - w->origin, 9);
    sp_json_key(j, "endValue");
    sp_json_fixed(j, last_end - w->origin, 9);
    sp_json_key(j, "events");
    sp_json_begin_array(j);
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
    sp_json_init(&j, out);
    sp_json_begin_object(&j);
    sp_json_key(&j, "$schema");
    sp_json_string(&j, "https://www.speedscope.app/file-format-schema.json");
    sp_json_key(&j, "exporter");
    sp_json_string(&j, "scopeprof@" SCOPEPROF_VERSION);
    sp_json_key(&j, "name");
    sp_json_string(&j, sp_export_label(profile, options));
    sp_json_key(&j, "profiles");
    sp_json_begin_array(&j);
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
    sp_json_end_array(&j);
    /* After the profiles, once known: key order does not matter in JSON. */
    sp_json_key(&j, "activeProfileIndex");
    sp_json_int(&j, (int64_t)active);
    write_frames(&j, profile, &f);
    sp_json_end_object(&j);
    fputc('\n', out);
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
