/* dist_report_source.c - the run source of `report` under a launcher: each
 * process other than 0 opens only the rank files of its block, not every
 * file's index (docs/distributed.md, "report").
 *
 * Process 0 opens the whole run, as the serial report does: it prints the
 * header and the tables from every file's rows, and words every problem
 * as the serial command.  Meanwhile each other process opens its block
 * (sp_dist_block over the expanded files) and then takes from process 0,
 * in one broadcast, what makes its block look like those ranks of the
 * whole run: the run's region table (its rows renumbered, so its trees
 * carry the run's region ids), the metadata of the lowest rank (clock
 * offsets), the rank count and which lane columns some file has.  A rank
 * then belongs to the process whose block holds its file.
 *
 * Where the block alone could still stream differently (--from/--to count
 * from the run's first event; a sync point without mpi_rank is told by the
 * profile's only rank), process 0 says "whole run" and every process opens
 * every file, as before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "dist/dist_wire.h"
#include "h5/h5_internal.h"
#include "scopeprof/stream.h"

enum { ANSWER_FAILED = 0, ANSWER_BLOCK = 1, ANSWER_WHOLE_RUN = 2 };

/* The block alone gives every rank its serial clock offset: the lowest
 * rank's metadata names its rank, or has no sync point at all. */
static int block_keeps_clocks(const sp_profile *p)
{
    const sp_meta *rank = sp_profile_meta(p, "mpi_rank");
    return (rank && (rank->type == SP_META_INT || rank->type == SP_META_FLOAT)) ||
           !sp_profile_meta(p, "mpi_sync_init_ns");
}

static void describe_run(sp_wire *w, const sp_run_source *src, int window)
{
    const sp_profile *p = src->profile;
    sp_wire_i64(w, window || !block_keeps_clocks(p) ? ANSWER_WHOLE_RUN : ANSWER_BLOCK);
    sp_wire_u64(w, src->num_paths);
    sp_wire_u64(w, p->num_ranks);
    sp_wire_i64(w, src->any_thread);
    sp_wire_i64(w, src->any_task);
    sp_wire_i64(w, src->any_parent);
    sp_wire_u64(w, p->num_names);
    for (size_t i = 0; i < p->num_names; i++)
        sp_wire_str(w, p->names[i]);
    sp_wire_meta(w, p->meta, p->num_meta);
}

/* The block takes the run's names, metadata, rank count and columns.
 * 0, or -1 (a name of the block is not in the run's: a damaged answer). */
static int adopt(sp_wire *a, sp_run_source *src, size_t num_files)
{
    sp_profile *p = src->profile;
    uint32_t num_ranks = (uint32_t)sp_wire_get_u64(a);
    int any_thread = (int)sp_wire_get_i64(a), any_task = (int)sp_wire_get_i64(a),
        any_parent = (int)sp_wire_get_i64(a);
    if (!p || sp_dist_adopt_region_table(a, p) != 0)
        return -1;
    if (p->num_rows)
        p->num_ranks = num_ranks;
    src->any_thread = any_thread;
    src->any_task = any_task;
    src->any_parent = any_parent;
    /* the serial report names its profile after the file only when the run
     * is one file (a rank's warning starts with that name) */
    if (num_files > 1) {
        free(p->path);
        p->path = NULL;
    }
    return 0;
}

/* Process 0's answer, broadcast: 0, or -1 (MPI failed).  The others wait
 * for it asleep (sp_dist_bcast_asleep): their blocks open sooner than the
 * whole run on process 0. */
static int share_answer(sp_wire *answer, int rank)
{
    uint64_t size = answer->len;
    if (sp_dist_bcast_asleep(&size, sizeof size) != 0)
        return -1;
    if (rank != 0 && !(answer->data = malloc(size ? (size_t)size : 1)))
        sp_dist_abort(1); /* the others would wait for us */
    answer->len = (size_t)size;
    return sp_dist_bcast(answer->data, answer->len, 0);
}

int sp_dist_report_open(sp_dist_report *r, const sp_dist_session *s, const char *const *args,
                        size_t count, int window, unsigned deferred, sp_run_source *src,
                        char *err, size_t errlen)
{
    memset(src, 0, sizeof *src);
    r->src = src;
    r->whole_run = 1;
    if (s->rank == 0) {
        int opened = sp_run_source_open_deferring(src, args, count, deferred, err, errlen);
        sp_wire answer = {0};
        if (opened == 0)
            describe_run(&answer, src, window);
        else
            sp_wire_i64(&answer, ANSWER_FAILED);
        if (answer.failed) { /* out of memory: the others open every file */
            sp_wire_free(&answer);
            sp_wire_i64(&answer, ANSWER_WHOLE_RUN);
        }
        r->num_files = opened == 0 ? src->num_paths : 0;
        int rc = share_answer(&answer, 0);
        sp_wire_free(&answer);
        if (rc != 0 && opened == 0) {
            sp_run_source_close(src);
            snprintf(err, errlen, "MPI failed while sharing the run's index");
        }
        return rc == 0 ? opened : -1;
    }
    /* This process's block, opened while process 0 opens the run. */
    char **paths = NULL;
    long num_paths = window ? -1 : sp_run_inputs_expand(args, count, &paths, err, errlen);
    size_t first = 0, n = num_paths > 0 ? sp_dist_block((size_t)num_paths, s->rank, s->size,
                                                        &first)
                                        : 0;
    int opened = n ? sp_run_source_open_deferring(src, (const char *const *)paths + first, n,
                                                  deferred, err, errlen)
                   : -1;
    sp_wire answer = {0};
    int rc = share_answer(&answer, s->rank);
    sp_wire a;
    sp_wire_reader(&a, answer.data, answer.len);
    int what = rc == 0 ? (int)sp_wire_get_i64(&a) : ANSWER_FAILED;
    uint64_t run_files = sp_wire_get_u64(&a);
    if (what == ANSWER_BLOCK && num_paths >= 0 && run_files == (uint64_t)num_paths) {
        r->num_files = (size_t)num_paths;
        r->whole_run = 0;
        if (opened == 0 && adopt(&a, src, (size_t)num_paths) != 0) {
            sp_run_source_close(src);
            opened = -1;
        }
    } else {
        if (opened == 0)
            sp_run_source_close(src);
        opened = -1;
        if (what == ANSWER_WHOLE_RUN || what == ANSWER_BLOCK) {
            /* as before: every file's index (the block alone would differ) */
            opened = sp_run_source_open_deferring(src, args, count, deferred, err, errlen);
            r->num_files = opened == 0 ? src->num_paths : 0;
        }
    }
    sp_wire_free(&answer);
    sp_run_inputs_free(paths, num_paths);
    return rc == 0 ? opened : -1;
}
