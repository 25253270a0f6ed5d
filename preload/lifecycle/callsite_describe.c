/* callsite_describe.c - "FILE:LINE in FUNCTION" of captured frames for
 * misuse messages, through the writer module (which holds libdw); the
 * module and offset when it cannot be loaded.  Registered as the
 * recorder's describe_callsite hook. */
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
    char text[1024];
    sp_describe_callsite_fn describe =
        (sp_describe_callsite_fn)sp_writer_symbol(SP_DESCRIBE_CALLSITE_SYMBOL);
    if (describe && describe(located, count, text, sizeof text) == 0) {
        snprintf(buf, len, "%s", text);
        return;
    }
    /* No writer module: the module and offset still say where to look. */
    const char *name = located[0].module_name ? located[0].module_name : "";
    const char *slash = strrchr(name, '/');
    snprintf(buf, len, "%s+0x%llx", slash ? slash + 1 : name,
             (unsigned long long)located[0].address);
}
