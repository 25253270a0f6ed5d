/* export_otf2.c - an OTF2 archive for Vampir, Scalasca and the Score-P
 * tools: DIR/traces.otf2 (anchor), DIR/traces.def (global definitions) and
 * DIR/traces/<location>.evt, one event file per rank and lane.
 *
 * Each rank is a process location group, each of its lanes (thread, task,
 * or the calls outside any thread) a CPU-thread location; every call is an
 * ENTER and a LEAVE on its lane's timeline, in nanoseconds on the aligned
 * time axis of the other exports (sp_rank_data_load applies the rank clock
 * offsets).  Regions carry the source file and line of their call site.
 * Recorded MPI calls add OTF2's MPI records (docs/otf2.md "MPI events"):
 * MpiSend / MpiRecv inside point-to-point calls, MpiCollectiveBegin/End
 * inside blocking collectives, with the communicators they name.
 *
 * Built only with Debian's libotf2 (libotf2-trace-dev): the command links
 * it, the shim never does.  Without it sp_export_otf2 says how to get it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi_flows.h"
#include "scopeprof/export.h"
#include "scopeprof/report.h" /* sp_rank_clock_offset */
#include "scopeprof/stream.h"
#include "scopeprof_config.h"
#include "stream_filter.h"

#ifndef SP_HAVE_OTF2

const int sp_export_have_otf2 = 0;

int sp_export_otf2(const char *dir, const sp_profile *profile, const sp_export_options *options,
                   char *err, size_t errlen)
{
    (void)dir;
    (void)profile;
    (void)options;
    snprintf(err, errlen, "this scopeprof was built without OTF2: install the OTF2 library "
                          "(Debian: apt-get install libotf2-trace-dev) and rebuild "
                          "(meson setup --reconfigure build && ninja -C build)");
    return -1;
}

int sp_export_otf2_stream(const char *dir, const struct sp_run_source *src,
                          const sp_export_options *options, char *why, size_t whylen)
{
    (void)dir;
    (void)src;
    (void)options;
    snprintf(why, whylen, "built without OTF2");
    return 1;
}

#else

#include <otf2/otf2.h>

const int sp_export_have_otf2 = 1;

/* No BufferFlush records: a flush is not part of the program's timeline. */
static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef location,
                                void *caller, bool final)
{
    (void)user;
    (void)type;
    (void)location;
    (void)caller;
    (void)final;
    return OTF2_FLUSH;
}

static OTF2_FlushCallbacks flush_callbacks = {.otf2_pre_flush = pre_flush,
                                              .otf2_post_flush = NULL};

/* A writer's buffer holds at most this many chunks (1 MiB for events, 4 MiB
 * for definitions): when it would need another, the allocation fails and
 * OTF2 flushes the buffer to its file and frees its chunks.  Without it OTF2
 * keeps every chunk until the writer closes: the whole trace in memory. */
#define OTF2_BUFFER_CHUNKS 4

typedef struct chunk_list {
    void *chunk[OTF2_BUFFER_CHUNKS];
    size_t n;
} chunk_list;

static void *chunk_allocate(void *user, OTF2_FileType type, OTF2_LocationRef location,
                            void **per_buffer, uint64_t size)
{
    (void)user;
    (void)type;
    (void)location;
    chunk_list *l = *per_buffer;
    if (!l && !(l = *per_buffer = calloc(1, sizeof *l)))
        return NULL;
    if (l->n == OTF2_BUFFER_CHUNKS)
        return NULL;
    void *chunk = malloc(size);
    if (chunk)
        l->chunk[l->n++] = chunk;
    return chunk;
}

static void chunk_free_all(void *user, OTF2_FileType type, OTF2_LocationRef location,
                           void **per_buffer, bool final)
{
    (void)user;
    (void)type;
    (void)location;
    chunk_list *l = *per_buffer;
    if (!l)
        return;
    for (size_t k = 0; k < l->n; k++)
        free(l->chunk[k]);
    l->n = 0;
    if (final) {
        free(l);
        *per_buffer = NULL;
    }
}

static OTF2_MemoryCallbacks memory_callbacks = {.otf2_allocate = chunk_allocate,
                                                .otf2_free_all = chunk_free_all};

/* String definitions: 0 = "", region names 1..num_names, then file names,
 * rank and lane labels in the order they are first needed. */
typedef struct strings {
    char **text;
    size_t n, cap;
} strings;

static int64_t string_add(strings *s, const char *text)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        char **grown = realloc(s->text, cap * sizeof *grown);
        if (!grown)
            return -1;
        s->text = grown;
        s->cap = cap;
    }
    s->text[s->n] = strdup(text);
    if (!s->text[s->n])
        return -1;
    return (int64_t)s->n++;
}

/* Source files are few: a linear search over those already defined. */
static int64_t file_string(strings *s, size_t first_file, const char *file)
{
    for (size_t k = first_file; k < s->n; k++)
        if (!strcmp(s->text[k], file))
            return (int64_t)k;
    return string_add(s, file);
}

static void strings_free(strings *s)
{
    for (size_t k = 0; k < s->n; k++)
        free(s->text[k]);
    free(s->text);
}


/* ---- MPI events ------------------------------------------------------ */

/* Blocking collectives by their C binding; the non-blocking MPI_I... forms
 * complete in a later call and stay plain ENTER/LEAVE. */
