/* dist_export_stream.c - `mpirun -np N scopeprof export folded|csv` in
 * bounded memory (dist.h, sp_dist_export_stream).
 *
 * Every process opens the run source of all the files, so the skeleton
 * (region table, metadata, origin, rank count) is the one the serial
 * streamed export sees, and takes the contiguous share of the selected
 * ranks sp_dist_block gives it: the serial output is the concatenation of
 * those shares' pieces, in process order, once the processes agree on
 * what is shared:
 *   folded  "rank R" frames (more than one rank with calls in the whole
 *           export) and lane frames (some rank with several lanes);
 *   csv     the header line (process 0's), the warning above a million
 *           rows (all parts' rows).
 * Three steps, each ending in an exchange (gather to process 0, its answer
 * broadcast):
 *   1. stream: folded builds its share's tree, csv makes its first pass
 *      (the exclusive times); the checks the serial stream makes.  Any
 *      process that cannot stream -> every process falls back (1).
 *   2. write: process 0 opens the output and writes its piece there, the
 *      others into a part file ($TMPDIR, unlinked).  A failure -> fall
 *      back, unless bytes went to standard output (-1).
 *   3. drain: process 0 receives each part in pieces, in process order.
 * The run's checks of ranks outside the selection and of fork edges
 * (sp_stream_check_run) are made by process 0 alone, for folded and csv
 * (sx_run_begin_share); every process checks the ranks of its share as it
 * streams them. */
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "export/path_tree_stream.h"
#include "export/stream_filter.h"
#include "export/stream_parts.h"
#include "scopeprof/export.h"
#include "scopeprof/stream.h"

/* What each process says at the end of steps 1 and 2. */
typedef struct report {
    int64_t status; /* 0, 1 (fall back: why) */
    char why[1024];
    uint64_t calls, rank_nodes, several_lanes, nodes; /* folded, step 1 */
    uint64_t rows, bytes;                             /* step 2 */
} report;

/* Process 0's answer. */
typedef struct answer {
    int64_t decision; /* 0 go on, 1 fall back, -1 failed (why) */
    char why[1024];
    uint64_t show_rank, show_lane;
    uint64_t nodes, rows;
    uint64_t bytes[]; /* step 2, process 0 only: each part's size (not sent) */
} answer;

typedef struct part_export {
    const sp_dist_session *s;
    int format;
    const sp_export_options *o;
    const sp_dist_output *output;
    FILE *out;     /* process 0: the output once opened */
    int opened;
    sp_dist_part part; /* the others */
    report mine;
    answer *plan;  /* with size() byte counts on process 0 */
} part_export;

/* Gather every report, decide on process 0, broadcast the answer. */
static int exchange(part_export *x, int step)
{
    uint8_t **parts = NULL;
    size_t *lens = NULL;
    answer *a = x->plan;
    memset(a, 0, sizeof *a);
    int rc = sp_dist_gather(&x->mine, sizeof x->mine, &parts, &lens);
    if (rc == 0 && x->s->rank == 0) {
        uint64_t rank_nodes = 0, calls = 0;
        for (int k = 0; k < x->s->size; k++) {
            const report *r = (const report *)parts[k];
            if (lens[k] != sizeof *r) {
                a->decision = 1;
                snprintf(a->why, sizeof a->why, "process %d sent a damaged report", k);
                break;
            }
            if (r->status != 0 && a->decision == 0) { /* the first in process order */
                a->decision = 1;
                snprintf(a->why, sizeof a->why, "process %d: %.990s", k, r->why);
            }
            calls += r->calls;
            rank_nodes += r->rank_nodes;
            a->show_lane |= r->several_lanes;
            a->nodes += r->nodes;
            a->rows += r->rows;
            a->bytes[k] = r->bytes;
        }
        a->show_rank = rank_nodes > 1;
        if (step == 1 && a->decision == 0 && x->format == SP_DIST_FOLDED && calls == 0) {
            a->decision = 1;
            snprintf(a->why, sizeof a->why, "no calls: the in-memory path words it");
        }
        /* bytes may be out already: give the output up, or fail */
        if (step == 2 && a->decision == 1 && x->opened) {
            x->opened = 0;
            if (x->output->discard(x->output->ctx) != 0)
                a->decision = -1;
        }
    }
    sp_dist_gather_free(parts, lens);
    if (rc == 0)
        rc = sp_dist_bcast_asleep(a, sizeof *a);
    if (rc != 0) {
        a->decision = -1;
        snprintf(a->why, sizeof a->why, "MPI failed while the processes agreed on the export");
    }
    return (int)a->decision;
}

