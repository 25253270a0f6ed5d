/* cmd_recover.c - `scopeprof recover SPILLFILES... -o FILE.h5`: the spill
 * file a killed process left behind (<output>.spill.<pid>) becomes a
 * profile of every call spilled before the kill (format:
 * src/spill_format.h).  A torn last frame is skipped with a warning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/capture.h"
#include "cli_util.h"
#include "commands.h"
#include "scope_profiler.h"
#include "scopeprof/h5.h"
#include "scopeprof_config.h"
#include "model/spill_format.h"

static const char recover_help[] =
    "usage: scopeprof recover SPILLFILES... -o FILE.h5\n"
    "\n"
    "Turn the spill file of a process that ended without writing its profile\n"
    "(killed by SIGKILL, by a node failure, or after the signal grace time)\n"
    "into a profile holding every call spilled before the end.  Spill files\n"
    "are named <output>.spill.<pid>; the shim writes them when the memory cap\n"
    "SCOPE_PROFILER_MAX_MEMORY is reached and every\n"
    "SCOPE_PROFILER_FLUSH_INTERVAL seconds.  A frame torn by the kill is\n"
    "skipped: the profile holds everything up to the last good frame.\n"
    "\n"
    "With several spill files (one per rank), FILE must contain %r, replaced\n"
    "by the rank of each (e.g. -o recovered_%r.h5 -> recovered_00003.h5).\n"
    "\n"
    "options:\n"
    "  -o, --output FILE   the profile to write (required)\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit status: 0 every profile written, 1 a file unreadable, not a spill\n"
    "file, or the output not writable, 2 usage error.\n";

#define CMD "recover"

/* What the frames of one spill file say. */
struct recovered {
    sp_capture_region *regions;
    size_t num_regions;
    sp_thread_row *threads;  /* by thread index */
    size_t num_threads;
    char **meta_strings;     /* key, value, key, value... */
    size_t num_meta_strings;
    int32_t rank, size;
    uint64_t events;
    int64_t last_end;
    uint64_t torn_bytes;
    sp_fork_edge *forks;     /* fork edges (OpenMP regions, threads started in a call) */
    size_t num_forks, forks_cap;
};

static void recovered_free(struct recovered *r)
{
    for (size_t i = 0; i < r->num_regions; i++) {
        free((char *)r->regions[i].name);
        free((char *)r->regions[i].source_file);
    }
    free(r->regions);
    for (size_t i = 0; i < r->num_threads; i++)
        free(r->threads[i].name);
    free(r->threads);
    for (size_t i = 0; i < r->num_meta_strings; i++)
        free(r->meta_strings[i]);
    free(r->meta_strings);
    free(r->forks);
}

static int take_forks(struct recovered *r, const void *payload, uint32_t count)
{
    if (r->num_forks + count > r->forks_cap) {
        size_t cap = r->forks_cap ? r->forks_cap : 256;
        while (cap < r->num_forks + count)
            cap *= 2;
        sp_fork_edge *grown = realloc(r->forks, cap * sizeof *grown);
        if (!grown)
            return 1;
        r->forks = grown;
        r->forks_cap = cap;
    }
    memcpy(r->forks + r->num_forks, payload, (size_t)count * sizeof *r->forks);
    r->num_forks += count;
    return 0;
}

