/* export_perfetto.c - Perfetto's native protobuf trace (TrackEvent), for
 * ui.perfetto.dev and trace_processor.  Written from Perfetto's documented
 * trace protos (protos/perfetto/trace/: trace_packet, track_event,
 * track_descriptor, clock_snapshot, interned_data); field numbers below.
 *
 * Layout: a process track per rank ("rank R", pid R + 1) and a child track
 * per lane under it (uuids from the rank and lane index alone).  All
 * packets are on ONE packet sequence, so every packet carries a one-byte
 * sequence id whatever the number of lanes, and leans on its state:
 *   - interned names: a region's name is sent once, later begin events
 *     carry its id;
 *   - defaults: the current lane's track and the sequence's clock;
 *   - an incremental clock (id 64): each packet's timestamp is the delta to
 *     the previous one; a lane's depth-first walk never goes back in time.
 * Lanes are written one after the other.  Each starts with a packet that
 * sets its track as the default; when the lane starts before the last
 * timestamp written, that packet also holds a clock snapshot re-anchoring
 * clock 64 (Perfetto: "the first packet timestamp after each ClockSnapshot
 * that contains this clock is relative to the timestamp in the
 * ClockSnapshot").  The trace processor refuses a snapshot that moves a
 * clock backwards, so clock 64 is a virtual time that only grows: each
 * anchor k owns the interval [V_k, V_k + the last timestamp written under
 * it], V_{k+1} lies past it, and every snapshot says "V_k on clock 64 is
 * 0 ns on BOOTTIME" (BOOTTIME stays at 0, never goes back); an event at t ns
 * after the origin is at V_k + t on clock 64, and the trace processor
 * converts it through the latest snapshot at or before it: its own.
 *
 * A call is then two packets, SLICE_BEGIN(name id) and SLICE_END, 20 bytes
 * plus its two timestamp deltas.  MPI messages (mpi_flows.h) are flows: the
 * send's SLICE_BEGIN carries flow_ids, the receive's SLICE_END
 * terminating_flow_ids (its end: the receive completes after the send
 * began, its start may not).
 *
 * Parts (several exports concatenated into one trace, e.g. one per MPI
 * process of a distributed export): track uuids are unique across parts
 * as long as each rank is in one part; what a part must own is its
 * sequence, `part` below: sequence id 1 + part.
 *
 * Output streams rank by rank through a 64 KiB buffer; memory is one
 * rank's reconstruction, a byte per region and the MPI pairs. */
#include <stdlib.h>
#include <string.h>

#include "lane_spill.h"
#include "mpi_flows.h"
#include "protobuf_writer.h"
#include "stream_calls.h"
#include "stream_filter.h"
#include "scopeprof/export.h"
#include "scopeprof/report.h" /* sp_rank_clock_offset */
#include "scopeprof/stream.h"

enum {
    TRACE_PACKET = 1,
    /* TracePacket */
    PACKET_CLOCK_SNAPSHOT = 6,
    PACKET_TIMESTAMP = 8,
    PACKET_SEQUENCE_ID = 10,     /* trusted_packet_sequence_id */
    PACKET_TRACK_EVENT = 11,
    PACKET_INTERNED_DATA = 12,
    PACKET_SEQUENCE_FLAGS = 13,
    PACKET_DEFAULTS = 59,        /* trace_packet_defaults */
    PACKET_TRACK_DESCRIPTOR = 60,
    SEQ_INCREMENTAL_STATE_CLEARED = 1,
    /* TracePacketDefaults */
    DEFAULTS_CLOCK_ID = 58,
    DEFAULTS_TRACK_EVENT = 11,
    /* TrackEventDefaults, TrackEvent */
    EVENT_TYPE = 9,
    EVENT_NAME_IID = 10,
    EVENT_TRACK_UUID = 11,
    EVENT_FLOW_IDS = 47,             /* repeated fixed64 */
    EVENT_TERMINATING_FLOW_IDS = 48, /* repeated fixed64 */
    TYPE_SLICE_BEGIN = 1,
    TYPE_SLICE_END = 2,
    /* TrackDescriptor, ProcessDescriptor */
    TRACK_UUID = 1,
    TRACK_NAME = 2,
    TRACK_PROCESS = 3,
    TRACK_PARENT_UUID = 5,
    PROCESS_PID = 1,
    PROCESS_NAME = 6,
    /* ClockSnapshot, Clock */
    SNAPSHOT_CLOCKS = 1,
    CLOCK_ID = 1,
    CLOCK_TIMESTAMP = 2,
    CLOCK_INCREMENTAL = 3,
    BUILTIN_BOOTTIME = 6,        /* the trace's default time domain */
    LANE_CLOCK = 64,             /* first sequence-scoped clock id */
    /* InternedData, EventName */
    INTERNED_EVENT_NAMES = 2,
    NAME_IID = 1,
    NAME_NAME = 2,
};

