/* harness.c - see harness.h. */
#include "harness.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scopeprof/h5.h"

extern char **environ;

const char *harness_program(const char *name)
{
    static char buf[4][1024];
    static int turn;
    char *out = buf[turn++ & 3];
    snprintf(out, sizeof buf[0], "%s/programs/%s", TEST_BUILD_DIR, name);
    return out;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return calloc(1, 1);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)(n > 0 ? n : 0) + 1);
    size_t got = n > 0 ? fread(s, 1, (size_t)n, f) : 0;
    s[got] = '\0';
    fclose(f);
    return s;
}

/* The environment of the child: ours minus scopeprof's own variables (a
 * developer's shell may set them), plus LD_PRELOAD and the test's entries.
 * Sanitizer passes (scripts/test.d/asan) set SCOPEPROF_TEST_PRELOAD_PREFIX
 * (the ASan runtime, which must be loaded first) and
 * SCOPEPROF_TEST_WRITER_NAMESPACE (dlmopen and ASan do not mix). */
static char **child_environment(const char *const *extra, int preload)
{
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    size_t m = 0;
    while (extra && extra[m])
        m++;
    char **env = calloc(n + m + 3, sizeof *env);
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "SCOPE_PROFILER_", 15) && strncmp(environ[i], "LD_PRELOAD=", 11))
            env[k++] = environ[i];
    static char preload_var[2048], namespace_var[256];
    if (preload) {
        const char *first = getenv("SCOPEPROF_TEST_PRELOAD_PREFIX");
        snprintf(preload_var, sizeof preload_var, "LD_PRELOAD=%s%s%s", first ? first : "",
                 first && *first ? ":" : "", SHIM_PATH);
        env[k++] = preload_var;
    }
    const char *writer_namespace = getenv("SCOPEPROF_TEST_WRITER_NAMESPACE");
    if (writer_namespace) {
        snprintf(namespace_var, sizeof namespace_var, "SCOPE_PROFILER_WRITER_NAMESPACE=%s",
                 writer_namespace);
        env[k++] = namespace_var;
    }
    for (size_t i = 0; i < m; i++)
        env[k++] = (char *)extra[i];
    env[k] = NULL;
    return env;
}

/* The directories of this test's runs not freed yet: a failed assertion
 * ends the test before harness_run_free, and a failed 50 M-call run left
 * 1.9 GB behind on a shared disk.  They are removed when the test's
 * process exits (Criterion runs each test in its own), unless
 * SCOPEPROF_KEEP_TEST_DIRS is set (to look at them). */
#define MAX_LIVE_DIRS 64
static char live_dirs[MAX_LIVE_DIRS][sizeof(((struct harness_run *)0)->dir)];

