/* writer_core.c - the handover of the shim (spill-file format, read by
 * src/capture/spill_capture.c) -> call sites resolved -> schema-3 file.
 * Runs in the writer process (writer_main.c), or in the fallback module
 * (writer_module.c).  Where the whole file does not fit (a full disk, a
 * file size limit), the counts and totals per region are written instead,
 * as ON_FULL=stop files hold them, and the caller keeps the spill file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callsite/callsite_resolve.h"
#include "capture/spill_capture.h"
#include "model/spill_format.h"
#include "scopeprof/h5.h"
#include "writer_core.h"

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
            (a->frames[k].module_path != b->frames[k].module_path &&
             (!a->frames[k].module_path || !b->frames[k].module_path ||
              strcmp(a->frames[k].module_path, b->frames[k].module_path))))
            return 0;
    return 1;
}

/* One line on fd 2 (the program's stderr), prefixed like the shim's. */
static void say(const char *fmt, const char *a, const char *b)
{
    char line[4200];
    int n = snprintf(line, sizeof line, fmt, a, b);
    if (n > 0) {
        size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
        ssize_t w = write(STDERR_FILENO, line, len);
        (void)w;
    }
}

static int resolve_callsites(const sp_capture *capture, const uint64_t *open_calls,
                             const char *why, struct resolved *out)
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
    if (n)
        memcpy(out->regions, capture->regions, n * sizeof *out->regions);
    sp_callsite site;
    int have_site = 0;
    const sp_capture_region *previous = NULL;
    for (size_t i = 0; i < n; i++) {
        sp_capture_region *reg = &out->regions[i];
        if (reg->num_frames) {
            /* Regions registered in a loop share their call site. */
            if (!previous || !same_frames(previous, reg)) {
                have_site = sp_callsite_resolve(resolver, reg->frames, reg->num_frames,
                                                &site) == 0;
                previous = reg;
            }
            if (have_site && !reg->source_file) {
                reg->source_file = own(out, site.file);
                reg->source_line = site.line;
            }
            if (have_site && !reg->function && site.function[0])
                reg->function = own(out, site.function);
        }
        if (open_calls && open_calls[i]) {
            char what[1400], where[1100] = "";
            if (reg->num_frames && have_site) {
                char text[1024];
                sp_callsite_format(&site, text, sizeof text);
                snprintf(where, sizeof where, " (registered at %s)", text);
            }
            snprintf(what, sizeof what, "still open at %s (depth %llu); its last call(s) are "
                     "dropped%s", why, (unsigned long long)open_calls[i], where);
            say("scopeprof: region '%s' %s\n", reg->name, what);
        }
    }
    sp_callsite_resolver_free(resolver);
    return 0;
}

int sp_writer_describe(const sp_capture_frame *frames, size_t num_frames, char *text,
                       size_t textlen)
{
    sp_callsite_resolver *resolver = sp_callsite_resolver_new();
    sp_callsite site;
    int rc = resolver ? sp_callsite_resolve(resolver, frames, num_frames, &site) : -1;
    if (rc == 0)
        sp_callsite_format(&site, text, textlen);
    sp_callsite_resolver_free(resolver);
    return rc;
}

/* The whole profile: streamed from the files in bounded memory, or
 * converted in memory when it is small (faster) or not in end order. */
static int write_whole(const sp_capture *cap, uint64_t events, char *err, size_t errlen)
{
    char warning[4096] = "";
    sp_profile *profile = NULL;
    uint64_t budget = cap->max_memory ? cap->max_memory : (uint64_t)1 << 30;
    int rc = events * 120 > budget / 4
                 ? sp_capture_write_stream(cap, 0, NULL, warning, sizeof warning, err, errlen)
                 : 1;
    if (rc == 1 && events * 120 > budget / 4 && cap->verbose)
        say("scopeprof: %s: %s\n", cap->path,
            "some lane's calls are not in end order: the spilled calls are converted in "
            "memory (about 100 bytes per call), not streamed");
    if (rc == 1 && !(profile = sp_capture_to_profile(cap, warning, sizeof warning, err, errlen)))
        rc = -1;
    if (rc < 0) {
        sp_profile_free(profile);
        return -1;
    }
    if (warning[0])
        say("scopeprof: %s: %s\n", cap->path, warning);
    if (profile) {
        rc = sp_h5_write(cap->path, profile, err, errlen);
        sp_profile_free(profile);
    }
    return rc;
}

