/* dist_run.c - each process's block of a run, loaded so that it looks like
 * the same ranks of the whole run loaded serially.
 *
 * Loading a block alone gives a profile whose region table holds only the
 * block's names (in another order), whose metadata is the block's lowest
 * rank's, and whose rank count and time origin may differ from the run's.
 * Per-rank results (a rank's trace, its path tree) read all four, so after
 * loading, process 0 gathers every block's names and shape, builds the
 * run's region table in the serial order (blocks in rank order: a name
 * first seen in block k comes after every name of blocks before k), and
 * sends back that table, the metadata of the lowest rank (its own block's
 * first), the rank count and the origin; each process then renumbers its
 * rows.  Blocks whose ranks are not in increasing, disjoint ranges give
 * SP_DIST_RUN_SERIAL: process 0 then runs the serial command alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "dist/dist_wire.h"
#include "h5/h5_internal.h"

enum { BLOCK_LOADED = 0, BLOCK_EMPTY = 1, BLOCK_FAILED = 2 };

static void describe_block(sp_wire *w, int status, const char *err, const sp_profile *p)
{
    sp_wire_i64(w, status);
    sp_wire_str(w, status == BLOCK_FAILED ? err : "");
    if (status != BLOCK_LOADED)
        return;
    uint32_t lowest = UINT32_MAX, highest = 0;
    for (size_t i = 0; i < p->num_rows; i++) {
        lowest = p->rows[i].rank < lowest ? p->rows[i].rank : lowest;
        highest = p->rows[i].rank > highest ? p->rows[i].rank : highest;
    }
    int64_t min_start = INT64_MAX;
    for (size_t i = 0; i < p->num_events; i++)
        min_start = p->start[i] < min_start ? p->start[i] : min_start;
    sp_wire_u64(w, p->num_rows);
    sp_wire_u64(w, lowest);
    sp_wire_u64(w, highest);
    sp_wire_u64(w, p->num_ranks);
    sp_wire_i64(w, min_start);
    sp_wire_u64(w, p->num_names);
    for (size_t i = 0; i < p->num_names; i++)
        sp_wire_str(w, p->names[i]);
}

/* Process 0: the decision, and for SP_DIST_RUN_OK what every block needs. */
static int decide(const sp_dist_session *s, uint8_t **parts, size_t *lens,
                  const sp_profile *own, sp_wire *answer, char *err, size_t errlen)
{
    sp_name_index names = {0};
    int64_t last = -1, origin = INT64_MAX;
    uint64_t num_ranks = 0;
    int decision = SP_DIST_RUN_OK;
    for (int k = 0; k < s->size && decision == SP_DIST_RUN_OK; k++) {
        sp_wire r;
        sp_wire_reader(&r, parts[k], lens[k]);
        int status = (int)sp_wire_get_i64(&r);
        char *why = sp_wire_get_str(&r);
        if (status == BLOCK_FAILED) {
            /* the first failure in rank-file order: the serial command's */
            snprintf(err, errlen, "%s", why ? why : "a process failed");
            decision = SP_DIST_RUN_FAILED;
        } else if (status == BLOCK_LOADED) {
            uint64_t rows = sp_wire_get_u64(&r), lowest = sp_wire_get_u64(&r),
                     highest = sp_wire_get_u64(&r), ranks = sp_wire_get_u64(&r);
            int64_t min_start = sp_wire_get_i64(&r);
            uint64_t n = sp_wire_get_u64(&r);
            if (!rows || (int64_t)lowest <= last)
                decision = SP_DIST_RUN_SERIAL;
            last = (int64_t)highest;
            num_ranks = ranks > num_ranks ? ranks : num_ranks;
            origin = min_start < origin ? min_start : origin;
            for (uint64_t i = 0; i < n && !r.failed && decision == SP_DIST_RUN_OK; i++) {
                char *name = sp_wire_get_str(&r);
                if (name && sp_name_index_add(&names, name) < 0)
                    r.failed = 1;
                free(name);
            }
        }
        free(why);
        if (r.failed && decision == SP_DIST_RUN_OK) {
            snprintf(err, errlen, "out of memory, or a process sent a damaged block");
            decision = SP_DIST_RUN_FAILED;
        }
    }
    sp_wire_i64(answer, decision);
    sp_wire_str(answer, decision == SP_DIST_RUN_FAILED ? err : "");
    if (decision == SP_DIST_RUN_OK) {
        sp_wire_u64(answer, names.count);
        for (size_t i = 0; i < names.count; i++)
            sp_wire_str(answer, names.names[i]);
        sp_wire_meta(answer, own->meta, own->num_meta);
        sp_wire_u64(answer, num_ranks);
        sp_wire_i64(answer, origin);
    }
    sp_name_index_free(&names);
    return decision;
}

static void free_names(sp_profile *p)
{
    for (size_t i = 0; i < p->num_names; i++)
        free(p->names[i]);
    free(p->names);
    p->names = NULL;
    p->num_names = 0;
    /* p->name_hash stays: sp_profile_intern_name indexes a replaced names[]
     * again (the new array is allocated before this one is freed, so its
     * address differs). */
}