static void remove_dir(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

static void remove_live_dirs(void)
{
    if (getenv("SCOPEPROF_KEEP_TEST_DIRS"))
        return;
    for (int i = 0; i < MAX_LIVE_DIRS; i++)
        if (live_dirs[i][0]) {
            remove_dir(live_dirs[i]);
            live_dirs[i][0] = '\0';
        }
}

static void note_live_dir(const char *dir, int live)
{
    static int registered;
    if (!registered)
        registered = atexit(remove_live_dirs) == 0;
    for (int i = 0; i < MAX_LIVE_DIRS; i++) {
        if (live && !live_dirs[i][0]) {
            snprintf(live_dirs[i], sizeof live_dirs[i], "%s", dir);
            return;
        }
        if (!live && !strcmp(live_dirs[i], dir)) {
            live_dirs[i][0] = '\0';
            return;
        }
    }
}

int harness_run(struct harness_run *run, const char *const *argv,
                const char *const *env, int preload)
{
    memset(run, 0, sizeof *run);
    snprintf(run->dir, sizeof run->dir, "/tmp/scopeprof-test-XXXXXX");
    cr_assert_not_null(mkdtemp(run->dir), "mkdtemp failed: %s", strerror(errno));
    note_live_dir(run->dir, 1);

    char outp[600], errp[600];
    snprintf(outp, sizeof outp, "%s/.stdout", run->dir);
    snprintf(errp, sizeof errp, "%s/.stderr", run->dir);

    char **envp = child_environment(env, preload);
    pid_t pid = fork();
    if (pid < 0) {
        free(envp);
        return -1;
    }
    if (pid == 0) {
        /* Its own process group, killed with the test: a program that hangs
         * (or a test killed by its timeout) must not keep running and
         * filling the disk behind the suite's back. */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int in = open("/dev/null", O_RDONLY);
        int out = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
            dup2(err, 2) < 0 || chdir(run->dir) != 0)
            _exit(127);
        execvpe(argv[0], (char *const *)argv, envp);
        _exit(127);
    }
    free(envp);
    setpgid(pid, pid); /* both sides, whichever runs first */
    const char *limit = getenv("SCOPEPROF_TEST_RUN_TIMEOUT");
    int seconds = limit && atoi(limit) > 0 ? atoi(limit) : 240;
    int status = 0;
    for (long waited_ms = 0;; waited_ms += 20) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid)
            break;
        if (got < 0 && errno != EINTR)
            return -1;
        if (waited_ms >= seconds * 1000L) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            fprintf(stderr, "harness: %s still running after %d s: killed\n", argv[0], seconds);
            break;
        }
        usleep(20000);
    }
    kill(-pid, SIGKILL); /* stragglers of the group (forked children) */
    if (WIFEXITED(status)) {
        run->exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        run->signal = WTERMSIG(status);
        run->exit_code = 128 + run->signal;
    }
    run->out = slurp(outp);
    run->err = slurp(errp);
    return 0;
}

void harness_run_free(struct harness_run *run)
{
    free(run->out);
    free(run->err);
    if (run->dir[0]) {
        note_live_dir(run->dir, 0);
        if (!getenv("SCOPEPROF_KEEP_TEST_DIRS"))
            remove_dir(run->dir);
    }
}

const char *harness_path(const struct harness_run *run, const char *name)
{
    static char buf[4][1024];
    static int turn;
    char *out = buf[turn++ & 3];
    snprintf(out, sizeof buf[0], "%s/%s", run->dir, name);
    return out;
}

int harness_exists(const struct harness_run *run, const char *name)
{
    struct stat st;
    return stat(harness_path(run, name), &st) == 0;
}

int harness_count_files(const struct harness_run *run, const char *glob)
{
    DIR *d = opendir(run->dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (fnmatch(glob, e->d_name, FNM_PERIOD) == 0)
            n++;
    closedir(d);
    return n;
}

sp_profile *harness_load(const struct harness_run *run, const char *name)
{
    char err[1024] = "";
    sp_profile *p = sp_h5_read(harness_path(run, name), err, sizeof err);
    cr_assert_not_null(p, "reading %s failed: %s\nprogram stderr:\n%s", name, err, run->err);
    return p;
}

long harness_region(const sp_profile *p, const char *name)
{
    for (size_t i = 0; i < p->num_names; i++)
        if (!strcmp(p->names[i], name))
            return (long)i;
    return -1;
}

const sp_row *harness_row(const sp_profile *p, unsigned rank, const char *name)
{
    long r = harness_region(p, name);
    for (size_t i = 0; r >= 0 && i < p->num_rows; i++)
        if (p->rows[i].region == (uint32_t)r && p->rows[i].rank == rank)
            return &p->rows[i];
    return NULL;
}

unsigned long harness_calls(const sp_profile *p, const char *name)
{
    long r = harness_region(p, name);
    unsigned long n = 0;
    for (size_t i = 0; r >= 0 && i < p->num_rows; i++)
        if (p->rows[i].region == (uint32_t)r)
            n += p->rows[i].count;
    return n;
}
