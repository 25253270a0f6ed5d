/* cmd_export.c - `scopeprof export FORMAT FILES... -o OUT [filters]`:
 * option parsing and output files; the formats live in src/export_*.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "commands.h"
#include "dist/dist.h"
#include "export/export_stream.h"
#include "export_files_streamed.h"
#include "scopeprof/export.h"
#include "scopeprof/h5.h"
#include "scopeprof/stream.h"

#define CMD "export"

static const char export_help[] =
    "usage: scopeprof export FORMAT FILES... [-o OUT] [options]\n"
    "\n"
    "Write the calls of one run (rank files, merged files, or files written by the\n"
    "Python scope-profiler) in a format other tools read.  Exports stream: memory\n"
    "stays bounded by the input, whatever the output size.\n"
    "\n"
    "formats:\n"
    "  speedscope  speedscope.app JSON: one profile per rank and lane (default OUT\n"
    "              profile.speedscope.json)\n"
    "  perfetto    Perfetto's native protobuf trace for ui.perfetto.dev: a track per\n"
    "              rank and lane, about 22 bytes per call; the format for large\n"
    "              runs (default OUT profile.pftrace)\n"
    "  chrome      Chrome trace JSON (chrome://tracing, Perfetto): pid = rank, one\n"
    "              tid per lane (default OUT profile.trace.json; alias chrome-trace)\n"
    "  prof        Python pstats files, one per rank: OUT_rank<R>.prof (default OUT\n"
    "              profile); load with pstats.Stats, snakeviz...\n"
    "  folded      folded stacks 'a;b;c <exclusive ns>' for flamegraph.pl/inferno;\n"
    "              stacks start with 'rank R' when several ranks are exported and\n"
    "              with the lane label when a rank has several lanes (default OUT\n"
    "              profile.folded)\n"
    "  json        lossless scope-profiler JSON profile, integer ns (row filters\n"
    "              only: --ranks, --include, --exclude) (default OUT profile.json)\n"
    "  csv         one row per call (default OUT profile.csv)\n"
    "  otf2        OTF2 archive for Vampir, Scalasca, otf2-print: OUT is a directory\n"
    "              (OUT/traces.otf2), one location per rank and lane (default OUT\n"
    "              profile_otf2; needs a build with libotf2)\n"
    "\n"
    "options:\n"
    "  -o, --output OUT      output file ('-' = standard output, not for prof); a\n"
    "                        directory (or OUT ending in '/') gets the default name\n"
    "      --call-args       chrome: per-call args (rank, call_index, call_id,\n"
    "                        parent_id, durations); without it speedscope merges the\n"
    "                        calls of a region into one frame\n"
    "      --label TEXT      run name shown by the viewers (default: metadata label)\n"
    "      --no-call-paths   prof: one entry per region, with primitive (cc) and\n"
    "                        total (nc) call counts, instead of one per call path\n"
    "  -h, --help            show this help\n"
    "\n"
    "selection (all ranks by default, unlike scope-profiler's rank 0):\n"
    "%s"
    "\n"
    "Under an MPI launcher (mpirun -np N scopeprof export folded|csv ...)\n"
    "the selected ranks are split over the N processes, each streams its share,\n"
    "and process 0 writes the serial output; the other formats are written by\n"
    "process 0 alone (docs/distributed.md).\n"
    "A warning is printed when an export holds more than a million events, and\n"
    "'replaced' when an existing file was overwritten.\n"
    "Exit status: 0 ok, 1 unreadable file or failed export, 2 usage error.\n";

typedef enum format { SPEEDSCOPE, CHROME, PERFETTO, PROF, FOLDED, JSON, CSV, OTF2 } format;

static const struct {
    const char *name;
    format fmt;
    const char *default_out;
} formats[] = {
    {"speedscope", SPEEDSCOPE, "profile.speedscope.json"},
    {"chrome", CHROME, "profile.trace.json"},
    {"chrome-trace", CHROME, "profile.trace.json"},
    {"perfetto", PERFETTO, "profile.pftrace"},
    {"prof", PROF, "profile"},
    {"folded", FOLDED, "profile.folded"},
    {"json", JSON, "profile.json"},
    {"csv", CSV, "profile.csv"},
    {"otf2", OTF2, "profile_otf2"},
};

/* After the export wrote into `out` (rc from the exporter, its message in
 * err): close, and on failure remove the output and name what failed
 * (`failed_input` when the exporter failed, NULL: no file; else the
 * output).  The status. */