static const struct {
    const char *name;
    OTF2_CollectiveOp op;
    int rooted;
} collectives[] = {
    {"MPI_Barrier", OTF2_COLLECTIVE_OP_BARRIER, 0},
    {"MPI_Bcast", OTF2_COLLECTIVE_OP_BCAST, 1},
    {"MPI_Gather", OTF2_COLLECTIVE_OP_GATHER, 1},
    {"MPI_Gatherv", OTF2_COLLECTIVE_OP_GATHERV, 1},
    {"MPI_Scatter", OTF2_COLLECTIVE_OP_SCATTER, 1},
    {"MPI_Scatterv", OTF2_COLLECTIVE_OP_SCATTERV, 1},
    {"MPI_Allgather", OTF2_COLLECTIVE_OP_ALLGATHER, 0},
    {"MPI_Allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV, 0},
    {"MPI_Alltoall", OTF2_COLLECTIVE_OP_ALLTOALL, 0},
    {"MPI_Alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV, 0},
    {"MPI_Alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW, 0},
    {"MPI_Allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE, 0},
    {"MPI_Reduce", OTF2_COLLECTIVE_OP_REDUCE, 1},
    {"MPI_Reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER, 0},
    {"MPI_Reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK, 0},
    {"MPI_Scan", OTF2_COLLECTIVE_OP_SCAN, 0},
    {"MPI_Exscan", OTF2_COLLECTIVE_OP_EXSCAN, 0},
};
#define NUM_COLLECTIVES (sizeof collectives / sizeof collectives[0])

/* Communicator 0 is MPI_COMM_WORLD, whose ranks are the exported ranks
 * with calls, in rank order (its "rank" k is the k-th of them).  The files
 * name point-to-point peers as world ranks, so messages are put on
 * MPI_COMM_WORLD whatever communicator they used (OTF2 matches them by
 * sender, receiver, communicator and tag, which stays unambiguous).  A
 * sub-communicator is known only by the hash of its members, so its
 * members are taken to be the ranks that called a collective on it, in
 * world rank order (MPI_Comm_split with the world rank as key). */
typedef struct mpi_events {
    int on;                       /* the profile has the MPI columns */
    const sp_profile *p;
    int *collective_of;           /* per region name: index into collectives, -1 */
    uint32_t *member_rank;        /* world index -> rank */
    size_t num_members;
    int64_t *index_of_rank;       /* rank -> world index, -1 */
    uint64_t *location_of;        /* world index -> location of its MPI events */
    int64_t *comm_id;             /* per communicator ref (0: world) */
    size_t num_comms;
    unsigned char *is_member;     /* num_comms x num_members */
    sp_mpi_flows flows;           /* a receive's end: its send's sent bytes */
    uint64_t sends, recvs, collective_calls;
} mpi_events;

static int64_t extra(const mpi_events *m, int column, uint64_t e)
{
    return m->p->extra[column] ? m->p->extra[column][e] : -1;
}

/* The MPI columns of event e (in memory), as the stream hands them over. */
static void values_at(const mpi_events *m, uint64_t e, int64_t v[SP_EXTRA_N])
{
    for (int c = 0; c < SP_EXTRA_N; c++)
        v[c] = extra(m, c, e);
}

static int64_t comm_ref(const mpi_events *m, int64_t id)
{
    for (size_t k = 0; k < m->num_comms; k++)
        if (m->comm_id[k] == id)
            return (int64_t)k;
    return -1;
}

/* Rank of world index `member` within communicator ref c, -1 if none. */
static int64_t rank_in_comm(const mpi_events *m, size_t c, int64_t member)
{
    if (member < 0)
        return -1;
    int64_t k = 0;
    for (size_t j = 0; j < m->num_members; j++) {
        if (!m->is_member[c * m->num_members + j])
            continue;
        if ((int64_t)j == member)
            return k;
        k++;
    }
    return -1;
}

static int64_t world_index(const mpi_events *m, int64_t rank)
{
    return rank >= 0 && rank < (int64_t)m->p->num_ranks ? m->index_of_rank[rank] : -1;
}

static void mpi_events_free(mpi_events *m)
{
    free(m->collective_of);
    free(m->member_rank);
    free(m->index_of_rank);
    free(m->location_of);
    free(m->comm_id);
    free(m->is_member);
    sp_mpi_flows_free(&m->flows);
    *m = (mpi_events){0};
}

/* The pass before writing: which ranks and events are exported, the
 * communicators they use, and which send each receive completes. */
static int mpi_events_build(mpi_events *m, const sp_profile *p, const sp_selection *sel,
                            const uint32_t *ranks, long num_ranks, char *err, size_t errlen)
{
    *m = (mpi_events){.p = p};
    m->on = p->extra[SP_EXTRA_MPI_COMM] != NULL;
    if (!m->on)
        return 0;
    size_t nr = p->num_ranks ? p->num_ranks : 1;
    unsigned char *kept = calloc(p->num_events ? p->num_events : 1, 1);
    m->collective_of = malloc((p->num_names ? p->num_names : 1) * sizeof *m->collective_of);
    m->member_rank = malloc((num_ranks > 0 ? (size_t)num_ranks : 1) * sizeof *m->member_rank);
    m->index_of_rank = malloc(nr * sizeof *m->index_of_rank);
    m->location_of = malloc((num_ranks > 0 ? (size_t)num_ranks : 1) * sizeof *m->location_of);
    m->comm_id = malloc(sizeof *m->comm_id);
    int rc = 0;
    if (!kept || !m->collective_of || !m->member_rank || !m->index_of_rank || !m->location_of ||
        !m->comm_id)
        goto oom;
    for (size_t r = 0; r < p->num_names; r++) {
        m->collective_of[r] = -1;
        for (size_t k = 0; k < NUM_COLLECTIVES; k++)
            if (!strcmp(p->names[r], collectives[k].name))
                m->collective_of[r] = (int)k;
    }
    for (size_t r = 0; r < nr; r++)
        m->index_of_rank[r] = -1;
    for (long k = 0; k < num_ranks; k++) {
        sp_rank_data data;
        if (sp_rank_data_load(p, ranks[k], sel, &data, err, errlen) < 0) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < data.calls.n; i++)
            kept[data.event[i]] = 1;
        if (data.calls.n && ranks[k] < nr) {
            m->index_of_rank[ranks[k]] = (int64_t)m->num_members;
            m->location_of[m->num_members] = UINT64_MAX;
            m->member_rank[m->num_members++] = ranks[k];
        }
        sp_rank_data_free(&data);
    }
    if (rc < 0)
        goto out;
    /* Communicators: world first, then the others in order of first use. */
    m->comm_id[0] = 0;
    m->num_comms = 1;
    const int64_t *comm = p->extra[SP_EXTRA_MPI_COMM];
    for (size_t e = 0; e < p->num_events; e++) {
        if (!kept[e] || comm[e] <= 0 || comm_ref(m, comm[e]) >= 0)
            continue;
        int64_t *grown = realloc(m->comm_id, (m->num_comms + 1) * sizeof *grown);
        if (!grown)
            goto oom;
        m->comm_id = grown;
        m->comm_id[m->num_comms++] = comm[e];
    }
    m->is_member = calloc(m->num_comms * (m->num_members ? m->num_members : 1), 1);
    if (!m->is_member)
        goto oom;
    for (size_t j = 0; j < m->num_members; j++)
        m->is_member[j] = 1;
    for (size_t r = 0; r < p->num_rows; r++) {
        const sp_row *row = &p->rows[r];
        int64_t member = world_index(m, row->rank);
        if (member < 0 || row->region >= p->num_names || m->collective_of[row->region] < 0)
            continue;
        for (uint64_t k = 0; k < row->count; k++) {
            uint64_t e = row->offset + k;
            int64_t c = kept[e] && comm[e] > 0 ? comm_ref(m, comm[e]) : -1;
            if (c > 0)
                m->is_member[(size_t)c * m->num_members + (size_t)member] = 1;
        }
    }
    if (sp_mpi_flows_build(p, kept, &m->flows) != 0)
        goto oom;
    goto out;
oom:
    snprintf(err, errlen, "out of memory");
    rc = -1;
out:
    free(kept);
    if (rc < 0)
        mpi_events_free(m);
    return rc;
}

static uint64_t bytes(int64_t v)
{
    return v > 0 ? (uint64_t)v : 0;
}

/* MPI columns v complete a receive: the calls that look their flow ends
 * up (the others have no receive end). */
static int may_receive(const int64_t *v)
{
    return v[SP_EXTRA_MPI_COMM] >= 0 && v[SP_EXTRA_MPI_SOURCE] >= 0 &&
           v[SP_EXTRA_MPI_RECV_TAG] >= 0;
}

/* The length of the message a call with MPI columns v receives, its flow
 * ends f (n of them): the paired send's sent bytes, else the posted
 * buffer's. */
static uint64_t recv_length(const int64_t *v, const sp_mpi_flow_end *f, size_t n)
{
    uint64_t length = bytes(v[SP_EXTRA_MPI_RECV_BYTES]);
    for (size_t j = 0; j < n; j++)
        if (!f[j].send)
            length = bytes(f[j].bytes);
    return length;
}

/* At the start of a call (its MPI columns v): the message it sends, the
 * collective it begins. */
static OTF2_ErrorCode mpi_enter(mpi_events *m, OTF2_EvtWriter *w, uint64_t t, uint32_t region,
                                const int64_t *v, uint64_t *written)
{
    if (!m->on || v[SP_EXTRA_MPI_COMM] < 0)
        return OTF2_SUCCESS;
    if (m->collective_of[region] >= 0) {
        m->collective_calls++;
        (*written)++;
        return OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t);
    }
    int64_t peer = v[SP_EXTRA_MPI_PEER], tag = v[SP_EXTRA_MPI_TAG];
    int64_t receiver = world_index(m, peer);
    if (receiver < 0 || tag < 0 || tag > UINT32_MAX)
        return OTF2_SUCCESS; /* no message, or to a rank not exported */
    m->sends++;
    (*written)++;
    return OTF2_EvtWriter_MpiSend(w, NULL, t, (uint32_t)receiver, 0, (uint32_t)tag,
                                  bytes(v[SP_EXTRA_MPI_SENT_BYTES]));
}

/* At the end of a call (its MPI columns v, the length recv_length gave):
 * the message it receives, the collective it ends. */
static OTF2_ErrorCode mpi_leave(mpi_events *m, OTF2_EvtWriter *w, uint64_t t, uint32_t region,
                                const int64_t *v, uint64_t length, uint64_t *written)
{
    if (!m->on || v[SP_EXTRA_MPI_COMM] < 0)
        return OTF2_SUCCESS;
    int k = m->collective_of[region];
    if (k >= 0) {
        int64_t c = comm_ref(m, v[SP_EXTRA_MPI_COMM]);
        int64_t root = collectives[k].rooted && c >= 0
                           ? rank_in_comm(m, (size_t)c, world_index(m, v[SP_EXTRA_MPI_PEER]))
                           : -1;
        (*written)++;
        return OTF2_EvtWriter_MpiCollectiveEnd(
            w, NULL, t, collectives[k].op, c >= 0 ? (OTF2_CommRef)c : OTF2_UNDEFINED_COMM,
            root >= 0 ? (uint32_t)root : OTF2_UNDEFINED_UINT32,
            bytes(v[SP_EXTRA_MPI_SENT_BYTES]), bytes(v[SP_EXTRA_MPI_RECV_BYTES]));
    }
    int64_t sender = world_index(m, v[SP_EXTRA_MPI_SOURCE]);
    int64_t tag = v[SP_EXTRA_MPI_RECV_TAG];
    if (sender < 0 || tag < 0 || tag > UINT32_MAX)
        return OTF2_SUCCESS;
    m->recvs++;
    (*written)++;
    return OTF2_EvtWriter_MpiRecv(w, NULL, t, (uint32_t)sender, 0, (uint32_t)tag, length);
}

/* Groups and communicators: group 0 the location of each world rank's MPI
 * events (OTF2's COMM_LOCATIONS), group 1 + c the members of communicator
 * c as indices into it. */
static OTF2_ErrorCode mpi_definitions(OTF2_GlobalDefWriter *g, const mpi_events *m,
                                      uint64_t first_string)
{
    if (!m->on || m->num_members == 0)
        return OTF2_SUCCESS;
    uint64_t *members = malloc(m->num_members * sizeof *members);
    if (!members)
        return OTF2_ERROR_MEM_ALLOC_FAILED;
    for (size_t j = 0; j < m->num_members; j++)
        members[j] = m->location_of[j];
    OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteGroup(
        g, 0, (OTF2_StringRef)first_string, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
        OTF2_GROUP_FLAG_NONE, (uint32_t)m->num_members, members);
    for (size_t c = 0; e == OTF2_SUCCESS && c < m->num_comms; c++) {
        uint32_t n = 0;
        for (size_t j = 0; j < m->num_members; j++)
            if (m->is_member[c * m->num_members + j])
                members[n++] = j;
        e = OTF2_GlobalDefWriter_WriteGroup(g, (OTF2_GroupRef)(1 + c),
                                            (OTF2_StringRef)(first_string + 1 + c),
                                            OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE, n, members);
        if (e == OTF2_SUCCESS)
            e = OTF2_GlobalDefWriter_WriteComm(g, (OTF2_CommRef)c,
                                               (OTF2_StringRef)(first_string + 1 + c),
                                               (OTF2_GroupRef)(1 + c),
                                               c ? 0 : OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    }
    free(members);
    return e;
}

/* Their names, among the strings. */
static int mpi_strings(strings *s, const mpi_events *m, uint64_t *first)
{
    *first = s->n;
    if (!m->on || m->num_members == 0)
        return 0;
    if (string_add(s, "MPI ranks") < 0 || string_add(s, "MPI_COMM_WORLD") < 0)
        return -1;
    for (size_t c = 1; c < m->num_comms; c++) {
        char name[64];
        snprintf(name, sizeof name, "MPI communicator %016llx",
                 (unsigned long long)m->comm_id[c]);
        if (string_add(s, name) < 0)
            return -1;
    }
    return 0;
}

typedef struct location {
    uint32_t rank;
    uint64_t name; /* string id */
    uint64_t events;
} location;

typedef struct writer {
    OTF2_Archive *archive;
    OTF2_EvtWriter *events;
    const sp_calls *calls;
    uint64_t shift;      /* added to aligned ns: OTF2 time stamps are unsigned */
    uint64_t last;       /* this lane's latest time stamp (kept monotonic) */
    uint64_t first_ts, last_ts; /* of the whole archive */
    uint64_t written;
    OTF2_ErrorCode status;
    const sp_rank_data *data;
    mpi_events *mpi;
    uint64_t location;   /* of the lane being written */
    int mpi_seen;        /* this rank has written an MPI event */
} writer;

static uint64_t stamp(writer *w, int64_t ns)
{
    uint64_t t = (uint64_t)(ns + (int64_t)w->shift);
    /* A lane's stamps never go back (a clipped or equal-time child). */
    if (t < w->last)
        t = w->last;
    w->last = t;
    if (t < w->first_ts)
        w->first_ts = t;
    if (t > w->last_ts)
        w->last_ts = t;
    return t;
}

/* A rank's MPI events are on the lane of its first one (COMM_LOCATIONS
 * has one location per rank); without any, on its first lane. */
static void mark_mpi_location(writer *w, uint64_t before)
{
    int64_t j = w->mpi->on ? world_index(w->mpi, w->data->rank) : -1;
    if (j < 0)
        return;
    if (w->mpi->location_of[j] == UINT64_MAX || (w->written > before && !w->mpi_seen))
        w->mpi->location_of[j] = w->location;
    if (w->written > before)
        w->mpi_seen = 1;
}

static int enter_call(void *ctx, size_t i)
{
    writer *w = ctx;
    uint64_t t = stamp(w, w->calls->start[i]);
    w->status = OTF2_EvtWriter_Enter(w->events, NULL, t, w->calls->region[i]);
    w->written++;
    uint64_t before = w->written;
    int64_t v[SP_EXTRA_N];
    if (w->mpi->on)
        values_at(w->mpi, w->data->event[i], v);
    if (w->status == OTF2_SUCCESS && w->mpi->on)
        w->status = mpi_enter(w->mpi, w->events, t, w->calls->region[i], v, &w->written);
    mark_mpi_location(w, before);
    return w->status != OTF2_SUCCESS;
}

static int leave_call(void *ctx, size_t i)
{
    writer *w = ctx;
    uint64_t t = stamp(w, w->calls->end[i]);
    uint64_t before = w->written;
    int64_t v[SP_EXTRA_N];
    w->status = OTF2_SUCCESS;
    if (w->mpi->on) {
        values_at(w->mpi, w->data->event[i], v);
        size_t n = 0;
        const sp_mpi_flow_end *f =
            may_receive(v) ? sp_mpi_flows_at(&w->mpi->flows, w->data->event[i], &n) : NULL;
        w->status = mpi_leave(w->mpi, w->events, t, w->calls->region[i], v,
                              recv_length(v, f, n), &w->written);
    }
    mark_mpi_location(w, before);
    if (w->status == OTF2_SUCCESS)
        w->status = OTF2_EvtWriter_Leave(w->events, NULL, t, w->calls->region[i]);
    w->written++;
    return w->status != OTF2_SUCCESS;
}

/* Threads in index order, then calls outside any thread, then tasks (as in
 * the Chrome export). */
static int64_t lane_order(int64_t lane)
{
    if (lane < -1)
        return -2 - lane;
    if (lane == -1)
        return (int64_t)1 << 40;
    return ((int64_t)1 << 41) + lane;
}

static const sp_lane_walk *sort_walk;

static int compare_lane_index(const void *a, const void *b)
{
    int64_t x = lane_order(sort_walk->lanes[*(const size_t *)a]);
    int64_t y = lane_order(sort_walk->lanes[*(const size_t *)b]);
    return (x > y) - (x < y);
}

/* The library prints every error (and the ones it causes) on stderr; keep
 * only the first one, for our own one-line message. */
static char first_library_error[512];

static OTF2_ErrorCode keep_first_error(void *user, const char *file, uint64_t line,
                                       const char *function, OTF2_ErrorCode code,
                                       const char *format, va_list va)
{
    (void)user;
    (void)file;
    (void)line;
    (void)function;
    if (!first_library_error[0]) {
        char text[384] = "";
        if (format)
            vsnprintf(text, sizeof text, format, va);
        snprintf(first_library_error, sizeof first_library_error, "%s%s%s",
                 OTF2_Error_GetDescription(code), text[0] ? ": " : "", text);
    }
    return code;
}

static int fail_otf2(char *err, size_t errlen, const char *what, OTF2_ErrorCode code)
{
    snprintf(err, errlen, "OTF2: %s: %s", what,
             first_library_error[0] ? first_library_error : OTF2_Error_GetDescription(code));
    return -1;
}

static int write_rank(writer *w, const sp_profile *profile, const sp_rank_data *data,
                      strings *s, location **locs, size_t *num_locs, size_t *cap_locs,
                      char *err, size_t errlen)
{
    const sp_calls *c = &data->calls;
    sp_lane_walk walk;
    if (sp_lane_walk_build(c, &walk) < 0) {
        snprintf(err, errlen, "out of memory walking rank %u", data->rank);
        return -1;
    }
    size_t *order = malloc((walk.num_lanes ? walk.num_lanes : 1) * sizeof *order);
    int rc = order ? 0 : -1;
    if (!order)
        snprintf(err, errlen, "out of memory");
    for (size_t t = 0; order && t < walk.num_lanes; t++)
        order[t] = t;
    sort_walk = &walk;
    if (order)
        qsort(order, walk.num_lanes, sizeof *order, compare_lane_index);
    w->calls = c;
    w->data = data;
    w->mpi_seen = 0;
    for (size_t k = 0; rc == 0 && k < walk.num_lanes; k++) {
        size_t t = order[k];
        if (walk.lane_calls[t] == 0)
            continue;
        /* Without lane columns the rank is one lane, named as in the
         * Chrome export. */
        char label[512];
        snprintf(label, sizeof label, "rank %u", data->rank);
        if (c->lane)
            sp_lane_label(profile, data->rank, walk.lanes[t], label, sizeof label);
        if (*num_locs == *cap_locs) {
            size_t cap = *cap_locs ? 2 * *cap_locs : 64;
            location *grown = realloc(*locs, cap * sizeof *grown);
            if (!grown) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
                break;
            }
            *locs = grown;
            *cap_locs = cap;
        }
        int64_t name = string_add(s, label);
        if (name < 0) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            break;
        }
        uint64_t id = *num_locs;
        w->events = OTF2_Archive_GetEvtWriter(w->archive, id);
        if (!w->events) {
            snprintf(err, errlen, "OTF2: cannot open the event file of rank %u, %s",
                     data->rank, label);
            rc = -1;
            break;
        }
        w->last = 0;
        w->written = 0;
        w->location = id;
        w->status = OTF2_SUCCESS;
        sp_lane_walk_visit(&walk, c, t, enter_call, leave_call, w);
        OTF2_ErrorCode closed = OTF2_Archive_CloseEvtWriter(w->archive, w->events);
        if (w->status != OTF2_SUCCESS || closed != OTF2_SUCCESS) {
            rc = fail_otf2(err, errlen, "writing events",
                           w->status != OTF2_SUCCESS ? w->status : closed);
            break;
        }
        (*locs)[(*num_locs)++] = (location){data->rank, (uint64_t)name, w->written};
    }
    free(order);
    sp_lane_walk_free(&walk);
    return rc;
}

/* Regions: one per region name, with the first call site any row knows.
 * Names starting with MPI_ are MPI's (Vampir colours them so). */
static int write_definitions(OTF2_GlobalDefWriter *g, const sp_profile *profile,
                             const sp_export_options *options, strings *s,
                             const location *locs, size_t num_locs, const writer *w,
                             char *err, size_t errlen)
{
    size_t first_file = s->n;
    int64_t *file_of = malloc((profile->num_names ? profile->num_names : 1) * sizeof *file_of);
    int64_t *line_of = malloc((profile->num_names ? profile->num_names : 1) * sizeof *line_of);
    int64_t description = string_add(s, "scopeprof region");
    int64_t machine_name = string_add(s, sp_export_label(profile, options));
    int64_t machine_class = string_add(s, "machine");
    int rc = 0;
    if (!file_of || !line_of || description < 0 || machine_name < 0 || machine_class < 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
        goto out;
    }
    for (size_t r = 0; r < profile->num_names; r++) {
        file_of[r] = 0;
        line_of[r] = -1;
    }
    for (size_t k = 0; k < profile->num_rows; k++) {
        const sp_row *row = &profile->rows[k];
        if (row->region >= profile->num_names || file_of[row->region] != 0 ||
            !row->source_file[0])
            continue;
        file_of[row->region] = file_string(s, first_file, row->source_file);
        line_of[row->region] = row->source_line;
        if (file_of[row->region] < 0) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            goto out;
        }
    }
    /* Rank labels, after every other string. */
    uint64_t first_rank_string = s->n;
    uint32_t last_rank = UINT32_MAX;
    for (size_t k = 0; k < num_locs; k++) {
        if (locs[k].rank == last_rank)
            continue;
        char label[64];
        snprintf(label, sizeof label, "rank %u", locs[k].rank);
        if (string_add(s, label) < 0) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            goto out;
        }
        last_rank = locs[k].rank;
    }
    uint64_t first_mpi_string;
    if (mpi_strings(s, w->mpi, &first_mpi_string) < 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
        goto out;
    }

    OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteClockProperties(
        g, 1000000000u, w->first_ts, w->last_ts - w->first_ts + 1, OTF2_UNDEFINED_TIMESTAMP);
    for (size_t k = 0; e == OTF2_SUCCESS && k < s->n; k++)
        e = OTF2_GlobalDefWriter_WriteString(g, (OTF2_StringRef)k, s->text[k]);
    for (size_t r = 0; e == OTF2_SUCCESS && r < profile->num_names; r++) {
        int mpi = !strncmp(profile->names[r], "MPI_", 4);
        uint32_t line = line_of[r] > 0 && line_of[r] <= UINT32_MAX ? (uint32_t)line_of[r] : 0;
        e = OTF2_GlobalDefWriter_WriteRegion(
            g, (OTF2_RegionRef)r, (OTF2_StringRef)(1 + r), (OTF2_StringRef)(1 + r),
            (OTF2_StringRef)description, OTF2_REGION_ROLE_FUNCTION,
            mpi ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
            (OTF2_StringRef)file_of[r], line, line);
    }
    if (e == OTF2_SUCCESS)
        e = OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, (OTF2_StringRef)machine_name,
                                                     (OTF2_StringRef)machine_class,
                                                     OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    uint64_t rank_string = first_rank_string;
    last_rank = UINT32_MAX;
    for (size_t k = 0; e == OTF2_SUCCESS && k < num_locs; k++) {
        if (locs[k].rank != last_rank) {
            e = OTF2_GlobalDefWriter_WriteLocationGroup(
                g, locs[k].rank, (OTF2_StringRef)rank_string++,
                OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
            last_rank = locs[k].rank;
        }
        if (e == OTF2_SUCCESS)
            e = OTF2_GlobalDefWriter_WriteLocation(g, k, (OTF2_StringRef)locs[k].name,
                                                   OTF2_LOCATION_TYPE_CPU_THREAD,
                                                   locs[k].events, locs[k].rank);
    }
    if (e == OTF2_SUCCESS)
        e = mpi_definitions(g, w->mpi, first_mpi_string);
    if (e != OTF2_SUCCESS)
        rc = fail_otf2(err, errlen, "writing definitions", e);
out:
    free(file_of);
    free(line_of);
    return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* A failed export leaves no partial archive behind (DIR itself only when
 * this export created it). */
static void remove_archive(const char *dir, int created_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/traces", dir);
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    snprintf(path, sizeof path, "%s/traces.otf2", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/traces.def", dir);
    unlink(path);
    if (created_dir)
        rmdir(dir);
}

/* OTF2 creates DIR itself but never replaces an archive. */
static int check_target(const char *dir, char *err, size_t errlen)
{
    char anchor[4096];
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s exists and is not a directory: give -o a directory name",
                 dir);
        return -1;
    }
    snprintf(anchor, sizeof anchor, "%s/traces.otf2", dir);
    if (stat(anchor, &st) == 0) {
        snprintf(err, errlen, "%s already holds an OTF2 archive: remove it or choose another -o",
                 dir);
        return -1;
    }
    /* The archive's other names: never written over, so that a failed
     * export removes only what it wrote. */
    static const char *const parts[] = {"traces", "traces.def"};
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, parts[k]);
        if (lstat(path, &st) == 0) {
            snprintf(err, errlen, "%s already exists: remove it or choose another -o", path);
            return -1;
        }
    }
    return 0;
}

