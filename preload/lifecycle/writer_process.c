/* writer_process.c - run the writer process (scopeprof-writer, found next
 * to the shim) and read its one-line answer.
 *
 * posix_spawn, not fork: no atfork handler of the program runs, and the
 * child allocates nothing before exec (a program's allocator, locks and
 * MPI state are never touched in a copy of the process).  The child's
 * LD_PRELOAD lacks the shim; any other preloaded library (jemalloc,
 * tcmalloc, a sanitizer runtime) stays, as it is harmless in a process of
 * its own.  The answer comes through a pipe, not the exit status: a
 * program that reaps every child (a SIGCHLD handler, SIGCHLD ignored) may
 * take the status before we do. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lifecycle.h"

extern char **environ;

/* The fd the child finds its status pipe at. */
#define STATUS_FD 3

/* An ELF shared library, not a program: ET_DYN without an interpreter
 * (a PIE program has one).  Exec'ing it would crash in the child, so a
 * SCOPE_PROFILER_WRITER naming the writer module (libscopeprof-writer.so,
 * an easy mix-up) would cost the file; anything unreadable or not ELF (a
 * script) is left to exec. */
static int is_shared_library(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    Elf64_Ehdr eh;
    int library = 0;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_type == ET_DYN &&
        eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 4096) {
        library = 1;
        for (unsigned i = 0; i < eh.e_phnum && library; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
                library = 0; /* unreadable: let exec decide */
            else if (ph.p_type == PT_INTERP)
                library = 0;
        }
    }
    close(fd);
    return library;
}

/* The writer program's path, 0; else -1 and why (NULL for the default
 * place, whose caller words it). */
static int find_writer(char *path, size_t len, const char **why)
{
    *why = NULL;
    const char *forced = getenv("SCOPE_PROFILER_WRITER");
    if (forced && *forced) {
        snprintf(path, len, "%s", forced);
        if (access(path, X_OK) != 0) {
            *why = "is not an executable file";
            return -1;
        }
        if (is_shared_library(path)) {
            *why = "is a shared library, not the writer program scopeprof-writer";
            return -1;
        }
        return 0;
    }
    Dl_info info;
    if (!dladdr((void *)find_writer, &info) || !info.dli_fname)
        return -1;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", info.dli_fname);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    static const char *const places[] = {"/scopeprof-writer", "/scopeprof/scopeprof-writer"};
    for (size_t i = 0; i < sizeof places / sizeof *places; i++) {
        int n = snprintf(path, len, "%s%s", dir, places[i]);
        if (n > 0 && (size_t)n < len && access(path, X_OK) == 0)
            return 0;
    }
    return -1;
}

static int is_shim(const char *entry, size_t n, const char *shim)
{
    const char *base = entry;
    for (size_t i = 0; i < n; i++)
        if (entry[i] == '/')
            base = entry + i + 1;
    size_t base_len = n - (size_t)(base - entry);
    if (base_len == strlen("libscopeprof.so") && !strncmp(base, "libscopeprof.so", base_len))
        return 1;
    return shim && strlen(shim) == n && !strncmp(entry, shim, n);
}

/* LD_PRELOAD without the shim (entries are separated by ':' or ' '). */
static char *preload_without_shim(const char *value)
{
    Dl_info info;
    const char *shim = dladdr((void *)preload_without_shim, &info) ? info.dli_fname : NULL;
    char *out = malloc(strlen("LD_PRELOAD=") + strlen(value) + 1);
    if (!out)
        return NULL;
    size_t len = (size_t)sprintf(out, "LD_PRELOAD=");
    const char *at = value;
    while (*at) {
        size_t n = strcspn(at, ": ");
        if (n && !is_shim(at, n, shim)) {
            if (len > strlen("LD_PRELOAD="))
                out[len++] = ':';
            memcpy(out + len, at, n);
            len += n;
        }
        at += n;
        if (*at)
            at++;
    }
    out[len] = '\0';
    return out;
}

static char **child_environment(char **preload_entry)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = calloc(n + 1, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    *preload_entry = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!strncmp(environ[i], "LD_PRELOAD=", 11)) {
            if (!*preload_entry && (*preload_entry = preload_without_shim(environ[i] + 11)))
                env[k++] = *preload_entry;
            continue;
        }
        env[k++] = environ[i];
    }
    env[k] = NULL;
    return env;
}