static int finish_output(FILE *out, const char *path, int to_stdout, int replacing, int rc,
                         char *err, size_t errlen, const char *failed_input)
{
    int write_failed = ferror(out);
    int saved = errno;
    if (to_stdout) {
        write_failed |= fflush(out) != 0;
        setvbuf(out, NULL, _IOLBF, 0);
    } else {
        write_failed |= fclose(out) != 0;
    }
    if (rc == 0 && write_failed)
        snprintf(err, errlen, "write failed: %s", strerror(saved ? saved : EIO));
    if (rc < 0 || write_failed) {
        if (!to_stdout)
            unlink(path);
        return cli_file_error(CMD, rc < 0 ? failed_input : path, "%s", err);
    }
    if (!to_stdout)
        cli_announce_written(path, replacing);
    return 0;
}

/* Write with `fn` into path (or stdout for "-"); a failed export leaves no
 * partial file behind. */
typedef int (*write_fn)(FILE *out, const sp_profile *p, const sp_export_options *o, void *ctx,
                        char *err, size_t errlen);

static int write_output(const char *path, write_fn fn, const sp_profile *profile,
                        const sp_export_options *options, void *ctx)
{
    char err[1024] = "";
    int to_stdout = !strcmp(path, "-");
    int replacing = !to_stdout && cli_regular_file_exists(path);
    FILE *out = to_stdout ? stdout : fopen(path, "wb");
    if (!out)
        return cli_file_error(CMD, path, "cannot create: %s", strerror(errno));
    /* A large buffer: millions of small writes otherwise dominate. */
    static char buffer[1 << 20];
    setvbuf(out, buffer, _IOFBF, sizeof buffer);
    int rc = fn(out, profile, options, ctx, err, sizeof err);
    return finish_output(out, path, to_stdout, replacing, rc, err, sizeof err, profile->path);
}

/* Process 0 of a distributed export (src/dist): as write_output, but the
 * other processes wait for it, so it takes part even when the output
 * cannot be created. */
static int write_dist_output(const char *path, const sp_dist_session *dist, int part_format,
                             const sp_profile *block, const sp_export_options *options)
{
    char err[1024] = "";
    int to_stdout = !strcmp(path, "-");
    int replacing = !to_stdout && cli_regular_file_exists(path);
    FILE *out = to_stdout ? stdout : fopen(path, "wb");
    int open_errno = errno;
    static char buffer[1 << 20];
    if (out)
        setvbuf(out, buffer, _IOFBF, sizeof buffer);
    int rc = sp_dist_export(dist, part_format, block, options, out, err, sizeof err);
    if (!out)
        return cli_file_error(CMD, path, "cannot create: %s", strerror(open_errno));
    return finish_output(out, path, to_stdout, replacing, rc, err, sizeof err,
                         block ? block->path : path);
}

/* Process 0's output of a streamed distributed export, opened once every
 * process has streamed its checks (sp_dist_output). */
typedef struct dist_output {
    const char *path;
    int to_stdout, replacing;
    FILE *out;
} dist_output;

static FILE *open_dist_stream(void *ctx, char *why, size_t whylen)
{
    dist_output *d = ctx;
    d->to_stdout = !strcmp(d->path, "-");
    d->replacing = !d->to_stdout && cli_regular_file_exists(d->path);
    d->out = d->to_stdout ? stdout : fopen(d->path, "wb");
    if (!d->out) {
        snprintf(why, whylen, "%.900s: cannot create: %s", d->path, strerror(errno));
        return NULL;
    }
    static char buffer[1 << 20];
    setvbuf(d->out, buffer, _IOFBF, sizeof buffer);
    return d->out;
}

