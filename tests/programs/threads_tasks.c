/* threads_tasks.c - the explicit task API: three tasks "job0..2" run
 * round-robin in three steps on the main thread inside a "loop" call; each
 * task's "job" call spans all its steps (opened in step 1, "sub" in step 2,
 * closed in step 3).  A fourth task is created and run on a worker thread. */
#include <pthread.h>
#include <stdio.h>

#include "scope_profiler.h"

static int job, sub;
static volatile double sink;

static void spin(void)
{
    for (int k = 0; k < 20000; k++)
        sink += k;
}

static void *worker(void *arg)
{
    (void)arg;
    int64_t t = sp_task_create("task", "remote");
    sp_task_switch(t);
    sp_begin(job);
    sp_end(job);
    sp_task_switch(-1);
    sp_task_done(t);
    return NULL;
}

int main(void)
{
    job = sp_region("job");
    sub = sp_region("sub");
    int loop = sp_region("loop");
    int64_t tasks[3];
    char name[16];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "job%d", i);
        tasks[i] = sp_task_create("task", name);
    }
    sp_begin(loop);
    for (int stage = 0; stage < 3; stage++)
        for (int i = 0; i < 3; i++) {
            sp_task_switch(tasks[i]);
            spin();
            if (stage == 0)
                sp_begin(job);
            if (stage == 1) {
                sp_begin(sub);
                spin();
                sp_end(sub);
            }
            if (stage == 2) {
                sp_end(job);
                sp_task_done(tasks[i]);
            }
            sp_task_switch(-1);
        }
    sp_end(loop);

    pthread_t w;
    pthread_create(&w, NULL, worker, NULL);
    pthread_join(w, NULL);
    printf("tasks=%lld,%lld,%lld\n", (long long)tasks[0], (long long)tasks[1], (long long)tasks[2]);
    return 0;
}
