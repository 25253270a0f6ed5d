/* writer_loader.c - finds and loads the writer module
 * (libscopeprof-writer.so, which holds HDF5 and libdw) on first use.
 *
 * It is loaded with dlopen(RTLD_LOCAL | RTLD_DEEPBIND): its HDF5 resolves
 * its own symbols first and stays invisible to the application, whose own
 * (e.g. parallel) HDF5 is untouched.  DESIGN.md planned
 * dlmopen(LM_ID_NEWLM); that loads a second C library whose pthread keys
 * and TLS collide with the first one's, and it crashed at exit under Open
 * MPI (rank without MPI_Finalize) and in gfortran programs (libcrypto
 * init).  SCOPE_PROFILER_WRITER_NAMESPACE=isolated still asks for dlmopen. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void *writer_handle;
/* Finalize and a misuse diagnostic (sp_writer_symbol) may load it at once. */
static pthread_mutex_t writer_load_lock = PTHREAD_MUTEX_INITIALIZER;

static sp_write_capture_fn load_writer_locked(char *err, size_t errlen)
{
    static sp_write_capture_fn fn;
    static int tried;
    static char failure[512];
    if (tried) {
        if (!fn)
            snprintf(err, errlen, "%s", failure);
        return fn;
    }
    tried = 1;

    char candidates[3][PATH_MAX];
    int n = 0;
    const char *forced = getenv("SCOPE_PROFILER_WRITER");
    if (forced && *forced)
        snprintf(candidates[n++], PATH_MAX, "%s", forced);
    Dl_info info;
    if (dladdr((void *)load_writer_locked, &info) && info.dli_fname) {
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
        if (!h) {
            if (sp_cfg.writer_isolated)
                sp_debug("dlmopen(%s) failed (%s); loading it in the shared namespace",
                         candidates[i], dlerror());
            h = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL | SP_DEEPBIND);
        }
        if (!h) {
            last_error = dlerror();
            continue;
        }
        fn = (sp_write_capture_fn)dlsym(h, SP_WRITE_CAPTURE_SYMBOL);
        if (!fn)
            last_error = "it does not provide " SP_WRITE_CAPTURE_SYMBOL;
        else
            writer_handle = h;
    }
    if (!fn)
        snprintf(failure, sizeof failure,
                 "cannot load the HDF5 writer libscopeprof-writer.so (%s); "
                 "reinstall scopeprof or set SCOPE_PROFILER_WRITER to its path",
                 last_error ? last_error : "unknown error");
    if (!fn)
        snprintf(err, errlen, "%s", failure);
    return fn;
}

sp_write_capture_fn sp_writer_load(char *err, size_t errlen)
{
    pthread_mutex_lock(&writer_load_lock);
    sp_write_capture_fn fn = load_writer_locked(err, errlen);
    pthread_mutex_unlock(&writer_load_lock);
    return fn;
}

void *sp_writer_symbol(const char *symbol)
{
    char err[512];
    if (!sp_writer_load(err, sizeof err))
        return NULL;
    return dlsym(writer_handle, symbol);
}

