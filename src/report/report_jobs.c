/* report_jobs.c - `report --jobs N`: per-rank trees computed by N worker
 * processes, added to the run's report in rank order by the parent.
 *
 * Processes, not threads: Debian's libhdf5 is built thread-safe
 * (H5is_library_threadsafe says so), but a thread-safe HDF5 runs every API
 * call under one global lock, decompression inside H5Dread included, and
 * reading and decompressing is about half the work: threads would queue.  Worker w takes the w-th,
 * (w+N)-th, ... selected rank and writes each result to its pipe; the parent
 * reads them back in rank order, so the report is the same for every N. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report/report_jobs.h"
#include "scopeprof/stream.h"

typedef struct result_header {
    int32_t status;           /* 0 tree follows, 1 fall back (why follows), -1 failure */
    int32_t has_tree;         /* status 0: 0 for a rank shown from its rows (its
                                 warning follows, in why_len bytes) */
    uint32_t rank;
    uint64_t num_nodes;
    int64_t first_start, last_end;
    uint64_t num_thread_slots;
    uint64_t num_rows;        /* no tree: its rows' durations follow */
    uint64_t why_len;
} result_header;

static int put(FILE *f, const void *buf, size_t n)
{
    return n && fwrite(buf, 1, n, f) != n ? -1 : 0;
}

static int get(FILE *f, void *buf, size_t n)
{
    return n && fread(buf, 1, n, f) != n ? -1 : 0;
}

/* One rank's result on a stream (a worker's pipe, or a buffer sent to
 * process 0 by another process of the launcher): 0 or -1. */
static int write_result(FILE *f, int rc, uint32_t rank, const sp_rank_result *result,
                        const sp_rank_extra *extra, const char *why)
{
    int tree = rc == 0 && result->has_tree;
    const char *text = rc != 0 ? why : !tree && result->warning ? result->warning : "";
    result_header h = {.status = rc, .has_tree = tree, .rank = rank,
                       .num_nodes = tree ? result->tree.num_nodes : 0,
                       .first_start = extra->first_start, .last_end = extra->last_end,
                       .num_thread_slots = rc == 0 ? extra->num_thread_slots : 0,
                       .num_rows = rc == 0 && !tree && result->row_durations ? result->num_rows
                                                                              : 0,
                       .why_len = strlen(text)};
    return put(f, &h, sizeof h) ||
                   (h.num_nodes &&
                    put(f, result->tree.nodes, h.num_nodes * sizeof *result->tree.nodes)) ||
                   (h.num_thread_slots &&
                    (put(f, extra->thread_calls, h.num_thread_slots * sizeof(uint64_t)) ||
                     put(f, extra->thread_busy, h.num_thread_slots * sizeof(int64_t)))) ||
                   (h.num_rows &&
                    put(f, result->row_durations, h.num_rows * sizeof *result->row_durations)) ||
                   (h.why_len && put(f, text, h.why_len)) || fflush(f) != 0
               ? -1
               : 0;
}

/* The result written by write_result: 0, 1 (fall back, why set), -1. */
static int read_result(FILE *f, sp_rank_result *out, sp_rank_extra *extra, char *why,
                       size_t whylen)
{
    memset(out, 0, sizeof *out);
    result_header h;
    if (get(f, &h, sizeof h) != 0) {
        snprintf(why, whylen, "a report worker ended early");
        return 1;
    }
    if (h.status != 0) {
        size_t n = h.why_len < whylen ? (size_t)h.why_len : whylen - 1;
        why[0] = '\0';
        if (get(f, why, n) == 0)
            why[n] = '\0';
        return h.status > 0 ? 1 : -1;
    }
    out->rank = h.rank;
    if (h.has_tree) {
        if (sp_report_tree_init(&out->tree, h.rank, SP_REPORT_ALL_LANES) != 0)
            return -1;
        out->has_tree = 1;
    }
    for (uint64_t n = 0; n < h.num_nodes; n++) {
        sp_report_node node;
        if (get(f, &node, sizeof node) != 0) {
            snprintf(why, whylen, "a report worker ended early");
            return 1;
        }
        /* Same parents in the same order: the same node ids. */
        int64_t id = sp_report_tree_node(&out->tree, node.parent, node.region);
        if (id != (int64_t)n)
            return -1;
        sp_report_node *dst = &out->tree.nodes[id];
        dst->calls = node.calls;
        dst->inclusive = node.inclusive;
        dst->exclusive = node.exclusive;
        dst->minimum = node.minimum;
        dst->maximum = node.maximum;
        dst->fork_lanes = node.fork_lanes;
        dst->fork_lane_total = node.fork_lane_total;
        dst->fork_lane_max = node.fork_lane_max;
        dst->fork_barrier = node.fork_barrier;
    }
    extra->first_start = h.first_start;
    extra->last_end = h.last_end;
    extra->num_thread_slots = (size_t)h.num_thread_slots;
    extra->thread_calls = malloc((h.num_thread_slots + 1) * sizeof *extra->thread_calls);
    extra->thread_busy = malloc((h.num_thread_slots + 1) * sizeof *extra->thread_busy);
    if (!extra->thread_calls || !extra->thread_busy)
        return -1;
    if (h.num_thread_slots &&
        (get(f, extra->thread_calls, h.num_thread_slots * sizeof(uint64_t)) ||
         get(f, extra->thread_busy, h.num_thread_slots * sizeof(int64_t)))) {
        snprintf(why, whylen, "a report worker ended early");
        return 1;
    }
    if (h.num_rows) {
        out->row_durations = malloc(h.num_rows * sizeof *out->row_durations);
        if (!out->row_durations)
            return -1;
        out->num_rows = (size_t)h.num_rows;
        if (get(f, out->row_durations, h.num_rows * sizeof *out->row_durations) != 0) {
            snprintf(why, whylen, "a report worker ended early");
            return 1;
        }
    }
    if (!h.has_tree) {
        /* shown from its rows: the warning instead of a tree */
        if (!(out->warning = malloc(h.why_len + 1)))
            return -1;
        if (get(f, out->warning, (size_t)h.why_len) != 0) {
            snprintf(why, whylen, "a report worker ended early");
            return 1;
        }
        out->warning[h.why_len] = '\0';
    }
    return 0;
}