/* Tags: (field << 3) | wire type, one byte for fields below 16. */
#define TAG(field, wire) ((uint8_t)(((field) << 3) | (wire)))

typedef struct writer {
    FILE *out;
    const sp_profile *profile;
    const sp_rank_data *data;    /* in memory: the rank being written */
    const sp_mpi_flows *flows;   /* NULL: no MPI columns */
    int has_lanes;               /* lane labels; else "rank R" (no thread ids) */
    uint8_t buf[1 << 16];
    size_t used;
    int failed;
    uint64_t sequence;           /* 1 + part */
    int started;                 /* the sequence's state was cleared */
    /* the lane being written: its base V on the virtual clock 64, the last
     * timestamp written (ns after the origin) */
    uint64_t lane_base;
    int64_t origin, last_ts;
    uint8_t *name_sent;          /* per region: interned on the sequence */
    pb_buf scratch, inner, innermost;
} writer;

static void flush(writer *w)
{
    if (w->used && fwrite(w->buf, 1, w->used, w->out) != w->used)
        w->failed = 1;
    w->used = 0;
}

static uint8_t *room(writer *w, size_t n)
{
    if (w->used + n > sizeof w->buf)
        flush(w);
    return w->buf + w->used;
}

/* One TracePacket from an encoded body. */
static void emit_packet(writer *w, const pb_buf *body)
{
    if (body->failed) {
        w->failed = 1;
        return;
    }
    if (body->len + 11 > sizeof w->buf) {
        flush(w);
        uint8_t head[11], *p = head;
        *p++ = TAG(TRACE_PACKET, PB_BYTES);
        p = pb_put_varint(p, body->len);
        if (fwrite(head, 1, (size_t)(p - head), w->out) != (size_t)(p - head) ||
            fwrite(body->data, 1, body->len, w->out) != body->len)
            w->failed = 1;
        return;
    }
    uint8_t *p = room(w, body->len + 11), *start = p;
    *p++ = TAG(TRACE_PACKET, PB_BYTES);
    p = pb_put_varint(p, body->len);
    memcpy(p, body->data, body->len);
    w->used += (size_t)(p - start) + body->len;
}

/* Track uuids from the rank and lane index alone (so that parts never
 * collide), small so that their varints are: processes odd, lanes even,
 * numbered by Cantor's pairing of (rank, lane index). */
static uint64_t process_uuid(uint32_t rank)
{
    return 2 * (uint64_t)rank + 1;
}

static uint64_t lane_uuid(uint32_t rank, size_t lane_index)
{
    uint64_t sum = (uint64_t)rank + lane_index;
    return 2 * (sum * (sum + 1) / 2 + lane_index) + 2;
}

static void describe_process(writer *w, uint32_t rank)
{
    char name[64];
    snprintf(name, sizeof name, "rank %u", rank);
    pb_reset(&w->inner);
    pb_uint(&w->inner, PROCESS_PID, (uint64_t)rank + 1);
    pb_string(&w->inner, PROCESS_NAME, name);
    pb_reset(&w->scratch);
    pb_reset(&w->innermost);
    pb_uint(&w->innermost, TRACK_UUID, process_uuid(rank));
    pb_message(&w->innermost, TRACK_PROCESS, &w->inner);
    pb_message(&w->scratch, PACKET_TRACK_DESCRIPTOR, &w->innermost);
    emit_packet(w, &w->scratch);
}

/* The lane's track under its rank's process, then the packet that makes it
 * the sequence's default track (the first one also starts the sequence:
 * its state is new).  When the lane starts before the last timestamp
 * written, that packet also re-anchors clock 64 past the range used so far
 * (see the top comment); a lane that starts later just goes on. */
static void start_lane(writer *w, uint32_t rank, size_t lane_index, int64_t lane, int64_t first)
{
    uint64_t track = lane_uuid(rank, lane_index);
    char label[512];
    if (w->has_lanes)
        sp_lane_label(w->profile, rank, lane, label, sizeof label);
    else
        snprintf(label, sizeof label, "rank %u", rank);

    pb_reset(&w->innermost);
    pb_uint(&w->innermost, TRACK_UUID, track);
    pb_uint(&w->innermost, TRACK_PARENT_UUID, process_uuid(rank));
    pb_string(&w->innermost, TRACK_NAME, label);
    pb_reset(&w->scratch);
    pb_message(&w->scratch, PACKET_TRACK_DESCRIPTOR, &w->innermost);
    emit_packet(w, &w->scratch);

    pb_reset(&w->scratch);
    pb_uint(&w->scratch, PACKET_SEQUENCE_ID, w->sequence);
    if (!w->started)
        pb_uint(&w->scratch, PACKET_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    pb_reset(&w->inner);
    pb_uint(&w->inner, EVENT_TRACK_UUID, track);
    pb_reset(&w->innermost);
    pb_uint(&w->innermost, DEFAULTS_CLOCK_ID, LANE_CLOCK);
    pb_message(&w->innermost, DEFAULTS_TRACK_EVENT, &w->inner);
    pb_message(&w->scratch, PACKET_DEFAULTS, &w->innermost);
    if (!w->started || first < w->last_ts) {
        if (w->started) /* [lane_base, lane_base + last_ts] is used */
            w->lane_base += (uint64_t)w->last_ts + 1;
        w->last_ts = 0;
        pb_reset(&w->inner);
        pb_reset(&w->innermost);
        pb_uint(&w->innermost, CLOCK_ID, LANE_CLOCK);
        pb_uint(&w->innermost, CLOCK_TIMESTAMP, w->lane_base);
        pb_uint(&w->innermost, CLOCK_INCREMENTAL, 1);
        pb_message(&w->inner, SNAPSHOT_CLOCKS, &w->innermost);
        pb_reset(&w->innermost);
        pb_uint(&w->innermost, CLOCK_ID, BUILTIN_BOOTTIME);
        pb_uint(&w->innermost, CLOCK_TIMESTAMP, 0);
        pb_message(&w->inner, SNAPSHOT_CLOCKS, &w->innermost);
        pb_message(&w->scratch, PACKET_CLOCK_SNAPSHOT, &w->inner);
    }
    w->started = 1;
    emit_packet(w, &w->scratch);
}

static uint8_t *put_fixed64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        *p++ = (uint8_t)(v >> (8 * i));
    return p;
}

