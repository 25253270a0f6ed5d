/* callsite.h - where a region was registered: return addresses captured at
 * registration (never on sp_begin/sp_end), located in their modules at
 * finalize, and turned into "file:line in function" by the writer process,
 * which has libdw in a process of its own (docs/callsites.md). */
#ifndef SCOPEPROF_CALLSITE_H
#define SCOPEPROF_CALLSITE_H

#include <stddef.h>
#include <stdint.h>

#include "model/capture.h"

/* Enough for C (1 frame) and for Fortran, where the C entry point is called
 * from the scope_profiler module procedure (2 frames), plus user wrappers. */
#define SP_CALLSITE_FRAMES 4

/* The stack from the caller whose return address is `caller` outward:
 * frames[0] = caller, then up to SP_CALLSITE_FRAMES - 1 outer return
 * addresses.  Returns the number of frames (1 when the stack cannot be
 * walked, 0 when caller is 0). */
int sp_callsite_capture(uintptr_t caller, uintptr_t frames[SP_CALLSITE_FRAMES]);

/* Locate return addresses in their modules for the writer (module
 * path to open, file address of the call instruction).  Frames inside the
 * shim are left out.  Module strings stay valid while the modules are
 * loaded.  Returns the number of frames written to out. */
size_t sp_callsite_locate(const uintptr_t *frames, int n, sp_capture_frame *out);

/* "FILE:LINE in FUNCTION" (or "module+0xoff (function)") of frames, as
 * captured by sp_callsite_capture, through the describe_callsite hook
 * (lifecycle/callsite_describe.c); "" when unknown or before start-up.
 * Misuse paths only: may run the writer process. */
void sp_callsite_describe(const uintptr_t *frames, int n, char *buf, size_t len);

#endif
