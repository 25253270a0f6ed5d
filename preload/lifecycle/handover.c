/* handover.c - the capture handed to the writer process as frames of the
 * spill format (src/model/spill_format.h): the calls still in memory, then
 * what the profile holds beyond the events (per-region counts and call
 * sites located in their modules, thread ends, tasks, typed metadata), and
 * a CAPTURE frame last, which marks the file complete.
 *
 * When the calls in memory do not fit on the disk (or under ulimit -f),
 * they are counted instead (counts and totals per region, as ON_FULL=stop
 * keeps them), so the exact counts survive a full disk. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lifecycle.h"
#include "model/spill_format.h"
#include "spill.h"

/* Longest module path or name handed over (longer ones are cut). */
#define SP_MODULE_TEXT_MAX 4096

static int put(sp_spill_file *f, uint16_t type, const void *a, size_t alen, const void *b,
               size_t blen, const void *c, size_t clen)
{
    return sp_spill_handover_frame(f, type, 0, 0, 0, a, alen, b, blen, c, clen);
}

/* A chunk's events as the writer takes them (24 bytes each): mapped, not
 * malloc'ed, like every buffer the recorder's paths use. */
static sp_event *expanded;

static int put_events(sp_spill_file *f, const sp_capture *cap, const struct sp_chunk_span *spans)
{
    if (!expanded) {
        void *m = mmap(NULL, SP_CHUNK_EVENTS * sizeof(sp_event), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return -1;
        expanded = m;
    }
    for (size_t k = 0; k < cap->num_chunks; k++) {
        const sp_capture_chunk *chunk = &cap->chunks[k];
        if (!chunk->count)
            continue;
        sp_chunk_expand(spans[k].chunk, spans[k].from, spans[k].to, expanded);
        int await = chunk->await_ns != NULL;
        if (sp_spill_handover_frame(f, SP_SPILL_FRAME_EVENTS, await ? SP_SPILL_FLAG_AWAIT : 0,
                                    (uint32_t)chunk->count, chunk->thread, expanded,
                                    chunk->count * sizeof(sp_event), await ? chunk->await_ns : NULL,
                                    await ? chunk->count * sizeof(int64_t) : 0, NULL, 0) != 0)
            return -1;
    }
    /* The MPI side data of the calls still in memory (docs/mpi.md); what
     * was spilled before carries its own frames.  Records name their thread. */
    for (size_t k = 0; k < cap->num_mpi; k += SP_CHUNK_EVENTS) {
        size_t n = cap->num_mpi - k < SP_CHUNK_EVENTS ? cap->num_mpi - k : SP_CHUNK_EVENTS;
        if (sp_spill_handover_frame(f, SP_SPILL_FRAME_MPI, 0, (uint32_t)n, cap->mpi[k].thread,
                                    cap->mpi + k, n * sizeof *cap->mpi, NULL, 0, NULL, 0) != 0)
            return -1;
    }
    return 0;
}

static int put_region(sp_spill_file *f, const sp_capture_region *r, uint32_t id,
                      uint64_t extra_calls, int64_t extra_ns, uint64_t open_calls)
{
    sp_spill_region_final rec = {
        .id = id,
        .num_frames = (uint32_t)r->num_frames,
        .dropped_calls = r->dropped_calls + extra_calls,
        .dropped_total_ns = r->dropped_total_ns + extra_ns,
        .open_calls = open_calls,
    };
    sp_spill_callframe frames[SP_CALLSITE_FRAMES];
    char text[SP_CALLSITE_FRAMES * 2 * (SP_MODULE_TEXT_MAX)];
    size_t text_len = 0;
    if (rec.num_frames > SP_CALLSITE_FRAMES)
        rec.num_frames = SP_CALLSITE_FRAMES;
    for (uint32_t i = 0; i < rec.num_frames; i++) {
        char proc_exe[64];
        const char *path = sp_writer_module_path(r->frames[i].module_path, proc_exe,
                                                 sizeof proc_exe);
        const char *name = r->frames[i].module_name;
        size_t plen = path ? strnlen(path, SP_MODULE_TEXT_MAX) : 0;
        size_t nlen = name ? strnlen(name, SP_MODULE_TEXT_MAX) : 0;
        frames[i] = (sp_spill_callframe){r->frames[i].address, (uint32_t)plen, (uint32_t)nlen};
        if (plen)
            memcpy(text + text_len, path, plen);
        text_len += plen;
        if (nlen)
            memcpy(text + text_len, name, nlen);
        text_len += nlen;
    }
    return put(f, SP_SPILL_FRAME_REGION_FINAL, &rec, sizeof rec, frames,
               rec.num_frames * sizeof *frames, text, text_len);
}

static int put_meta(sp_spill_file *f, const sp_meta *m)
{
    sp_spill_meta rec = {.type = (uint32_t)m->type, .i = m->i, .f = m->f};
    size_t len = strlen(m->key) + 1;
    if (m->type == SP_META_STRING) {
        rec.num_values = 1;
        len += strlen(m->s ? m->s : "") + 1;
    } else if (m->type == SP_META_STRINGS) {
        rec.num_values = (uint32_t)m->list_len;
        for (size_t i = 0; i < m->list_len; i++)
            len += strlen(m->list[i] ? m->list[i] : "") + 1;
    }
    char *buf = malloc(len);
    if (!buf)
        return -1;
    size_t at = 0;
    at += (size_t)sprintf(buf + at, "%s", m->key) + 1;
    if (m->type == SP_META_STRING)
        at += (size_t)sprintf(buf + at, "%s", m->s ? m->s : "") + 1;
    for (size_t i = 0; m->type == SP_META_STRINGS && i < m->list_len; i++)
        at += (size_t)sprintf(buf + at, "%s", m->list[i] ? m->list[i] : "") + 1;
    int rc = put(f, SP_SPILL_FRAME_META_TYPED, &rec, sizeof rec, buf, at, NULL, 0);
    free(buf);
    return rc;
}

static int put_task(sp_spill_file *f, const sp_task_row *t)
{
    sp_spill_task rec = {
        .index = t->index, .thread_index = t->thread_index, .created_ns = t->created_ns,
        .done_ns = t->done_ns, .steps = t->steps, .running_ns = t->running_ns,
        .suspended_ns = t->suspended_ns,
        .kind_len = (uint32_t)strlen(t->kind ? t->kind : ""),
        .name_len = (uint32_t)strlen(t->name ? t->name : ""),
        .coro_len = (uint32_t)strlen(t->coro_name ? t->coro_name : ""),
    };
    size_t len = (size_t)rec.kind_len + rec.name_len + rec.coro_len;
    char *buf = malloc(len + 1);
    if (!buf)
        return -1;
    memcpy(buf, t->kind ? t->kind : "", rec.kind_len);
    memcpy(buf + rec.kind_len, t->name ? t->name : "", rec.name_len);
    memcpy(buf + rec.kind_len + rec.name_len, t->coro_name ? t->coro_name : "", rec.coro_len);
    int rc = put(f, SP_SPILL_FRAME_TASK, &rec, sizeof rec, buf, len, NULL, 0);
    free(buf);
    return rc;
}

int sp_handover_write(sp_spill_file *f, const sp_capture *cap, const struct sp_chunk_span *spans,
                      const uint64_t *open_calls, const char *why, int *summary_only)
{
    *summary_only = 0;
    uint64_t *counts = NULL;
    int64_t *totals = NULL;
    int64_t mark = sp_spill_handover_mark(f);
    if (put_events(f, cap, spans) != 0) {
        int write_errno = errno;
        if (sp_spill_handover_cut(f, mark) != 0) {
            errno = write_errno;
            return -1;
        }
        /* No room for the timeline: count the calls in memory instead. */
        counts = calloc(cap->num_regions ? cap->num_regions : 1, sizeof *counts);
        totals = calloc(cap->num_regions ? cap->num_regions : 1, sizeof *totals);
        if (!counts || !totals) {
            free(counts);
            free(totals);
            errno = write_errno;
            return -1;
        }
        for (size_t k = 0; k < cap->num_chunks; k++) {
            struct sp_chunk_reader r;
            sp_chunk_reader_at(&r, spans[k].chunk, spans[k].from);
            for (uint32_t i = spans[k].from; i < spans[k].to; i++) {
                sp_event e;
                sp_chunk_reader_next(&r, &e);
                if (e.region < cap->num_regions) {
                    counts[e.region]++;
                    totals[e.region] += e.end - e.start;
                }
            }
        }
        *summary_only = 1;
    }
    int rc = 0;
    /* Regions and threads again, as they are now: a source location given
     * later, a thread named after its first spill. */
    for (size_t r = 0; rc == 0 && r < cap->num_regions; r++) {
        const sp_capture_region *reg = &cap->regions[r];
        sp_spill_region rec = {
            .id = (uint32_t)r,
            .name_len = (uint32_t)strlen(reg->name),
            .file_len = reg->source_file ? (uint32_t)strlen(reg->source_file) : 0,
            .source_line = reg->source_file ? reg->source_line : -1,
            .callsite = reg->callsite,
        };
        rc = put(f, SP_SPILL_FRAME_REGION, &rec, sizeof rec, reg->name, rec.name_len,
                 reg->source_file, rec.file_len);
        if (rc == 0)
            rc = put_region(f, reg, (uint32_t)r, counts ? counts[r] : 0, totals ? totals[r] : 0,
                            open_calls ? open_calls[r] : 0);
    }
    free(counts);
    free(totals);
    for (size_t t = 0; rc == 0 && t < cap->num_threads; t++) {
        const sp_thread_row *row = &cap->threads[t];
        const char *name = row->name ? row->name : "";
        sp_spill_thread rec = {
            .index = row->index,
            .ident = row->ident,
            .native_id = row->native_id,
            .start_ns = row->start_ns,
            .daemon = row->daemon,
            .name_len = (uint32_t)strlen(name),
        };
        rc = sp_spill_handover_frame(f, SP_SPILL_FRAME_THREAD, 0, 0, row->index, &rec, sizeof rec,
                                     name, rec.name_len, NULL, 0);
        sp_spill_thread_end end = {row->index, row->end_ns, row->cpu_ns, row->omp_thread_num, ""};
        snprintf(end.kind, sizeof end.kind, "%s", row->kind ? row->kind : "");
        if (rc == 0)
            rc = put(f, SP_SPILL_FRAME_THREAD_END, &end, sizeof end, NULL, 0, NULL, 0);
    }
    for (size_t t = 0; rc == 0 && t < cap->num_tasks; t++)
        rc = put_task(f, &cap->tasks[t]);
    for (size_t m = 0; rc == 0 && m < cap->num_meta; m++)
        rc = put_meta(f, &cap->meta[m]);
    if (rc == 0) {
        sp_spill_capture_frame rec = {
            .rank = cap->rank,
            .verbose = cap->verbose,
            .track_threads = cap->track_threads,
            .summary_only = *summary_only,
            .start_time_ns = cap->start_time_ns,
            .max_memory = cap->max_memory,
            .num_regions = (uint32_t)cap->num_regions,
            .path_len = (uint32_t)strlen(cap->path),
            .why_len = (uint32_t)strlen(why),
        };
        rc = put(f, SP_SPILL_FRAME_CAPTURE, &rec, sizeof rec, cap->path, rec.path_len, why,
                 rec.why_len);
    }
    return rc;
}
