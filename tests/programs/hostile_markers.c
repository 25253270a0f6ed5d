/* hostile_markers.c - the marker API fed garbage, one case per argument.
 * Each case also records a well-formed region "good" 5 times (interleaved
 * with the garbage), which must be kept exactly, and the program must run
 * to its end ("done" on stdout).
 *
 *   ids         invalid region ids to every entry point, 1000 times each
 *   null        NULL names, prefixes, stats pointers, profilers and tokens
 *   longname    a region named by 100 KB of text, entered twice
 *   crossthread a call begun on one thread and ended on another
 *   unbalanced  10000 ends without a begin
 *   deep N      N nested calls of "rec" (default 10^6), then all closed
 *   exit N      nothing hostile: exits with status N (fault tests check that
 *               a failed write leaves the program's status alone) */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"

static int good;

static void good_call(void)
{
    sp_begin(good);
    sp_end(good);
}

static void invalid_ids(void)
{
    const int ids[] = {-1, -7, INT_MIN, INT_MAX, 1 << 30, 12345};
    for (int round = 0; round < 1000; round++)
        for (size_t k = 0; k < sizeof ids / sizeof *ids; k++) {
            sp_begin(ids[k]);
            sp_end(ids[k]);
            sp_scope s = sp_profiler_scope_begin(sp_default_profiler(), ids[k]);
            sp_scope_end(&s);
            sp_num_calls(ids[k]);
            sp_region_stats st;
            sp_get_region_stats(ids[k], &st);
        }
    good_call();
    good_call();
}

static void null_arguments(void)
{
    int a = sp_region(NULL);
    int b = sp_region_at(NULL, NULL, 0);
    int c = sp_region_at("located", NULL, 42);
    sp_begin(c);
    sp_end(c);
    sp_profiler_begin(NULL, 0);
    sp_profiler_end(NULL, 0);
    sp_profiler_region(NULL, "x");
    sp_profiler_flush(NULL);
    sp_profiler_finalize(NULL);
    sp_scope_end(NULL);
    sp_get_region_stats(good, NULL);
    sp_profiler *p = sp_create(NULL, 3);
    int in_p = sp_profiler_region(p, NULL);
    sp_destroy(NULL);
    sp_destroy(p);
    printf("null ids: %d %d %d\n", a, b, in_p);
    good_call();
    good_call();
}

static void long_name(void)
{
    size_t n = 100 * 1024;
    char *name = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        name[i] = (char)('a' + i % 26);
    name[n] = '\0';
    int big = sp_region(name);
    free(name);
    good_call();
    sp_begin(big);
    good_call();
    sp_end(big);
    sp_begin(big);
    sp_end(big);
    good_call();
}

static int shared_region;
static pthread_mutex_t step_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t step_cond = PTHREAD_COND_INITIALIZER;
static int step;

static void wait_step(int s)
{
    pthread_mutex_lock(&step_lock);
    while (step < s)
        pthread_cond_wait(&step_cond, &step_lock);
    pthread_mutex_unlock(&step_lock);
}

static void set_step(int s)
{
    pthread_mutex_lock(&step_lock);
    step = s;
    pthread_cond_broadcast(&step_cond);
    pthread_mutex_unlock(&step_lock);
}

static void *begins(void *arg)
{
    (void)arg;
    sp_begin(shared_region); /* ended by the other thread: never closed here */
    good_call();
    set_step(1);
    wait_step(2);
    return NULL;
}

static void *ends(void *arg)
{
    (void)arg;
    wait_step(1);
    sp_end(shared_region);
    good_call();
    set_step(2);
    return NULL;
}

static void cross_thread(void)
{
    shared_region = sp_region("shared");
    pthread_t a, b;
    pthread_create(&a, NULL, begins, NULL);
    pthread_create(&b, NULL, ends, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
}

static void unbalanced(void)
{
    for (int i = 0; i < 10000; i++)
        sp_end(good);
    good_call();
    good_call();
    for (int i = 0; i < 100; i++)
        sp_end_last();
}

static void deep(long n)
{
    int rec = sp_region("rec");
    good_call();
    for (long i = 0; i < n; i++)
        sp_begin(rec);
    good_call();
    for (long i = 0; i < n; i++)
        sp_end(rec);
    good_call();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    sp_init("hostile", 0);
    good = sp_region("good");
    if (!strcmp(mode, "ids"))
        invalid_ids();
    else if (!strcmp(mode, "null"))
        null_arguments();
    else if (!strcmp(mode, "longname"))
        long_name();
    else if (!strcmp(mode, "crossthread"))
        cross_thread();
    else if (!strcmp(mode, "unbalanced"))
        unbalanced();
    else if (!strcmp(mode, "deep"))
        deep(argc > 2 ? atol(argv[2]) : 1000000);
    else if (strcmp(mode, "exit") != 0) {
        fprintf(stderr, "usage: hostile_markers ids|null|longname|crossthread|unbalanced|"
                        "deep [N]|exit N\n");
        return 2;
    }
    /* Counts are padded to 5 good calls in every case. */
    int64_t have = sp_num_calls(good);
    for (int64_t i = have; i < 5; i++)
        good_call();
    printf("done good=%lld\n", (long long)sp_num_calls(good));
    return !strcmp(mode, "exit") && argc > 2 ? atoi(argv[2]) : 0;
}
