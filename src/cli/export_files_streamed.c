/* export_files_streamed.c - `export prof` and `export otf2` on the stream
 * (export_files_streamed.h).
 *
 * prof: every rank's file is written beside its name (NAME.XXXXXX) and renamed
 * once every rank has streamed: a problem found in a late rank hands the
 * whole export to the in-memory path, which must find the files as they
 * were (it says "replaced" only of files that existed, and a run it refuses
 * leaves none of them written). */
#include "export_files_streamed.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "export/stream_filter.h"
#include "scopeprof/stream.h"

/* A rank's file: its name is stem_rank<R>.prof, its temporary name that
 * and ".XXXXXX" (a few bytes per rank: runs have thousands). */
typedef struct rank_file {
    uint32_t rank;
    char suffix[8];          /* "" once renamed (or never created) */
    int replacing;
    uint64_t calls;
} rank_file;

typedef struct prof_names {
    const char *out;
    int stem_len;
    char path[4096], temp[4096 + 8];
} prof_names;

static void name_files(prof_names *n, const rank_file *f)
{
    snprintf(n->path, sizeof n->path, "%.*s_rank%u.prof", n->stem_len, n->out, f->rank);
    snprintf(n->temp, sizeof n->temp, "%s.%s", n->path, f->suffix);
}

/* The temporary file of f, with the permissions f's file has or a new file
 * would get.  The stream, or NULL (the in-memory path then tries, and
 * words why it cannot create the file). */
static FILE *open_temp(prof_names *n, rank_file *f)
{
    struct stat st;
    mode_t mode;
    snprintf(f->suffix, sizeof f->suffix, "XXXXXX");
    name_files(n, f);
    f->suffix[0] = '\0';
    if (lstat(n->path, &st) == 0) {
        if (!S_ISREG(st.st_mode))
            return NULL; /* a FIFO, a link, a directory: as the in-memory path opens it */
        f->replacing = 1;
        mode = st.st_mode & 07777;
    } else if (errno == ENOENT) {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    } else {
        return NULL;
    }
    int fd = mkstemp(n->temp);
    if (fd < 0)
        return NULL;
    memcpy(f->suffix, n->temp + strlen(n->temp) - 6, 7);
    int chmod_rc = fchmod(fd, mode); /* not fatal: the file is only more private */
    (void)chmod_rc;
    FILE *out = fdopen(fd, "wb");
    if (!out) {
        close(fd);
        unlink(n->temp);
        f->suffix[0] = '\0';
    }
    return out;
}

int cli_export_nesting_error(const sp_run_source *src, const sp_export_options *options,
                             uint32_t *rank, char *why, size_t whylen)
{
    /* the stream's words for it (rank_stream.c), whatever the prefix */
    if (!strstr(why, "recorded calls are not properly nested"))
        return 0;
    char message[1024];
    uint32_t bad;
    if (sp_stream_nesting_error(src, options ? options->selection : NULL, &bad, message,
                                sizeof message) != 0)
        return 0;
    snprintf(why, whylen, "%s", message);
    if (rank)
        *rank = bad;
    return 1;
}

