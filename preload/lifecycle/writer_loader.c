/* writer_loader.c - the fallback writer: libscopeprof-writer.so loaded into
 * the program, used only when the writer process cannot be started (a
 * process limit, a sandbox without fork) and never when the program's
 * malloc is not the C library's.
 *
 * It is loaded with dlopen(RTLD_LOCAL | RTLD_DEEPBIND): its HDF5 resolves
 * its own symbols first and stays invisible to the application.  DEEPBIND
 * also binds the module's malloc/free to the C library, so memory the
 * module frees from a replacement allocator (jemalloc, tcmalloc: libdw and
 * libgen hand back such memory) crashes the program at exit - hence the
 * check below, and hence the writer process as the normal path.
 * SCOPE_PROFILER_WRITER_NAMESPACE=isolated still asks for dlmopen. */
#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lifecycle.h"

/* The sanitizer runtimes refuse RTLD_DEEPBIND (they must interpose every
 * allocation); sanitizer builds are test builds without a foreign HDF5. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SP_DEEPBIND 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SP_DEEPBIND 0
#endif
#endif
#ifndef SP_DEEPBIND
#define SP_DEEPBIND RTLD_DEEPBIND
#endif

typedef int (*write_files_fn)(const char *const *files, size_t n, char *msg, size_t msglen);
#define WRITE_FILES_SYMBOL "scopeprof_write_files"

static pthread_mutex_t writer_load_lock = PTHREAD_MUTEX_INITIALIZER;

/* The program's malloc is the C library's (no jemalloc, tcmalloc...). */
static int malloc_is_libc(void)
{
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (!libc)
        return 0;
    int same = dlsym(libc, "malloc") == dlsym(RTLD_DEFAULT, "malloc") &&
               dlsym(libc, "free") == dlsym(RTLD_DEFAULT, "free");
    dlclose(libc);
    return same;
}

static write_files_fn load_locked(char *err, size_t errlen)
{
    static write_files_fn fn;
    static int tried;
    static char failure[512];
    if (tried) {
        if (!fn)
            snprintf(err, errlen, "%s", failure);
        return fn;
    }
    tried = 1;
    char candidates[2][PATH_MAX];
    int n = 0;
    Dl_info info;
    if (dladdr((void *)load_locked, &info) && info.dli_fname) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", info.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(dir, sizeof dir, ".");
        snprintf(candidates[n++], PATH_MAX, "%.4000s/libscopeprof-writer.so", dir);
        snprintf(candidates[n++], PATH_MAX, "%.4000s/scopeprof/libscopeprof-writer.so", dir);
    }
    const char *last_error = "not found next to libscopeprof.so";
    for (int i = 0; i < n && !fn; i++) {
        if (access(candidates[i], R_OK) != 0)
            continue;
        void *h = NULL;
        if (sp_cfg.writer_isolated)
            h = dlmopen(LM_ID_NEWLM, candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (!h)
            h = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL | SP_DEEPBIND);
        if (!h) {
            last_error = dlerror();
            continue;
        }
        fn = (write_files_fn)dlsym(h, WRITE_FILES_SYMBOL);
        if (!fn)
            last_error = "it does not provide " WRITE_FILES_SYMBOL;
    }
    if (!fn)
        snprintf(failure, sizeof failure, "the writer module libscopeprof-writer.so cannot be "
                 "loaded either (%s)", last_error ? last_error : "unknown error");
    if (!fn)
        snprintf(err, errlen, "%s", failure);
    return fn;
}

int sp_writer_module_write(const char *const *files, size_t n, char *msg, size_t msglen)
{
    if (!malloc_is_libc()) {
        snprintf(msg, msglen, "the fallback writer module is not safe with the program's "
                 "own malloc");
        return -2;
    }
    pthread_mutex_lock(&writer_load_lock);
    write_files_fn fn = load_locked(msg, msglen);
    pthread_mutex_unlock(&writer_load_lock);
    if (!fn)
        return -2;
    /* In the program's process a file size limit must fail the write, not
     * kill the program (SIGXFSZ): blocked here, and what it raised taken. */
    sigset_t xfsz, old;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    int blocked = pthread_sigmask(SIG_BLOCK, &xfsz, &old) == 0;
    int rc = fn(files, n, msg, msglen);
    if (blocked) {
        struct timespec zero = {0, 0};
        if (!sigismember(&old, SIGXFSZ))
            while (sigtimedwait(&xfsz, NULL, &zero) == SIGXFSZ)
                ;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return rc;
}
