/* export_perfetto.c - Perfetto's native protobuf trace (TrackEvent), for
 * ui.perfetto.dev and trace_processor.  Written from Perfetto's documented
 * trace protos (protos/perfetto/trace/: trace_packet, track_event,
 * track_descriptor, clock_snapshot, interned_data); field numbers below.
 *
 * Layout: a process track per rank ("rank R", pid R + 1) and a thread track
 * per lane under it.  Each lane is one packet sequence, so its packets can
 * lean on per-sequence state:
 *   - defaults: the lane's track and the sequence's clock, set once;
 *   - an incremental clock (id 64): each packet's timestamp is the delta to
 *     the previous one, and a lane's depth-first walk never goes back in
 *     time, so deltas are small varints;
 *   - interned names: a region's name is sent once per lane, later events
 *     carry its id.
 * A call is then two packets, SLICE_BEGIN(name id) and SLICE_END, about 22
 * bytes together.  Output streams rank by rank; memory is one rank's
 * reconstruction plus a bit per region. */
#include <stdlib.h>
#include <string.h>

#include "protobuf_writer.h"
#include "scopeprof/export.h"

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
    TYPE_SLICE_BEGIN = 1,
    TYPE_SLICE_END = 2,
    /* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
    TRACK_UUID = 1,
    TRACK_NAME = 2,
    TRACK_PROCESS = 3,
    TRACK_THREAD = 4,
    TRACK_PARENT_UUID = 5,
    PROCESS_PID = 1,
    PROCESS_NAME = 6,
    THREAD_PID = 1,
    THREAD_TID = 2,
    THREAD_NAME = 5,
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

/* Tags: (field << 3) | wire type, each one byte here. */
#define TAG(field, wire) ((uint8_t)(((field) << 3) | (wire)))