/* The in-memory parts take over: as the serial stream leaves its output. */
static int discard_dist_stream(void *ctx)
{
    dist_output *d = ctx;
    if (d->to_stdout)
        return -1; /* bytes are out */
    fclose(d->out);
    d->out = NULL;
    if (!d->replacing)
        unlink(d->path);
    return 0;
}

/* `mpirun -np N scopeprof export folded|csv`: each process streams its
 * share of the ranks and process 0 writes the parts in order
 * (src/dist/dist_export_stream.c); where the serial stream would read the
 * run in memory, each process loads its block of rank files and writes
 * its part from memory (docs/distributed.md).  Returns the exit status, or
 * -1 when process 0 should export serially. */
static int export_distributed(const sp_dist_session *dist, format fmt, const char **files,
                              size_t num_files, const char *out,
                              const sp_export_options *options)
{
    char err[1024] = "";
    int part_format = fmt == FOLDED ? SP_DIST_FOLDED : SP_DIST_CSV;
    const char *force = getenv("SCOPEPROF_EXPORT_IN_MEMORY");
    if (!(force && !strcmp(force, "1"))) {
        const char *trace = getenv("SCOPEPROF_EXPORT_TRACE");
        dist_output d = {.path = out};
        sp_dist_output output = {open_dist_stream, discard_dist_stream, &d};
        int streamed = sp_dist_export_stream(dist, part_format, files, num_files, options,
                                             &output, trace && !strcmp(trace, "1"), err,
                                             sizeof err);
        if (streamed <= 0 && dist->rank != 0)
            return 0;
        if (streamed == 0)
            return finish_output(d.out, out, d.to_stdout, d.replacing, 0, err, sizeof err,
                                 NULL);
        if (streamed < 0)
            return d.out ? finish_output(d.out, out, d.to_stdout, d.replacing, -1, err,
                                         sizeof err, NULL)
                         : cli_file_error(CMD, NULL, "%s", err);
    }
    char **paths = NULL;
    long n = sp_run_inputs_expand(files, num_files, &paths, err, sizeof err);
    if (n < 0) /* the same on every process: process 0 says it */
        return dist->rank == 0 ? cli_file_error(CMD, NULL, "%s", err) : 0;
    sp_profile *block = NULL;
    int loaded = sp_dist_load_run(dist, paths, (size_t)n, &block, err, sizeof err);
    sp_run_inputs_free(paths, n);
    int rc = 0;
    if (loaded == SP_DIST_RUN_SERIAL)
        rc = dist->rank == 0 ? -1 : 0;
    else if (loaded == SP_DIST_RUN_FAILED)
        rc = dist->rank == 0 ? cli_file_error(CMD, NULL, "%s", err) : 0;
    else if (dist->rank == 0)
        rc = write_dist_output(out, dist, part_format, block, options);
    else
        sp_dist_export(dist, part_format, block, options, NULL, err, sizeof err);
    sp_profile_free(block);
    return rc;
}

static int write_document(FILE *out, const sp_profile *p, const sp_export_options *o, void *ctx,
                          char *err, size_t errlen)
{
    switch (*(const format *)ctx) {
    case SPEEDSCOPE: return sp_export_speedscope(out, p, o, err, errlen);
    case CHROME: return sp_export_chrome(out, p, o, err, errlen);
    case PERFETTO: return sp_export_perfetto(out, p, o, err, errlen);
    case FOLDED: return sp_export_folded(out, p, o, err, errlen);
    case JSON: return sp_export_json(out, p, o, err, errlen);
    default: return sp_export_csv(out, p, o, err, errlen);
    }
}

static int write_prof(FILE *out, const sp_profile *p, const sp_export_options *o, void *ctx,
                      char *err, size_t errlen)
{
    return sp_export_prof(out, p, *(const uint32_t *)ctx, o, err, errlen);
}