/* The flow id of event's end that a slice event carries (sends on the
 * call's begin, receives on its end; an event has at most one of each):
 * 0, none. */
static uint64_t flow_of(const sp_mpi_flow_end *f, size_t n, int begin)
{
    for (size_t k = 0; k < n; k++)
        if (f[k].send == begin)
            return f[k].id;
    return 0;
}

static uint64_t flow_at(const writer *w, uint64_t event, int begin)
{
    size_t n = 0;
    const sp_mpi_flow_end *f = w->flows ? sp_mpi_flows_at(w->flows, event, &n) : NULL;
    return flow_of(f, n, begin);
}

/* A slice event of a call of `region` at ns `t` (after the origin), with
 * its MPI flow id (0 none: flow_of).  Begin events carry the name id, and
 * the first one of each region also interns its name. */
static void slice_event(writer *w, int64_t t, int begin, uint32_t region, uint64_t flow)
{
    if (t < w->last_ts)
        t = w->last_ts; /* never back in time: the clock is incremental */
    uint64_t delta = (uint64_t)(t - w->last_ts);
    w->last_ts = t;
    uint64_t iid = (uint64_t)region + 1;

    /* type, name id, and at most one flow id (an MPI_Sendrecv: its send on
     * the begin, its receive on the end) */
    uint8_t event[4 + 10 + 2 * 10], *e = event;
    *e++ = TAG(EVENT_TYPE, PB_VARINT);
    *e++ = begin ? TYPE_SLICE_BEGIN : TYPE_SLICE_END;
    if (begin) {
        *e++ = TAG(EVENT_NAME_IID, PB_VARINT);
        e = pb_put_varint(e, iid);
    }
    if (flow) {
        e = pb_put_varint(e, ((uint64_t)(begin ? EVENT_FLOW_IDS : EVENT_TERMINATING_FLOW_IDS)
                              << 3) | PB_FIXED64);
        e = put_fixed64(e, flow);
    }
    size_t event_len = (size_t)(e - event);

    const char *name = NULL;
    size_t name_len = 0, names_len = 0, interned_len = 0;
    if (begin && !w->name_sent[region]) {
        w->name_sent[region] = 1;
        name = w->profile->names[region];
        name_len = strlen(name);
        /* EventName{iid, name} inside InternedData{event_names} */
        names_len = 1 + pb_varint_size(iid) + 1 + pb_varint_size(name_len) + name_len;
        interned_len = 1 + pb_varint_size(names_len) + names_len;
    }
    size_t body = 1 + pb_varint_size(delta) + 1 + pb_varint_size(w->sequence) + 1 +
                  pb_varint_size(event_len) + event_len;
    if (name)
        body += 1 + pb_varint_size(interned_len) + interned_len;
    if (body + 11 > sizeof w->buf) {
        w->failed = 1; /* a region name of nearly 64 KiB: not worth a slow path */
        return;
    }
    uint8_t *p = room(w, body + 11), *start = p;
    *p++ = TAG(TRACE_PACKET, PB_BYTES);
    p = pb_put_varint(p, body);
    *p++ = TAG(PACKET_TIMESTAMP, PB_VARINT);
    p = pb_put_varint(p, delta);
    *p++ = TAG(PACKET_SEQUENCE_ID, PB_VARINT);
    p = pb_put_varint(p, w->sequence);
    *p++ = TAG(PACKET_TRACK_EVENT, PB_BYTES);
    p = pb_put_varint(p, event_len);
    memcpy(p, event, event_len);
    p += event_len;
    if (name) {
        *p++ = TAG(PACKET_INTERNED_DATA, PB_BYTES);
        p = pb_put_varint(p, interned_len);
        *p++ = TAG(INTERNED_EVENT_NAMES, PB_BYTES);
        p = pb_put_varint(p, names_len);
        *p++ = TAG(NAME_IID, PB_VARINT);
        p = pb_put_varint(p, iid);
        *p++ = TAG(NAME_NAME, PB_BYTES);
        p = pb_put_varint(p, name_len);
        memcpy(p, name, name_len);
        p += name_len;
    }
    w->used += (size_t)(p - start);
}

