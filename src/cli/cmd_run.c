/* cmd_run.c - `scopeprof run [options] -- CMD ARGS...`: run a command with
 * the shim preloaded and the SCOPE_PROFILER_* configuration in its
 * environment, then say where the files went.
 *
 * Two ways to be launched:
 *   scopeprof run -- mpirun -np 4 ./app    fork, wait, report the files;
 *   mpirun -np 4 scopeprof run -- ./app    we are one rank among many: exec
 *       the program in place (no fork).  Then the launcher's signals, exit
 *       status and process tracking (PMIx, resource binding) go straight to
 *       the application, no extra process sits between them, and nothing is
 *       printed from the ranks (four ranks would print four summaries).
 * A rank is recognised by the launcher variables that the shim also uses to
 * guess the rank before MPI_Init. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "commands.h"

static const char run_help[] =
    "usage: scopeprof run [options] -- CMD [ARGS...]\n"
    "\n"
    "Run CMD with the profiler preloaded (LD_PRELOAD=libscopeprof.so, added in\n"
    "front of any existing value).  Every process of CMD that records a region\n"
    "writes <prefix>_rank<NNNNN>.h5.  Works around a launcher\n"
    "(scopeprof run -- mpirun -np 4 ./app) and inside one\n"
    "(mpirun -np 4 scopeprof run -- ./app).\n"
    "\n"
    "options:\n"
    "  -o, --output PREFIX  output prefix (SCOPE_PROFILER_OUTPUT)\n"
    "      --label L        run label stored in the files (SCOPE_PROFILER_LABEL)\n"
    "      --no-threads     do not track threads (SCOPE_PROFILER_TRACK_THREADS=0)\n"
    "      --include GLOB   record only regions matching GLOB (repeatable)\n"
    "      --exclude GLOB   do not record regions matching GLOB (repeatable)\n"
    "  -v, --verbose        let the shim explain what it does (SCOPE_PROFILER_VERBOSE=1)\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit status: the command's own, 128+N if it was killed by signal N;\n"
    "127 if it could not be run, 2 for a usage error.\n";

#define CMD "run"

/* Launcher variables present in every rank (Open MPI, MPICH/Hydra, PMIx,
 * MVAPICH, Intel MPI, Cray ALPS/PALS). */
static int inside_mpi_launcher(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                       "MV2_COMM_WORLD_RANK", "MPI_LOCALRANKID", "ALPS_APP_PE",
                                       "PALS_RANKID"};
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++)
        if (getenv(vars[k]))
            return 1;
    return 0;
}

/* Append `item` to a comma-joined list; 0 or -1. */
static int join(char **list, const char *item)
{
    size_t old = *list ? strlen(*list) : 0;
    char *grown = realloc(*list, old + strlen(item) + 2);
    if (!grown)
        return -1;
    if (old)
        grown[old++] = ',';
    strcpy(grown + old, item);
    *list = grown;
    return 0;
}

static int set_preload(const char *shim)
{
    const char *old = getenv("LD_PRELOAD");
    if (!old || !old[0])
        return setenv("LD_PRELOAD", shim, 1);
    size_t len = strlen(shim) + strlen(old) + 2;
    char *both = malloc(len);
    if (!both)
        return -1;
    /* ld.so accepts spaces or colons; colons survive word splitting. */
    snprintf(both, len, "%s:%s", shim, old);
    int rc = setenv("LD_PRELOAD", both, 1);
    free(both);
    return rc;
}

/* ---- child process and signals ------------------------------------------ */

static volatile sig_atomic_t child_pid;

/* Signals sent with kill() to us (a batch system, a timeout) are passed on.
 * A Ctrl-C typed at the terminal already reached the child, which is in
 * our process group: forwarding it again would make mpirun see two and abort
 * without cleaning up. */
static void forward_signal(int sig, siginfo_t *info, void *context)
{
    (void)context;
    if (child_pid > 0 && info->si_code <= 0)
        kill(child_pid, sig);
}

static int install_forwarding(struct sigaction *saved)
{
    static const int sigs[] = {SIGINT, SIGTERM};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < 2; k++)
        if (sigaction(sigs[k], &sa, &saved[k]) != 0)
            return -1;
    return 0;
}

