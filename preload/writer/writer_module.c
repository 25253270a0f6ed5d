/* writer_module.c - libscopeprof-writer.so, the fallback writer: loaded
 * into the application with dlopen only when the writer process cannot be
 * started (lifecycle/writer_loader.c says when).  Same work as the process. */
#include <stddef.h>

#include "writer_core.h"

__attribute__((visibility("default"))) int scopeprof_describe_callsite(
    const sp_capture_frame *frames, size_t num_frames, char *text, size_t textlen)
{
    return sp_writer_describe(frames, num_frames, text, textlen);
}

__attribute__((visibility("default"))) int scopeprof_write_files(const char *const *files,
                                                                size_t n, char *msg,
                                                                size_t msglen)
{
    return (int)sp_writer_write_files(files, n, msg, msglen);
}
