/* callsite.c - capture and locate the call that registered a region.
 * See callsite.h.  Everything here runs at registration, at finalize or on
 * a misuse path; never on sp_begin/sp_end. */
#include <dlfcn.h>
#include <execinfo.h>
#include <limits.h>
#include <stddef.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "callsite.h"
#include "recorder.h"

int sp_callsite_capture(uintptr_t caller, uintptr_t frames[SP_CALLSITE_FRAMES])
{
    if (!caller)
        return 0;
    frames[0] = caller;
    /* glibc's backtrace() rather than libunwind: libunwind.so exports the
     * _Unwind_* functions, so linking it into a preloaded shim would replace
     * the C++ exception unwinder of every profiled program.  The shim's own
     * frames (this function, the registration, the API entry) come first;
     * the walk starts where it meets `caller`. */
    void *stack[SP_CALLSITE_FRAMES + 12];
    int depth = backtrace(stack, (int)(sizeof stack / sizeof *stack));
    for (int i = 0; i < depth; i++) {
        if ((uintptr_t)stack[i] != caller)
            continue;
        int n = 1;
        for (int j = i + 1; j < depth && n < SP_CALLSITE_FRAMES; j++)
            frames[n++] = (uintptr_t)stack[j];
        return n;
    }
    return 1;
}

static char main_program[PATH_MAX];
static pthread_once_t main_program_once = PTHREAD_ONCE_INIT;

static void *shim_base; /* where this library is loaded: its frames are left out */

static void read_main_program(void)
{
    ssize_t n = readlink("/proc/self/exe", main_program, sizeof main_program - 1);
    main_program[n > 0 ? n : 0] = '\0';
    Dl_info self;
    shim_base = dladdr((void *)sp_callsite_locate, &self) ? self.dli_fbase : NULL;
}

/* Where each return address was found, remembered: dladdr1 searches the
 * symbol table for every address (about 40 us each), and a program that
 * registers a million regions does it from a handful of call sites.  The
 * cache is emptied whenever a module was loaded or unloaded since it was
 * filled (dl_iterate_phdr's counters), so a stale module is never named. */
enum { LOCATED_EMPTY, LOCATED_FRAME, LOCATED_SHIM, LOCATED_RAW };
#define SP_LOCATE_CACHE 4096
static struct located {
    uintptr_t pc;
    int kind;
    sp_capture_frame frame;
} locate_cache[SP_LOCATE_CACHE];
static unsigned long long cached_adds, cached_subs;
static pthread_mutex_t locate_lock = PTHREAD_MUTEX_INITIALIZER;

static int read_load_counters(struct dl_phdr_info *info, size_t size, void *data)
{
    unsigned long long *counts = data;
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        return 1;
    counts[0] = info->dlpi_adds;
    counts[1] = info->dlpi_subs;
    return 1; /* the first module carries the counters: stop there */
}

static struct located locate_one(uintptr_t pc)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!dladdr1((void *)pc, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return (struct located){pc, LOCATED_RAW, {NULL, NULL, pc}};
    if (shim_base && info.dli_fbase == shim_base)
        return (struct located){pc, LOCATED_SHIM, {NULL, NULL, 0}};
    /* The main program has an empty name in the link map.  Reading it
     * through /proc/self/exe finds the very file that runs, even when it
     * was deleted or replaced since (the writer shares /proc/self). */
    int is_main = !map->l_name || !map->l_name[0];
    return (struct located){pc, LOCATED_FRAME, {
        is_main ? "/proc/self/exe" : map->l_name,
        is_main ? main_program : map->l_name,
        pc - map->l_addr,
    }};
}

size_t sp_callsite_locate(const uintptr_t *frames, int n, sp_capture_frame *out)
{
    pthread_once(&main_program_once, read_main_program);
    unsigned long long counts[2] = {0, 0};
    dl_iterate_phdr(read_load_counters, counts);
    pthread_mutex_lock(&locate_lock);
    if (counts[0] != cached_adds || counts[1] != cached_subs) {
        memset(locate_cache, 0, sizeof locate_cache);
        cached_adds = counts[0];
        cached_subs = counts[1];
    }
    pthread_mutex_unlock(&locate_lock);
    size_t count = 0;
    for (int i = 0; i < n; i++) {
        /* A return address may already be the first byte of the next line
         * (or function): look at the call instruction before it. */
        uintptr_t pc = frames[i] - 1;
        struct located *slot = &locate_cache[(pc ^ (pc >> 12)) % SP_LOCATE_CACHE];
        pthread_mutex_lock(&locate_lock);
        struct located hit = *slot;
        pthread_mutex_unlock(&locate_lock);
        if (hit.kind == LOCATED_EMPTY || hit.pc != pc) {
            /* dladdr1 takes the loader's lock: never under ours. */
            hit = locate_one(pc);
            pthread_mutex_lock(&locate_lock);
            *slot = hit;
            pthread_mutex_unlock(&locate_lock);
        }
        if (hit.kind != LOCATED_SHIM)
            out[count++] = hit.frame;
    }
    return count;
}

void sp_callsite_describe(const uintptr_t *frames, int n, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    /* Naming a file and line takes the writer process: the life cycle's. */
    void (*describe)(const uintptr_t *, int, char *, size_t) =
        SP_LOAD(sp_record_hooks.describe_callsite);
    if (describe && n > 0 && len)
        describe(frames, n, buf, len);
}
