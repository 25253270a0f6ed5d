/* dist_export.c - `mpirun -np N scopeprof export folded|csv ...`: each
 * process writes the part of the output that holds its block's ranks, and
 * process 0 writes the parts in process order.  Both formats are a
 * concatenation of per-rank pieces in rank order, once what they share is
 * agreed on before writing:
 *   folded    "rank R" and lane frames are shown or not for the whole
 *             export (sp_folded_shape of every part);
 *   csv       nothing: the header line is written by process 0 only (the
 *             others' parts lose their first line), and the warning above
 *             a million calls counts the records of all parts.
 * Blocks come from sp_dist_load_run, so names, metadata and origin are the
 * run's: the bytes are the serial export's.  This is the in-memory form,
 * taken where the serial stream would read the run in memory: the parts
 * stream otherwise (dist_export_stream.c).  Perfetto is not split: its one
 * packet sequence carries state across every rank (interned names, a clock
 * that only grows) and its MPI flows pair sends and receives of any two
 * ranks, so parts would not concatenate to the serial trace (process 0
 * writes it alone, docs/distributed.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "dist/dist.h"
#include "dist/dist_wire.h"
#include "scopeprof/export.h"

/* The shape every process sends process 0 before writing. */
typedef struct shape {
    int64_t status; /* 0, or -1 with err */
    char err[1024];
    uint64_t calls;
    uint64_t rank_nodes; /* folded */
    uint64_t several_lanes, nodes;
} shape;

/* What process 0 sends back. */
typedef struct plan {
    int64_t status;
    char err[1024];
    uint64_t show_rank, show_lane; /* folded */
} plan;

/* Process 0: the first failure in process order, the serial "no calls"
 * error, and the numbers agreed on. */
static void make_plan(const sp_dist_session *s, int format, uint8_t **parts, size_t *lens,
                      const sp_profile *own, plan *pl, uint64_t *nodes)
{
    memset(pl, 0, sizeof *pl);
    uint64_t calls = 0, rank_nodes = 0;
    *nodes = 0;
    for (int k = 0; k < s->size; k++) {
        const shape *sh = (const shape *)parts[k];
        if (lens[k] != sizeof *sh) {
            pl->status = -1;
            snprintf(pl->err, sizeof pl->err, "a process sent a damaged description");
            return;
        }
        if (sh->status < 0 && pl->status == 0) {
            pl->status = -1;
            memcpy(pl->err, sh->err, sizeof pl->err);
        }
        calls += sh->calls;
        rank_nodes += sh->rank_nodes;
        pl->show_lane |= sh->several_lanes;
        *nodes += sh->nodes;
    }
    pl->show_rank = rank_nodes > 1;
    if (pl->status == 0 && calls == 0 && format != SP_DIST_CSV) { /* csv: a header alone */
        pl->status = -1;
        snprintf(pl->err, sizeof pl->err, "%s: no calls recorded for the selected ranks and "
                 "filters", own && own->path ? own->path : "profile");
    }
}

/* CSV records in text (RFC 4180: a line break inside quotes is a field's). */
typedef struct record_counter {
    FILE *to;
    int quoted;
    uint64_t records;
} record_counter;

static void count_records(record_counter *c, const char *text, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '"')
            c->quoted = !c->quoted;
        else if (text[i] == '\n' && !c->quoted)
            c->records++;
    }
}

static ssize_t counting_write(void *cookie, const char *buf, size_t n)
{
    record_counter *c = cookie;
    count_records(c, buf, n);
    return (ssize_t)fwrite(buf, 1, n, c->to) == (ssize_t)n ? (ssize_t)n : -1;
}

/* This process's part, into `out`. */
static int write_part(int format, FILE *out, const sp_profile *p, const sp_export_options *o,
                      const sp_path_tree *tree, const plan *pl, const shape *mine, char *err,
                      size_t errlen)
{
    if (!p || (format != SP_DIST_CSV && mine->calls == 0))
        return 0;
    if (format == SP_DIST_CSV) {
        sp_export_options part = o ? *o : (sp_export_options){0};
        part.warnings = NULL; /* said once for the whole export, by process 0 */
        return sp_export_csv(out, p, &part, err, errlen);
    }
    sp_folded_write(out, p, tree, (int)pl->show_rank, (int)pl->show_lane);
    return 0;
}

