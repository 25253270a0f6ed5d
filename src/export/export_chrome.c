/* export_chrome.c - Chrome Trace Event format (spec §7.3), for Perfetto and
 * chrome://tracing: pid = rank, one tid per lane, complete ("X") events in
 * microseconds after the run origin; MPI point-to-point messages as flow
 * events ("s" at the send, "f" at the receive, mpi_flows.h). */
#include <stdlib.h>

#include "mpi_flows.h"
#include "export_stream.h"
#include "stream_calls.h"

#include "scopeprof/export.h"
#include "scopeprof_config.h"

static void meta_event(sp_json *j, const char *what, uint32_t pid, int64_t tid,
                       const char *name, int64_t sort_index)
{
    sp_json_newline(j);
    sp_json_begin_object(j);
    sp_json_key(j, "name");
    sp_json_string(j, what);
    sp_json_key(j, "ph");
    sp_json_string(j, "M");
    sp_json_key(j, "pid");
    sp_json_uint(j, pid);
    sp_json_key(j, "tid");
    sp_json_int(j, tid);
    sp_json_key(j, "args");
    sp_json_begin_object(j);
    if (name) {
        sp_json_key(j, "name");
        sp_json_string(j, name);
    } else {
        sp_json_key(j, "sort_index");
        sp_json_int(j, sort_index);
    }
    sp_json_end_object(j);
    sp_json_end_object(j);
}

/* Threads in index order, then calls outside any thread, then tasks: the
 * order people expect in a timeline (lane ids sort threads backwards). */
static int64_t lane_rank_order(int64_t lane)
{
    if (lane < -1)
        return -2 - lane;               /* thread index */
    if (lane == -1)
        return (int64_t)1 << 40;
    return ((int64_t)1 << 41) + lane;   /* task */
}

static int compare_order(const void *a, const void *b)
{
    int64_t x = lane_rank_order(*(const int64_t *)a), y = lane_rank_order(*(const int64_t *)b);
    return (x > y) - (x < y);
}