/* What an export holds from its first step to its last. */
typedef struct archive_export {
    const char *dir;
    int created_dir;
    OTF2_ErrorCallback previous;
    strings s;
    writer w;
    mpi_events mpi;
    location *locs;
    size_t num_locs, cap_locs;
} archive_export;

/* The target checked, the strings of the region names, DIR and the archive
 * created with its event files open.  0, or -1 (err; nothing left behind). */
static int export_begin(archive_export *x, const char *dir, const sp_profile *profile,
                        const sp_export_options *options, char *err, size_t errlen)
{
    *x = (archive_export){.dir = dir};
    if (check_target(dir, err, errlen) < 0)
        return -1;
    int rc = string_add(&x->s, "") < 0 ? -1 : 0;
    for (size_t r = 0; rc == 0 && r < profile->num_names; r++)
        if (string_add(&x->s, profile->names[r]) < 0)
            rc = -1;
    if (rc < 0) {
        snprintf(err, errlen, "out of memory");
        strings_free(&x->s);
        return -1;
    }

    /* Created here, so that a bad path is our one clear line. */
    struct stat st;
    x->created_dir = stat(dir, &st) != 0;
    if (x->created_dir && mkdir(dir, 0777) != 0) {
        snprintf(err, errlen, "%s: cannot create the archive directory: %s", dir,
                 strerror(errno));
        strings_free(&x->s);
        return -1;
    }
    first_library_error[0] = '\0';
    x->previous = OTF2_Error_RegisterCallback(keep_first_error, NULL);
    OTF2_Archive *archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE,
                                              1024 * 1024, 4 * 1024 * 1024,
                                              OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive) {
        fail_otf2(err, errlen, "cannot create the archive", OTF2_ERROR_EIO);
        remove_archive(dir, x->created_dir);
        OTF2_Error_RegisterCallback(x->previous, NULL);
        strings_free(&x->s);
        return -1;
    }
    OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, NULL);
    OTF2_Archive_SetMemoryCallbacks(archive, &memory_callbacks, NULL);
    OTF2_Archive_SetSerialCollectiveCallbacks(archive);
    OTF2_Archive_SetCreator(archive, "scopeprof " SCOPEPROF_VERSION);
    OTF2_Archive_SetDescription(archive, sp_export_label(profile, options));
    x->w = (writer){.archive = archive, .first_ts = UINT64_MAX, .last_ts = 0, .mpi = &x->mpi};
    OTF2_ErrorCode e = OTF2_Archive_OpenEvtFiles(archive);
    if (e != OTF2_SUCCESS)
        return fail_otf2(err, errlen, "opening the event files", e);
    return 0;
}

