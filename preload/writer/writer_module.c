/* writer_module.c - libscopeprof-writer.so, loaded by the shim with
 * dlmopen() at finalize: capture -> profile -> schema-3 HDF5 file.  It runs
 * in a link namespace of its own, with its own C library: it only reads the
 * capture and frees only what it allocated itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callsite/callsite_resolve.h"
#include "model/capture.h"
#include "scopeprof/h5.h"

/* The capture's regions with the call sites resolved: a location given
 * explicitly (sp_region_at) wins, the registering call fills what is
 * unknown.  Strings in *owned, freed with free_resolved. */
struct resolved {
    sp_capture_region *regions;
    char **owned;
    size_t num_owned;
};

static void free_resolved(struct resolved *r)
{
    for (size_t i = 0; i < r->num_owned; i++)
        free(r->owned[i]);
    free(r->owned);
    free(r->regions);
}

static const char *own(struct resolved *r, const char *s)
{
    char *copy = strdup(s);
    if (copy)
        r->owned[r->num_owned++] = copy;
    return copy;
}

static int same_frames(const sp_capture_region *a, const sp_capture_region *b)
{
    if (a->num_frames != b->num_frames)
        return 0;
    for (size_t k = 0; k < a->num_frames; k++)
        if (a->frames[k].address != b->frames[k].address ||
            a->frames[k].module_path != b->frames[k].module_path)
            return 0;
    return 1;
}

/* One line on fd 2 directly: this namespace has its own stdio. */
static void say(const char *path, const char *what)
{
    char line[4200];
    int n = snprintf(line, sizeof line, "scopeprof: %s: %s\n", path, what);
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)w;
    }
}

static int resolve_callsites(const sp_capture *capture, struct resolved *out)
{
    memset(out, 0, sizeof *out);
    size_t n = capture->num_regions;
    out->regions = malloc((n ? n : 1) * sizeof *out->regions);
    out->owned = malloc((n ? n : 1) * 2 * sizeof *out->owned);
    sp_callsite_resolver *resolver = sp_callsite_resolver_new();
    if (!out->regions || !out->owned || !resolver) {
        sp_callsite_resolver_free(resolver);
        free_resolved(out);
        return -1;
    }
    memcpy(out->regions, capture->regions, n * sizeof *out->regions);
    sp_callsite site;
    const sp_capture_region *previous = NULL;
    for (size_t i = 0; i < n; i++) {
        sp_capture_region *reg = &out->regions[i];
        if (!reg->num_frames)
            continue;
        /* Regions registered in a loop share their call site. */
        if (!previous || !same_frames(previous, reg)) {
            if (sp_callsite_resolve(resolver, reg->frames, reg->num_frames, &site) != 0)
                continue;
            previous = reg;
        }
        if (!reg->source_file) {
            reg->source_file = own(out, site.file);
            reg->source_line = site.line;
        }
        if (!reg->function && site.function[0])
            reg->function = own(out, site.function);
    }
    sp_callsite_resolver_free(resolver);
    return 0;
}

__attribute__((visibility("default"))) int scopeprof_describe_callsite(
    const sp_capture_frame *frames, size_t num_frames, char *text, size_t textlen)
{
    sp_callsite_resolver *resolver = sp_callsite_resolver_new();
    sp_callsite site;
    int rc = resolver ? sp_callsite_resolve(resolver, frames, num_frames, &site) : -1;
    if (rc == 0)
        sp_callsite_format(&site, text, textlen);
    sp_callsite_resolver_free(resolver);
    return rc;
}

__attribute__((visibility("default"))) int scopeprof_write_capture(const sp_capture *capture,
                                                                  char *err, size_t errlen)
{
    if (!capture || capture->abi != SP_CAPTURE_ABI) {
        snprintf(err, errlen, "the writer module does not match this libscopeprof.so "
                              "(reinstall scopeprof)");
        return -1;
    }
    struct resolved resolved;
    if (resolve_callsites(capture, &resolved) != 0) {
        snprintf(err, errlen, "out of memory while resolving call sites");
        return -1;
    }
    sp_capture with_callsites = *capture;
    with_callsites.regions = resolved.regions;
    char warning[4096] = "";
    sp_profile *profile = NULL;
    /* Spilled events (the memory cap was reached) are streamed to the file
     * in bounded memory; a capture that fits in memory is converted whole,
     * which is faster. */
    int rc = capture->num_spill_files
                 ? sp_capture_write_stream(&with_callsites, 0, NULL, warning, sizeof warning,
                                           err, errlen)
                 : 1;
    if (rc == 1 && capture->num_spill_files && capture->verbose)
        say(capture->path, "some lane's calls are not in end order: the spilled calls are "
                           "converted in memory (about 100 bytes per call), not streamed");
    if (rc == 1 && !(profile = sp_capture_to_profile(&with_callsites, warning, sizeof warning,
                                                     err, errlen)))
        rc = -1;
    free_resolved(&resolved);
    if (rc < 0) {
        sp_profile_free(profile);
        return -1;
    }
    if (warning[0])
        say(capture->path, warning);
    if (profile) {
        rc = sp_h5_write(capture->path, profile, err, errlen);
        sp_profile_free(profile);
    }
    return rc;
}