/* OTF2 writes a directory of files: no '-'. */
static int export_otf2_archive(const char *out, const sp_profile *profile,
                               const sp_export_options *options)
{
    if (!strcmp(out, "-"))
        return cli_usage_error(CMD, "otf2 writes an archive directory: give -o DIR, not '-'");
    char err[1024] = "";
    if (sp_export_otf2(out, profile, options, err, sizeof err) < 0)
        /* The library's failures are named after the archive; the others
         * already name their file. */
        return cli_file_error(CMD, strncmp(err, "OTF2:", 5) ? NULL : out, "%s", err);
    cli_announce_written(out, 0); /* an existing archive is refused, never replaced */
    return 0;
}

static int export_prof_files(const char *out, const sp_profile *profile,
                             const sp_export_options *options)
{
    if (!strcmp(out, "-"))
        return cli_usage_error(CMD, "prof writes one file per rank: give -o STEM, not '-'");
    size_t len = strlen(out);
    if (len > 5 && !strcmp(out + len - 5, ".prof"))
        len -= 5;
    uint32_t *ranks = NULL;
    long n = sp_selected_ranks(profile, options->selection, &ranks);
    if (n < 0)
        return cli_file_error(CMD, NULL, "out of memory");
    if (n == 0) {
        free(ranks);
        return cli_file_error(CMD, profile->path, "no rank matches the selection");
    }
    int rc = 0;
    for (long k = 0; k < n && rc == 0; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%.*s_rank%u.prof", (int)len, out, ranks[k]);
        rc = write_output(path, write_prof, profile, options, &ranks[k]);
    }
    free(ranks);
    return rc;
}

/* A format on the stream: 0, 1 (in memory instead: why), -1 (failed). */
static int stream_format(format fmt, FILE *out, const sp_run_source *src,
                         const sp_export_options *options, char *why, size_t whylen)
{
    switch (fmt) {
    case PERFETTO: return sp_export_perfetto_stream(out, src, options, why, whylen);
    case FOLDED: return sp_export_folded_stream(out, src, options, why, whylen);
    case CHROME: return sp_export_chrome_stream(out, src, options, why, whylen);
    case SPEEDSCOPE: return sp_export_speedscope_stream(out, src, options, why, whylen);
    case CSV: return sp_export_csv_stream(out, src, options, why, whylen);
    case JSON: return sp_export_json_stream(out, src, options, why, whylen);
    default: snprintf(why, whylen, "this format is not on the stream"); return 1;
    }
}

/* Formats that stream (docs/stream.md, "Exports"): the run read in windows,
 * in bounded memory.  Returns the exit status, or -1 when this run goes
 * through the in-memory path (which words every problem): the stream does
 * not take it, a file has a problem, or SCOPEPROF_EXPORT_IN_MEMORY=1 (the
 * tests compare both).  A perfetto trace is written as it streams: into a
 * file, a late problem truncates it and starts again in memory; on '-' every
 * rank is checked first.  folded writes once every rank has streamed;
 * chrome, speedscope, csv and json check every rank before their first
 * byte (export_stream.h).  On '-', a failure after the first byte is final. */
