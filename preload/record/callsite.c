/* callsite.c - capture and locate the call that registered a region.
 * See callsite.h.  Everything here runs at registration, at finalize or on
 * a misuse path; never on sp_begin/sp_end. */
#include <dlfcn.h>
#include <execinfo.h>
#include <limits.h>
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

static void read_main_program(void)
{
    ssize_t n = readlink("/proc/self/exe", main_program, sizeof main_program - 1);
    main_program[n > 0 ? n : 0] = '\0';
}

size_t sp_callsite_locate(const uintptr_t *frames, int n, sp_capture_frame *out)
{
    Dl_info self;
    void *shim_base = dladdr((void *)sp_callsite_locate, &self) ? self.dli_fbase : NULL;
    pthread_once(&main_program_once, read_main_program);
    size_t count = 0;
    for (int i = 0; i < n; i++) {
        /* A return address may already be the first byte of the next line
         * (or function): look at the call instruction before it. */
        uintptr_t pc = frames[i] - 1;
        Dl_info info;
        struct link_map *map = NULL;
        if (!dladdr1((void *)pc, &info, (void **)&map, RTLD_DL_LINKMAP) || !map) {
            out[count++] = (sp_capture_frame){NULL, NULL, pc};
            continue;
        }
        if (shim_base && info.dli_fbase == shim_base)
            continue;
        /* The main program has an empty name in the link map.  Reading it
         * through /proc/self/exe finds the very file that runs, even when it
         * was deleted or replaced since; the handover turns it into
         * /proc/<pid>/exe for the writer process). */
        int is_main = !map->l_name || !map->l_name[0];
        out[count++] = (sp_capture_frame){
            is_main ? "/proc/self/exe" : map->l_name,
            is_main ? main_program : map->l_name,
            pc - map->l_addr,
        };
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