/* rc: of the steps before.  The definitions written and the archive closed
 * (or, on failure, removed); everything freed.  0 or -1 (err). */
static int export_end(archive_export *x, const sp_profile *profile,
                      const sp_export_options *options, int rc, char *err, size_t errlen)
{
    OTF2_Archive *archive = x->w.archive;
    OTF2_ErrorCode e;
    if (rc == 0 && x->num_locs == 0) {
        snprintf(err, errlen, "%s: no calls recorded for the selected ranks and filters",
                 profile->path ? profile->path : "profile");
        rc = -1;
    }
    if (rc == 0 && (e = OTF2_Archive_CloseEvtFiles(archive)) != OTF2_SUCCESS)
        rc = fail_otf2(err, errlen, "closing the event files", e);

    /* Local definitions are empty (ids are global); the reader expects one
     * file per location all the same. */
    if (rc == 0 && (e = OTF2_Archive_OpenDefFiles(archive)) != OTF2_SUCCESS)
        rc = fail_otf2(err, errlen, "opening the definition files", e);
    for (size_t k = 0; rc == 0 && k < x->num_locs; k++) {
        OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(archive, k);
        if (!d || (e = OTF2_Archive_CloseDefWriter(archive, d)) != OTF2_SUCCESS)
            rc = fail_otf2(err, errlen, "writing local definitions", d ? e : OTF2_ERROR_EIO);
    }
    if (rc == 0 && (e = OTF2_Archive_CloseDefFiles(archive)) != OTF2_SUCCESS)
        rc = fail_otf2(err, errlen, "closing the definition files", e);
    if (rc == 0) {
        OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(archive);
        if (!g)
            rc = fail_otf2(err, errlen, "opening the global definitions", OTF2_ERROR_EIO);
        else
            rc = write_definitions(g, profile, options, &x->s, x->locs, x->num_locs, &x->w,
                                   err, errlen);
    }
    e = OTF2_Archive_Close(archive);
    if (rc == 0 && e != OTF2_SUCCESS)
        rc = fail_otf2(err, errlen, "closing the archive", e);
    OTF2_Error_RegisterCallback(x->previous, NULL);
    if (rc < 0)
        remove_archive(x->dir, x->created_dir);
    if (rc == 0) {
        uint64_t events = 0;
        for (size_t k = 0; k < x->num_locs; k++)
            events += x->locs[k].events;
        events -= x->mpi.sends + x->mpi.recvs + 2 * x->mpi.collective_calls;
        sp_export_warn_events(options, events / 2, "otf2");
    }
    mpi_events_free(&x->mpi);
    free(x->locs);
    strings_free(&x->s);
    return rc;
}