static int export_streamed(format fmt, const char *path, const char **files, size_t num_files,
                           const sp_export_options *options)
{
    const char *force = getenv("SCOPEPROF_EXPORT_IN_MEMORY");
    const char *trace = getenv("SCOPEPROF_EXPORT_TRACE");
    int to_stdout = !strcmp(path, "-");
    if ((fmt == PROF || fmt == OTF2) && !(force && !strcmp(force, "1")))
        return (fmt == PROF ? cli_export_prof_streamed : cli_export_otf2_streamed)(
            path, files, num_files, options, trace && !strcmp(trace, "1"));
    int checks_first = fmt == CHROME || fmt == SPEEDSCOPE || fmt == CSV || fmt == JSON ||
                       (fmt == PERFETTO && to_stdout);
    if ((force && !strcmp(force, "1")) || (fmt != PERFETTO && fmt != FOLDED && !checks_first))
        return -1;
    char why[1024] = "";
    sp_run_source src;
    if (sp_run_source_open(&src, files, num_files, why, sizeof why) != 0)
        return -1;
    int replacing = !to_stdout && cli_regular_file_exists(path);
    FILE *out = to_stdout ? stdout : fopen(path, "wb");
    int rc = 1, write_failed = 0;
    if (out) {
        /* A large buffer, as write_output's: millions of small writes. */
        static char buffer[1 << 20];
        setvbuf(out, buffer, _IOFBF, sizeof buffer);
        rc = stream_format(fmt, out, &src, options, why, sizeof why);
        int saved = errno;
        if (to_stdout ? ferror(out) | (fflush(out) != 0) : ferror(out) | (fclose(out) != 0)) {
            if (rc != 1) { /* as finish_output words it */
                snprintf(why, sizeof why, "write failed: %s",
                         strerror(errno ? errno : saved ? saved : EIO));
                write_failed = 1;
            }
            rc = rc == 1 ? 1 : -1;
        }
        if (to_stdout)
            setvbuf(out, NULL, _IOLBF, 0);
        if (rc != 0 && !to_stdout && !replacing)
            unlink(path); /* the in-memory path says 'replaced' only when it was */
    }
    /* A rank whose calls do not nest: worded on the stream, as the in-memory
     * path words it (which removes the output, even one it replaced); not
     * on '-' where that path writes the ranks before it (folded: nothing). */
    int worded = rc == 1 && out && (!to_stdout || fmt == FOLDED) &&
                 cli_export_nesting_error(&src, options, NULL, why, sizeof why);
    if (worded && !to_stdout)
        unlink(path);
    sp_run_source_close(&src);
    /* bytes are out, or the stream words it: no second try */
    int final = (rc < 0 && to_stdout && checks_first) || worded;
    if (trace && !strcmp(trace, "1"))
        fprintf(stderr, "scopeprof export: %s%s\n",
                rc == 0 ? "streamed" : final ? "streamed, failed: " : "in memory: ",
                rc == 0 ? "" : why);
    if (final)
        return cli_file_error(CMD, write_failed ? path : NULL, "%s", why);
    if (rc != 0)
        return -1;
    if (!to_stdout)
        cli_announce_written(path, replacing);
    return 0;
}

