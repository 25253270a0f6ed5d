/* export_chrome.c - Chrome Trace Event format (spec §7.3), for Perfetto and
 * chrome://tracing: pid = rank, one tid per lane, complete ("X") events in
 * microseconds after the run origin; MPI point-to-point messages as flow
 * events ("s" at the send, "f" at the receive, mpi_flows.h). */
#include <stdlib.h>

#include "mpi_flows.h"

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
    const sp_mpi_flow_end *f = flows ? sp_mpi_flows_at(flows, e, &n) : NULL;
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
    char label[512];
    snprintf(label, sizeof label, "rank %u", data->rank);
    meta_event(j, "process_name", data->rank, 0, label, 0);
    meta_event(j, "process_sort_index", data->rank, 0, NULL, data->rank);
    for (size_t t = 0; t < walk.num_lanes; t++) {
        if (c->lane)
            sp_lane_label(profile, data->rank, walk.lanes[t], label, sizeof label);
        meta_event(j, "thread_name", data->rank, (int64_t)t, label, 0);
        meta_event(j, "thread_sort_index", data->rank, (int64_t)t, NULL, (int64_t)t);
    }
    for (size_t i = 0; i < c->n; i++) {
        uint64_t e = data->event[i];
        const sp_row *row = sp_rank_data_row(profile, data, i);
        sp_json_newline(j);
        sp_json_begin_object(j);
        sp_json_key(j, "name");
        sp_json_string(j, profile->names[c->region[i]]);
        sp_json_key(j, "cat");
        sp_json_string(j, "scopeprof");
        sp_json_key(j, "ph");
        sp_json_string(j, "X");
        sp_json_key(j, "ts");
        sp_json_fixed(j, c->start[i] - origin, 3);
        sp_json_key(j, "dur");
        sp_json_fixed(j, c->end[i] - c->start[i], 3);
        sp_json_key(j, "pid");
        sp_json_uint(j, data->rank);
        size_t tid = c->lane ? tid_of(walk.lanes, walk.num_lanes, c->lane[i]) : 0;
        sp_json_key(j, "tid");
        sp_json_uint(j, tid);
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
            sp_json_uint(j, data->rank);
            sp_json_key(j, "call_index");
            sp_json_uint(j, c->call_index[i]);
            sp_json_key(j, "call_id");
            sp_json_int(j, data->call_id[i]);
            sp_json_key(j, "parent_id");
            sp_json_int(j, data->parent_id[i]);
            sp_json_key(j, "duration_ns");
            sp_json_int(j, c->end[i] - c->start[i]);
            if (profile->gpu && profile->gpu[e] >= 0) {
                sp_json_key(j, "gpu_duration_ns");
                sp_json_int(j, profile->gpu[e]);
            }
            if (profile->await_ns) {
                sp_json_key(j, "await_ns");
                sp_json_int(j, profile->await_ns[e]);
            }
        }
        if (call_args)
            mpi_args(j, profile, e);
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
        flow_events(j, flows, e, data->rank, tid, c->start[i], c->end[i], origin);
    }
    *events += c->n;
    sp_lane_walk_free(&walk);
    return 0;
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
    sp_json_init(&j, out);
    sp_json_begin_object(&j);
    sp_json_key(&j, "displayTimeUnit");
    sp_json_string(&j, "ms");
    sp_json_key(&j, "metadata");
    sp_json_begin_object(&j);
    sp_json_key(&j, "name");
    sp_json_string(&j, sp_export_label(profile, options));
    sp_json_key(&j, "exporter");
    sp_json_string(&j, "scopeprof@" SCOPEPROF_VERSION);
    sp_json_key(&j, "origin_ns");
    sp_json_int(&j, origin);
    sp_json_end_object(&j);
    sp_json_key(&j, "traceEvents");
    sp_json_begin_array(&j);
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
    sp_json_end_array(&j);
    sp_json_end_object(&j);
    fputc('\n', out);
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