static int open_call(void *ctx, size_t i)
{
    writer *w = ctx;
    slice_event(w, w->data->calls.start[i] - w->origin, 1, w->data->calls.region[i],
                w->flows ? flow_at(w, w->data->event[i], 1) : 0);
    return w->failed;
}

static int close_call(void *ctx, size_t i)
{
    writer *w = ctx;
    slice_event(w, w->data->calls.end[i] - w->origin, 0, w->data->calls.region[i],
                w->flows ? flow_at(w, w->data->event[i], 0) : 0);
    return w->failed;
}

static int write_rank(writer *w, char *err, size_t errlen)
{
    const sp_calls *c = &w->data->calls;
    sp_lane_walk walk;
    if (sp_lane_walk_build(c, &walk) < 0) {
        snprintf(err, errlen, "out of memory walking rank %u", w->data->rank);
        return -1;
    }
    describe_process(w, w->data->rank);
    for (size_t t = 0; t < walk.num_lanes && !w->failed; t++) {
        if (!walk.lane_calls[t])
            continue;
        start_lane(w, w->data->rank, t, walk.lanes[t], c->start[walk.first_root[t]] - w->origin);
        sp_lane_walk_visit(&walk, c, t, open_call, close_call, w);
    }
    sp_lane_walk_free(&walk);
    if (w->failed)
        snprintf(err, errlen, "write failed, or out of memory");
    return w->failed ? -1 : 0;
}

/* Time zero of the trace: the run's start, or the earliest call when a rank
 * started before it (ranks' clocks differ), as BOOTTIME cannot go below 0. */
static int64_t trace_origin(const sp_profile *profile)
{
    int64_t origin = sp_profile_origin_ns(profile);
    for (size_t i = 0; profile->start && i < profile->num_events; i++)
        if (profile->start[i] < origin)
            origin = profile->start[i];
    return origin;
}