int sp_export_otf2(const char *dir, const sp_profile *profile, const sp_export_options *options,
                   char *err, size_t errlen)
{
    const sp_selection *sel = options ? options->selection : NULL;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    if (num_ranks < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    archive_export x;
    int rc = export_begin(&x, dir, profile, options, err, errlen);
    if (rc < 0 && !x.w.archive) {
        free(ranks);
        return -1;
    }
    /* Aligned clocks may precede 0 on some rank: shift them all. */
    int64_t origin = sp_selection_first_start(profile, sel);
    x.w.shift = origin < 0 ? (uint64_t)-origin : 0;
    if (rc == 0 && mpi_events_build(&x.mpi, profile, sel, ranks, num_ranks, err, errlen) < 0)
        rc = -1;
    for (long k = 0; rc == 0 && k < num_ranks; k++) {
        sp_rank_data data;
        if (sp_rank_data_load(profile, ranks[k], sel, &data, err, errlen) < 0) {
            rc = -1;
            break;
        }
        if (data.calls.n)
            rc = write_rank(&x.w, profile, &data, &x.s, &x.locs, &x.num_locs, &x.cap_locs, err,
                            errlen);
        sp_rank_data_free(&data);
    }
    rc = export_end(&x, profile, options, rc, err, errlen);
    free(ranks);
    return rc;
}

/* ---- The same archive from a run source (docs/stream.md, "Exports") ----
 *
 * A rank's call stream interleaves its lanes, and OTF2 keeps one event
 * writer per location: every lane of the rank being streamed has its own
 * writer open.  A writer's location id must be known when its buffer is
 * first flushed, and the ids follow the sorted lanes that have kept calls:
 * with thread ids, a first pass over the rank learns its lanes (without,
 * a rank is one lane).  The definitions are written after the events, as
 * in memory.  Memory: OTF2_BUFFER_CHUNKS chunks per lane of the rank, the
 * stream's windows, the open calls; time: two passes over a rank with
 * lanes. */

typedef struct lane_writer {
    int64_t lane;
    OTF2_EvtWriter *events;
    uint64_t location;          /* index into the export's locations */
    uint64_t last, written;
    uint64_t open;              /* kept calls entered, not left */
    /* MPI: per open kept call (by depth) its columns and the length of
     * the message it receives, for the records at its end; whether the
     * lane wrote an MPI record */
    int64_t (*saved)[SP_EXTRA_N + 1];
    size_t saved_cap;
    int mpi_written;
} lane_writer;

typedef struct otf2_pass {
    writer *w;
    archive_export *x;
    sp_stream_filter filter;
    int collecting;             /* the first pass: lanes only */
    lane_writer *lanes;         /* collecting: sorted by lane id */
    size_t num_lanes, cap_lanes, cached;
    int64_t first;              /* the origin pass: earliest kept start */
    const sp_run_source *src;
    uint32_t rank;
    int failed;                 /* an OTF2 call failed (w->status) */
    int replayed;               /* calls not delivered nested (a scattered rank) */
    mpi_events *mpi;            /* on: the calls come with their MPI columns */
    uint64_t *file_base;        /* MPI: events numbered as sp_load_run numbers them */
    int64_t *row_of_region;     /* MPI: the rank's skeleton rows */
} otf2_pass;

/* The event of a call as the in-memory run numbers it. */
static uint64_t stream_event(const otf2_pass *p, const sp_stream_call *call)
{
    int64_t row = p->row_of_region[call->region];
    if (row < 0)
        return 0;
    return p->file_base[p->src->row_file[row]] + p->src->profile->rows[row].offset +
           call->call_index;
}

static int lane_note(otf2_pass *p, int64_t lane)
{
    size_t lo = 0, hi = p->num_lanes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->lanes[mid].lane < lane)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < p->num_lanes && p->lanes[lo].lane == lane)
        return 0;
    if (p->num_lanes == p->cap_lanes) {
        size_t cap = p->cap_lanes ? 2 * p->cap_lanes : 8;
        lane_writer *grown = realloc(p->lanes, cap * sizeof *grown);
        if (!grown)
            return -1;
        p->lanes = grown;
        p->cap_lanes = cap;
    }
    memmove(p->lanes + lo + 1, p->lanes + lo, (p->num_lanes - lo) * sizeof *p->lanes);
    p->lanes[lo] = (lane_writer){.lane = lane};
    p->num_lanes++;
    return 0;
}