static void exec_command(char **argv)
{
    execvp(argv[0], argv);
    int code = errno == ENOENT ? 127 : 126;
    fprintf(stderr, "scopeprof run: cannot run '%s': %s\n", argv[0], strerror(errno));
    _exit(code);
}

/* ---- where the files went --------------------------------------------------- */

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The shim expands %p (pid), %h (host), %r (rank) and %% in the prefix's
 * file name: match them with '*', and escape glob characters of the rest. */
static void prefix_glob(const char *base, char *pattern, size_t len)
{
    size_t n = 0;
    for (const char *s = base; *s && n + 3 < len; s++) {
        if (s[0] == '%' && s[1] && strchr("phr%", s[1])) {
            pattern[n++] = s[1] == '%' ? '%' : '*';
            s++;
            continue;
        }
        if (strchr("*?[\\", *s))
            pattern[n++] = '\\';
        pattern[n++] = *s;
    }
    pattern[n] = '\0';
    snprintf(pattern + n, len - n, "_rank*.h5");
}

/* <prefix>_rank*.h5 in the prefix's directory, modified since `since`. */
static void report_files(const char *prefix, const struct timespec *since)
{
    char dir[PATH_MAX], pattern[PATH_MAX];
    const char *slash = strrchr(prefix, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - prefix) + (slash == prefix), prefix);
    else
        snprintf(dir, sizeof dir, ".");
    prefix_glob(slash ? slash + 1 : prefix, pattern, sizeof pattern);
    DIR *d = opendir(dir);
    if (!d)
        return;
    char **names = NULL;
    size_t count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (fnmatch(pattern, e->d_name, 0) != 0)
            continue;
        char path[PATH_MAX];
        struct stat st;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path ||
            stat(path, &st) != 0 || st.st_mtim.tv_sec < since->tv_sec ||
            (st.st_mtim.tv_sec == since->tv_sec && st.st_mtim.tv_nsec < since->tv_nsec))
            continue;
        char **grown = realloc(names, (count + 1) * sizeof *names);
        if (!grown)
            break;
        names = grown;
        if (!(names[count] = strdup(slash ? path : e->d_name)))
            break;
        count++;
    }
    closedir(d);
    if (count == 0) {
        fprintf(stderr, "scopeprof: no profile written (nothing recorded, or see above)\n");
    } else {
        qsort(names, count, sizeof *names, by_string);
        fprintf(stderr, "scopeprof: wrote %zu file%s: %s", count, count == 1 ? "" : "s", names[0]);
        if (count > 2)
            fprintf(stderr, " ...");
        if (count > 1)
            fprintf(stderr, " %s", names[count - 1]);
        fprintf(stderr, " (scopeprof report %s%s%s)\n", slash ? dir : "", slash ? "/" : "",
                pattern);
    }
    for (size_t k = 0; k < count; k++)
        free(names[k]);
    free(names);
}

/* The prefix the shim will use: ours or the environment's; "%p" (any
 * name) when neither is set, since the program may name its output with
 * sp_init(prefix, rank). */
static const char *effective_prefix(const char *output)
{
    if (output)
        return output;
    const char *env = getenv("SCOPE_PROFILER_OUTPUT");
    return env && env[0] ? env : "%p";
}