static size_t tid_of(const int64_t *ordered, size_t n, int64_t lane)
{
    size_t lo = 0, hi = n;
    int64_t key = lane_rank_order(lane);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (lane_rank_order(ordered[mid]) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The MPI columns of event e that apply, as args. */
static void mpi_args(sp_json *j, const sp_profile *profile, uint64_t e)
{
    for (int c = SP_EXTRA_MPI_SENT_BYTES; c <= SP_EXTRA_MPI_RECV_TAG; c++)
        if (profile->extra[c] && profile->extra[c][e] >= 0) {
            sp_json_key(j, sp_event_extra_names[c]);
            sp_json_int(j, profile->extra[c][e]);
        }
}

/* The flow events of call i (event e): bound to the call's slice. */
static void flow_events(sp_json *j, const sp_mpi_flows *flows, uint64_t e, uint32_t rank,
                        size_t tid, int64_t start, int64_t end, int64_t origin)
{
    size_t n = 0;
    const sp_mpi_flow_end *f = flows ? sp_mpi_flows_at_call(flows, rank, start, e, &n) : NULL;
    for (size_t k = 0; k < n; k++) {
        sp_json_newline(j);
        sp_json_begin_object(j);
        sp_json_key(j, "name");
        sp_json_string(j, "MPI message");
        sp_json_key(j, "cat");
        sp_json_string(j, "mpi");
        sp_json_key(j, "ph");
        sp_json_string(j, f[k].send ? "s" : "f");
        if (!f[k].send) {
            /* "e": the enclosing slice, the receive, not the next one. */
            sp_json_key(j, "bp");
            sp_json_string(j, "e");
        }
        sp_json_key(j, "id");
        sp_json_uint(j, f[k].id);
        sp_json_key(j, "ts");
        /* Inside the slice: its start for the send, its last ns for the receive. */
        sp_json_fixed(j, (f[k].send || end <= start ? start : end - 1) - origin, 3);
        sp_json_key(j, "pid");
        sp_json_uint(j, rank);
        sp_json_key(j, "tid");
        sp_json_uint(j, tid);
        sp_json_end_object(j);
    }
}

/* The process and thread metadata of a rank whose lanes, in timeline
 * order, are `lanes` (has_lanes: the run has thread ids, else one lane). */
static void rank_meta(sp_json *j, const sp_profile *profile, uint32_t rank, const int64_t *lanes,
                      size_t num_lanes, int has_lanes)
{
    char label[512];
    snprintf(label, sizeof label, "rank %u", rank);
    meta_event(j, "process_name", rank, 0, label, 0);
    meta_event(j, "process_sort_index", rank, 0, NULL, rank);
    for (size_t t = 0; t < num_lanes; t++) {
        if (has_lanes)
            sp_lane_label(profile, rank, lanes[t], label, sizeof label);
        meta_event(j, "thread_name", rank, (int64_t)t, label, 0);
        meta_event(j, "thread_sort_index", rank, (int64_t)t, NULL, (int64_t)t);
    }
}

/* What one complete event shows of a call. */
typedef struct chrome_call {
    uint32_t rank, region;
    size_t tid;
    int64_t start, end;
    const sp_row *row;
    uint64_t call_index;
    int64_t call_id, parent_id;
    const uint64_t *event;       /* in the profile's columns (GPU, await, MPI), or NULL */
    const int64_t *mpi;          /* on the stream: the call's MPI columns, or NULL */
    /* on the stream with --call-args: the call's GPU duration (-1 none) and
     * await_ns, shown when some file of the run has that column (await as
     * the in-memory run, which has the column then, 0 where a file lacks it) */
    int64_t gpu_ns, await_ns;
    int await_column;
} chrome_call;

static void write_call(sp_json *j, const sp_profile *profile, const sp_export_options *options,
                       const chrome_call *c, int64_t origin)
{
    const sp_row *row = c->row;
    sp_json_newline(j);
    sp_json_begin_object(j);
    sp_json_key(j, "name");
    sp_json_string(j, profile->names[c->region]);
    sp_json_key(j, "cat");
    sp_json_string(j, "scopeprof");
    sp_json_key(j, "ph");
    sp_json_string(j, "X");
    sp_json_key(j, "ts");
    sp_json_fixed(j, c->start - origin, 3);
    sp_json_key(j, "dur");
    sp_json_fixed(j, c->end - c->start, 3);
    sp_json_key(j, "pid");
    sp_json_uint(j, c->rank);
    sp_json_key(j, "tid");
    sp_json_uint(j, c->tid);
    /* speedscope's Chrome importer makes one frame per distinct (name,
     * args): per-call args (ids, durations) gave every call a frame of
     * its own.  By default args hold only what is the same for every call
     * of a region; --call-args adds the per-call fields of spec §7.3. */
    int call_args = options && options->call_args;
    int source = row && row->source_file && row->source_file[0];
    if (call_args || source) {
        sp_json_key(j, "args");
        sp_json_begin_object(j);
    }
    if (call_args) {
        sp_json_key(j, "rank");
        sp_json_uint(j, c->rank);
        sp_json_key(j, "call_index");
        sp_json_uint(j, c->call_index);
        sp_json_key(j, "call_id");
        sp_json_int(j, c->call_id);
        sp_json_key(j, "parent_id");
        sp_json_int(j, c->parent_id);
        sp_json_key(j, "duration_ns");
        sp_json_int(j, c->end - c->start);
        int64_t gpu = c->event ? (profile->gpu ? profile->gpu[*c->event] : -1) : c->gpu_ns;
        if (gpu >= 0) {
            sp_json_key(j, "gpu_duration_ns");
            sp_json_int(j, gpu);
        }
        if (c->event ? profile->await_ns != NULL : c->await_column) {
            sp_json_key(j, "await_ns");
            sp_json_int(j, c->event ? profile->await_ns[*c->event] : c->await_ns);
        }
        if (c->event)
            mpi_args(j, profile, *c->event);
        for (int x = SP_EXTRA_MPI_SENT_BYTES; c->mpi && x <= SP_EXTRA_MPI_RECV_TAG; x++)
            if (c->mpi[x] >= 0) { /* as mpi_args: a column no file has reads -1 */
                sp_json_key(j, sp_event_extra_names[x]);
                sp_json_int(j, c->mpi[x]);
            }
    }
    if (source) {
        sp_json_key(j, "source_file");
        sp_json_string(j, row->source_file);
        if (row->source_line >= 0) {
            sp_json_key(j, "source_line");
            sp_json_int(j, row->source_line);
        }
    }
    if (call_args || source)
        sp_json_end_object(j);
    sp_json_end_object(j);
}

static int write_rank(sp_json *j, const sp_profile *profile, const sp_export_options *options,
                      const sp_rank_data *data, int64_t origin, const sp_mpi_flows *flows,
                      uint64_t *events, char *err,
                      size_t errlen)
{
    const sp_calls *c = &data->calls;
    sp_lane_walk walk;
    if (sp_lane_walk_build(c, &walk) < 0) {
        snprintf(err, errlen, "out of memory walking rank %u", data->rank);
        return -1;
    }
    qsort(walk.lanes, walk.num_lanes, sizeof *walk.lanes, compare_order);
    rank_meta(j, profile, data->rank, walk.lanes, walk.num_lanes, c->lane != NULL);
    for (size_t i = 0; i < c->n; i++) {
        uint64_t e = data->event[i];
        chrome_call call = {
            .rank = data->rank, .region = c->region[i],
            .tid = c->lane ? tid_of(walk.lanes, walk.num_lanes, c->lane[i]) : 0,
            .start = c->start[i], .end = c->end[i], .row = sp_rank_data_row(profile, data, i),
            .call_index = c->call_index[i], .call_id = data->call_id[i],
            .parent_id = data->parent_id[i], .event = &e};
        write_call(j, profile, options, &call, origin);
        flow_events(j, flows, e, data->rank, call.tid, c->start[i], c->end[i], origin);
    }
    *events += c->n;
    sp_lane_walk_free(&walk);
    return 0;
}

/* The document around the events. */
static void begin_document(sp_json *j, FILE *out, const sp_profile *profile,
                           const sp_export_options *options, int64_t origin)
{
    sp_json_init(j, out);
    sp_json_begin_object(j);
    sp_json_key(j, "displayTimeUnit");
    sp_json_string(j, "ms");
    sp_json_key(j, "metadata");
    sp_json_begin_object(j);
    sp_json_key(j, "name");
    sp_json_string(j, sp_export_label(profile, options));
    sp_json_key(j, "exporter");
    sp_json_string(j, "scopeprof@" SCOPEPROF_VERSION);
    sp_json_key(j, "origin_ns");
    sp_json_int(j, origin);
    sp_json_end_object(j);
    sp_json_key(j, "traceEvents");
    sp_json_begin_array(j);
}

static void end_document(sp_json *j, FILE *out)
{
    sp_json_end_array(j);
    sp_json_end_object(j);
    fputc('\n', out);
}

int sp_export_chrome(FILE *out, const sp_profile *profile, const sp_export_options *options,
                     char *err, size_t errlen)
{
    const sp_selection *sel = options ? options->selection : NULL;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    if (num_ranks < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int64_t origin = sp_profile_origin_ns(profile);
    sp_mpi_flows flows = {0};
    if (profile->extra[SP_EXTRA_MPI_COMM] &&
        sp_mpi_flows_build_selected(profile, sel, ranks, num_ranks, &flows, err, errlen) != 0) {
        free(ranks);
        return -1;
    }
    sp_json j;
    begin_document(&j, out, profile, options, origin);
    uint64_t events = 0;
    int rc = 0;
    for (long k = 0; k < num_ranks && rc == 0; k++) {
        sp_rank_data data;
        if (sp_rank_data_load(profile, ranks[k], sel, &data, err, errlen) < 0) {
            rc = -1;
            break;
        }
        if (data.calls.n)
            rc = write_rank(&j, profile, options, &data, origin, &flows, &events, err, errlen);
        sp_rank_data_free(&data);
    }
    end_document(&j, out);
    free(ranks);
    sp_mpi_flows_free(&flows);
    if (rc == 0 && events == 0) {
        snprintf(err, errlen, "%s: no calls recorded for the selected ranks and filters",
                 profile->path ? profile->path : "profile");
        rc = -1;
    }
    if (rc == 0)
        sp_export_warn_events(options, events, "chrome export");
    return rc;
}

/* ---- The same document from a run source (docs/stream.md, "Exports") ----
 *
 * The thread metadata of a rank comes before its calls and numbers its
 * lanes: a first pass over every selected rank learns the lanes of its kept
 * calls (and makes the reader's checks, so nothing is written before a
 * problem is known); a second writes the calls as they pass, in the order
 * of the in-memory reconstruction.  MPI messages: the ends of every selected
 * rank are read first (mpi_flows_stream.c), the first pass marks the kept
 * ones, and they are paired before the first byte; the second pass looks up
 * each call's flows.  --call-args shows the MPI, GPU and await columns
 * the writing pass reads with the others (sp_stream_rank_mpi). */

typedef struct chrome_pass {
    sx_run run;
    sp_json *j;
    const sp_export_options *options;
    int64_t origin;
    int writing;
    sx_lanes *lanes;             /* per selected rank */
    int64_t *order;              /* the rank's lanes in timeline order */
    size_t num_order;
    uint32_t rank;
    int64_t position, ordinal;   /* enters, kept calls of the rank */
    sx_stacks stacks;            /* --call-args: the kept parents' ids */
    int await_column;            /* --call-args: some file has await_ns */
    uint64_t events;
    sp_mpi_flows_stream ends;    /* MPI message ends, until paired */
    sp_mpi_flows flows;
} chrome_pass;

/* The call's event as the in-memory run numbers it (its MPI flows). */
static uint64_t call_event(const chrome_pass *p, const sp_stream_call *call)
{
    const sp_row *row = sx_run_row(&p->run, call->region);
    return row ? sp_mpi_flows_stream_event(&p->ends, (size_t)(row - p->run.profile->rows),
                                           call->call_index)
               : 0;
}

static int chrome_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    chrome_pass *p = ctx;
    int64_t position = p->position++;
    *user = parent;
    if (!sp_stream_filter_keeps(&p->run.filter, call))
        return 0;
    if (!p->writing) {
        if (p->ends.on)
            sp_mpi_flows_stream_keep(&p->ends, call_event(p, call));
        return sx_lanes_note(p->lanes, call) < 0 ? -1 : 0;
    }
    chrome_call c = {
        .rank = p->rank, .region = call->region,
        .tid = p->run.src->any_thread ? tid_of(p->order, p->num_order, call->lane) : 0,
        .start = call->start, .end = call->end, .row = sx_run_row(&p->run, call->region),
        .call_index = call->call_index, .parent_id = -1, .mpi = call->mpi};
    if (call->mpi) {
        c.gpu_ns = call->gpu_ns;
        c.await_ns = call->await_ns;
        c.await_column = p->await_column;
    } else {
        c.gpu_ns = -1;
    }
    if (p->options && p->options->call_args) {
        sx_stack *stack = sx_stacks_enter(&p->stacks, call->lane, parent, NULL, NULL);
        c.call_id = sx_call_id(&p->run, call, position);
        if (stack && stack->depth)
            c.parent_id = stack->open[stack->depth - 1].call_id;
        sx_open o = {p->ordinal, c.call_id, call->region};
        if (!stack || sx_stack_push(stack, &o) < 0)
            return -1;
    }
    write_call(p->j, p->run.profile, p->options, &c, p->origin);
    if (p->flows.num_ends)
        flow_events(p->j, &p->flows, call_event(p, call), p->rank, c.tid, call->start,
                    call->end, p->origin);
    *user = p->ordinal++;
    p->events++;
    return ferror(p->j->out) ? -1 : 1;
}

static int chrome_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    (void)ctx;
    (void)call;
    (void)user;
    return 0;
}

int sp_export_chrome_stream(FILE *out, const sp_run_source *src, const sp_export_options *options,
                            char *why, size_t whylen)
{
    chrome_pass p = {.options = options};
    sp_json j;
    p.j = &j;
    int rc = sx_run_begin(&p.run, src, options, 0, why, whylen);
    int any_mpi = 0;
    for (size_t f = 0; f < src->num_paths; f++)
        any_mpi |= src->shapes[f].has_other;
    int call_args = options && options->call_args;
    int any_gpu = rc == 0 && sx_run_any_column(&p.run, SP_H5_COL_GPU);
    p.await_column = rc == 0 && sx_run_any_await(&p.run);
    if (rc == 0)
        rc = sp_mpi_flows_stream_open(&p.ends, src, p.run.ranks, p.run.num_ranks, why, whylen);
    sx_lanes *lanes = NULL;
    if (rc == 0 && !(lanes = calloc((size_t)p.run.num_ranks + 1, sizeof *lanes)))
        rc = -1;
    sp_call_visitor visitor = {chrome_enter, chrome_exit, &p};
    uint64_t kept = 0;
    for (long k = 0; k < p.run.num_ranks && rc == 0; k++) {
        p.lanes = &lanes[k];
        sx_run_rank(&p.run, p.run.ranks[k]);
        rc = sx_run_pass(&p.run, p.run.ranks[k], &visitor, why, whylen);
        for (size_t l = 0; l < lanes[k].n; l++)
            kept += lanes[k].v[l].calls;
    }
    if (rc == 0 && kept == 0) {
        snprintf(why, whylen, "no calls: the in-memory path words it");
        rc = 1;
    }
    if (rc == 0 && sp_mpi_flows_stream_pair(&p.ends, &p.flows) != 0)
        rc = -1;
    if (rc < 0) { /* nothing written yet: the in-memory path may still do */
        if (!why[0])
            snprintf(why, whylen, "out of memory");
        rc = 1;
    }
    if (rc == 0) {
        /* Time zero as sp_profile_origin_ns: metadata start_time_ns, else
         * the earliest event of the run (every rank has streamed by now). */
        if (sp_profile_meta_int(src->profile, "start_time_ns", &p.origin) != 0)
            p.origin = p.run.raw_first == INT64_MAX ? 0 : p.run.raw_first;
        /* from here on bytes are out: a failure is -1 */
        p.writing = 1;
        p.run.read_mpi = call_args && (any_mpi || any_gpu || p.await_column);
        begin_document(&j, out, src->profile, options, p.origin);
    }
    for (long k = 0; k < p.run.num_ranks && rc == 0; k++) {
        if (!lanes[k].n)
            continue;
        free(p.order);
        p.order = malloc(lanes[k].n * sizeof *p.order);
        if (!p.order) {
            rc = -1;
            break;
        }
        for (size_t l = 0; l < lanes[k].n; l++)
            p.order[l] = lanes[k].v[l].lane;
        p.num_order = lanes[k].n;
        qsort(p.order, p.num_order, sizeof *p.order, compare_order);
        p.rank = p.run.ranks[k];
        rank_meta(&j, src->profile, p.rank, p.order, p.num_order, src->any_thread);
        p.position = p.ordinal = 0;
        sx_stacks_close_all(&p.stacks, NULL, NULL);
        sx_run_rank(&p.run, p.rank);
        if (sx_run_pass(&p.run, p.rank, &visitor, why, whylen) != 0)
            rc = -1;
    }
    if (p.writing) {
        end_document(&j, out);
        if (rc == 0 && ferror(out))
            rc = -1;
        if (rc < 0)
            snprintf(why, whylen, "write failed, out of memory, or the files changed");
    }
    if (rc == 0)
        sp_export_warn_events(options, p.events, "chrome export");
    for (long k = 0; lanes && k < p.run.num_ranks; k++)
        sx_lanes_free(&lanes[k]);
    free(lanes);
    free(p.order);
    sx_stacks_free(&p.stacks);
    sp_mpi_flows_stream_close(&p.ends);
    sp_mpi_flows_free(&p.flows);
    sx_run_end(&p.run);
    return rc;
}
