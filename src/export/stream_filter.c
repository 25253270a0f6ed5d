/* stream_filter.c - the selection on a call stream, and the reader's checks
 * of what a streamed export does not write (stream_filter.h). */
#include "stream_filter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/h5.h"
#include "scopeprof/report.h"
#include "stream/fork_ids_check.h"

int sp_stream_filter_init(sp_stream_filter *f, const sp_run_source *src, const sp_selection *sel,
                          char *why, size_t whylen)
{
    const sp_profile *profile = src->profile;
    memset(f, 0, sizeof *f);
    f->sel = sel;
    f->profile = profile;
    int64_t origin = 0;
    /* without metadata start_time_ns, the run's first event (the rows'
     * statistics, or one read of the starts) */
    if (sel && (sel->has_from || sel->has_to) &&
        sp_run_source_origin(src, &origin, why, whylen) != 0)
        return 1;
    f->from = sel && sel->has_from ? origin + sp_selection_seconds_to_ns(sel->from_s) : INT64_MIN;
    f->to = sel && sel->has_to ? origin + sp_selection_seconds_to_ns(sel->to_s) : INT64_MAX;
    f->min_duration =
        sel && sel->has_min_duration ? sp_selection_seconds_to_ns(sel->min_duration_s) : INT64_MIN;
    f->region_keep = malloc(profile->num_names ? profile->num_names : 1);
    if (!f->region_keep)
        return -1;
    for (size_t r = 0; r < profile->num_names; r++)
        f->region_keep[r] = (unsigned char)sp_selection_keeps_region(sel, profile->names[r]);
    return 0;
}

void sp_stream_filter_rank(sp_stream_filter *f, uint32_t rank)
{
    f->rank = rank;
    f->num_choices = 0;
}

static int keeps_lane(sp_stream_filter *f, int64_t lane)
{
    for (size_t i = 0; i < f->num_choices; i++)
        if (f->choices[i].lane == lane)
            return f->choices[i].keep;
    int keep = sp_selection_keeps_lane(f->sel, f->profile, f->rank, lane);
    sp_lane_choice *grown = realloc(f->choices, (f->num_choices + 1) * sizeof *grown);
    if (grown) {
        f->choices = grown;
        f->choices[f->num_choices++] = (sp_lane_choice){lane, keep};
    }
    return keep;
}

int sp_stream_filter_keeps(sp_stream_filter *f, const sp_stream_call *call)
{
    if (!f->region_keep[call->region] || call->end < f->from || call->start > f->to ||
        call->end - call->start < f->min_duration)
        return 0;
    return !(f->sel && f->sel->lanes) || keeps_lane(f, call->select_lane);
}

void sp_stream_filter_free(sp_stream_filter *f)
{
    free(f->region_keep);
    free(f->choices);
    memset(f, 0, sizeof *f);
}

long sp_stream_rank_file(const sp_run_source *src, uint32_t rank)
{
    for (size_t r = 0; r < src->profile->num_rows; r++)
        if (src->profile->rows[r].rank == rank)
            return (long)src->row_file[r];
    return -1;
}

/* The reader's check of the fork parent ids of every file with fork edges,
 * in windows (stream/fork_ids_check.h; the stream does not read them):
 * 0, or 1 with why set (the in-memory path then words the problem). */
static int check_fork_files(const sp_run_source *src, char *why, size_t whylen)
{
    for (size_t f = 0; f < src->num_paths; f++)
        if (sp_stream_check_fork_ids(src, f, why, whylen) != 0)
            return 1;
    return 0;
}

/* One rank with the reader's checks, its calls free to cross (returns 2
 * then, why holding the reconstruction's words); the visitor keeps
 * nothing.  0, 1 or 2 as sp_stream_rank_with. */
static int check_rank(const sp_run_source *src, uint32_t rank, int64_t offset,
                      int64_t *first_start, char *why, size_t whylen)
{
    sp_call_visitor none = sp_call_visitor_checks_only;
    sp_stream_options crossing_allowed = {NULL, NULL, 1};
    sp_rank_stream_info info;
    int rc = sp_stream_rank_with(src, rank, offset, &none, &crossing_allowed, &info, why, whylen);
    if (rc != 1 && first_start && info.first_start < *first_start)
        *first_start = info.first_start;
    sp_rank_stream_info_free(&info);
    return rc < 0 ? 1 : rc;
}