static char *copy_bytes(const void *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

static int grow(void **array, size_t *count, size_t need, size_t size)
{
    if (need <= *count)
        return 0;
    void *grown = realloc(*array, need * size);
    if (!grown)
        return -1;
    memset((char *)grown + *count * size, 0, (need - *count) * size);
    *array = grown;
    *count = need;
    return 0;
}

static int take_region(struct recovered *r, const unsigned char *p)
{
    sp_spill_region rec;
    memcpy(&rec, p, sizeof rec);
    size_t before = r->num_regions;
    if (grow((void **)&r->regions, &r->num_regions, (size_t)rec.id + 1, sizeof *r->regions))
        return -1;
    for (size_t i = before; i < r->num_regions; i++)
        r->regions[i].source_line = -1;
    sp_capture_region *reg = &r->regions[rec.id];
    free((char *)reg->name);
    free((char *)reg->source_file);
    reg->name = copy_bytes(p + sizeof rec, rec.name_len);
    reg->source_file = rec.file_len ? copy_bytes(p + sizeof rec + rec.name_len, rec.file_len) : NULL;
    reg->source_line = rec.file_len ? rec.source_line : -1;
    reg->callsite = (uintptr_t)rec.callsite;
    return reg->name && (!rec.file_len || reg->source_file) ? 0 : -1;
}

static int take_thread(struct recovered *r, const unsigned char *p)
{
    sp_spill_thread rec;
    memcpy(&rec, p, sizeof rec);
    if (rec.index < 0 || rec.index > (1 << 24))
        return 0; /* not a plausible dense index: ignored */
    if (grow((void **)&r->threads, &r->num_threads, (size_t)rec.index + 1, sizeof *r->threads))
        return -1;
    sp_thread_row *t = &r->threads[rec.index];
    free(t->name);
    *t = (sp_thread_row){
        .index = rec.index,
        .ident = rec.ident,
        .native_id = rec.native_id,
        .daemon = (int8_t)rec.daemon,
        .start_ns = rec.start_ns,
        .end_ns = -1,
        .cpu_ns = -1,
        .name = copy_bytes(p + sizeof rec, rec.name_len),
    };
    return t->name ? 0 : -1;
}

static int take_meta(struct recovered *r, const char *p, size_t len)
{
    /* "key\0value\0" pairs; an odd trailing piece is ignored */
    size_t at = 0;
    while (at < len) {
        const char *key = p + at;
        size_t klen = strnlen(key, len - at);
        if (at + klen + 1 >= len)
            break;
        const char *value = key + klen + 1;
        size_t vlen = strnlen(value, len - at - klen - 1);
        if (at + klen + 1 + vlen >= len)
            break;
        char **grown = realloc(r->meta_strings, (r->num_meta_strings + 2) * sizeof *grown);
        if (!grown)
            return -1;
        r->meta_strings = grown;
        if (!(r->meta_strings[r->num_meta_strings] = copy_bytes(key, klen)))
            return -1;
        r->num_meta_strings++;
        if (!(r->meta_strings[r->num_meta_strings] = copy_bytes(value, vlen)))
            return -1;
        r->num_meta_strings++;
        at += klen + 1 + vlen + 1;
    }
    return 0;
}

/* Read every good frame of the file; 0, or 1 after printing the error. */
static int read_frames(const char *path, struct recovered *r, int64_t *start_time_ns, int *pid)
{
    char err[1024];
    sp_spill_reader *reader = sp_spill_open(path, err, sizeof err);
    if (!reader)
        return cli_file_error(CMD, path, "%s", err);
    const sp_spill_header *h = sp_spill_file_header(reader);
    *start_time_ns = h->start_time_ns;
    *pid = h->pid;
    r->rank = h->rank;
    r->size = 1;
    r->last_end = h->start_time_ns;
    sp_spill_frame frame;
    const void *payload;
    int rc;
    while ((rc = sp_spill_next(reader, &frame, &payload, err, sizeof err)) == 1) {
        int bad = 0;
        switch (frame.type) {
        case SP_SPILL_FRAME_META:
            bad = take_meta(r, payload, frame.length);
            break;
        case SP_SPILL_FRAME_PROCESS: {
            sp_spill_process proc;
            memcpy(&proc, payload, sizeof proc);
            r->rank = proc.rank;
            r->size = proc.size;
            break;
        }
        case SP_SPILL_FRAME_REGION:
            bad = take_region(r, payload);
            break;
        case SP_SPILL_FRAME_THREAD:
            bad = take_thread(r, payload);
            break;
        case SP_SPILL_FRAME_FORKS:
            bad = take_forks(r, payload, frame.count);
            break;
        case SP_SPILL_FRAME_EVENTS: {
            const sp_event *e = payload;
            for (uint32_t i = 0; i < frame.count; i++) {
                if (e[i].region >= r->num_regions || !r->regions[e[i].region].name) {
                    sp_spill_close(reader);
                    return cli_file_error(CMD, path, "an event refers to region %u, which the "
                                          "file does not define (damaged spill file)", e[i].region);
                }
                if (e[i].end > r->last_end)
                    r->last_end = e[i].end;
            }
            r->events += frame.count;
            break;
        }
        }
        if (bad) {
            sp_spill_close(reader);
            return cli_file_error(CMD, path, "out of memory");
        }
    }
    r->torn_bytes = sp_spill_torn_bytes(reader);
    sp_spill_close(reader);
    if (rc < 0)
        return cli_file_error(CMD, path, "%s", err);
    return 0;
}

static void add_meta_int(sp_meta *meta, size_t *n, const char *key, int64_t v)
{
    meta[(*n)++] = (sp_meta){.key = (char *)key, .type = SP_META_INT, .i = v};
}

static void add_meta_str(sp_meta *meta, size_t *n, const char *key, const char *v)
{
    meta[(*n)++] = (sp_meta){.key = (char *)key, .type = SP_META_STRING, .s = (char *)v};
}

static int recover_one(const char *path, const char *out)
{
    struct recovered r;
    memset(&r, 0, sizeof r);
    int64_t start_time_ns = 0;
    int pid = 0;
    int status = read_frames(path, &r, &start_time_ns, &pid);
    if (status != 0)
        goto done;
    if (r.torn_bytes)
        cli_warning(CMD, "%s: the last %llu bytes are a torn frame (the process died while "
                    "spilling); recovered up to the last good frame",
                    path, (unsigned long long)r.torn_bytes);
    for (size_t i = 0; i < r.num_regions; i++)
        if (!r.regions[i].name) {
            char name[48];
            snprintf(name, sizeof name, "(region %zu)", i);
            if (!(r.regions[i].name = strdup(name))) {
                status = cli_file_error(CMD, path, "out of memory");
                goto done;
            }
        }
    for (size_t i = 0; i < r.num_threads; i++)
        if (!r.threads[i].name) {
            char name[48];
            snprintf(name, sizeof name, "thread %zu", i);
            r.threads[i] = (sp_thread_row){.index = (int64_t)i, .start_ns = -1, .end_ns = -1,
                                           .cpu_ns = -1, .name = strdup(name)};
            if (!r.threads[i].name) {
                status = cli_file_error(CMD, path, "out of memory");
                goto done;
            }
        }

    char out_path[4096];
    const char *rank_at = strstr(out, "%r");
    if (rank_at)
        snprintf(out_path, sizeof out_path, "%.*s%05d%s", (int)(rank_at - out), out, r.rank,
                 rank_at + 2);
    else
        snprintf(out_path, sizeof out_path, "%s", out);

    sp_meta meta[32];
    size_t nm = 0;
    add_meta_str(meta, &nm, "source", "native");
    add_meta_str(meta, &nm, "source_language", "c");
    add_meta_int(meta, &nm, "trace_format_version", SP_FORMAT_VERSION);
    add_meta_int(meta, &nm, "mpi_rank", r.rank);
    add_meta_int(meta, &nm, "mpi_size", r.size > 0 ? r.size : 1);
    add_meta_int(meta, &nm, "pid", pid);
    add_meta_int(meta, &nm, "start_time_ns", start_time_ns);
    add_meta_int(meta, &nm, "finalize_time_ns", r.last_end);
    add_meta_str(meta, &nm, "clock", "CLOCK_MONOTONIC");
    add_meta_str(meta, &nm, "scopeprof_version", SCOPEPROF_VERSION);
    add_meta_str(meta, &nm, "recovered_from", path);
    add_meta_int(meta, &nm, "recovered_torn_bytes", (int64_t)r.torn_bytes);
    for (size_t i = 0; i + 1 < r.num_meta_strings && nm < sizeof meta / sizeof *meta; i += 2)
        add_meta_str(meta, &nm, r.meta_strings[i], r.meta_strings[i + 1]);

    const char *files[1] = {path};
    sp_capture cap = {
        .abi = SP_CAPTURE_ABI,
        .path = out_path,
        .rank = r.rank,
        .track_threads = 1,
        .start_time_ns = start_time_ns,
        .num_regions = r.num_regions,
        .regions = r.regions,
        .num_spill_files = 1,
        .spill_files = files,
        .num_threads = r.num_threads,
        .threads = r.threads,
        .num_meta = nm,
        .meta = meta,
        .num_fork_edges = r.num_forks,
        .fork_edges = r.forks,
    };
    char err[1024] = "", warning[2048] = "";
    /* Streamed in bounded memory, as the shim writes a capped run; the
     * in-memory conversion only when the calls are not in end order. */
    uint64_t calls = 0;
    int rc = sp_capture_write_stream(&cap, 0, &calls, warning, sizeof warning, err, sizeof err);
    sp_profile *profile = NULL;
    if (rc == 1) {
        profile = sp_capture_to_profile(&cap, warning, sizeof warning, err, sizeof err);
        if (!profile) {
            status = cli_file_error(CMD, path, "%s", err);
            goto done;
        }
    }
    if (warning[0])
        cli_warning(CMD, "%s: %s", path, warning);
    if (profile) {
        rc = sp_h5_write(out_path, profile, err, sizeof err);
        calls = profile->num_events;
        sp_profile_free(profile);
    }
    if (rc != 0)
        /* write failures name the output, read failures the spill file */
        status = cli_file_error(CMD, strncmp(err, out_path, strlen(out_path)) ? path : out_path,
                                "%s", err);
    else
        printf("recovered %llu calls of rank %d from %s into %s\n",
               (unsigned long long)calls, r.rank, path, out_path);
done:
    recovered_free(&r);
    return status;
}

int cmd_recover(int argc, char **argv)
{
    const char *out = NULL;
    const char **inputs = calloc((size_t)argc, sizeof *inputs);
    size_t n = 0;
    if (!inputs) {
        fprintf(stderr, "scopeprof recover: error: out of memory\n");
        return 1;
    }
    int only_files = 0, rc = 0;
    for (int i = 1; i < argc;) {
        const char *value;
        if (only_files) {
            inputs[n++] = argv[i++];
            continue;
        }
        if (!strcmp(argv[i], "--")) {
            only_files = 1;
            i++;
            continue;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(recover_help, stdout);
            goto out;
        }
        int got = cli_option_value(CMD, argc, argv, &i, "--output", "-o", &value);
        if (got < 0) {
            rc = 2;
            goto out;
        }
        if (got) {
            out = value;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            rc = cli_usage_error(CMD, "unknown option '%s'", argv[i]);
            goto out;
        }
        inputs[n++] = argv[i++];
    }
    if (!n) {
        rc = cli_usage_error(CMD, "no spill file given");
        goto out;
    }
    if (!out || !*out) {
        rc = cli_usage_error(CMD, "the output file is required (-o FILE.h5)");
        goto out;
    }
    if (n > 1 && !strstr(out, "%r")) {
        rc = cli_usage_error(CMD, "%zu spill files need an output name with %%r (the rank), "
                             "e.g. -o recovered_%%r.h5", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (recover_one(inputs[i], out) != 0)
            rc = 1;
out:
    free(inputs);
    return rc;
}