int cmd_run(int argc, char **argv)
{
    const char *output = NULL, *label = NULL;
    char *include = NULL, *exclude = NULL;
    int no_threads = 0, verbose = 0, status = 2;
    int i = 1;
    while (i < argc) {
        const char *v;
        int r;
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (cli_flag(argv, &i, "--help", "-h")) {
            fputs(run_help, stdout);
            status = 0;
            goto out;
        }
        if (cli_flag(argv, &i, "--no-threads", NULL)) {
            no_threads = 1;
        } else if (cli_flag(argv, &i, "--verbose", "-v")) {
            verbose = 1;
        } else if ((r = cli_option_value(CMD, argc, argv, &i, "--output", "-o", &v))) {
            if (r < 0)
                goto out;
            output = v;
        } else if ((r = cli_option_value(CMD, argc, argv, &i, "--label", NULL, &v))) {
            if (r < 0)
                goto out;
            label = v;
        } else if ((r = cli_option_value(CMD, argc, argv, &i, "--include", NULL, &v))) {
            if (r < 0 || join(&include, v) != 0)
                goto out;
        } else if ((r = cli_option_value(CMD, argc, argv, &i, "--exclude", NULL, &v))) {
            if (r < 0 || join(&exclude, v) != 0)
                goto out;
        } else if (argv[i][0] == '-') {
            cli_usage_error(CMD, "unknown option '%s'", argv[i]);
            goto out;
        } else {
            break; /* the command, without "--" */
        }
    }
    if (i >= argc) {
        cli_usage_error(CMD, "no command to run");
        goto out;
    }
    if (output && !output[0]) {
        cli_usage_error(CMD, "--output needs a non-empty prefix");
        goto out;
    }

    char shim[PATH_MAX];
    if (cli_find_shim(shim, sizeof shim) != 0) {
        status = cli_file_error(CMD, shim, "the profiler library is missing (is scopeprof "
                                           "installed completely?)");
        goto out;
    }
    if (set_preload(shim) != 0 || (output && setenv("SCOPE_PROFILER_OUTPUT", output, 1)) ||
        (label && setenv("SCOPE_PROFILER_LABEL", label, 1)) ||
        (no_threads && setenv("SCOPE_PROFILER_TRACK_THREADS", "0", 1)) ||
        (include && setenv("SCOPE_PROFILER_INCLUDE", include, 1)) ||
        (exclude && setenv("SCOPE_PROFILER_EXCLUDE", exclude, 1)) ||
        (verbose && setenv("SCOPE_PROFILER_VERBOSE", "1", 1))) {
        status = cli_file_error(CMD, NULL, "cannot set the environment: %s", strerror(errno));
        goto out;
    }
    char **command = argv + i;

    if (inside_mpi_launcher())
        exec_command(command); /* does not return */

    struct timespec started;
    clock_gettime(CLOCK_REALTIME, &started);
    /* File times have coarser granularity than the clock on some file
     * systems: start the "newer than" window one second early. */
    started.tv_sec -= 1;

    struct sigaction saved[2];
    if (install_forwarding(saved) != 0) {
        status = cli_file_error(CMD, NULL, "cannot install signal handlers: %s", strerror(errno));
        goto out;
    }
    /* Held back from the fork until child_pid is set: a signal sent once
     * the child runs (it may print before the parent is scheduled again)
     * must reach it, not find child_pid 0 and be lost. */
    sigset_t forwarded, before;
    sigemptyset(&forwarded);
    sigaddset(&forwarded, SIGINT);
    sigaddset(&forwarded, SIGTERM);
    sigprocmask(SIG_BLOCK, &forwarded, &before);
    pid_t pid = fork();
    if (pid < 0) {
        sigprocmask(SIG_SETMASK, &before, NULL);
        status = cli_file_error(CMD, NULL, "cannot start '%s': %s", command[0], strerror(errno));
        goto out;
    }
    if (pid == 0) {
        sigaction(SIGINT, &saved[0], NULL);
        sigaction(SIGTERM, &saved[1], NULL);
        sigprocmask(SIG_SETMASK, &before, NULL);
        exec_command(command);
    }
    child_pid = pid;
    sigprocmask(SIG_SETMASK, &before, NULL);
    int wstatus;
    while (waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR) {
            status = cli_file_error(CMD, NULL, "waiting for '%s': %s", command[0],
                                    strerror(errno));
            goto out;
        }
    }
    child_pid = 0;
    sigaction(SIGINT, &saved[0], NULL);
    sigaction(SIGTERM, &saved[1], NULL);
    if (WIFSIGNALED(wstatus))
        status = 128 + WTERMSIG(wstatus);
    else
        status = WEXITSTATUS(wstatus);
    /* 127 from exec_command: the message is already there, no files to list. */
    if (status != 127)
        report_files(effective_prefix(output), &started);
out:
    free(include);
    free(exclude);
    return status;
}
