/* test_spill.c - bounded memory and killed runs: the memory cap spills to
 * disk and the final file still holds every call; ON_FULL=stop keeps exact
 * counts; SIGKILL leaves a spill file that `scopeprof recover` reads, even
 * torn; SIGTERM writes the normal file and ends with the signal's status. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harness.h"
#include "model/spill_format.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#endif

/* spill_calls count B: B batches of 1024 calls cycling r0..r6. */
static unsigned long expected_calls(int k, unsigned long batches)
{
    return batches * (1024 / 7 + (k < 1024 % 7 ? 1 : 0));
}

static int64_t meta_int(const sp_profile *p, const char *key)
{
    int64_t v = -1;
    cr_assert_eq(sp_profile_meta_int(p, key, &v), 0, "metadata %s missing", key);
    return v;
}

/* Name of the one spill file in the run's directory, or NULL. */
static const char *spill_file(const struct harness_run *run)
{
    static char name[512];
    DIR *d = opendir(run->dir);
    const char *found = NULL;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (fnmatch("*.spill.*", e->d_name, 0) == 0) {
            snprintf(name, sizeof name, "%s", e->d_name);
            found = name;
        }
    if (d)
        closedir(d);
    return found;
}

/* Run spill_calls in the background through sh, wait for MARKER, send
 * `signal`, and print the program's exit status as "status=N". */
static void run_and_signal(struct harness_run *run, const char *signal, const char *mode,
                           const char *n, const char *extra_arg, const char *const *env)
{
    char script[1024];
    snprintf(script, sizeof script,
             "\"$0\" %s %s marker %s & pid=$!; i=0;"
             "while [ ! -e marker ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done;"
             "kill -%s $pid; wait $pid; echo status=$?",
             mode, n, extra_arg ? extra_arg : "", signal);
    const char *argv[] = {"/bin/sh", "-c", script, harness_program("spill_calls"), NULL};
    cr_assert_eq(harness_run(run, argv, env, 1), 0);
    cr_assert(harness_exists(run, "marker"), "the program never got to its marker: %s", run->err);
}