static int is_selected(const uint32_t *selected, long num_selected, uint32_t rank)
{
    for (long k = 0; k < num_selected; k++)
        if (selected[k] == rank)
            return 1;
    return 0;
}

int sp_stream_check_run(const sp_run_source *src, const uint32_t *selected, long num_selected,
                        int64_t *first_start, char *why, size_t whylen)
{
    if (check_fork_files(src, why, whylen) != 0)
        return 1;
    const sp_profile *p = src->profile;
    uint32_t last = UINT32_MAX;
    for (size_t r = 0; r < p->num_rows; r++) {
        uint32_t rank = p->rows[r].rank;
        if (rank == last)
            continue;
        last = rank;
        if (is_selected(selected, num_selected, rank))
            continue;
        /* offset 0: first_start is raw */
        if (check_rank(src, rank, 0, first_start, why, whylen) == 1)
            return 1;
    }
    return 0;
}

int sp_stream_nesting_error(const sp_run_source *src, const sp_selection *sel, uint32_t *rank,
                            char *err, size_t errlen)
{
    const sp_profile *p = src->profile;
    uint32_t *ranks = NULL;
    long n = sp_selected_ranks(p, sel, &ranks);
    if (n < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char why[1024] = "";
    int rc = check_fork_files(src, why, sizeof why);
    /* the first selected rank that crosses, in the exporters' order */
    long failed = -1;
    for (long k = 0; rc == 0 && k < n && failed < 0; k++) {
        int got = check_rank(src, ranks[k], sp_rank_clock_offset(p, ranks[k]), NULL, why,
                             sizeof why);
        if (got == 2) {
            failed = k;
            snprintf(err, errlen, "%s: rank %u: %s", p->path ? p->path : "profile", ranks[k],
                     why);
        }
        rc = got == 1;
    }
    if (rc == 0 && failed < 0) {
        snprintf(why, sizeof why, "no selected rank whose calls do not nest");
        rc = 1;
    }
    /* the reader's checks of every other rank, which sp_load_run makes first */
    uint32_t last = UINT32_MAX;
    for (size_t r = 0; rc == 0 && r < p->num_rows; r++) {
        uint32_t other = p->rows[r].rank;
        if (other == last)
            continue;
        last = other;
        if (is_selected(ranks, failed + 1, other))
            continue; /* streamed above */
        rc = check_rank(src, other, 0, NULL, why, sizeof why) == 1;
    }
    /* the columns the call stream leaves unread: read when the source
     * opened (run_source.c) */
    if (rc == 0 && src->unreadable[0]) {
        snprintf(why, sizeof why, "%s", src->unreadable);
        rc = 1;
    }
    if (rc == 0)
        *rank = ranks[failed];
    else
        snprintf(err, errlen, "%s", why);
    free(ranks);
    return rc;
}

void sp_stream_rows_of_rank(const sp_profile *skeleton, uint32_t rank, int64_t *row_of_region)
{
    for (size_t r = 0; r < skeleton->num_names; r++)
        row_of_region[r] = -1;
    for (size_t r = 0; r < skeleton->num_rows; r++) {
        const sp_row *row = &skeleton->rows[r];
        if (row->rank == rank && row->region < skeleton->num_names)
            row_of_region[row->region] = (int64_t)r;
    }
}

int sp_stream_rank_grafted(const sp_run_source *src, const sp_selection *sel, uint32_t rank,
                           long file, sp_profile **full, sp_rank_data *data, char *why,
                           size_t whylen)
{
    if (sp_run_source_rank_alone(src, rank, file, sel, sel && (sel->has_from || sel->has_to),
                                 full, data, why, whylen) != 0)
        return 1;
    const sp_profile *skeleton = src->profile;
    int64_t *rows = NULL;
    int grafted = sp_rank_data_graft(*full, data, NULL);
    int rc = grafted != 0 ? -1 : 0;
    if (rc == 0)
        rc = sp_run_source_run_regions(src, *full, data);
    if (rc == 0 &&
        !(rows = malloc((skeleton->num_names ? skeleton->num_names : 1) * sizeof *rows)))
        rc = -1;
    if (rc == 0) {
        sp_stream_rows_of_rank(skeleton, rank, rows);
        free(data->row_of_region);
        data->row_of_region = rows;
        return 0;
    }
    sp_rank_data_free(data);
    sp_profile_free(*full);
    *full = NULL;
    if (grafted != 0)
        return sp_graft_failure(grafted, rank, why, whylen);
    snprintf(why, whylen, "out of memory");
    return -1;
}