int sp_dist_adopt_region_table(sp_wire *a, sp_profile *p)
{
    uint64_t n = sp_wire_get_u64(a);
    char **names = !a->failed && n <= a->len ? calloc(n ? (size_t)n : 1, sizeof *names) : NULL;
    sp_name_index index = {0};
    for (uint64_t i = 0; names && i < n && !a->failed; i++)
        if (!(names[i] = sp_wire_get_str(a)) || sp_name_index_add(&index, names[i]) != (int64_t)i)
            a->failed = 1;
    size_t num_meta = 0;
    sp_meta *meta = names && !a->failed ? sp_wire_get_meta(a, &num_meta) : NULL;
    uint32_t *map = NULL;
    if (!a->failed && names && meta && p)
        map = sp_name_index_map(&index, p); /* the block's names are all in the run's */
    int bad = p && (!map || index.count != n);
    sp_name_index_free(&index);
    if (bad || !p) { /* !p: an empty block, nothing to renumber */
        for (uint64_t i = 0; names && i < n; i++)
            free(names[i]);
        free(names);
        sp_wire_meta_free(meta, num_meta);
        free(map);
        return bad ? -1 : 0;
    }
    for (size_t i = 0; i < p->num_rows; i++)
        p->rows[i].region = map[p->rows[i].region];
    free(map);
    free_names(p);
    p->names = names;
    p->num_names = (size_t)n;
    sp_wire_meta_free(p->meta, p->num_meta);
    p->meta = meta;
    p->num_meta = num_meta;
    return 0;
}

/* Every process: take the run's names, metadata, rank count and origin. */
static int adopt(sp_wire *a, sp_profile *p, char *err, size_t errlen)
{
    int rc = sp_dist_adopt_region_table(a, p);
    uint64_t num_ranks = sp_wire_get_u64(a);
    int64_t origin = sp_wire_get_i64(a);
    if (rc != 0) {
        snprintf(err, errlen, "out of memory, or process 0 sent a damaged run description");
        return -1;
    }
    if (!p)
        return 0;
    if (p->num_rows)
        p->num_ranks = (uint32_t)num_ranks;
    /* The serial origin without start_time_ns is the run's first call. */
    int64_t have;
    if (sp_profile_meta_int(p, "start_time_ns", &have) != 0 && origin != INT64_MAX &&
        sp_profile_set_meta_int(p, "start_time_ns", origin) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

int sp_dist_load_run(const sp_dist_session *s, char **files, size_t count, sp_profile **out,
                     char *err, size_t errlen)
{
    *out = NULL;
    size_t first, n = sp_dist_block(count, s->rank, s->size, &first);
    sp_profile *p = NULL;
    char why[1024] = "";
    int status = BLOCK_EMPTY;
    if (n) {
        p = sp_load_run((const char *const *)files + first, n, why, sizeof why);
        status = p ? BLOCK_LOADED : BLOCK_FAILED;
    }
    sp_wire mine = {0};
    describe_block(&mine, status, why, p);
    if (mine.failed) /* still take part in the collectives */
        sp_wire_free(&mine);
    uint8_t **parts = NULL;
    size_t *lens = NULL;
    int rc = sp_dist_gather(mine.data, mine.len, &parts, &lens);
    sp_wire_free(&mine);
    sp_wire answer = {0};
    if (rc == 0 && s->rank == 0)
        decide(s, parts, lens, p, &answer, err, errlen);
    sp_dist_gather_free(parts, lens);
    uint64_t size = answer.len;
    if (rc == 0)
        rc = sp_dist_bcast_asleep(&size, sizeof size);
    if (rc == 0 && s->rank != 0 && !(answer.data = malloc(size ? size : 1)))
        sp_dist_abort(1);
    answer.len = (size_t)size;
    if (rc == 0)
        rc = sp_dist_bcast(answer.data, answer.len, 0);
    if (rc < 0) {
        snprintf(err, errlen, "MPI failed while describing the blocks");
        sp_wire_free(&answer);
        sp_profile_free(p);
        return SP_DIST_RUN_FAILED;
    }
    sp_wire a;
    sp_wire_reader(&a, answer.data, answer.len);
    int decision = (int)sp_wire_get_i64(&a);
    char *message = sp_wire_get_str(&a);
    if (decision == SP_DIST_RUN_FAILED && s->rank != 0)
        snprintf(err, errlen, "%s", message ? message : "");
    free(message);
    if (decision == SP_DIST_RUN_OK && adopt(&a, p, err, errlen) < 0)
        decision = SP_DIST_RUN_FAILED; /* this process only: a damaged answer */
    sp_wire_free(&answer);
    /* the serial load names its profile after the file only when the run
     * is one file: a block of one file among more is not that */
    if (decision == SP_DIST_RUN_OK && p && count > 1) {
        free(p->path);
        p->path = NULL;
    }
    if (decision != SP_DIST_RUN_OK) {
        sp_profile_free(p);
        return decision;
    }
    *out = p;
    return SP_DIST_RUN_OK;
}