/* The selected ranks as part `part` of a trace (see the top comment). */
static int export_part(FILE *out, const sp_profile *profile, const sp_export_options *options,
                       uint32_t part, char *err, size_t errlen)
{
    const sp_selection *sel = options ? options->selection : NULL;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    writer *w = calloc(1, sizeof *w);
    if (num_ranks < 0 || !w || !(w->name_sent = calloc(profile->num_names + 1, 1))) {
        free(ranks);
        if (w)
            free(w->name_sent);
        free(w);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    sp_mpi_flows flows = {0};
    if (profile->extra[SP_EXTRA_MPI_COMM]) {
        if (sp_mpi_flows_build_selected(profile, sel, ranks, num_ranks, &flows, err, errlen)) {
            free(w->name_sent);
            free(w);
            free(ranks);
            return -1;
        }
        w->flows = &flows;
    }
    w->out = out;
    w->profile = profile;
    w->origin = trace_origin(profile);
    w->sequence = 1 + (uint64_t)part;
    uint64_t calls = 0;
    int rc = 0;
    for (long k = 0; k < num_ranks && rc == 0; k++) {
        sp_rank_data data;
        if (sp_rank_data_load(profile, ranks[k], sel, &data, err, errlen) < 0) {
            rc = -1;
            break;
        }
        w->data = &data;
        w->has_lanes = data.calls.lane != NULL;
        if (data.calls.n)
            rc = write_rank(w, err, errlen);
        calls += data.calls.n;
        sp_rank_data_free(&data);
    }
    flush(w);
    if (rc == 0 && w->failed) {
        snprintf(err, errlen, "write failed");
        rc = -1;
    }
    if (rc == 0 && calls == 0) {
        snprintf(err, errlen, "%s: no calls recorded for the selected ranks and filters",
                 profile->path ? profile->path : "profile");
        rc = -1;
    }
    sp_mpi_flows_free(&flows);
    pb_free(&w->scratch);
    pb_free(&w->inner);
    pb_free(&w->innermost);
    free(w->name_sent);
    free(w);
    free(ranks);
    return rc;
}

int sp_export_perfetto(FILE *out, const sp_profile *profile, const sp_export_options *options,
                       char *err, size_t errlen)
{
    return export_part(out, profile, options, 0, err, errlen);
}

/* ---- The same trace from a run source (docs/stream.md, "Exports") ----
 *
 * The trace is written lane by lane, and a rank's call stream interleaves
 * its lanes: each lane is one pass over the rank (sp_stream_rank), whose
 * visitor writes the calls of that lane and drops the others (dropping
 * another lane's calls changes nothing on this one).  With thread ids, a
 * first pass learns the lanes of the kept calls (their sorted order gives
 * the lane indexes of the in-memory walk).  Memory: the stream's windows and
 * the open calls; time: (lanes + 1) passes over a rank with lanes.
 *
 * MPI messages: every selected rank's message ends are read first
 * (mpi_flows_stream.c); the first pass, which then always runs, marks the
 * kept ones, and they are paired before the first byte, as in memory.
 * The writing pass looks each kept call's ends up at its enter, in the
 * stream's order (past the budget the ends are read forward in windows of
 * a file in that order, mpi_flows.h): the send's id goes on its
 * SLICE_BEGIN, the receive's waits beside the open calls for its
 * SLICE_END; set-aside lanes keep the ids, not the events. */

typedef struct stream_pass {
    writer *w;
    sp_stream_filter filter;
    int collecting;              /* the first pass: lanes only */
    int64_t *lanes;              /* sorted distinct lanes of the kept calls */
    size_t num_lanes, lanes_cap;
    int64_t target;              /* the lane being written */
    uint32_t rank;
    size_t lane_index;
    int lane_started, rank_described;
    uint64_t calls;
    uint64_t kept;               /* the first pass: kept calls of the rank */
    sx_stacks stacks;            /* the lane's kept calls still open */
    int64_t ordinal;
    sp_mpi_flows_stream ends;    /* MPI message ends, until paired */
    int64_t *row_of_region;      /* the rank's skeleton rows (flows only) */
    /* the receive flow ids (0 none) of the lane's open kept calls, beside
     * `stacks`, for their SLICE_END: looked up at the enter, in the stream's
     * order (mpi_flows.h; a lane pass keeps calls of one lane only, so they
     * close last in, first out) */
    uint64_t *open_flow;
    size_t open_depth, open_cap;
    /* One writing pass for every lane of a rank (lane_spill.h): the first
     * lane is written as it streams, the others' slice events set aside
     * and written after it, lane by lane; NULL: one pass per lane. */
    sx_lane_spill *spill;
    const int64_t *rank_lanes;   /* the rank's lanes, ascending (lane index) */
    size_t rank_num_lanes;
    size_t closing;              /* lane index of the calls being closed */
    struct lane_state *ls;       /* per lane index */
} stream_pass;

typedef struct lane_state {
    int started;
    int64_t first;               /* its first kept call's start (ns after the origin) */
    uint64_t *open_flow;         /* as stream_pass.open_flow, for this lane */
    size_t open_depth, open_cap;
} lane_state;

static size_t lane_index_of(const stream_pass *p, int64_t lane)
{
    size_t lo = 0, hi = p->rank_num_lanes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->rank_lanes[mid] < lane)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A slice event of lane index li with its flow id: written (the pass's own
 * lane), or set aside (the others, one writing pass for the rank; the
 * spill's MPI event slot keeps the flow id). */
static void lane_event(stream_pass *p, size_t li, int64_t t, int begin, uint32_t region,
                       uint64_t flow)
{
    if (!p->spill || li == 0)
        slice_event(p->w, t, begin, region, flow);
    else
        sx_lane_spill_put(p->spill, li, t, begin, region, flow);
}

static int push_flow(stream_pass *p, size_t li, uint64_t flow)
{
    uint64_t **v = p->spill ? &p->ls[li].open_flow : &p->open_flow;
    size_t *depth = p->spill ? &p->ls[li].open_depth : &p->open_depth;
    size_t *cap = p->spill ? &p->ls[li].open_cap : &p->open_cap;
    if (*depth == *cap) {
        size_t grown_cap = *cap ? 2 * *cap : 64;
        uint64_t *grown = realloc(*v, grown_cap * sizeof *grown);
        if (!grown)
            return -1;
        *v = grown;
        *cap = grown_cap;
    }
    (*v)[(*depth)++] = flow;
    return 0;
}

static uint64_t pop_flow(stream_pass *p, size_t li)
{
    if (p->spill)
        return p->ls[li].open_depth ? p->ls[li].open_flow[--p->ls[li].open_depth] : 0;
    return p->open_depth ? p->open_flow[--p->open_depth] : 0;
}

/* The call's event as the in-memory run numbers it (its MPI flows). */
static uint64_t call_event(const stream_pass *p, const sp_stream_call *call)
{
    int64_t row = p->row_of_region[call->region];
    return row >= 0 ? sp_mpi_flows_stream_event(&p->ends, (size_t)row, call->call_index) : 0;
}

static int note_lane(stream_pass *p, int64_t lane)
{
    size_t lo = 0, hi = p->num_lanes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->lanes[mid] < lane)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < p->num_lanes && p->lanes[lo] == lane)
        return 0;
    if (p->num_lanes == p->lanes_cap) {
        size_t cap = p->lanes_cap ? 2 * p->lanes_cap : 8;
        int64_t *grown = realloc(p->lanes, cap * sizeof *grown);
        if (!grown)
            return -1;
        p->lanes = grown;
        p->lanes_cap = cap;
    }
    memmove(p->lanes + lo + 1, p->lanes + lo, (p->num_lanes - lo) * sizeof *p->lanes);
    p->lanes[lo] = lane;
    p->num_lanes++;
    return 0;
}

