/* writer_main.c - scopeprof-writer, the writer process.  The shim runs it
 * at finalize with posix_spawn (lifecycle/writer_process.c) so that HDF5
 * and libdw are never mapped into the application:
 *
 *   scopeprof-writer write STATUS_FD FILE...   the handover -> the profile
 *   scopeprof-writer describe STATUS_FD MODULE ADDRESS [MODULE ADDRESS]...
 *
 * One line goes to STATUS_FD: "ok", "partial MESSAGE", "error MESSAGE"
 * (write) or "ok TEXT" / "error" (describe).  The parent reads the line,
 * not the exit status, so a program that reaps every child (SIGCHLD
 * handlers, SIG_IGN) does not hide the outcome. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writer_core.h"

static void report(int fd, const char *word, const char *text)
{
    char line[4200];
    int n = snprintf(line, sizeof line, "%s%s%s\n", word, text && text[0] ? " " : "",
                     text ? text : "");
    if (n <= 0)
        return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, line + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        off += (size_t)w;
    }
}

int main(int argc, char **argv)
{
    /* A file size limit fails our write (EFBIG), it does not kill us. */
    signal(SIGXFSZ, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    if (argc < 3 || (strcmp(argv[1], "write") && strcmp(argv[1], "describe"))) {
        fprintf(stderr, "usage: scopeprof-writer write STATUS_FD FILE...\n"
                        "       scopeprof-writer describe STATUS_FD MODULE ADDRESS...\n"
                        "(run by libscopeprof.so at finalize; see 'scopeprof recover' "
                        "for spill files)\n");
        return 2;
    }
    char *end;
    long fd = strtol(argv[2], &end, 10);
    if (*end || fd < 0 || fd > 1 << 20)
        fd = STDOUT_FILENO;
    if (!strcmp(argv[1], "describe")) {
        sp_capture_frame frames[64];
        size_t n = 0;
        for (int i = 3; i + 1 < argc && n < 64; i += 2, n++) {
            frames[n].module_path = argv[i][0] ? argv[i] : NULL;
            frames[n].module_name = argv[i];
            frames[n].address = strtoull(argv[i + 1], NULL, 0);
        }
        char text[1024];
        if (sp_writer_describe(frames, n, text, sizeof text) == 0)
            report((int)fd, "ok", text);
        else
            report((int)fd, "error", NULL);
        return 0;
    }
    char msg[4096];
    enum sp_writer_outcome outcome =
        sp_writer_write_files((const char *const *)argv + 3, (size_t)(argc - 3), msg, sizeof msg);
    report((int)fd, outcome == SP_WRITER_WRITTEN ? "ok" : outcome == SP_WRITER_PARTIAL
                                                              ? "partial" : "error", msg);
    return outcome == SP_WRITER_WRITTEN ? 0 : 1;
}