static int compare_lane_writers(const void *a, const void *b)
{
    int64_t x = lane_order(((const lane_writer *)a)->lane);
    int64_t y = lane_order(((const lane_writer *)b)->lane);
    return (x > y) - (x < y);
}

/* Locations for the noted lanes, in the in-memory order (lane_order), with
 * their labels and open writers.  0, -1 (err). */
static int open_rank_lanes(otf2_pass *p, const sp_run_source *src, char *err, size_t errlen)
{
    archive_export *x = p->x;
    if (p->num_lanes)
        qsort(p->lanes, p->num_lanes, sizeof *p->lanes, compare_lane_writers);
    for (size_t k = 0; k < p->num_lanes; k++) {
        lane_writer *l = &p->lanes[k];
        char label[512];
        snprintf(label, sizeof label, "rank %u", p->rank);
        if (src->any_thread)
            sp_lane_label(src->profile, p->rank, l->lane, label, sizeof label);
        if (x->num_locs == x->cap_locs) {
            size_t cap = x->cap_locs ? 2 * x->cap_locs : 64;
            location *grown = realloc(x->locs, cap * sizeof *grown);
            if (!grown)
                goto oom;
            x->locs = grown;
            x->cap_locs = cap;
        }
        int64_t name = string_add(&x->s, label);
        if (name < 0)
            goto oom;
        l->location = x->num_locs;
        l->events = OTF2_Archive_GetEvtWriter(x->w.archive, l->location);
        if (!l->events) {
            snprintf(err, errlen, "OTF2: cannot open the event file of rank %u, %s", p->rank,
                     label);
            return -1;
        }
        x->locs[x->num_locs++] = (location){p->rank, (uint64_t)name, 0};
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* The rank's writers closed (all of them, also after a failure).  0, -1. */
static int close_rank_lanes(otf2_pass *p, char *err, size_t errlen)
{
    int rc = 0;
    for (size_t k = 0; k < p->num_lanes; k++) {
        lane_writer *l = &p->lanes[k];
        if (!l->events)
            continue;
        OTF2_ErrorCode closed = OTF2_Archive_CloseEvtWriter(p->x->w.archive, l->events);
        if (closed != OTF2_SUCCESS && rc == 0)
            rc = fail_otf2(err, errlen, "writing events", closed);
        p->x->locs[l->location].events = l->written;
    }
    for (size_t k = 0; k < p->num_lanes; k++)
        free(p->lanes[k].saved);
    p->num_lanes = 0;
    p->cached = 0;
    return rc;
}

static lane_writer *lane_writer_of(otf2_pass *p, int64_t lane)
{
    if (p->cached < p->num_lanes && p->lanes[p->cached].lane == lane)
        return &p->lanes[p->cached];
    for (size_t l = 0; l < p->num_lanes; l++)
        if (p->lanes[l].lane == lane) {
            p->cached = l;
            return &p->lanes[l];
        }
    return NULL;
}

/* stamp() of one lane of the stream */
static uint64_t lane_stamp(writer *w, lane_writer *l, int64_t ns)
{
    w->last = l->last;
    uint64_t t = stamp(w, ns);
    l->last = t;
    return t;
}

static int otf2_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    otf2_pass *p = ctx;
    *user = parent;
    if (!sp_stream_filter_keeps(&p->filter, call))
        return 0;
    if (p->collecting)
        return lane_note(p, call->lane) < 0 ? -1 : 0;
    lane_writer *l = lane_writer_of(p, call->lane);
    if (!l && p->num_lanes == 0) { /* one lane (no thread ids): opened at its first call */
        char err[1024];
        if (lane_note(p, call->lane) < 0 || open_rank_lanes(p, p->src, err, sizeof err) < 0)
            return -1;
        l = &p->lanes[0];
    }
    if (!l)
        return -1;
    /* user word: the depth among the kept calls, which equals the lane's
     * open calls when the calls come nested; a rank replayed from memory
     * (far out of time order: every enter, then every exit) does not */
    uint64_t d = parent < 0 ? 0 : (uint64_t)parent + 1;
    if (l->open != d) {
        p->replayed = 1;
        return -1;
    }
    l->open++;
    uint64_t t = lane_stamp(p->w, l, call->start);
    p->w->status = OTF2_EvtWriter_Enter(l->events, NULL, t, call->region);
    l->written++;
    *user = (int64_t)d;
    if (p->w->status == OTF2_SUCCESS && p->mpi->on && call->mpi) {
        /* as enter_call: the send or the collective's begin after ENTER */
        if (d >= l->saved_cap) {
            size_t cap = l->saved_cap ? 2 * l->saved_cap : 64;
            int64_t(*grown)[SP_EXTRA_N + 1] = realloc(l->saved, cap * sizeof *grown);
            if (!grown)
                return -1;
            l->saved = grown;
            l->saved_cap = cap;
        }
        memcpy(l->saved[d], call->mpi, SP_EXTRA_N * sizeof *call->mpi);
        /* a receive's flow end, looked up at the enter: the ends are read
         * in the stream's order (rank by rank, start ascending) */
        const int64_t *v = call->mpi;
        size_t n = 0;
        const sp_mpi_flow_end *f = may_receive(v)
                                       ? sp_mpi_flows_at_call(&p->mpi->flows, p->rank,
                                                              call->start, stream_event(p, call),
                                                              &n)
                                       : NULL;
        l->saved[d][SP_EXTRA_N] = (int64_t)recv_length(v, f, n);
        uint64_t before = l->written;
        p->w->status = mpi_enter(p->mpi, l->events, t, call->region, call->mpi, &l->written);
        l->mpi_written |= l->written > before;
    }
    if (p->w->status != OTF2_SUCCESS) {
        p->failed = 1;
        return -1;
    }
    return 1;
}

static int otf2_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    otf2_pass *p = ctx;
    lane_writer *l = lane_writer_of(p, call->lane);
    if (!l)
        return -1;
    if (l->open != (uint64_t)user + 1) {
        p->replayed = 1;
        return -1;
    }
    l->open--;
    uint64_t t = lane_stamp(p->w, l, call->end);
    p->w->status = OTF2_SUCCESS;
    if (p->mpi->on && (uint64_t)user < l->saved_cap) {
        /* as leave_call: the receive or the collective's end before LEAVE */
        const int64_t *v = l->saved[user];
        uint64_t before = l->written;
        p->w->status = mpi_leave(p->mpi, l->events, t, call->region, v,
                                 (uint64_t)v[SP_EXTRA_N], &l->written);
        l->mpi_written |= l->written > before;
    }
    if (p->w->status == OTF2_SUCCESS)
        p->w->status = OTF2_EvtWriter_Leave(l->events, NULL, t, call->region);
    l->written++;
    if (p->w->status != OTF2_SUCCESS) {
        p->failed = 1;
        return -1;
    }
    return 0;
}

