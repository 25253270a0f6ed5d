/* report_lanes.c - the thread and task tables of the report.
 *
 * Thread calls are counted from the thread_ids column, not from the
 * reconstruction, so a rank that is not properly nested still gets them.
 * They count every recorded call of the thread (its tasks' calls included):
 * region and time filters do not apply, --ranks and --lanes do. */
#include <stdlib.h>
#include <string.h>

#include "report/report_internal.h"

/* Thread lifetimes are stored relative to the run start; a thread still
 * alive at the end (-1) lived until finalize, when that is known. */
static int64_t thread_wall(const sp_profile *profile, const sp_thread_row *t)
{
    if (t->start_ns < 0)
        return -1;
    if (t->end_ns >= 0)
        return t->end_ns >= t->start_ns ? t->end_ns - t->start_ns : -1;
    int64_t start, finalize;
    if (sp_profile_meta_int(profile, "start_time_ns", &start) != 0 ||
        sp_profile_meta_int(profile, "finalize_time_ns", &finalize) != 0)
        return -1;
    int64_t end = finalize - start;
    return end >= t->start_ns ? end - t->start_ns : -1;
}

/* Calls per thread index of one rank, counted in one pass over its events
 * (threads of a rank are listed together, so this runs once per rank). */
/* busy[t]: time in the thread's OpenMP implicit tasks (its root
 * "omp parallel" calls), for the idle time of workers. */
static void count_thread_calls(const sp_profile *profile, uint32_t rank, uint64_t *counts,
                               int64_t *busy, size_t num_counts)
{
    memset(counts, 0, num_counts * sizeof *counts);
    memset(busy, 0, num_counts * sizeof *busy);
    if (!profile->thread_ids)
        return;
    for (size_t r = 0; r < profile->num_rows; r++) {
        const sp_row *row = &profile->rows[r];
        if (row->rank != rank)
            continue;
        int implicit_tasks = row->region < profile->num_names && profile->parent_ids &&
                             !strcmp(profile->names[row->region], "omp parallel");
        for (uint64_t e = row->offset; e < row->offset + row->count; e++) {
            int64_t t = profile->thread_ids[e];
            if (t >= 0 && (uint64_t)t < num_counts) {
                counts[t]++;
                if (implicit_tasks && profile->parent_ids[e] < 0)
                    busy[t] += profile->end[e] - profile->start[e];
            }
        }
    }
}

int sp_report_lane_tables(sp_report *report, const sp_profile *profile,
                          const sp_selection *selection, const sp_report_source *source)
{
    if (profile->has_thread_table && profile->num_threads) {
        report->threads = malloc(profile->num_threads * sizeof *report->threads);
        size_t num_counts = 1;
        for (size_t k = 0; k < profile->num_threads; k++)
            if (profile->threads[k].index >= 0 && (size_t)profile->threads[k].index >= num_counts)
                num_counts = (size_t)profile->threads[k].index + 1;
        uint64_t *counts = malloc(num_counts * sizeof *counts);
        int64_t *busy = malloc(num_counts * sizeof *busy);
        if (!report->threads || !counts || !busy) {
            free(counts);
            free(busy);
            return -1;
        }
        int64_t counted_rank = -1;
        for (size_t k = 0; k < profile->num_threads; k++) {
            const sp_thread_row *t = &profile->threads[k];
            if (!sp_selection_has_rank(selection, t->rank) ||
                !sp_selection_keeps_lane(selection, profile, t->rank, sp_lane_id(t->index, -1)))
                continue;
            if (counted_rank != (int64_t)t->rank) {
                if (source && source->thread_calls)
                    source->thread_calls(source->ctx, t->rank, counts, busy, num_counts);
                else
                    count_thread_calls(profile, t->rank, counts, busy, num_counts);
                counted_rank = t->rank;
            }
            sp_report_thread_row *row = &report->threads[report->num_threads++];
            row->rank = t->rank;
            row->index = t->index;
            row->name = t->name ? t->name : "";
            row->wall_ns = thread_wall(profile, t);
            row->cpu_ns = t->cpu_ns >= 0 ? t->cpu_ns : -1;
            row->cpu_percent = row->wall_ns > 0 && row->cpu_ns >= 0
                                   ? 100.0 * (double)row->cpu_ns / (double)row->wall_ns
                                   : -1;
            row->calls = t->index >= 0 ? counts[t->index] : 0;
            row->kind = t->kind ? t->kind : "";
            row->idle_ns = -1;
            if (!strcmp(row->kind, "openmp") && row->wall_ns >= 0 && t->index >= 0 &&
                (profile->start || (source && source->thread_calls)))
                row->idle_ns = row->wall_ns > busy[t->index] ? row->wall_ns - busy[t->index] : 0;
            sp_lane_label(profile, t->rank, sp_lane_id(t->index, -1), row->label,
                          sizeof row->label);
        }
        free(counts);
        free(busy);
    }
    if (profile->has_task_table && profile->num_tasks) {
        report->tasks = malloc(profile->num_tasks * sizeof *report->tasks);
        if (!report->tasks)
            return -1;
        for (size_t k = 0; k < profile->num_tasks; k++) {
            const sp_task_row *t = &profile->tasks[k];
            if (!sp_selection_has_rank(selection, t->rank) ||
                !sp_selection_keeps_lane(selection, profile, t->rank, t->index))
                continue;
            report->tasks[report->num_tasks++] = (sp_report_task_row){
                .rank = t->rank,
                .index = t->index,
                .thread_index = t->thread_index,
                .steps = t->steps,
                .running_ns = t->running_ns,
                .suspended_ns = t->suspended_ns,
                .kind = t->kind ? t->kind : "",
                .name = t->name ? t->name : "",
            };
        }
    }
    return 0;
}