int cmd_export(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf(export_help, sp_selection_help);
        return 0;
    }
    if (argc < 2)
        return cli_usage_error(CMD, "missing FORMAT (speedscope, perfetto, chrome, prof, folded, json, csv, otf2)");
    const char *out = NULL, *label = NULL;
    int call_paths = 1, call_args = 0, have_format = 0;
    format fmt = SPEEDSCOPE;
    const char **files = calloc((size_t)argc, sizeof *files);
    size_t num_files = 0;
    sp_selection sel;
    sp_selection_init(&sel);
    int rc = 2;
    if (!files)
        return cli_file_error(CMD, NULL, "out of memory");
    for (int i = 1; i < argc;) {
        const char *value;
        int got;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf(export_help, sp_selection_help);
            rc = 0;
            goto done;
        }
        if ((got = cli_option_value(CMD, argc, argv, &i, "--output", "-o", &value)) != 0) {
            if (got < 0)
                goto done;
            out = value;
            continue;
        }
        if ((got = cli_option_value(CMD, argc, argv, &i, "--label", NULL, &value)) != 0) {
            if (got < 0)
                goto done;
            label = value;
            continue;
        }
        if (cli_flag(argv, &i, "--no-call-paths", NULL)) {
            call_paths = 0;
            continue;
        }
        if (cli_flag(argv, &i, "--call-args", NULL)) {
            call_args = 1;
            continue;
        }
        if ((got = cli_selection_option(CMD, &sel, argc, argv, &i)) != 0) {
            if (got < 0)
                goto done; /* rc is 2 */
            continue;
        }
        if (!have_format) {
            size_t k = 0;
            while (k < sizeof formats / sizeof formats[0] && strcmp(formats[k].name, argv[i]))
                k++;
            if (k == sizeof formats / sizeof formats[0]) {
                rc = cli_usage_error(CMD, "unknown format '%s' (speedscope, perfetto, chrome, "
                                          "prof, folded, json, csv, otf2)", argv[i]);
                goto done;
            }
            fmt = formats[k].fmt;
            have_format = 1;
            i++;
            continue;
        }
        files[num_files++] = argv[i++];
    }
    if (!have_format) {
        rc = cli_usage_error(CMD, "missing FORMAT");
        goto done;
    }
    if (num_files == 0) {
        rc = cli_usage_error(CMD, "no input FILES");
        goto done;
    }
    if (fmt == JSON && (sel.lanes || sel.has_from || sel.has_to || sel.has_min_duration)) {
        rc = cli_usage_error(CMD, "json is lossless: it takes --ranks, --include and "
                                  "--exclude, not --lanes, --from, --to or --min-duration");
        goto done;
    }
    if (fmt == OTF2 && !sp_export_have_otf2) { /* say so before reading anything */
        char why[512];
        sp_export_otf2(NULL, NULL, NULL, why, sizeof why);
        rc = cli_file_error(CMD, NULL, "%s", why);
        goto done;
    }
    const char *default_out = NULL;
    for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++)
        if (formats[k].fmt == fmt) {
            default_out = formats[k].default_out;
            break;
        }
    char out_buf[4096];
    /* -o DIR/ names a file inside DIR, except for otf2, whose output is
     * itself a directory (an existing archive is refused, not entered). */
    if (!out)
        out = default_out;
    else if (fmt != OTF2)
        out = cli_output_path(out, default_out, out_buf, sizeof out_buf);

    char err[1024] = "";
    sp_export_options options = {
        .selection = &sel, .label = label, .call_paths = call_paths, .warnings = stderr,
        .call_args = call_args};
    /* Under an MPI launcher: folded and csv are written in parts by every
     * process; the other formats by process 0 alone (perfetto: see
     * src/dist/dist_export.c). */
    sp_dist_session dist = {0};
    if (fmt == FOLDED || fmt == CSV) {
        enum sp_dist_mode mode = sp_dist_session_begin(&dist, CMD);
        if (mode == SP_DIST_STANDBY) {
            rc = 0;
            goto done;
        }
        if (mode == SP_DIST_PARALLEL) {
            rc = export_distributed(&dist, fmt, files, num_files, out, &options);
            int serial_on_0 = rc < 0;
            if (!serial_on_0 || dist.rank != 0) {
                sp_dist_session_end(&dist);
                rc = serial_on_0 ? 0 : rc;
                goto done;
            }
        }
    } else if (sp_dist_launcher_size() != 0) {
        int rank = sp_dist_launcher_rank();
        if (rank > 0) {
            rc = 0;
            goto done;
        }
        int size = sp_dist_launcher_size();
        if (size != 1)
            cli_warning(CMD, "this format is not written in parts; under the MPI launcher "
                             "process 0 exports alone (folded and csv use every process)");
    }
    /* the serial export: on the stream when it takes the run */
    if ((rc = export_streamed(fmt, out, files, num_files, &options)) >= 0) {
        sp_dist_session_end(&dist);
        goto done;
    }
    sp_profile *profile = sp_load_run(files, num_files, err, sizeof err);
    if (!profile) {
        sp_dist_session_end(&dist);
        rc = cli_file_error(CMD, NULL, "%s", err);
        goto done;
    }
    if (fmt == PROF)
        rc = export_prof_files(out, profile, &options);
    else if (fmt == OTF2)
        rc = export_otf2_archive(out, profile, &options);
    else
        rc = write_output(out, write_document, profile, &options, &fmt);
    sp_profile_free(profile);
    sp_dist_session_end(&dist);
done:
    sp_selection_free(&sel);
    free(files);
    return rc;
}