static int close_slice(void *ctx, const sx_open *o)
{
    stream_pass *p = ctx;
    uint64_t flow = p->w->flows ? pop_flow(p, p->closing) : 0;
    lane_event(p, p->closing, o->call_id - p->w->origin, 0, o->region, flow);
    return p->w->failed ? -1 : 0;
}

static int pass_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    stream_pass *p = ctx;
    *user = parent;
    if (!sp_stream_filter_keeps(&p->filter, call))
        return 0;
    if (p->collecting) {
        p->kept++;
        if (p->ends.on)
            sp_mpi_flows_stream_keep(&p->ends, call_event(p, call));
        return note_lane(p, call->lane) < 0 ? -1 : 0;
    }
    size_t li = 0;
    if (p->spill) {
        li = lane_index_of(p, call->lane);
        if (li == p->rank_num_lanes || p->rank_lanes[li] != call->lane)
            return 0; /* no lane of the first pass (as a pass per lane would drop it) */
    } else if (call->lane != p->target) {
        return 0;
    }
    writer *w = p->w;
    if (li > 0) {
        if (!p->ls[li].started) {
            p->ls[li].started = 1;
            p->ls[li].first = call->start - w->origin;
        }
    } else {
        if (!p->rank_described) {
            describe_process(w, p->rank);
            p->rank_described = 1;
        }
        if (!p->lane_started) {
            start_lane(w, p->rank, p->lane_index, p->target, call->start - w->origin);
            p->lane_started = 1;
        }
    }
    /* the calls above the kept parent end before this one begins */
    p->closing = li;
    sx_stack *stack = sx_stacks_enter(&p->stacks, call->lane, parent, close_slice, p);
    uint64_t send = 0;
    if (w->flows) {
        size_t n = 0;
        const sp_mpi_flow_end *f =
            sp_mpi_flows_at_call(w->flows, p->rank, call->start, call_event(p, call), &n);
        send = flow_of(f, n, 1);
        if (push_flow(p, li, flow_of(f, n, 0)) != 0)
            return -1;
    }
    sx_open o = {p->ordinal, call->end, call->region}; /* call_id slot: the end */
    if (!stack || sx_stack_push(stack, &o) < 0)
        return -1;
    p->calls++;
    lane_event(p, li, call->start - w->origin, 1, call->region, send);
    *user = p->ordinal++;
    return w->failed ? -1 : 1;
}

/* Ends are written from the stack of open kept calls, not at the stream's
 * exits: a rank replayed from memory (rank_stream.c) gives its exits after
 * every enter. */
static int pass_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    (void)ctx;
    (void)call;
    (void)user;
    return 0;
}

/* Close what is still open on every lane at the end of the rank (one
 * writing pass: each lane's ends go where its events go). */
static int close_every_lane(stream_pass *p)
{
    for (size_t l = 0; l < p->stacks.n; l++) {
        sx_stack *st = &p->stacks.v[l];
        if (st->depth)
            p->closing = lane_index_of(p, st->lane);
        while (st->depth) {
            st->depth--;
            if (close_slice(p, &st->open[st->depth]) != 0)
                return -1;
        }
    }
    return 0;
}

static int replay_event(void *ctx, int64_t t, int begin, uint32_t region, uint64_t flow)
{
    writer *w = ctx;
    slice_event(w, t, begin, region, flow);
    return w->failed;
}

static int stream_pass_run(stream_pass *p, const sp_run_source *src, uint32_t rank,
                           const sp_call_visitor *visitor, char *why, size_t whylen);

/* After the rank's one writing pass, its other lanes in order, each from
 * the spill, or streamed once more on its own when the spill lost it (a
 * full disk).  0, 1 (why), -1. */
static int write_spilled_lanes(stream_pass *p, const sp_run_source *src,
                               const sp_call_visitor *visitor, char *why, size_t whylen)
{
    for (size_t li = 1; li < p->rank_num_lanes; li++) {
        if (sx_lane_spill_lost(p->spill, li)) {
            sx_lane_spill *spill = p->spill;
            p->spill = NULL;
            p->target = p->rank_lanes[li];
            p->lane_index = li;
            p->lane_started = 0;
            p->ordinal = 0;
            p->open_depth = 0;
            int rc = stream_pass_run(p, src, p->rank, visitor, why, whylen);
            if (rc == 0 && sx_stacks_close_all(&p->stacks, close_slice, p) != 0)
                rc = -1;
            p->spill = spill;
            if (rc != 0)
                return rc;
            continue;
        }
        if (!p->ls[li].started)
            continue;
        start_lane(p->w, p->rank, li, p->rank_lanes[li], p->ls[li].first);
        if (sx_lane_spill_replay(p->spill, li, replay_event, p->w) != 0)
            return -1;
    }
    return p->w->failed ? -1 : 0;
}