/* In the worker: its ranks, one result each. */
static void worker_run(sp_report_jobs *jobs, sp_report *report, const sp_report_options *opt,
                       size_t w, FILE *out)
{
    for (size_t k = w; k < report->num_ranks; k += jobs->count) {
        sp_rank_result result;
        sp_rank_extra extra = {INT64_MAX, INT64_MIN, 0, NULL, NULL};
        char why[1024] = "";
        int rc = jobs->compute(jobs->ctx, report, opt, report->ranks[k], &result, &extra, why,
                               sizeof why);
        int bad = write_result(out, rc, report->ranks[k], &result, &extra, why);
        if (rc == 0)
            sp_rank_result_free(&result);
        free(extra.thread_calls);
        free(extra.thread_busy);
        if (bad || rc != 0)
            return;
    }
}

int sp_report_jobs_start(sp_report_jobs *jobs, sp_report *report, const sp_report_options *opt)
{
    jobs->pid = calloc(jobs->count, sizeof *jobs->pid);
    jobs->fd = malloc(jobs->count * sizeof *jobs->fd);
    jobs->in = calloc(jobs->count, sizeof *jobs->in);
    if (!jobs->pid || !jobs->fd || !jobs->in)
        return -1;
    for (size_t w = 0; w < jobs->count; w++)
        jobs->fd[w] = -1;
    /* no HDF5 file open across fork(): the workers open their own */
    sp_stream_release_reader(NULL);
    for (size_t w = 0; w < jobs->count; w++) {
        int p[2];
        if (pipe(p) != 0)
            return -1;
        pid_t pid = fork();
        if (pid < 0) {
            close(p[0]);
            close(p[1]);
            return -1;
        }
        if (pid == 0) {
            close(p[0]);
            for (size_t v = 0; v < w; v++)
                close(jobs->fd[v]);
            signal(SIGPIPE, SIG_DFL);
            FILE *out = fdopen(p[1], "w");
            if (out) {
                worker_run(jobs, report, opt, w, out);
                fclose(out);
            }
            _exit(0);
        }
        close(p[1]);
        jobs->pid[w] = pid;
        jobs->fd[w] = p[0];
        if (!(jobs->in[w] = fdopen(p[0], "r")))
            return -1;
    }
    return 0;
}

int sp_report_jobs_next(sp_report_jobs *jobs, size_t k, sp_rank_result *out,
                        sp_rank_extra *extra, char *why, size_t whylen)
{
    return read_result(jobs->in[k % jobs->count], out, extra, why, whylen);
}

void sp_report_jobs_stop(sp_report_jobs *jobs)
{
    for (size_t w = 0; jobs->fd && w < jobs->count; w++) {
        /* a worker still writing gets EPIPE and ends */
        if (jobs->in && jobs->in[w])
            fclose(jobs->in[w]);
        else if (jobs->fd[w] >= 0)
            close(jobs->fd[w]);
    }
    for (size_t w = 0; jobs->pid && w < jobs->count; w++)
        if (jobs->pid[w] > 0) {
            int status;
            while (waitpid(jobs->pid[w], &status, 0) < 0 && errno == EINTR) {
            }
        }
    free(jobs->pid);
    free(jobs->fd);
    free(jobs->in);
    jobs->pid = NULL;
    jobs->fd = NULL;
    jobs->in = NULL;
}

/* ---- other processes of a launcher (sp_report_remote) ---------------------- */

int sp_report_remote_fetch(const sp_report_remote *remote, int from, sp_rank_result *out,
                           sp_rank_extra *extra, char *why, size_t whylen)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    int got = remote->fetch(remote->ctx, from, &buf, &len);
    if (got != 0) {
        free(buf);
        if (got > 0) {
            snprintf(why, whylen, "process %d stopped streaming its ranks", from);
            return 1;
        }
        snprintf(why, whylen, "cannot receive a rank's tree from process %d", from);
        return -1;
    }
    FILE *f = len ? fmemopen(buf, len, "rb") : NULL;
    int rc = f ? read_result(f, out, extra, why, whylen) : -1;
    if (!f)
        snprintf(why, whylen, "process %d sent nothing", from);
    if (f)
        fclose(f);
    free(buf);
    return rc;
}

int sp_report_remote_send(const sp_report_remote *remote, int rc, uint32_t rank,
                          const sp_rank_result *result, const sp_rank_extra *extra,
                          const char *why)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return -1;
    int bad = write_result(f, rc, rank, result, extra, why);
    if (fclose(f) != 0)
        bad = -1;
    int sent = bad ? -1 : remote->deliver(remote->ctx, buf, len);
    free(buf);
    return sent;
}
