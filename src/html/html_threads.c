/* html_threads.c - what kind of thread a thread-table row is, for the
 * Threads section: the process's main thread, an OpenMP worker (named so by
 * the runtime hooks), a daemon thread, or a thread the program started. */
#include <string.h>

#include "html_model.h"

const char *html_thread_kind(const sp_profile *profile, const sp_report_thread_row *t)
{
    const char *name = t->name ? t->name : "";
    if (!strcmp(name, "MainThread"))
        return "main";
    if (strstr(name, "OpenMP") || strstr(name, "omp") || strstr(name, "OMP"))
        return "OpenMP";
    for (size_t k = 0; k < profile->num_threads; k++) {
        const sp_thread_row *row = &profile->threads[k];
        if (row->rank == t->rank && row->index == t->index)
            return row->daemon ? "daemon" : "thread";
    }
    return "thread";
}
