/* fork_exec.c - exec, posix_spawn and system() under the shim.
 *
 *   fork_exec exec     record "pre_exec" x4, write a flushed profile (so the
 *                      writer and its HDF5 are loaded), then exec itself
 *                      with "after": the new image records "post_exec" x2.
 *                      The open file descriptors are listed at the start and
 *                      after exec: the shim must add none.
 *   fork_exec spawn    record "spawner" x3, then run children that record
 *                      nothing: system("true"), posix_spawn(/bin/true) and
 *                      fork + exec(/bin/true).
 * Prints "fds at start: <list or none>" and "fds after exec: <list>" (exec) or
 * "system=<s> spawn=<s> forkexec=<s>" (spawn). */
#include <dirent.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scope_profiler.h"

extern char **environ;

static void record(const char *name, int times)
{
    int r = sp_region(name);
    for (int i = 0; i < times; i++) {
        sp_begin(r);
        sp_end(r);
    }
}

/* Every descriptor above stderr except the one listing the directory. */
static void list_fds(const char *label)
{
    DIR *d = opendir("/proc/self/fd");
    int self = d ? dirfd(d) : -1;
    int any = 0;
    printf("%s:", label);
    for (struct dirent *e; d && (e = readdir(d));) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd <= 2 || fd == self)
            continue;
        char target[512] = "";
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        printf(" %d->%s", fd, target);
        any = 1;
    }
    if (d)
        closedir(d);
    printf("%s\n", any ? "" : " none");
}

static int status_of(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "after")) {
        sp_init("fork_exec", 0);
        record("post_exec", 2);
        list_fds("fds after exec");
        return 0;
    }
    if (!strcmp(mode, "exec")) {
        list_fds("fds at start");
        sp_init("pre_exec", 0);
        record("pre_exec", 4);
        sp_flush();
        record("pre_exec", 1); /* recorded after the flush: lost with exec */
        fflush(stdout);
        execl("/proc/self/exe", argv[0], "after", (char *)NULL);
        perror("exec");
        return 1;
    }
    if (!strcmp(mode, "spawn")) {
        sp_init("fork_exec", 0);
        record("spawner", 3);
        fflush(stdout);
        int s_system = status_of(system("true"));
        pid_t pid;
        char *true_argv[] = {"true", NULL};
        int s_spawn = -1, status = 0;
        if (posix_spawn(&pid, "/bin/true", NULL, NULL, true_argv, environ) == 0 &&
            waitpid(pid, &status, 0) == pid)
            s_spawn = status_of(status);
        int s_fork = -1;
        pid = fork();
        if (pid == 0) {
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        if (pid > 0 && waitpid(pid, &status, 0) == pid)
            s_fork = status_of(status);
        printf("system=%d spawn=%d forkexec=%d\n", s_system, s_spawn, s_fork);
        return 0;
    }
    fprintf(stderr, "usage: fork_exec exec|spawn\n");
    return 2;
}