int sp_writer_process_run(const char *mode, const char *const *args, size_t nargs, char *line,
                          size_t linelen)
{
    line[0] = '\0';
    char exe[PATH_MAX];
    const char *why;
    if (find_writer(exe, sizeof exe, &why) != 0) {
        if (why)
            snprintf(line, linelen, "SCOPE_PROFILER_WRITER=%s %s (set it to the scopeprof-writer "
                     "program, or unset it to use the one next to libscopeprof.so)", exe, why);
        else
            snprintf(line, linelen, "the writer scopeprof-writer is not next to libscopeprof.so "
                     "(reinstall scopeprof or set SCOPE_PROFILER_WRITER to its path)");
        return -1;
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(line, linelen, "cannot start the writer %s (pipe: %s)", exe, strerror(errno));
        return -1;
    }
    char fd_text[16];
    snprintf(fd_text, sizeof fd_text, "%d", STATUS_FD);
    const char **argv = calloc(nargs + 4, sizeof *argv);
    char *preload = NULL;
    char **envp = child_environment(&preload);
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    int have_actions = posix_spawn_file_actions_init(&actions) == 0;
    int have_attr = posix_spawnattr_init(&attr) == 0;
    int rc = -1;
    pid_t pid = -1;
    if (!argv || !envp || !have_actions || !have_attr) {
        snprintf(line, linelen, "cannot start the writer %s (out of memory)", exe);
        goto out;
    }
    argv[0] = exe;
    argv[1] = mode;
    argv[2] = fd_text;
    for (size_t i = 0; i < nargs; i++)
        argv[3 + i] = args[i];
    /* A status pipe that is already STATUS_FD would keep its close-on-exec
     * flag through dup2: move it first. */
    int write_end = fds[1];
    if (write_end == STATUS_FD) {
        write_end = fcntl(fds[1], F_DUPFD_CLOEXEC, STATUS_FD + 1);
        close(fds[1]);
        fds[1] = write_end;
    }
    sigset_t none;
    sigemptyset(&none);
    if (write_end < 0 || posix_spawn_file_actions_adddup2(&actions, write_end, STATUS_FD) != 0 ||
        posix_spawnattr_setsigmask(&attr, &none) != 0 ||
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK) != 0) {
        snprintf(line, linelen, "cannot start the writer %s (%s)", exe, strerror(errno));
        goto out;
    }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    /* The program's descriptors (sockets of MPI...) are none of its business. */
    posix_spawn_file_actions_addclosefrom_np(&actions, STATUS_FD + 1);
#endif
    int spawn_errno = posix_spawn(&pid, exe, &actions, &attr, (char *const *)argv, envp);
    close(fds[1]);
    fds[1] = -1;
    if (spawn_errno != 0) {
        snprintf(line, linelen, "cannot start the writer %s (%s)", exe, strerror(spawn_errno));
        goto out;
    }
    size_t len = 0;
    for (;;) {
        char buf[512];
        ssize_t got = read(fds[0], buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        for (ssize_t i = 0; i < got && len + 1 < linelen; i++)
            if (buf[i] != '\n')
                line[len++] = buf[i];
    }
    line[len] = '\0';
    int status = 0;
    pid_t waited;
    while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    if (!len) {
        if (waited == pid && WIFSIGNALED(status))
            snprintf(line, linelen, "error the writer process %s was killed by signal %d",
                     exe, WTERMSIG(status));
        else
            snprintf(line, linelen, "error the writer process %s ended without a word", exe);
    }
    rc = 0;
out:
    if (fds[1] >= 0)
        close(fds[1]);
    close(fds[0]);
    if (have_actions)
        posix_spawn_file_actions_destroy(&actions);
    if (have_attr)
        posix_spawnattr_destroy(&attr);
    free(argv);
    free(envp);
    free(preload);
    return rc;
}

const char *sp_writer_module_path(const char *path, char *buf, size_t len)
{
    /* The child's /proc/self is its own: the program's executable is
     * /proc/<pid>/exe while we wait (deleted or replaced files included). */
    if (path && !strcmp(path, "/proc/self/exe")) {
        snprintf(buf, len, "/proc/%d/exe", (int)getpid());
        return buf;
    }
    return path;
}