/* The origin pass's visitor: the earliest start of the kept calls. */
static int origin_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    otf2_pass *p = ctx;
    *user = parent;
    if (sp_stream_filter_keeps(&p->filter, call) && call->start < p->first)
        p->first = call->start;
    return 0;
}

/* sp_selection_first_start on the stream: the shift matters only when a
 * kept call starts before 0 on the aligned axis, which the rows'
 * statistics (checked against the events by the stream) rule out for
 * almost every run; else one pass over every selected rank.  0, 1. */
static int stream_shift(otf2_pass *p, const sp_run_source *src, const uint32_t *ranks,
                        long num_ranks, uint64_t *shift, char *why, size_t whylen)
{
    const sp_profile *profile = src->profile;
    int64_t first = INT64_MAX;
    int with_stats = 1;
    for (size_t f = 0; f < src->num_paths; f++)
        with_stats &= src->shapes[f].has_stats;
    for (long k = 0; with_stats && k < num_ranks; k++) {
        int64_t offset = sp_rank_clock_offset(profile, ranks[k]);
        for (size_t r = 0; r < profile->num_rows; r++) {
            const sp_row *row = &profile->rows[r];
            if (row->rank == ranks[k] && row->count && row->stats.start_minimum - offset < first)
                first = row->stats.start_minimum - offset;
        }
    }
    *shift = 0;
    if (with_stats && first >= 0)
        return 0;
    p->first = INT64_MAX;
    sp_call_visitor visitor = {origin_enter, NULL, p};
    for (long k = 0; k < num_ranks; k++) {
        if (sp_stream_rank_file(src, ranks[k]) < 0)
            continue;
        sp_stream_filter_rank(&p->filter, ranks[k]);
        sp_rank_stream_info info;
        int rc = sp_stream_rank(src, ranks[k], sp_rank_clock_offset(profile, ranks[k]),
                                &visitor, &info, why, whylen);
        sp_rank_stream_info_free(&info);
        if (rc != 0)
            return 1;
    }
    *shift = p->first < 0 ? (uint64_t)-p->first : 0;
    return 0;
}

/* ---- MPI on the stream: what mpi_events_build learns, in one pass ------ *
 *
 * Every selected rank streamed once with its MPI columns (sp_stream_rank_mpi)
 * before anything is written: the ranks with kept calls (the world
 * members), the communicators in order of first use (by event, as the
 * in-memory scan meets them), which members call collectives on which
 * communicator, and the point-to-point ends of the kept calls with the
 * sent bytes of each send, paired as chrome and perfetto pair theirs, in
 * the budget of mpi_flows.h (the ends go straight into its sorts: this
 * pass has their columns).  Memory: the budget and the communicators, not
 * the calls. */

typedef struct comm_use {
    int64_t id;
    uint64_t first;             /* smallest kept event using it */
} comm_use;

typedef struct membership {
    int64_t comm;
    size_t member;
} membership;

typedef struct mpi_scan {
    otf2_pass *p;
    mpi_events *m;
    int64_t offset;             /* the rank's clock offset (raw starts) */
    uint32_t rank;
    uint64_t kept;              /* kept calls of the rank */
    comm_use *comms;
    size_t num_comms, cap_comms;
    int64_t *rank_comms;        /* communicators of the rank's kept collectives */
    size_t num_rank_comms, cap_rank_comms;
    membership *members;
    size_t num_members, cap_members;
    sp_mpi_flows_stream *ends;
} mpi_scan;

/* Append one element of `size` bytes to *v (n, cap).  0, -1. */
static int grow_push(void **v, size_t *n, size_t *cap, size_t size, const void *item)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        void *grown = realloc(*v, c * size);
        if (!grown)
            return -1;
        *v = grown;
        *cap = c;
    }
    memcpy((char *)*v + *n * size, item, size);
    (*n)++;
    return 0;
}

static int scan_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    mpi_scan *s = ctx;
    *user = parent;
    if (!sp_stream_filter_keeps(&s->p->filter, call))
        return 0;
    s->kept++;
    const int64_t *v = call->mpi;
    if (!v || v[SP_EXTRA_MPI_COMM] < 0)
        return 0;
    uint64_t e = stream_event(s->p, call);
    int64_t comm = v[SP_EXTRA_MPI_COMM];
    if (comm > 0) {
        size_t k = 0;
        while (k < s->num_comms && s->comms[k].id != comm)
            k++;
        comm_use use = {comm, e};
        if (k == s->num_comms) {
            if (grow_push((void **)&s->comms, &s->num_comms, &s->cap_comms, sizeof use, &use))
                return -1;
        } else if (e < s->comms[k].first) {
            s->comms[k].first = e;
        }
        if (call->region < s->p->src->profile->num_names &&
            s->m->collective_of[call->region] >= 0) {
            size_t j = 0;
            while (j < s->num_rank_comms && s->rank_comms[j] != comm)
                j++;
            if (j == s->num_rank_comms &&
                grow_push((void **)&s->rank_comms, &s->num_rank_comms, &s->cap_rank_comms,
                          sizeof comm, &comm))
                return -1;
        }
    }
    int64_t raw = call->start + s->offset;
    if (v[SP_EXTRA_MPI_PEER] >= 0 && v[SP_EXTRA_MPI_TAG] >= 0) {
        sp_mpi_end end = {s->rank, v[SP_EXTRA_MPI_PEER], v[SP_EXTRA_MPI_TAG], comm, raw, e,
                          v[SP_EXTRA_MPI_SENT_BYTES]};
        sp_mpi_flows_stream_push(s->ends, &end, 1);
    }
    if (v[SP_EXTRA_MPI_SOURCE] >= 0 && v[SP_EXTRA_MPI_RECV_TAG] >= 0) {
        sp_mpi_end end = {v[SP_EXTRA_MPI_SOURCE], s->rank, v[SP_EXTRA_MPI_RECV_TAG], comm, raw,
                          e, -1};
        sp_mpi_flows_stream_push(s->ends, &end, 0);
    }
    return 0;
}