/* Counts and totals per region, as ON_FULL=stop files hold them: every
 * event of the files is counted, none is kept. */
static int write_counts_only(const sp_capture *cap, char *err, size_t errlen)
{
    size_t n = cap->num_regions;
    sp_capture_region *regions = malloc((n ? n : 1) * sizeof *regions);
    if (!regions) {
        snprintf(err, errlen, "%s: out of memory", cap->path);
        return -1;
    }
    if (n)
        memcpy(regions, cap->regions, n * sizeof *regions);
    for (size_t f = 0; f < cap->num_spill_files; f++) {
        sp_spill_reader *r = sp_spill_open(cap->spill_files[f], err, errlen);
        if (!r) {
            free(regions);
            return -1;
        }
        sp_spill_frame frame;
        const void *payload;
        while (sp_spill_next(r, &frame, &payload, err, errlen) == 1) {
            if (frame.type != SP_SPILL_FRAME_EVENTS)
                continue;
            const sp_event *e = payload;
            for (uint32_t i = 0; i < frame.count; i++)
                if (e[i].region < n) {
                    regions[e[i].region].dropped_calls++;
                    regions[e[i].region].dropped_total_ns += e[i].end - e[i].start;
                }
        }
        sp_spill_close(r);
    }
    sp_capture counts = *cap;
    counts.regions = regions;
    counts.num_spill_files = 0;
    counts.num_chunks = 0;
    int rc = write_whole(&counts, 0, err, errlen);
    free(regions);
    return rc;
}

enum sp_writer_outcome sp_writer_write_files(const char *const *files, size_t n, char *msg,
                                             size_t msglen)
{
    msg[0] = '\0';
    sp_spill_capture c;
    char err[2048] = "";
    if (sp_spill_capture_load(files, n, &c, err, sizeof err) != 0) {
        snprintf(msg, msglen, "cannot read the handover: %s", err);
        sp_spill_capture_free(&c);
        return SP_WRITER_FAILED;
    }
    if (!c.complete) {
        snprintf(msg, msglen, "%s: the handover is incomplete (no capture frame)",
                 n ? files[n - 1] : "");
        sp_spill_capture_free(&c);
        return SP_WRITER_FAILED;
    }
    struct resolved resolved;
    if (resolve_callsites(&c.capture, c.open_calls, c.why, &resolved) != 0) {
        snprintf(msg, msglen, "%s: out of memory while resolving call sites", c.capture.path);
        sp_spill_capture_free(&c);
        return SP_WRITER_FAILED;
    }
    sp_capture cap = c.capture;
    cap.regions = resolved.regions;
    enum sp_writer_outcome outcome = SP_WRITER_WRITTEN;
    if (write_whole(&cap, c.events, err, sizeof err) == 0) {
        /* the shim found no room for the calls still in memory: counted only */
        if (c.summary_only)
            snprintf(msg, msglen, "%s: no room on the disk for the timeline; the calls still in "
                     "memory are in the counts and totals per region only", cap.path);
    } else {
        char counts_err[1024] = "";
        if (write_counts_only(&cap, counts_err, sizeof counts_err) == 0) {
            snprintf(msg, msglen, "%s; wrote the counts and totals per region only", err);
            outcome = SP_WRITER_PARTIAL;
        } else {
            snprintf(msg, msglen, "%s", err);
            outcome = SP_WRITER_FAILED;
        }
    }
    free_resolved(&resolved);
    sp_spill_capture_free(&c);
    return outcome;
}