/* Step 1 of folded: the tree of this process's share, and the checks. */
static int folded_stream(part_export *x, const sp_run_source *src, const uint32_t *ranks,
                         long num_ranks, long first, long count, sp_path_tree *tree)
{
    report *m = &x->mine;
    const sp_selection *sel = x->o ? x->o->selection : NULL;
    const char *reason = sp_run_source_unstreamable_calls(src);
    if (reason) {
        snprintf(m->why, sizeof m->why, "%s", reason);
        return 1;
    }
    sp_stream_filter filter;
    int rc = sp_stream_filter_init(&filter, src, sel, m->why, sizeof m->why);
    if (rc != 0)
        return rc;
    if (x->s->rank == 0 && sp_stream_check_run(src, ranks, num_ranks, NULL, m->why,
                                               sizeof m->why))
        rc = 1;
    for (long k = first; k < first + count && rc == 0; k++)
        rc = sp_path_tree_stream_rank(tree, src, &filter, ranks[k], 1, &m->calls, m->why,
                                      sizeof m->why);
    sp_stream_filter_free(&filter);
    if (rc == 0) {
        size_t rank_nodes;
        int several;
        sp_folded_shape(tree, &rank_nodes, &several);
        m->rank_nodes = rank_nodes;
        m->several_lanes = (uint64_t)several;
        m->nodes = tree->n;
    }
    return rc;
}

/* Where this process writes its piece: process 0 opens the output now. */
static FILE *piece_stream(part_export *x)
{
    if (x->s->rank != 0)
        return x->part.file;
    x->out = x->output->open(x->output->ctx, x->mine.why, sizeof x->mine.why);
    x->opened = x->out != NULL;
    return x->out;
}

/* csv: between the passes, the step-1 exchange (stream_parts.h). */
static int csv_agree(void *ctx, int rc, FILE **out, char *why, size_t whylen)
{
    part_export *x = ctx;
    x->mine.status = rc;
    if (rc != 0 && why != x->mine.why)
        snprintf(x->mine.why, sizeof x->mine.why, "%s", why);
    if (exchange(x, 1) != 0) {
        snprintf(why, whylen, "%s", x->plan->why);
        return 1;
    }
    x->mine.why[0] = '\0';
    if (!(*out = piece_stream(x))) {
        if (why != x->mine.why)
            snprintf(why, whylen, "%s", x->mine.why);
        return 1;
    }
    return 0;
}

/* Steps 1 and 2 for this process's share; 0, or 1 (why in mine or plan). */
static int stream_share(part_export *x, const sp_run_source *src)
{
    const sp_selection *sel = x->o ? x->o->selection : NULL;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(src->profile, sel, &ranks);
    size_t first = 0, count = 0;
    if (num_ranks >= 0)
        count = sp_dist_block((size_t)num_ranks, x->s->rank, x->s->size, &first);
    int rc;
    if (x->format == SP_DIST_CSV) {
        sp_csv_part csv = {.first = (long)first, .count = (long)count,
                           .header = x->s->rank == 0, .check_others = x->s->rank == 0,
                           .agree = csv_agree, .ctx = x};
        /* a failure before the pass still takes part in its exchange */
        if (num_ranks < 0) {
            snprintf(x->mine.why, sizeof x->mine.why, "out of memory");
            rc = csv_agree(x, 1, &(FILE *){NULL}, x->mine.why, sizeof x->mine.why);
        } else {
            rc = sp_export_csv_stream_part(NULL, src, x->o, &csv, x->mine.why,
                                           sizeof x->mine.why);
        }
        x->mine.rows = csv.events;
        if (x->plan->decision != 0)
            rc = 1; /* said by the exchange: nothing was written */
        else if (rc != 0)
            rc = 1; /* a failure while writing: step 2 decides */
    } else {
        sp_path_tree tree;
        sp_path_tree_init(&tree);
        rc = num_ranks < 0 ? -1
                           : folded_stream(x, src, ranks, num_ranks, (long)first, (long)count,
                                           &tree);
        if (rc < 0)
            snprintf(x->mine.why, sizeof x->mine.why, "out of memory");
        x->mine.status = rc != 0;
        if (exchange(x, 1) != 0) {
            rc = 1;
        } else {
            x->mine.why[0] = '\0';
            FILE *to = piece_stream(x);
            if (to)
                sp_folded_write(to, src->profile, &tree, (int)x->plan->show_rank,
                                (int)x->plan->show_lane);
            rc = to ? 0 : 1;
        }
        sp_path_tree_free(&tree);
    }
    free(ranks);
    return rc;
}