static int by_first_use(const void *a, const void *b)
{
    const comm_use *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

static void mpi_scan_free(mpi_scan *s)
{
    free(s->comms);
    free(s->rank_comms);
    free(s->members);
}

/* mpi_events_build on the stream (m->on set by the caller).  0, 1 (why:
 * the in-memory path words it, also a failed pairing, as chrome's), -1 out
 * of memory. */
static int mpi_events_stream(mpi_events *m, otf2_pass *p, const uint32_t *ranks,
                             long num_ranks, char *why, size_t whylen)
{
    const sp_profile *prof = p->src->profile;
    size_t nr = prof->num_ranks ? prof->num_ranks : 1;
    m->p = prof;
    m->collective_of = malloc((prof->num_names ? prof->num_names : 1) * sizeof *m->collective_of);
    m->member_rank = malloc((num_ranks > 0 ? (size_t)num_ranks : 1) * sizeof *m->member_rank);
    m->index_of_rank = malloc(nr * sizeof *m->index_of_rank);
    m->location_of = malloc((num_ranks > 0 ? (size_t)num_ranks : 1) * sizeof *m->location_of);
    if (!m->collective_of || !m->member_rank || !m->index_of_rank || !m->location_of)
        return -1;
    for (size_t r = 0; r < prof->num_names; r++) {
        m->collective_of[r] = -1;
        for (size_t k = 0; k < NUM_COLLECTIVES; k++)
            if (!strcmp(prof->names[r], collectives[k].name))
                m->collective_of[r] = (int)k;
    }
    for (size_t r = 0; r < nr; r++)
        m->index_of_rank[r] = -1;
    sp_mpi_flows_stream ends;
    if (sp_mpi_flows_stream_open(&ends, p->src, ranks, num_ranks, why, whylen) != 0) {
        sp_mpi_flows_stream_close(&ends);
        return -1;
    }
    mpi_scan s = {.p = p, .m = m, .ends = &ends};
    sp_call_visitor visitor = {scan_enter, NULL, &s};
    int rc = 0;
    for (long k = 0; k < num_ranks && rc == 0; k++) {
        if (sp_stream_rank_file(p->src, ranks[k]) < 0)
            continue; /* no rows: no calls */
        s.rank = ranks[k];
        s.offset = sp_rank_clock_offset(prof, ranks[k]);
        s.kept = 0;
        s.num_rank_comms = 0;
        sp_stream_filter_rank(&p->filter, ranks[k]);
        sp_stream_rows_of_rank(prof, ranks[k], p->row_of_region);
        sp_rank_stream_info info;
        rc = sp_stream_rank_mpi(p->src, ranks[k], s.offset, &visitor, &info, why, whylen);
        sp_rank_stream_info_free(&info);
        if (rc == 0 && s.kept && ranks[k] < nr) {
            size_t j = m->num_members++;
            m->index_of_rank[ranks[k]] = (int64_t)j;
            m->location_of[j] = UINT64_MAX;
            m->member_rank[j] = ranks[k];
            for (size_t c = 0; c < s.num_rank_comms && rc == 0; c++) {
                membership ms = {s.rank_comms[c], j};
                if (grow_push((void **)&s.members, &s.num_members, &s.cap_members, sizeof ms,
                              &ms))
                    rc = -1;
            }
        }
    }
    /* communicators: world first, then the others in order of first use */
    if (rc == 0 && !(m->comm_id = malloc((s.num_comms + 1) * sizeof *m->comm_id)))
        rc = -1;
    if (rc == 0) {
        if (s.num_comms)
            qsort(s.comms, s.num_comms, sizeof *s.comms, by_first_use);
        m->comm_id[0] = 0;
        m->num_comms = 1;
        for (size_t k = 0; k < s.num_comms; k++)
            m->comm_id[m->num_comms++] = s.comms[k].id;
        m->is_member = calloc(m->num_comms * (m->num_members ? m->num_members : 1), 1);
        if (!m->is_member)
            rc = -1;
    }
    if (rc == 0) {
        for (size_t j = 0; j < m->num_members; j++)
            m->is_member[j] = 1;
        for (size_t k = 0; k < s.num_members; k++) {
            int64_t c = comm_ref(m, s.members[k].comm);
            if (c > 0)
                m->is_member[(size_t)c * m->num_members + s.members[k].member] = 1;
        }
        rc = sp_mpi_flows_stream_pair(&ends, &m->flows);
    }
    sp_mpi_flows_stream_close(&ends);
    mpi_scan_free(&s);
    return rc;
}

/* The location of a rank's MPI events, as mark_mpi_location picks it in
 * memory (lanes in location order): the first lane that wrote an MPI
 * record, else the rank's first lane. */
static void stream_mpi_location(otf2_pass *p)
{
    int64_t j = p->mpi->on ? world_index(p->mpi, p->rank) : -1;
    if (j < 0 || p->num_lanes == 0)
        return;
    uint64_t first = UINT64_MAX, first_mpi = UINT64_MAX;
    for (size_t k = 0; k < p->num_lanes; k++) {
        uint64_t loc = p->lanes[k].location;
        if (loc < first)
            first = loc;
        if (p->lanes[k].mpi_written && loc < first_mpi)
            first_mpi = loc;
    }
    p->mpi->location_of[j] = first_mpi != UINT64_MAX ? first_mpi : first;
}

int sp_export_otf2_stream(const char *dir, const struct sp_run_source *src,
                          const sp_export_options *options, char *why, size_t whylen)
{
    const sp_profile *profile = src->profile;
    const sp_selection *sel = options ? options->selection : NULL;
    const char *reason = sp_run_source_unstreamable_calls(src);
    if (reason) {
        snprintf(why, whylen, "%s", reason);
        return 1;
    }
    otf2_pass p = {.src = src};
    int rc = sp_stream_filter_init(&p.filter, src, sel, why, whylen);
    if (rc != 0)
        return rc;
    /* MPI records: as in memory, when some file has communicators */
    mpi_events mpi = {0};
    for (size_t f = 0; f < src->num_paths; f++)
        mpi.on |= src->shapes[f].has_extra[SP_EXTRA_MPI_COMM];
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    uint64_t shift = 0;
    if (num_ranks < 0)
        rc = -1;
    if (rc == 0 && sp_stream_check_run(src, ranks, num_ranks, NULL, why, whylen))
        rc = 1;
    if (rc == 0)
        rc = stream_shift(&p, src, ranks, num_ranks, &shift, why, whylen);
    if (rc == 0 && mpi.on) {
        p.file_base = sp_run_source_event_bases(src);
        p.row_of_region = malloc((profile->num_names + 1) * sizeof *p.row_of_region);
        rc = p.file_base && p.row_of_region
                 ? mpi_events_stream(&mpi, &p, ranks, num_ranks, why, whylen)
                 : -1;
    }
    archive_export x;
    char err[1024] = "";
    /* the target's problems are the in-memory path's to word */
    if (rc == 0 && export_begin(&x, dir, profile, options, err, sizeof err) < 0) {
        if (x.w.archive)
            export_end(&x, profile, options, -1, err, sizeof err);
        snprintf(why, whylen, "%s", err);
        rc = 1;
    }
    if (rc != 0) {
        if (rc < 0)
            snprintf(why, whylen, "out of memory");
        mpi_events_free(&mpi);
        free(p.file_base);
        free(p.row_of_region);
        sp_stream_filter_free(&p.filter);
        free(ranks);
        return rc;
    }
    x.mpi = mpi; /* export_end frees it */
    p.mpi = &x.mpi;
    x.w.shift = shift;
    p.w = &x.w;
    p.x = &x;
    p.src = src;
    sp_call_visitor visitor = {otf2_enter, otf2_exit, &p};
    for (long k = 0; k < num_ranks && rc == 0; k++) {
        if (sp_stream_rank_file(src, ranks[k]) < 0)
            continue; /* no rows: no calls */
        p.rank = ranks[k];
        sp_stream_filter_rank(&p.filter, ranks[k]);
        int64_t offset = sp_rank_clock_offset(profile, ranks[k]);
        sp_rank_stream_info info;
        if (src->any_thread) {
            p.collecting = 1;
            rc = sp_stream_rank(src, ranks[k], offset, &visitor, &info, why, whylen);
            sp_rank_stream_info_free(&info);
            p.collecting = 0;
            if (rc == 0 && open_rank_lanes(&p, src, err, sizeof err) < 0) {
                snprintf(why, whylen, "%s", err);
                rc = -1;
            }
        }
        if (rc == 0) {
            if (p.mpi->on) {
                sp_stream_rows_of_rank(profile, ranks[k], p.row_of_region);
                rc = sp_stream_rank_mpi(src, ranks[k], offset, &visitor, &info, why, whylen);
            } else {
                rc = sp_stream_rank(src, ranks[k], offset, &visitor, &info, why, whylen);
            }
            sp_rank_stream_info_free(&info);
            if (rc == 0)
                stream_mpi_location(&p);
            if (rc < 0 && p.replayed) {
                snprintf(why, whylen, "rank %u: calls far out of time order (replayed from "
                                      "memory, not nested)", ranks[k]);
                rc = 1;
            } else if (rc < 0) {
                snprintf(why, whylen, "%s", p.failed ? "OTF2: writing events" : "out of memory");
            }
        }
        if (close_rank_lanes(&p, err, sizeof err) < 0 && rc == 0) {
            snprintf(why, whylen, "%s", err);
            rc = -1;
        }
    }
    /* no calls, or a problem: the in-memory path words it; a failure of
     * the library is worded here */
    if (rc == 0 && x.num_locs == 0) {
        snprintf(why, whylen, "no calls: the in-memory path words it");
        rc = 1;
    }
    int ended = export_end(&x, profile, options, rc == 0 ? 0 : -1, err, sizeof err);
    if (rc == 0 && ended < 0) {
        snprintf(why, whylen, "%s", err);
        rc = -1;
    }
    free(p.lanes);
    free(p.file_base);
    free(p.row_of_region);
    sp_stream_filter_free(&p.filter);
    free(ranks);
    return rc;
}

#endif /* SP_HAVE_OTF2 */
