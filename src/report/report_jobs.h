/* report_jobs.h - per-rank trees computed by worker processes (report_jobs.c). */
#ifndef SCOPEPROF_REPORT_JOBS_H
#define SCOPEPROF_REPORT_JOBS_H

#include <stdio.h>
#include <sys/types.h>

#include "report/report_internal.h"

/* What a rank's pass learns besides its tree (wall, thread table counts). */
typedef struct sp_rank_extra {
    int64_t first_start, last_end;
    size_t num_thread_slots;
    uint64_t *thread_calls;
    int64_t *thread_busy;
} sp_rank_extra;

typedef struct sp_report_jobs {
    size_t count;             /* worker processes */
    /* One rank's tree, in a worker: 0, 1 (fall back, why set), -1 failure. */
    int (*compute)(void *ctx, sp_report *report, const sp_report_options *opt, uint32_t rank,
                   sp_rank_result *out, sp_rank_extra *extra, char *why, size_t whylen);
    void *ctx;
    pid_t *pid;
    int *fd;
    FILE **in;                /* fd as streams */
} sp_report_jobs;

/* Fork the workers over report->ranks.  0 or -1 (then stop what started). */
int sp_report_jobs_start(sp_report_jobs *jobs, sp_report *report, const sp_report_options *opt);
/* The result of the k-th selected rank (call with k = 0, 1, 2, ...):
 * 0, 1 (fall back, why set), -1 failure. */
int sp_report_jobs_next(sp_report_jobs *jobs, size_t k, sp_rank_result *out,
                        sp_rank_extra *extra, char *why, size_t whylen);
/* Close the pipes and reap every worker. */
void sp_report_jobs_stop(sp_report_jobs *jobs);

/* Through sp_report_remote (other processes of a launcher): on process 0,
 * the next result of process `from` (as sp_report_jobs_next); on the
 * others, send one (rc, why as the worker's compute returned them): 0, 1
 * not wanted any more, -1. */
int sp_report_remote_fetch(const sp_report_remote *remote, int from, sp_rank_result *out,
                           sp_rank_extra *extra, char *why, size_t whylen);
int sp_report_remote_send(const sp_report_remote *remote, int rc, uint32_t rank,
                          const sp_rank_result *result, const sp_rank_extra *extra,
                          const char *why);

#endif