int cli_export_prof_streamed(const char *out, const char *const *files, size_t num_files,
                             const sp_export_options *options, int trace)
{
    if (!strcmp(out, "-"))
        return -1; /* the in-memory path's usage error */
    char why[1024] = "";
    sp_run_source src;
    if (sp_run_source_open(&src, files, num_files, why, sizeof why) != 0)
        return -1;
    size_t len = strlen(out);
    if (len > 5 && !strcmp(out + len - 5, ".prof"))
        len -= 5;
    static prof_names names;
    names.out = out;
    names.stem_len = (int)len;
    sp_prof_stream *stream = NULL;
    uint32_t *ranks = NULL;
    long n = 0;
    rank_file *done = NULL;
    long written = 0;
    int rc = sp_prof_stream_open(&stream, &src, options, &ranks, &n, why, sizeof why);
    if (rc == 0 && !(done = calloc((size_t)n, sizeof *done))) {
        snprintf(why, sizeof why, "out of memory");
        rc = -1;
    }
    long failing = -1; /* the rank the stream gave up on */
    for (long k = 0; k < n && rc == 0; k++) {
        rank_file *f = &done[k];
        f->rank = ranks[k];
        FILE *fp = open_temp(&names, f);
        if (!fp) {
            snprintf(why, sizeof why, "%.900s: not a new or regular file here", names.path);
            rc = 1;
            break;
        }
        written = k + 1;
        static char buffer[1 << 20];
        setvbuf(fp, buffer, _IOFBF, sizeof buffer);
        rc = sp_prof_stream_rank(stream, fp, ranks[k], &f->calls, why, sizeof why);
        if (rc == 1)
            failing = k;
        if ((ferror(fp) | (fclose(fp) != 0)) && rc == 0) {
            snprintf(why, sizeof why, "%.900s: write failed", names.temp);
            rc = 1;
        }
    }
    /* A rank whose calls do not nest: the in-memory path writes the ranks
     * before it, then words it (and removes that rank's file, which it had
     * opened); the stream does the same with the files it has. */
    uint32_t bad = 0;
    int worded = failing >= 0 && cli_export_nesting_error(&src, options, &bad, why, sizeof why);
    if (worded && bad != ranks[failing]) {
        worded = 0; /* cannot be: the ranks before it streamed */
        snprintf(why, sizeof why, "rank %u, not %u, does not nest", bad, ranks[failing]);
    }
    /* every rank streamed: the files take their names, in rank order with
     * what the in-memory path prints of each */
    if (trace) /* before the files' lines, as the trace of the other exports */
        fprintf(stderr, "scopeprof export: %s%s\n",
                rc == 0 ? "streamed" : worded ? "streamed, failed: " : "in memory: ",
                rc == 0 ? "" : why);
    int status = rc == 0 || worded ? 0 : -1;
    long named = worded ? failing : written;
    for (long k = 0; k < named && status == 0; k++) {
        sp_export_warn_events(options, done[k].calls, "prof export");
        name_files(&names, &done[k]);
        if (rename(names.temp, names.path) != 0) /* the files before it stay */
            status = cli_file_error("export", names.path, "cannot create: %s",
                                    strerror(errno));
        else
            done[k].suffix[0] = '\0';
        if (status == 0)
            cli_announce_written(names.path, done[k].replacing);
    }
    for (long k = 0; k < written; k++)
        if (done[k].suffix[0]) {
            name_files(&names, &done[k]);
            unlink(names.temp);
        }
    if (worded && status == 0) {
        name_files(&names, &done[failing]);
        unlink(names.path);
        status = cli_file_error("export", NULL, "%s", why);
    }
    sp_prof_stream_close(stream);
    free(done);
    free(ranks);
    sp_run_source_close(&src);
    return status;
}

int cli_export_otf2_streamed(const char *out, const char *const *files, size_t num_files,
                             const sp_export_options *options, int trace)
{
    if (!strcmp(out, "-"))
        return -1; /* the in-memory path's usage error */
    char why[1024] = "";
    sp_run_source src;
    if (sp_run_source_open(&src, files, num_files, why, sizeof why) != 0)
        return -1;
    int rc = sp_export_otf2_stream(out, &src, options, why, sizeof why);
    /* a rank whose calls do not nest: worded on the stream (the archive is
     * gone, as the in-memory path leaves none) */
    int worded = rc > 0 && cli_export_nesting_error(&src, options, NULL, why, sizeof why);
    sp_run_source_close(&src);
    if (trace)
        fprintf(stderr, "scopeprof export: %s%s\n",
                rc == 0 ? "streamed" : worded ? "streamed, failed: " : "in memory: ",
                rc == 0 ? "" : why);
    if (worded)
        return cli_file_error("export", NULL, "%s", why);
    if (rc > 0)
        return -1;
    if (rc < 0) /* the library's failures are named after the archive */
        return cli_file_error("export", strncmp(why, "OTF2:", 5) ? NULL : out, "%s", why);
    cli_announce_written(out, 0);
    return 0;
}
