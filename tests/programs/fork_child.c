/* fork_child.c - fork() under the shim.
 *
 * The parent records "before" x3 and, on a helper thread, "worker" x5; it
 * holds "outer" open across the fork.  The child records "child_only" x7,
 * closes "outer" and exits; the parent records "parent_only" x2 after the
 * child is gone.  With argument "thread" the fork happens on the helper
 * thread (then the helper holds "outer"), so the child's only thread is
 * one that was not the parent's main thread.
 *
 * Prints "parent=<pid> child=<pid> status=<exit status>". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scope_profiler.h"

static int before, worker, outer, child_only, parent_only;

static void run_child(void)
{
    for (int i = 0; i < 7; i++) {
        sp_begin(child_only);
        sp_end(child_only);
    }
    sp_end(outer);
    exit(0); /* exit, not _exit: the shim writes at exit */
}

/* Fork with "outer" open; returns in the parent only. */
static pid_t fork_inside_outer(void)
{
    sp_begin(outer);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        run_child();
    return pid;
}

static void *helper(void *arg)
{
    for (int i = 0; i < 5; i++) {
        sp_begin(worker);
        sp_end(worker);
    }
    if (arg) {
        pid_t *child = arg;
        *child = fork_inside_outer();
        sp_end(outer);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int on_thread = argc > 1 && !strcmp(argv[1], "thread");
    sp_init("fork_child", 0);
    before = sp_region("before");
    worker = sp_region("worker");
    outer = sp_region("outer");
    child_only = sp_region("child_only");
    parent_only = sp_region("parent_only");
    for (int i = 0; i < 3; i++) {
        sp_begin(before);
        sp_end(before);
    }

    pid_t child = -1;
    pthread_t t;
    if (on_thread) {
        pthread_create(&t, NULL, helper, &child);
        pthread_join(t, NULL);
    } else {
        pthread_create(&t, NULL, helper, NULL);
        pthread_join(t, NULL);
        child = fork_inside_outer();
    }
    if (child < 0) {
        perror("fork");
        return 1;
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!on_thread)
        sp_end(outer);
    for (int i = 0; i < 2; i++) {
        sp_begin(parent_only);
        sp_end(parent_only);
    }
    printf("parent=%d child=%d status=%d\n", (int)getpid(), (int)child,
           WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return 0;
}