/* `scopeprof recover` on files of `run`, in that directory. */
static void recover(struct harness_run *out, const struct harness_run *run, const char *input,
                    const char *output)
{
    char in_path[1024], out_path[1024];
    snprintf(in_path, sizeof in_path, "%s", harness_path(run, input));
    snprintf(out_path, sizeof out_path, "%s", harness_path(run, output));
    const char *argv[] = {SCOPEPROF_EXE, "recover", in_path, "-o", out_path, NULL};
    cr_assert_eq(harness_run(out, argv, NULL, 0), 0);
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(spill, cap_spills_and_the_file_keeps_every_call)
{
    const unsigned long batches = 2000; /* 2 050 000 calls, 49 MB of events */
    struct harness_run run;
    const char *argv[] = {harness_program("spill_calls"), "count", "2000", NULL};
    const char *env[] = {"SCOPE_PROFILER_MAX_MEMORY=8M", NULL};
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    long hwm_kb = -1;
    cr_assert_eq(sscanf(strstr(run.out, "vmhwm_kb="), "vmhwm_kb=%ld", &hwm_kb), 1, "%s", run.out);
#ifndef SANITIZED
    /* 8 MiB of events in memory plus the program; without the cap ~60 MB */
    cr_assert_lt(hwm_kb, 24 * 1024, "peak resident size %ld kB under an 8 MiB cap", hwm_kb);
#endif
    cr_assert_eq(spill_file(&run), NULL, "the spill file was not removed");

    sp_profile *p = harness_load(&run, "spill_rank00000.h5");
    cr_assert_eq(harness_calls(p, "batch"), batches);
    unsigned long checksum = 0, expected_checksum = 0;
    for (int k = 0; k < 7; k++) {
        char name[8];
        snprintf(name, sizeof name, "r%d", k);
        cr_assert_eq(harness_calls(p, name), expected_calls(k, batches), "%s", name);
        expected_checksum += (unsigned long)k * expected_calls(k, batches);
        const sp_row *row = harness_row(p, 0, name);
        for (uint64_t i = 0; i < row->count; i++)
            checksum += (unsigned long)k;
    }
    cr_assert_eq(checksum, expected_checksum);
    cr_assert_eq(p->num_events, batches * 1025);
    cr_assert_eq(sp_profile_meta(p, "dropped_calls"), NULL);

    /* every event once, in order, inside its batch: spilled and in-memory
     * parts joined without a gap or a duplicate */
    cr_assert_not_null(p->parent_ids);
    const sp_row *batch = harness_row(p, 0, "batch");
    for (size_t r = 0; r < p->num_rows; r++) {
        const sp_row *row = &p->rows[r];
        for (uint64_t i = 1; i < row->count; i++)
            cr_assert_gt(p->start[row->offset + i], p->start[row->offset + i - 1] - 1);
        if (row == batch)
            continue;
        for (uint64_t i = 0; i < row->count; i++) {
            int64_t parent = p->parent_ids[row->offset + i];
            cr_assert_geq(parent, 0);
        }
    }
    sp_profile_free(p);
    harness_run_free(&run);
}

/* The final write streams the spilled calls (src/capture_stream.c): the
 * whole process, final write included, stays near the cap plus the
 * writer's window (max(cap, 32 MiB)), where converting everything in
 * memory took about 100 bytes per call (820 MB for 8.2 M calls, 5 GB for
 * 50 M).  BATCHES x 1025 calls under a cap of CAP_MIB. */
static void final_write_stays_bounded(unsigned long batches, long cap_mib)
{
    struct harness_run run;
    char count[32], cap[64];
    snprintf(count, sizeof count, "%lu", batches);
    snprintf(cap, sizeof cap, "SCOPE_PROFILER_MAX_MEMORY=%ldM", cap_mib);
    const char *argv[] = {harness_program("spill_calls"), "count", count, NULL};
    const char *env[] = {cap, NULL};
    struct rusage before;
    cr_assert_eq(getrusage(RUSAGE_CHILDREN, &before), 0);
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    struct rusage after;
    cr_assert_eq(getrusage(RUSAGE_CHILDREN, &after), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    cr_assert_eq(spill_file(&run), NULL, "the spill file was not removed");
#ifndef SANITIZED
    /* the largest child so far, in kB: the program, final write included
     * (no earlier child of this test was larger than the bound either) */
    long peak_kb = after.ru_maxrss;
    long window_mib = cap_mib > 32 ? cap_mib : 32;
    long bound_kb = (cap_mib + window_mib + 48) * 1024;
    cr_assert_lt(peak_kb, bound_kb, "peak resident size %ld kB, bound %ld kB (%ld MiB cap, "
                 "%ld MiB window, 48 MiB for the program, HDF5 and buffers)", peak_kb, bound_kb,
                 cap_mib, window_mib);
#endif
    (void)before;

    sp_profile *p = harness_load(&run, "spill_rank00000.h5");
    cr_assert_eq(p->num_events, batches * 1025);
    cr_assert_eq(harness_calls(p, "batch"), batches);
    for (int k = 0; k < 7; k++) {
        char name[8];
        snprintf(name, sizeof name, "r%d", k);
        cr_assert_eq(harness_calls(p, name), expected_calls(k, batches), "%s", name);
    }
    /* every short call is the child of the batch around it */
    cr_assert_not_null(p->call_ids);
    cr_assert_not_null(p->parent_ids);
    const sp_row *batch = harness_row(p, 0, "batch");
    int64_t *batch_of_id = malloc(p->num_events * sizeof *batch_of_id);
    cr_assert_not_null(batch_of_id);
    for (uint64_t i = 0; i < p->num_events; i++)
        batch_of_id[i] = -1;
    for (uint64_t i = 0; i < batch->count; i++) {
        uint64_t e = batch->offset + i;
        cr_assert_eq(p->parent_ids[e], -1, "a batch call has a parent");
        cr_assert(p->call_ids[e] >= 0 && (uint64_t)p->call_ids[e] < p->num_events);
        batch_of_id[p->call_ids[e]] = (int64_t)e;
    }
    for (size_t r = 0; r < p->num_rows; r++) {
        const sp_row *row = &p->rows[r];
        if (row == batch)
            continue;
        for (uint64_t i = 0; i < row->count; i++) {
            uint64_t e = row->offset + i;
            int64_t parent = p->parent_ids[e];
            cr_assert(parent >= 0 && (uint64_t)parent < p->num_events && batch_of_id[parent] >= 0,
                      "call %llu of %s: parent id %lld is not a batch call",
                      (unsigned long long)i, p->names[row->region], (long long)parent);
            int64_t b = batch_of_id[parent];
            cr_assert(p->start[b] <= p->start[e] && p->end[e] <= p->end[b]);
        }
    }
    free(batch_of_id);
    sp_profile_free(p);

    /* check (summary statistics against the events, ids) and report (the
     * stored parents against the timestamps) accept the file */
    char path[1024];
    snprintf(path, sizeof path, "%s", harness_path(&run, "spill_rank00000.h5"));
    const char *commands[][4] = {{SCOPEPROF_EXE, "validate", path, NULL},
                                 {SCOPEPROF_EXE, "report", path, NULL}};
    for (int c = 0; c < 2; c++) {
        struct harness_run cmd;
        cr_assert_eq(harness_run(&cmd, commands[c], NULL, 0), 0);
        cr_assert_eq(cmd.exit_code, 0, "scopeprof %s: exit %d (signal %d): %s", commands[c][1],
                     cmd.exit_code, cmd.signal, cmd.err);
        harness_run_free(&cmd);
    }
    harness_run_free(&run);
}

Test(spill, final_write_of_8_million_calls_stays_bounded, .timeout = 300)
{
    final_write_stays_bounded(8000, 8); /* 8 200 000 calls, 197 MB of events */
}

/* The issue's own case: 50 M calls (1.2 GB of events) under a 64 MiB cap,
 * about 75 s here.  Not under the sanitizers: the bound is not checked
 * there and the 8 M case above runs the same code. */
Test(spill, final_write_of_50_million_calls_under_64m_stays_bounded, .timeout = 900)
{
#ifdef SANITIZED
    cr_skip_test("50 M calls under a sanitizer: the 8 M case covers the code");
#else
    final_write_stays_bounded(48781, 64); /* 50 000 525 calls */
#endif
}

Test(spill, on_full_stop_keeps_exact_counts)
{
    const unsigned long batches = 500; /* 512 500 calls, 12 MB of events */
    struct harness_run run;
    const char *argv[] = {harness_program("spill_calls"), "count", "500", NULL};
    const char *env[] = {"SCOPE_PROFILER_MAX_MEMORY=4M", "SCOPE_PROFILER_ON_FULL=stop", NULL};
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    cr_assert_eq(lines(run.err), 1, "stderr: %s", run.err);
    unsigned long said = 0;
    const char *at = strstr(run.err, "stopped the timeline: ");
    cr_assert_not_null(at, "stderr: %s", run.err);
    cr_assert_eq(sscanf(at, "stopped the timeline: %lu calls", &said), 1);
    cr_assert_eq(spill_file(&run), NULL, "ON_FULL=stop must not spill");

    sp_profile *p = harness_load(&run, "spill_rank00000.h5");
    cr_assert_lt(p->num_events, batches * 1025);
    cr_assert_eq(p->num_events + said, batches * 1025);
    cr_assert_eq(meta_int(p, "dropped_calls"), (int64_t)said);

    /* per region: kept + dropped = made */
    const sp_meta *by_region = sp_profile_meta(p, "dropped_calls_by_region");
    cr_assert_not_null(by_region);
    cr_assert_eq(by_region->type, SP_META_STRINGS);
    unsigned long dropped_sum = 0;
    for (size_t i = 0; i < by_region->list_len; i++) {
        char name[64];
        unsigned long count = 0;
        long long total = -1;
        cr_assert_eq(sscanf(by_region->list[i], "%63[^=]=%lu:%lld", name, &count, &total), 3,
                     "entry '%s'", by_region->list[i]);
        cr_assert_geq(total, 0);
        unsigned long made = !strcmp(name, "batch") ? batches
                             : expected_calls(name[1] - '0', batches);
        cr_assert_eq(harness_calls(p, name) + count, made, "%s", name);
        dropped_sum += count;
    }
    cr_assert_eq(dropped_sum, said);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(spill, sigkill_leaves_a_spill_file_that_recover_reads)
{
    /* 100 000 calls, a sleep past the flush interval, then 512 calls: the
     * first CPU sample after the sleep (at most 256 calls later) spills
     * everything before it, and only then is the marker written. */
    struct harness_run run, rec;
    const char *env[] = {"SCOPE_PROFILER_FLUSH_INTERVAL=0.2", NULL};
    run_and_signal(&run, "KILL", "kill", "100000", "400", env);
    cr_assert(strstr(run.out, "status=137"), "stdout: %s stderr: %s", run.out, run.err);
    cr_assert_eq(harness_count_files(&run, "*.h5"), 0);
    const char *spill = spill_file(&run);
    cr_assert_not_null(spill, "no spill file after SIGKILL");
    char spill_name[512];
    snprintf(spill_name, sizeof spill_name, "%s", spill);

    recover(&rec, &run, spill_name, "recovered.h5");
    cr_assert_eq(rec.exit_code, 0, "stderr: %s", rec.err);
    cr_assert_str_eq(rec.err, "");
    cr_assert(strstr(rec.out, "recovered "), "%s", rec.out);
    sp_profile *p = harness_load(&run, "recovered.h5");
    cr_assert_geq(p->num_events, 100000);
    cr_assert_leq(p->num_events, 100512);
    for (int k = 0; k < 7; k++) {
        char name[8];
        snprintf(name, sizeof name, "r%d", k);
        cr_assert_geq(harness_calls(p, name), 100000 / 7, "%s", name);
    }
    cr_assert(p->has_thread_table);
    cr_assert_str_eq(p->threads[0].name, "MainThread");
    cr_assert_eq(meta_int(p, "mpi_rank"), 0);
    cr_assert_not_null(sp_profile_meta_string(p, "recovered_from"));
    sp_profile_free(p);
    harness_run_free(&rec);

    /* torn: cut the last frame in the middle; recover keeps the frames
     * before it, exactly */
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s", harness_path(&run, spill_name));
    sp_spill_reader *r = sp_spill_open(path, err, sizeof err);
    cr_assert_not_null(r, "%s", err);
    sp_spill_frame frame;
    const void *payload;
    uint64_t offset = sizeof(sp_spill_header), last_offset = 0, events = 0, last_events = 0;
    while (sp_spill_next(r, &frame, &payload, err, sizeof err) == 1) {
        last_offset = offset;
        offset += sizeof frame + frame.length;
        last_events = frame.type == SP_SPILL_FRAME_EVENTS ? frame.count : 0;
        events += last_events;
    }
    cr_assert_eq(sp_spill_torn_bytes(r), 0);
    sp_spill_close(r);
    cr_assert_gt(last_events, 0, "the last frame holds events");
    cr_assert_eq(truncate(path, (off_t)(last_offset + sizeof frame + 40)), 0);

    recover(&rec, &run, spill_name, "torn.h5");
    cr_assert_eq(rec.exit_code, 0, "stderr: %s", rec.err);
    cr_assert(strstr(rec.err, "torn frame"), "stderr: %s", rec.err);
    cr_assert_eq(lines(rec.err), 1, "stderr: %s", rec.err);
    p = harness_load(&run, "torn.h5");
    cr_assert_eq(p->num_events, events - last_events);
    sp_profile_free(p);
    harness_run_free(&rec);
    harness_run_free(&run);
}

Test(spill, sigterm_writes_the_normal_file_and_keeps_the_status)
{
    /* a cap small enough to spill while running: the file joins both */
    struct harness_run run;
    const char *env[] = {"SCOPE_PROFILER_MAX_MEMORY=2M", NULL};
    run_and_signal(&run, "TERM", "loop", "300000", NULL, env);
    cr_assert(strstr(run.out, "status=143"), "stdout: %s stderr: %s", run.out, run.err);
    cr_assert(strstr(run.err, "SIGTERM received: writing the profile before terminating"),
              "stderr: %s", run.err);
    cr_assert_eq(spill_file(&run), NULL, "the spill file was not removed");
    sp_profile *p = harness_load(&run, "spill_rank00000.h5");
    cr_assert_geq(p->num_events, 300000);
    /* calls are r0..r6 in turn: counts differ by at most one */
    unsigned long lo = ~0ul, hi = 0;
    for (int k = 0; k < 7; k++) {
        char name[8];
        snprintf(name, sizeof name, "r%d", k);
        unsigned long c = harness_calls(p, name);
        lo = c < lo ? c : lo;
        hi = c > hi ? c : hi;
    }
    cr_assert_leq(hi - lo, 1);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(spill, sigterm_while_blocked_ends_after_the_grace_time)
{
    /* No call after the signal: nothing can write the file safely, so the
     * default action runs after the grace time; what was spilled is kept. */
    struct harness_run run, rec;
    const char *env[] = {"SCOPE_PROFILER_MAX_MEMORY=2M", NULL};
    run_and_signal(&run, "TERM", "block", "300000", NULL, env);
    cr_assert(strstr(run.out, "status=143"), "stdout: %s stderr: %s", run.out, run.err);
    cr_assert_eq(harness_count_files(&run, "*.h5"), 0);
    const char *spill = spill_file(&run);
    cr_assert_not_null(spill);
    char spill_name[512];
    snprintf(spill_name, sizeof spill_name, "%s", spill);
    recover(&rec, &run, spill_name, "recovered.h5");
    cr_assert_eq(rec.exit_code, 0, "stderr: %s", rec.err);
    sp_profile *p = harness_load(&run, "recovered.h5");
    cr_assert_gt(p->num_events, 0);
    cr_assert_lt(p->num_events, 300000);
    sp_profile_free(p);
    harness_run_free(&rec);
    harness_run_free(&run);
}

Test(spill, recover_refuses_what_is_not_a_spill_file)
{
    struct harness_run run, rec;
    const char *argv[] = {"/bin/sh", "-c",
                          ": > empty.spill; echo 'hello world, not a spill file' > junk.spill",
                          NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 0), 0);

    recover(&rec, &run, "empty.spill", "out.h5");
    cr_assert_eq(rec.exit_code, 1);
    cr_assert_eq(lines(rec.err), 1, "stderr: %s", rec.err);
    cr_assert(strstr(rec.err, "empty.spill: empty file"), "stderr: %s", rec.err);
    harness_run_free(&rec);

    recover(&rec, &run, "junk.spill", "out.h5");
    cr_assert_eq(rec.exit_code, 1);
    cr_assert_eq(lines(rec.err), 1, "stderr: %s", rec.err);
    cr_assert(strstr(rec.err, "junk.spill: not a scopeprof spill file"), "stderr: %s", rec.err);
    harness_run_free(&rec);
    cr_assert_eq(harness_count_files(&run, "*.h5"), 0);

    const char *missing_output[] = {SCOPEPROF_EXE, "recover", "x.spill", NULL};
    cr_assert_eq(harness_run(&rec, missing_output, NULL, 0), 0);
    cr_assert_eq(rec.exit_code, 2);
    harness_run_free(&rec);
    const char *help[] = {SCOPEPROF_EXE, "recover", "--help", NULL};
    cr_assert_eq(harness_run(&rec, help, NULL, 0), 0);
    cr_assert_eq(rec.exit_code, 0);
    cr_assert(strstr(rec.out, "usage: scopeprof recover"), "%s", rec.out);
    harness_run_free(&rec);
    harness_run_free(&run);
}

/* sp_reset after spilling: what was spilled before the reset is dropped
 * with the rest, and the spill file is gone. */
Test(spill, reset_drops_what_was_spilled_before)
{
    struct harness_run run;
    const char *argv[] = {harness_program("spill_reset"), NULL};
    const char *env[] = {"SCOPE_PROFILER_MAX_MEMORY=1M", NULL};
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    cr_assert(strstr(run.out, "reset=0 before=0 after=1000"), "stdout: %s", run.out);
    sp_profile *p = harness_load(&run, "spill_reset_rank00000.h5");
    cr_expect_eq(harness_calls(p, "before"), 0);
    cr_expect_eq(harness_calls(p, "after"), 1000);
    cr_expect_eq(harness_count_files(&run, "*.spill.*"), 0);
    sp_profile_free(p);
    harness_run_free(&run);
}
