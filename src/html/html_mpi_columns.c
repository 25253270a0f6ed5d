/* html_mpi_columns.c - the MPI columns (events/mpi_*) of a run whose page
 * is streamed.  The page draws nothing from them: its MPI section comes
 * from the regions named like the C bindings (html_mpi.c), i.e. from the
 * streamed report's tables and the per-rank region times.  But the
 * in-memory path reads every column of every file and refuses a file
 * whose MPI column does not read, so the stream reads them through too,
 * in windows, and hands such a run to the in-memory path, which words the
 * problem: the same page, or the same message, either way. */
#include <stdio.h>
#include <stdlib.h>

#include "html_model.h"
#include "scopeprof/h5.h"
#include "scopeprof/stream.h"

/* Values per read: 512 KiB of int64; the chunk cache holds what a window
 * shares with the next. */
#define MPI_WINDOW 65536

static int read_file_columns(const sp_run_source *src, size_t f, int64_t *window, char *why,
                             size_t whylen)
{
    const sp_h5_event_shape *shape = &src->shapes[f];
    int wanted = 0;
    for (int c = 0; c < SP_EXTRA_N; c++)
        wanted |= shape->has_extra[c];
    if (!wanted || shape->num_events == 0)
        return 0;
    char err[1024];
    sp_h5_event_reader *r = sp_h5_event_reader_open(src->paths[f], shape, (size_t)1 << 20, err,
                                                    sizeof err);
    if (!r) {
        snprintf(why, whylen, "%s", err);
        return 1;
    }
    int rc = 0;
    for (int c = 0; rc == 0 && c < SP_EXTRA_N; c++) {
        if (!shape->has_extra[c])
            continue;
        for (uint64_t at = 0; rc == 0 && at < shape->num_events; at += MPI_WINDOW) {
            uint64_t left = shape->num_events - at;
            size_t n = left < MPI_WINDOW ? (size_t)left : MPI_WINDOW;
            if (sp_h5_event_reader_read_extra(r, c, at, n, window) != 0) {
                snprintf(why, whylen, "%s: events/%s does not read", src->paths[f],
                         sp_event_extra_names[c]);
                rc = 1;
            }
        }
    }
    sp_h5_event_reader_close(r);
    return rc;
}

int html_mpi_columns_read(const sp_run_source *src, char *why, size_t whylen)
{
    int64_t *window = NULL;
    int rc = 0;
    for (size_t f = 0; rc == 0 && f < src->num_paths; f++) {
        int any = 0;
        for (int c = 0; c < SP_EXTRA_N; c++)
            any |= src->shapes[f].has_extra[c];
        if (!any)
            continue;
        if (!window && !(window = malloc(MPI_WINDOW * sizeof *window))) {
            snprintf(why, whylen, "out of memory");
            rc = -1;
            break;
        }
        rc = read_file_columns(src, f, window, why, whylen);
    }
    free(window);
    return rc;
}
