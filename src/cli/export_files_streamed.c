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
#include "scopeprof/stream.h"

typedef struct rank_file {
    char path[4096];
    char temp[4096 + 8];
    int replacing;
    uint64_t calls;
} rank_file;

/* The temporary file of f, with the permissions f's file has or a new file
 * would get.  The stream, or NULL (the in-memory path then tries, and
 * words why it cannot create the file). */
static FILE *open_temp(rank_file *f)
{
    struct stat st;
    mode_t mode;
    if (lstat(f->path, &st) == 0) {
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
    snprintf(f->temp, sizeof f->temp, "%s.XXXXXX", f->path);
    int fd = mkstemp(f->temp);
    if (fd < 0) {
        f->temp[0] = '\0';
        return NULL;
    }
    int chmod_rc = fchmod(fd, mode); /* not fatal: the file is only more private */
    (void)chmod_rc;
    FILE *out = fdopen(fd, "wb");
    if (!out) {
        close(fd);
        unlink(f->temp);
        f->temp[0] = '\0';
    }
    return out;
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
    for (long k = 0; k < n && rc == 0; k++) {
        rank_file *f = &done[k];
        snprintf(f->path, sizeof f->path, "%.*s_rank%u.prof", (int)len, out, ranks[k]);
        FILE *fp = open_temp(f);
        if (!fp) {
            snprintf(why, sizeof why, "%s: not a new or regular file here", f->path);
            rc = 1;
            break;
        }
        written = k + 1;
        static char buffer[1 << 20];
        setvbuf(fp, buffer, _IOFBF, sizeof buffer);
        rc = sp_prof_stream_rank(stream, fp, ranks[k], &f->calls, why, sizeof why);
        if ((ferror(fp) | (fclose(fp) != 0)) && rc == 0) {
            snprintf(why, sizeof why, "%s: write failed", f->temp);
            rc = 1;
        }
    }
    /* every rank streamed: the files take their names, in rank order with
     * what the in-memory path prints of each */
    int status = rc == 0 ? 0 : -1;
    for (long k = 0; k < written && status == 0; k++) {
        sp_export_warn_events(options, done[k].calls, "prof export");
        if (rename(done[k].temp, done[k].path) != 0) /* the files before it stay */
            status = cli_file_error("export", done[k].path, "cannot create: %s",
                                    strerror(errno));
        else
            done[k].temp[0] = '\0';
        if (status == 0)
            cli_announce_written(done[k].path, done[k].replacing);
    }
    for (long k = 0; k < written; k++)
        if (done[k].temp[0])
            unlink(done[k].temp);
    sp_prof_stream_close(stream);
    free(done);
    free(ranks);
    sp_run_source_close(&src);
    if (trace)
        fprintf(stderr, "scopeprof export: %s%s\n", rc == 0 ? "streamed" : "in memory: ",
                rc == 0 ? "" : why);
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
    sp_run_source_close(&src);
    if (trace)
        fprintf(stderr, "scopeprof export: %s%s\n", rc == 0 ? "streamed" : "in memory: ",
                rc == 0 ? "" : why);
    if (rc > 0)
        return -1;
    if (rc < 0) /* the library's failures are named after the archive */
        return cli_file_error("export", strncmp(why, "OTF2:", 5) ? NULL : out, "%s", why);
    cli_announce_written(out, 0);
    return 0;
}