typedef struct writer {
    FILE *out;
    const sp_profile *profile;
    const sp_rank_data *data;
    uint8_t buf[1 << 16];
    size_t used;
    int failed;
    /* the lane being written */
    uint64_t sequence;
    int64_t origin, last_ts;
    uint8_t *name_sent;          /* per region: interned on this sequence */
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

static uint64_t process_uuid(uint32_t rank)
{
    return ((uint64_t)rank + 1) << 32;
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

/* The lane's thread track, then the first packet of its sequence: cleared
 * state, defaults (track, clock) and the clock snapshot that anchors the
 * incremental clock at `base` ns. */
static void start_lane(writer *w, uint32_t rank, size_t lane_index, int64_t lane,
                       uint64_t tid, int64_t base)
{
    uint64_t track = process_uuid(rank) + 1 + lane_index;
    char label[512];
    if (w->data->calls.lane)
        sp_lane_label(w->profile, rank, lane, label, sizeof label);
    else
        snprintf(label, sizeof label, "rank %u", rank);

    pb_reset(&w->inner);
    pb_uint(&w->inner, THREAD_PID, (uint64_t)rank + 1);
    pb_uint(&w->inner, THREAD_TID, tid);
    pb_string(&w->inner, THREAD_NAME, label);
    pb_reset(&w->innermost);
    pb_uint(&w->innermost, TRACK_UUID, track);
    pb_uint(&w->innermost, TRACK_PARENT_UUID, process_uuid(rank));
    pb_string(&w->innermost, TRACK_NAME, label);
    pb_message(&w->innermost, TRACK_THREAD, &w->inner);
    pb_reset(&w->scratch);
    pb_message(&w->scratch, PACKET_TRACK_DESCRIPTOR, &w->innermost);
    emit_packet(w, &w->scratch);

    pb_reset(&w->scratch);
    pb_uint(&w->scratch, PACKET_SEQUENCE_ID, w->sequence);
    pb_uint(&w->scratch, PACKET_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    pb_reset(&w->inner);
    pb_uint(&w->inner, EVENT_TRACK_UUID, track);
    pb_reset(&w->innermost);
    pb_uint(&w->innermost, DEFAULTS_CLOCK_ID, LANE_CLOCK);
    pb_message(&w->innermost, DEFAULTS_TRACK_EVENT, &w->inner);
    pb_message(&w->scratch, PACKET_DEFAULTS, &w->innermost);
    pb_reset(&w->inner);
    pb_reset(&w->innermost);
    pb_uint(&w->innermost, CLOCK_ID, LANE_CLOCK);
    pb_uint(&w->innermost, CLOCK_TIMESTAMP, (uint64_t)base);
    pb_uint(&w->innermost, CLOCK_INCREMENTAL, 1);
    pb_message(&w->inner, SNAPSHOT_CLOCKS, &w->innermost);
    pb_reset(&w->innermost);
    pb_uint(&w->innermost, CLOCK_ID, BUILTIN_BOOTTIME);
    pb_uint(&w->innermost, CLOCK_TIMESTAMP, (uint64_t)base);
    pb_message(&w->inner, SNAPSHOT_CLOCKS, &w->innermost);
    pb_message(&w->scratch, PACKET_CLOCK_SNAPSHOT, &w->inner);
    emit_packet(w, &w->scratch);
    w->last_ts = base;
}

/* A slice event at ns `t` (after the origin).  Begin events carry the name
 * id, and the first one of each region on this lane also interns its name. */
static void slice_event(writer *w, int64_t t, int begin, uint32_t region)
{
    if (t < w->last_ts)
        t = w->last_ts; /* never back in time: the clock is incremental */
    uint64_t delta = (uint64_t)(t - w->last_ts);
    w->last_ts = t;
    uint64_t iid = (uint64_t)region + 1;

    uint8_t event[16], *e = event;
    *e++ = TAG(EVENT_TYPE, PB_VARINT);
    *e++ = begin ? TYPE_SLICE_BEGIN : TYPE_SLICE_END;
    if (begin) {
        *e++ = TAG(EVENT_NAME_IID, PB_VARINT);
        e = pb_put_varint(e, iid);
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
    const sp_calls *c = &w->data->calls;
    slice_event(w, c->start[i] - w->origin, 1, c->region[i]);
    return w->failed;
}

static int close_call(void *ctx, size_t i)
{
    writer *w = ctx;
    const sp_calls *c = &w->data->calls;
    slice_event(w, c->end[i] - w->origin, 0, c->region[i]);
    return w->failed;
}

static int write_rank(writer *w, uint64_t *tid, char *err, size_t errlen)
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
        w->sequence++;
        memset(w->name_sent, 0, w->profile->num_names);
        int64_t first = c->start[walk.first_root[t]] - w->origin;
        start_lane(w, w->data->rank, t, walk.lanes[t], ++*tid, first > 0 ? first : 0);
        sp_lane_walk_visit(&walk, c, t, open_call, close_call, w);
    }
    sp_lane_walk_free(&walk);
    if (w->failed)
        snprintf(err, errlen, "write failed, or out of memory");
    return w->failed ? -1 : 0;
}

int sp_export_perfetto(FILE *out, const sp_profile *profile, const sp_export_options *options,
                       char *err, size_t errlen)
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
    w->out = out;
    w->profile = profile;
    w->origin = sp_profile_origin_ns(profile);
    /* A part of an export (src/dist) numbers its lanes after the parts before it. */
    uint64_t calls = 0, tid = options ? options->first_lane : 0;
    w->sequence = tid;
    int rc = 0;
    for (long k = 0; k < num_ranks && rc == 0; k++) {
        sp_rank_data data;
        if (sp_rank_data_load(profile, ranks[k], sel, &data, err, errlen) < 0) {
            rc = -1;
            break;
        }
        w->data = &data;
        if (data.calls.n)
            rc = write_rank(w, &tid, err, errlen);
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
    pb_free(&w->scratch);
    pb_free(&w->inner);
    pb_free(&w->innermost);
    free(w->name_sent);
    free(w);
    free(ranks);
    return rc;
}
