/* lane_label.c - human names for lanes (spec §6.5), used as speedscope
 * profile names, Chrome thread names and report headings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/analysis.h"

static const sp_thread_row *find_thread(const sp_profile *p, uint32_t rank, int64_t index)
{
    for (size_t i = 0; i < p->num_threads; i++)
        if (p->threads[i].rank == rank && p->threads[i].index == index)
            return &p->threads[i];
    return NULL;
}

static const sp_task_row *find_task(const sp_profile *p, uint32_t rank, int64_t index)
{
    for (size_t i = 0; i < p->num_tasks; i++)
        if (p->tasks[i].rank == rank && p->tasks[i].index == index)
            return &p->tasks[i];
    return NULL;
}

/* An OpenMP worker the program never named is "omp N" after its OpenMP
 * thread number, which does not depend on how many threads the MPI
 * library started before it; a second worker with the same number (nested
 * teams) adds its index. */
static int omp_label(const sp_profile *p, const sp_thread_row *t, char *buf, size_t buflen)
{
    if (!t->kind || strcmp(t->kind, "openmp") != 0 || t->omp_thread_num < 1)
        return -1;
    char dflt[32];
    snprintf(dflt, sizeof dflt, "thread %lld", (long long)t->index);
    if (t->name && t->name[0] && strcmp(t->name, dflt) != 0)
        return -1;
    for (size_t i = 0; i < p->num_threads; i++) {
        const sp_thread_row *o = &p->threads[i];
        if (o->rank == t->rank && o->index < t->index && o->kind &&
            !strcmp(o->kind, "openmp") && o->omp_thread_num == t->omp_thread_num)
            return snprintf(buf, buflen, "omp %lld (thread %lld)", (long long)t->omp_thread_num,
                            (long long)t->index);
    }
    return snprintf(buf, buflen, "omp %lld", (long long)t->omp_thread_num);
}

static size_t thread_label(const sp_profile *p, uint32_t rank, int64_t index, char *buf,
                           size_t buflen)
{
    const sp_thread_row *t = find_thread(p, rank, index);
    int n = t ? omp_label(p, t, buf, buflen) : -1;
    if (n < 0)
        n = (t && t->name && t->name[0]) ? snprintf(buf, buflen, "%s", t->name)
                                         : snprintf(buf, buflen, "thread %lld", (long long)index);
    return n < 0 ? 0 : (size_t)n;
}

size_t sp_lane_label(const sp_profile *profile, uint32_t rank, int64_t lane, char *buf,
                     size_t buflen)
{
    int n;
    if (lane == -1) {
        n = snprintf(buf, buflen, "unknown lane");
    } else if (lane < -1) {
        return thread_label(profile, rank, -2 - lane, buf, buflen);
    } else {
        const sp_task_row *t = find_task(profile, rank, lane);
        if (!t || !t->name || !t->name[0]) {
            n = snprintf(buf, buflen, "task %lld", (long long)lane);
        } else {
            char thread[256];
            thread_label(profile, rank, t->thread_index, thread, sizeof thread);
            const char *coro = t->coro_name ? t->coro_name : "";
            const char *dot = strrchr(coro, '.');
            const char *tail = dot ? dot + 1 : coro;
            if (tail[0])
                n = snprintf(buf, buflen, "%s (%s) on %s", t->name, tail, thread);
            else
                n = snprintf(buf, buflen, "%s on %s", t->name, thread);
        }
    }
    return n < 0 ? 0 : (size_t)n;
}

/* "prefix N" with N a decimal integer exactly equal to value. */
static int names_number(const char *selector, const char *prefix, int64_t value)
{
    size_t len = strlen(prefix);
    if (strncmp(selector, prefix, len) || selector[len] == '\0')
        return 0;
    char *end;
    long long v = strtoll(selector + len, &end, 10);
    return *end == '\0' && v == value;
}

int sp_lane_matches(const sp_profile *profile, uint32_t rank, int64_t lane,
                    const char *selector)
{
    char label[512];
    sp_lane_label(profile, rank, lane, label, sizeof label);
    if (!strcmp(label, selector))
        return 1;
    if (names_number(selector, "lane:", lane))
        return 1;
    if (lane == -1)
        return !strcmp(selector, "unknown");
    if (lane < -1)
        return names_number(selector, "thread ", -2 - lane);
    return names_number(selector, "task ", lane);
}