int sp_dist_export(const sp_dist_session *s, int format, const sp_profile *p,
                   const sp_export_options *o, FILE *out, char *err, size_t errlen)
{
    shape mine;
    memset(&mine, 0, sizeof mine);
    sp_path_tree tree;
    sp_path_tree_init(&tree);
    if (p && format == SP_DIST_FOLDED) {
        if (sp_folded_build(p, o, &tree, &mine.calls, mine.err, sizeof mine.err) < 0) {
            mine.status = -1;
            sp_path_tree_init(&tree);
        } else {
            size_t rank_nodes;
            int several;
            sp_folded_shape(&tree, &rank_nodes, &several);
            mine.rank_nodes = rank_nodes;
            mine.several_lanes = (uint64_t)several;
            mine.nodes = tree.n;
        }
    }

    uint8_t **parts = NULL;
    size_t *lens = NULL;
    uint64_t nodes = 0;
    plan pl;
    memset(&pl, 0, sizeof pl);
    int rc = sp_dist_gather(&mine, sizeof mine, &parts, &lens);
    if (rc == 0 && s->rank == 0)
        make_plan(s, format, parts, lens, p, &pl, &nodes);
    sp_dist_gather_free(parts, lens);
    if (rc == 0)
        rc = sp_dist_bcast_asleep(&pl, sizeof pl);
    if (rc < 0 || pl.status < 0) {
        snprintf(err, errlen, "%s", rc < 0 ? "MPI failed while planning the export" : pl.err);
        sp_path_tree_free(&tree);
        return -1;
    }

    /* Process 0 writes its part straight into the output, then every other
     * part as it arrives, in process order; a failed part is still received
     * (its sender waits for that), only not written. */
    char why[1024] = "";
    if (s->rank == 0) {
        FILE *sink = out ? out : fopen("/dev/null", "wb");
        record_counter counter = {sink, 0, 0};
        cookie_io_functions_t io = {.write = counting_write};
        FILE *own = sink && format == SP_DIST_CSV ? fopencookie(&counter, "w", io) : sink;
        rc = own ? write_part(format, own, p, o, &tree, &pl, &mine, why, sizeof why) : -1;
        if (own && own != sink && fclose(own) != 0 && rc == 0) {
            snprintf(why, sizeof why, "write failed");
            rc = -1;
        }
        if (!own)
            snprintf(why, sizeof why, "out of memory");
        uint64_t records = counter.records ? counter.records - 1 : 0; /* the header */
        for (int k = 1; k < s->size; k++) {
            uint8_t *data;
            size_t len;
            /* k waits asleep until its part is wanted (see sp_dist_wait) */
            if (sp_dist_signal(k) < 0 || sp_dist_recv(&data, &len, k) < 0) {
                if (rc == 0)
                    snprintf(why, sizeof why, "MPI failed receiving the part of process %d", k);
                rc = -1;
                continue;
            }
            sp_wire r;
            sp_wire_reader(&r, data, len);
            int64_t status = sp_wire_get_i64(&r);
            char *message = sp_wire_get_str(&r);
            records += sp_wire_get_u64(&r);
            if (rc == 0 && (r.failed || status < 0)) {
                snprintf(why, sizeof why, "%s", message && !r.failed ? message
                                                                    : "a damaged part");
                rc = -1;
            }
            if (rc == 0 && sink && len > r.pos)
                fwrite(data + r.pos, 1, len - r.pos, sink);
            free(message);
            free(data);
        }
        if (sink && !out)
            fclose(sink);
        if (rc == 0 && format == SP_DIST_FOLDED)
            sp_export_warn_events(o, nodes, "folded export");
        if (rc == 0 && format == SP_DIST_CSV)
            sp_export_warn_events(o, records, "csv export");
    } else {
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        int part_rc = mem ? write_part(format, mem, p, o, &tree, &pl, &mine, why, sizeof why)
                          : -1;
        if (!mem)
            snprintf(why, sizeof why, "out of memory");
        if (mem && fclose(mem) != 0 && part_rc == 0) {
            snprintf(why, sizeof why, "out of memory");
            part_rc = -1;
        }
        /* csv: the header is process 0's */
        size_t skip = 0;
        if (part_rc == 0 && format == SP_DIST_CSV && text) {
            const char *eol = memchr(text, '\n', len);
            skip = eol ? (size_t)(eol - text) + 1 : len;
        }
        record_counter counter = {NULL, 0, 0};
        if (part_rc == 0 && format == SP_DIST_CSV)
            count_records(&counter, text + skip, len - skip);
        sp_wire w = {0};
        sp_wire_i64(&w, part_rc);
        sp_wire_str(&w, why);
        sp_wire_u64(&w, counter.records);
        if (part_rc == 0)
            sp_wire_bytes(&w, text + skip, len - skip);
        free(text);
        if (w.failed) { /* a short message the sender can still build */
            sp_wire_free(&w);
            sp_wire_i64(&w, -1);
            sp_wire_str(&w, "out of memory");
            sp_wire_u64(&w, 0);
        }
        rc = sp_dist_wait(0);
        if (rc == 0)
            rc = sp_dist_send(w.data, w.len, 0);
        sp_wire_free(&w);
        if (rc == 0)
            rc = part_rc;
    }
    if (rc < 0)
        snprintf(err, errlen, "%s", why);
    sp_path_tree_free(&tree);
    return rc;
}