/* One pass over `rank`.  0, 1 (fall back: why), -1 (write failed). */
static int stream_pass_run(stream_pass *p, const sp_run_source *src, uint32_t rank,
                           const sp_call_visitor *visitor, char *why, size_t whylen)
{
    sp_rank_stream_info info;
    int rc = sp_stream_rank(src, rank, sp_rank_clock_offset(src->profile, rank), visitor,
                            &info, why, whylen);
    sp_rank_stream_info_free(&info);
    if (rc < 0 && !p->w->failed)
        snprintf(why, whylen, "out of memory");
    return rc;
}

/* Time zero, as trace_origin: the run's start, or the earliest call when a
 * rank started before it.  The earliest call comes from the rows'
 * statistics (which the stream checks against the events) when every file
 * has them; else from `first` (the earliest raw start, learnt by passes). */
static int64_t stream_origin(const sp_run_source *src, int with_stats, int64_t first)
{
    int64_t meta;
    for (size_t r = 0; with_stats && r < src->profile->num_rows; r++) {
        const sp_row *row = &src->profile->rows[r];
        if (row->count && row->stats.start_minimum < first)
            first = row->stats.start_minimum;
    }
    if (sp_profile_meta_int(src->profile, "start_time_ns", &meta) == 0)
        return meta < first ? meta : first;
    return first == INT64_MAX ? 0 : first;
}

static int every_file_has_stats(const sp_run_source *src)
{
    for (size_t f = 0; f < src->num_paths; f++)
        if (!src->shapes[f].has_stats)
            return 0;
    return 1;
}

/* Without row statistics: the earliest raw start of the selected ranks,
 * one pass over each (the other ranks' came with their checks).  0, 1. */
static int first_start_by_passes(const sp_run_source *src, const uint32_t *ranks,
                                 long num_ranks, int64_t *first, char *why, size_t whylen)
{
    sp_call_visitor none = sp_call_visitor_checks_only;
    for (long k = 0; k < num_ranks; k++) {
        if (sp_stream_rank_file(src, ranks[k]) < 0)
            continue;
        int64_t offset = sp_rank_clock_offset(src->profile, ranks[k]);
        sp_rank_stream_info info;
        int rc = sp_stream_rank(src, ranks[k], offset, &none, &info, why, whylen);
        if (rc == 0 && info.first_start != INT64_MAX && info.first_start + offset < *first)
            *first = info.first_start + offset;
        sp_rank_stream_info_free(&info);
        if (rc != 0)
            return 1;
    }
    return 0;
}