int sp_dist_export_stream(const sp_dist_session *s, int format, const char *const *files,
                          size_t count, const sp_export_options *o,
                          const sp_dist_output *output, int trace, char *why, size_t whylen)
{
    part_export x = {.s = s, .format = format, .o = o, .output = output};
    x.plan = calloc(1, sizeof *x.plan + (size_t)s->size * sizeof x.plan->bytes[0]);
    if (!x.plan)
        sp_dist_abort(1); /* the others would wait in the exchange */
    sp_run_source src;
    int have_src = 0, rc = 0;
    if (s->rank != 0 && sp_dist_part_open(&x.part) != 0)
        snprintf(x.mine.why, sizeof x.mine.why, "no temporary file for the part (TMPDIR)");
    else if (sp_run_source_open(&src, files, count, x.mine.why, sizeof x.mine.why) == 0)
        have_src = 1;
    if (have_src) {
        rc = stream_share(&x, &src);
    } else { /* still in the exchange, which tells every process why */
        x.mine.status = 1;
        exchange(&x, 1);
    }
    /* step 2: every piece written, or why not */
    if (x.plan->decision == 0) {
        x.mine.status = rc;
        if (rc == 0 && s->rank != 0 && sp_dist_part_finish(&x.part) != 0) {
            snprintf(x.mine.why, sizeof x.mine.why, "a part's temporary file cannot be "
                     "written (TMPDIR)");
            x.mine.status = 1;
        }
        if (x.mine.status == 0 && s->rank == 0 && ferror(x.out)) {
            snprintf(x.mine.why, sizeof x.mine.why, "write failed");
            x.mine.status = 1;
        }
        x.mine.bytes = x.part.bytes;
        exchange(&x, 2);
    }
    rc = (int)x.plan->decision;
    /* step 3: process 0 takes the parts in process order; each waits
     * asleep until its turn (sp_dist_wait) */
    if (rc == 0 && s->rank == 0) {
        /* after a failure the later parts are still taken (their senders
         * wait for that), only not written */
        for (int k = 1; k < s->size; k++) {
            char failed[1024];
            if (sp_dist_signal(k) != 0) {
                if (rc == 0)
                    snprintf(x.plan->why, sizeof x.plan->why, "MPI failed asking process %d",
                             k);
                rc = -1;
            } else if (sp_dist_part_receive(rc == 0 ? x.out : NULL, x.plan->bytes[k], k,
                                            failed, sizeof failed) != 0) {
                if (rc == 0)
                    snprintf(x.plan->why, sizeof x.plan->why, "%s", failed);
                rc = -1;
            }
        }
        if (rc == 0)
            sp_export_warn_events(o, format == SP_DIST_FOLDED ? x.plan->nodes : x.plan->rows,
                                  format == SP_DIST_FOLDED ? "folded export" : "csv export");
    } else if (rc == 0) {
        if (sp_dist_wait(0) != 0 || sp_dist_part_send(&x.part, 0) != 0)
            rc = -1;
    }
    if (trace) /* one line per process: a part on the stream, or why not */
        fprintf(stderr, "scopeprof export: process %d of %d: part %s%s\n", s->rank, s->size,
                x.plan->decision == 0 ? "streamed" : x.plan->decision > 0 ? "in memory: "
                                                                          : "failed: ",
                x.plan->decision == 0 ? "" : x.plan->why);
    if (rc != 0)
        snprintf(why, whylen, "%s", x.plan->why);
    if (have_src)
        sp_run_source_close(&src);
    sp_dist_part_close(&x.part);
    free(x.plan);
    return rc;
}
