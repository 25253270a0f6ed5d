/* callsite_describe.c - "FILE:LINE in FUNCTION" of captured frames for
 * misuse messages, asked of the writer process (which holds libdw: it is
 * never mapped into the program); the module and offset when it cannot be
 * run.  Registered as the recorder's describe_callsite hook. */
#include <stdio.h>
#include <string.h>

#include "lifecycle.h"

void sp_callsite_describe_with_writer(const uintptr_t *frames, int n, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (n <= 0 || !len)
        return;
    sp_capture_frame located[SP_CALLSITE_FRAMES];
    size_t count = sp_callsite_locate(frames, n < SP_CALLSITE_FRAMES ? n : SP_CALLSITE_FRAMES,
                                      located);
    if (!count)
        return;
    char paths[SP_CALLSITE_FRAMES][64], addresses[SP_CALLSITE_FRAMES][24];
    const char *args[2 * SP_CALLSITE_FRAMES];
    for (size_t i = 0; i < count; i++) {
        const char *path = sp_writer_module_path(located[i].module_path, paths[i],
                                                 sizeof paths[i]);
        snprintf(addresses[i], sizeof addresses[i], "0x%llx",
                 (unsigned long long)located[i].address);
        args[2 * i] = path ? path : "";
        args[2 * i + 1] = addresses[i];
    }
    char line[1200];
    if (sp_writer_process_run("describe", args, 2 * count, line, sizeof line) == 0 &&
        !strncmp(line, "ok ", 3)) {
        snprintf(buf, len, "%s", line + 3);
        return;
    }
    /* No writer process: the module and offset still say where to look. */
    const char *name = located[0].module_name ? located[0].module_name : "";
    const char *slash = strrchr(name, '/');
    snprintf(buf, len, "%s+0x%llx", slash ? slash + 1 : name,
             (unsigned long long)located[0].address);
}
