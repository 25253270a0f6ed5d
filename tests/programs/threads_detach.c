/* threads_detach.c - a detached thread (by attribute), a thread detached
 * after creation, and a joined one; each records one call.  The main thread
 * waits until all three have recorded before it finishes. */
#include <pthread.h>
#include <semaphore.h>

#include "scope_profiler.h"

static int work;
static sem_t recorded;

static void *worker(void *name)
{
    pthread_setname_np(pthread_self(), name);
    sp_begin(work);
    sp_end(work);
    sem_post(&recorded);
    return NULL;
}

int main(void)
{
    sem_init(&recorded, 0, 0);
    work = sp_region("work");
    int session = sp_region("session");
    sp_begin(session);

    pthread_attr_t detached;
    pthread_attr_init(&detached);
    pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
    pthread_t by_attr, late, joined;
    pthread_create(&by_attr, &detached, worker, "by_attr");
    pthread_create(&late, NULL, worker, "late");
    pthread_detach(late);
    pthread_create(&joined, NULL, worker, "joined");
    for (int i = 0; i < 3; i++)
        sem_wait(&recorded);
    pthread_join(joined, NULL);
    sp_end(session);
    return 0;
}