int sp_export_perfetto_stream(FILE *out, const struct sp_run_source *src,
                              const sp_export_options *options, char *why, size_t whylen)
{
    const sp_profile *profile = src->profile;
    const sp_selection *sel = options ? options->selection : NULL;
    const char *reason = sp_run_source_unstreamable_calls(src);
    if (reason) {
        snprintf(why, whylen, "%s", reason);
        return 1;
    }
    stream_pass p = {0};
    sp_mpi_flows flows = {0};
    int rc = sp_stream_filter_init(&p.filter, src, sel, why, whylen);
    if (rc != 0)
        return rc;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    writer *w = p.w = calloc(1, sizeof *w);
    if (num_ranks < 0 || !w || !(w->name_sent = calloc(profile->num_names + 1, 1)))
        rc = -1;
    int with_stats = every_file_has_stats(src);
    int64_t first = INT64_MAX;
    if (rc == 0 && sp_stream_check_run(src, ranks, num_ranks, &first, why, whylen))
        rc = 1;
    if (rc == 0 && !with_stats)
        rc = first_start_by_passes(src, ranks, num_ranks, &first, why, whylen);
    if (rc == 0)
        rc = sp_mpi_flows_stream_open(&p.ends, src, ranks, num_ranks, why, whylen);
    if (rc == 0 && p.ends.on &&
        !(p.row_of_region = malloc((profile->num_names + 1) * sizeof *p.row_of_region)))
        rc = -1;
    if (rc == 0) {
        w->out = out;
        w->profile = profile;
        w->has_lanes = src->any_thread;
        w->sequence = 1;
        w->origin = stream_origin(src, with_stats, first);
    }
    sp_call_visitor visitor = {pass_enter, pass_exit, &p};
    /* First every rank's lanes (a pass over it when it has thread ids, or
     * always on standard output, which cannot be truncated and written
     * again after a late problem), so that a problem is found before the
     * first byte; then the lanes, one pass each. */
    int64_t **rank_lanes = rc == 0 ? calloc((size_t)num_ranks + 1, sizeof *rank_lanes) : NULL;
    size_t *rank_num_lanes = rc == 0 ? calloc((size_t)num_ranks + 1, sizeof *rank_num_lanes)
                                     : NULL;
    if (rc == 0 && (!rank_lanes || !rank_num_lanes))
        rc = -1;
    /* (flows: the kept ends are known before the first byte) */
    int check_first = w && (w->has_lanes || out == stdout || p.ends.on);
    uint64_t kept = 0;
    for (long k = 0; k < num_ranks && rc == 0; k++) {
        uint32_t rank = ranks[k];
        if (sp_stream_rank_file(src, rank) < 0)
            continue; /* no rows: no calls */
        p.rank = rank;
        sp_stream_filter_rank(&p.filter, rank);
        if (p.row_of_region)
            sp_stream_rows_of_rank(profile, rank, p.row_of_region);
        p.num_lanes = 0;
        if (check_first) {
            p.collecting = 1;
            p.kept = 0;
            rc = stream_pass_run(&p, src, rank, &visitor, why, whylen);
            p.collecting = 0;
            kept += p.kept;
            if (!w->has_lanes && p.num_lanes) /* one lane: the calls are on -1 */
                p.num_lanes = 1;
        } else if (note_lane(&p, -1) < 0) {
            rc = -1;
        }
        if (rc == 0 && p.num_lanes) {
            rank_lanes[k] = malloc(p.num_lanes * sizeof **rank_lanes);
            if (!rank_lanes[k])
                rc = -1;
            else
                memcpy(rank_lanes[k], p.lanes, p.num_lanes * sizeof **rank_lanes);
            rank_num_lanes[k] = p.num_lanes;
        }
    }
    if (rc == 0 && check_first && kept == 0) {
        snprintf(why, whylen, "no calls: the in-memory path words it");
        rc = 1;
    }
    if (rc == 0 && p.ends.on) {
        /* 1: why says (nothing written yet, the in-memory path may do) */
        rc = sp_mpi_flows_stream_pair(&p.ends, &flows);
        if (rc == 0)
            w->flows = &flows;
    }
    for (long k = 0; k < num_ranks && rc == 0; k++) {
        uint32_t rank = ranks[k];
        p.rank = rank;
        sp_stream_filter_rank(&p.filter, rank);
        if (p.row_of_region)
            sp_stream_rows_of_rank(profile, rank, p.row_of_region);
        p.rank_described = 0;
        /* several lanes: one pass for all of them when a spill can be made */
        if (rank_num_lanes[k] > 1 && (p.spill = sx_lane_spill_open(rank_num_lanes[k])) &&
            !(p.ls = calloc(rank_num_lanes[k], sizeof *p.ls))) {
            sx_lane_spill_close(p.spill);
            p.spill = NULL;
        }
        if (p.spill) {
            p.rank_lanes = rank_lanes[k];
            p.rank_num_lanes = rank_num_lanes[k];
            p.target = rank_lanes[k][0];
            p.lane_index = 0;
            p.lane_started = 0;
            p.ordinal = 0;
            p.open_depth = 0;
            rc = stream_pass_run(&p, src, rank, &visitor, why, whylen);
            if (rc == 0 && close_every_lane(&p) != 0)
                rc = -1;
            if (rc == 0)
                rc = write_spilled_lanes(&p, src, &visitor, why, whylen);
            if (rc > 0 && check_first)
                rc = -1; /* checked before: bytes are out */
            for (size_t li = 0; li < rank_num_lanes[k]; li++)
                free(p.ls[li].open_flow);
            free(p.ls);
            p.ls = NULL;
            sx_lane_spill_close(p.spill);
            p.spill = NULL;
            continue;
        }
        for (size_t t = 0; t < rank_num_lanes[k] && rc == 0; t++) {
            p.target = rank_lanes[k][t];
            p.lane_index = t;
            p.lane_started = 0;
            p.ordinal = 0;
            p.open_depth = 0;
            rc = stream_pass_run(&p, src, rank, &visitor, why, whylen);
            if (rc == 0 && sx_stacks_close_all(&p.stacks, close_slice, &p) != 0)
                rc = -1;
            if (rc > 0 && check_first)
                rc = -1; /* checked before: bytes are out */
        }
    }
    for (long k = 0; rank_lanes && k < num_ranks; k++)
        free(rank_lanes[k]);
    free(rank_lanes);
    free(rank_num_lanes);
    if (w)
        flush(w);
    if (rc == 0 && w->failed)
        rc = -1;
    if (rc < 0)
        snprintf(why, whylen, "write failed, or out of memory");
    if (rc == 0 && p.calls == 0) {
        snprintf(why, whylen, "no calls: the in-memory path words it");
        rc = 1;
    }
    if (w) {
        pb_free(&w->scratch);
        pb_free(&w->inner);
        pb_free(&w->innermost);
        free(w->name_sent);
    }
    free(w);
    sp_stream_filter_free(&p.filter);
    sx_stacks_free(&p.stacks);
    sp_mpi_flows_stream_close(&p.ends);
    sp_mpi_flows_free(&flows);
    free(p.row_of_region);
    free(p.open_flow);
    free(p.lanes);
    free(ranks);
    return rc;
}
