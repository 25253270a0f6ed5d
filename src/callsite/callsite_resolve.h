/* callsite_resolve.h - registration frames (located by the shim) to source
 * file, line and function, from the modules' DWARF line tables and symbol
 * tables with libdw.  Part of the writer module only, which runs in its own
 * link namespace.  Format of the results: docs/callsites.md. */
#ifndef SCOPEPROF_CALLSITE_RESOLVE_H
#define SCOPEPROF_CALLSITE_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "model/capture.h"

typedef struct sp_callsite {
    char file[1024];      /* DWARF source file, or "module+0xoff" without debug info */
    int64_t line;         /* -1: unknown */
    char function[256];   /* "": unknown */
} sp_callsite;

/* Opened modules are kept (one per file) for the resolver's lifetime. */
typedef struct sp_callsite_resolver sp_callsite_resolver;
sp_callsite_resolver *sp_callsite_resolver_new(void);
void sp_callsite_resolver_free(sp_callsite_resolver *resolver);

/* The user's call site among frames (innermost first): the first frame that
 * is not inside the scope_profiler Fortran module.  Returns 0, or -1 when
 * nothing at all is known (no frames). */
int sp_callsite_resolve(sp_callsite_resolver *resolver, const sp_capture_frame *frames,
                        size_t num_frames, sp_callsite *site);

/* "solver.c:42 in solve_step", "solver+0x1189 (solve_step)", ... */
void sp_callsite_format(const sp_callsite *site, char *buf, size_t len);

#endif
