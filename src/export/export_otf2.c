/* export_otf2.c - an OTF2 archive for Vampir, Scalasca and the Score-P
 * tools: DIR/traces.otf2 (anchor), DIR/traces.def (global definitions) and
 * DIR/traces/<location>.evt, one event file per rank and lane.
 *
 * Each rank is a process location group, each of its lanes (thread, task,
 * or the calls outside any thread) a CPU-thread location; every call is an
 * ENTER and a LEAVE on its lane's timeline, in nanoseconds on the aligned
 * time axis of the other exports (sp_rank_data_load applies the rank clock
 * offsets).  Regions carry the source file and line of their call site.
 *
 * Built only with Debian's libotf2 (libotf2-trace-dev): the command links
 * it, the shim never does.  Without it sp_export_otf2 says how to get it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scopeprof/export.h"
#include "scopeprof_config.h"

#ifndef SP_HAVE_OTF2

const int sp_export_have_otf2 = 0;

int sp_export_otf2(const char *dir, const sp_profile *profile, const sp_export_options *options,
                   char *err, size_t errlen)
{
    (void)dir;
    (void)profile;
    (void)options;
    snprintf(err, errlen, "this scopeprof was built without OTF2: install the OTF2 library "
                          "(Debian: apt-get install libotf2-trace-dev) and rebuild "
                          "(meson setup --reconfigure build && ninja -C build)");
    return -1;
}

#else

#include <otf2/otf2.h>

const int sp_export_have_otf2 = 1;

/* No BufferFlush records: a flush is not part of the program's timeline. */
static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef location,
                                void *caller, bool final)
{
    (void)user;
    (void)type;
    (void)location;
    (void)caller;
    (void)final;
    return OTF2_FLUSH;
}

static OTF2_FlushCallbacks flush_callbacks = {.otf2_pre_flush = pre_flush,
                                              .otf2_post_flush = NULL};

/* String definitions: 0 = "", region names 1..num_names, then file names,
 * rank and lane labels in the order they are first needed. */
typedef struct strings {
    char **text;
    size_t n, cap;
} strings;

static int64_t string_add(strings *s, const char *text)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        char **grown = realloc(s->text, cap * sizeof *grown);
        if (!grown)
            return -1;
        s->text = grown;
        s->cap = cap;
    }
    s->text[s->n] = strdup(text);
    if (!s->text[s->n])
        return -1;
    return (int64_t)s->n++;
}

/* Source files are few: a linear search over those already defined. */
static int64_t file_string(strings *s, size_t first_file, const char *file)
{
    for (size_t k = first_file; k < s->n; k++)
        if (!strcmp(s->text[k], file))
            return (int64_t)k;
    return string_add(s, file);
}

static void strings_free(strings *s)
{
    for (size_t k = 0; k < s->n; k++)
        free(s->text[k]);
    free(s->text);
}

typedef struct location {
    uint32_t rank;
    uint64_t name; /* string id */
    uint64_t events;
} location;

typedef struct writer {
    OTF2_Archive *archive;
    OTF2_EvtWriter *events;
    const sp_calls *calls;
    uint64_t shift;      /* added to aligned ns: OTF2 time stamps are unsigned */
    uint64_t last;       /* this lane's latest time stamp (kept monotonic) */
    uint64_t first_ts, last_ts; /* of the whole archive */
    uint64_t written;
    OTF2_ErrorCode status;
} writer;

static uint64_t stamp(writer *w, int64_t ns)
{
    uint64_t t = (uint64_t)(ns + (int64_t)w->shift);
    /* A lane's stamps never go back (a clipped or equal-time child). */
    if (t < w->last)
        t = w->last;
    w->last = t;
    if (t < w->first_ts)
        w->first_ts = t;
    if (t > w->last_ts)
        w->last_ts = t;
    return t;
}

static int enter_call(void *ctx, size_t i)
{
    writer *w = ctx;
    w->status = OTF2_EvtWriter_Enter(w->events, NULL, stamp(w, w->calls->start[i]),
                                     w->calls->region[i]);
    w->written++;
    return w->status != OTF2_SUCCESS;
}

static int leave_call(void *ctx, size_t i)
{
    writer *w = ctx;
    w->status = OTF2_EvtWriter_Leave(w->events, NULL, stamp(w, w->calls->end[i]),
                                     w->calls->region[i]);
    w->written++;
    return w->status != OTF2_SUCCESS;
}

/* Threads in index order, then calls outside any thread, then tasks (as in
 * the Chrome export). */
static int64_t lane_order(int64_t lane)
{
    if (lane < -1)
        return -2 - lane;
    if (lane == -1)
        return (int64_t)1 << 40;
    return ((int64_t)1 << 41) + lane;
}

static const sp_lane_walk *sort_walk;

static int compare_lane_index(const void *a, const void *b)
{
    int64_t x = lane_order(sort_walk->lanes[*(const size_t *)a]);
    int64_t y = lane_order(sort_walk->lanes[*(const size_t *)b]);
    return (x > y) - (x < y);
}

/* The library prints every error (and the ones it causes) on stderr; keep
 * only the first one, for our own one-line message. */
static char first_library_error[512];

static OTF2_ErrorCode keep_first_error(void *user, const char *file, uint64_t line,
                                       const char *function, OTF2_ErrorCode code,
                                       const char *format, va_list va)
{
    (void)user;
    (void)file;
    (void)line;
    (void)function;
    if (!first_library_error[0]) {
        char text[384] = "";
        if (format)
            vsnprintf(text, sizeof text, format, va);
        snprintf(first_library_error, sizeof first_library_error, "%s%s%s",
                 OTF2_Error_GetDescription(code), text[0] ? ": " : "", text);
    }
    return code;
}

static int fail_otf2(char *err, size_t errlen, const char *what, OTF2_ErrorCode code)
{
    snprintf(err, errlen, "OTF2: %s: %s", what,
             first_library_error[0] ? first_library_error : OTF2_Error_GetDescription(code));
    return -1;
}

static int write_rank(writer *w, const sp_profile *profile, const sp_rank_data *data,
                      strings *s, location **locs, size_t *num_locs, size_t *cap_locs,
                      char *err, size_t errlen)
{
    const sp_calls *c = &data->calls;
    sp_lane_walk walk;
    if (sp_lane_walk_build(c, &walk) < 0) {
        snprintf(err, errlen, "out of memory walking rank %u", data->rank);
        return -1;
    }
    size_t *order = malloc((walk.num_lanes ? walk.num_lanes : 1) * sizeof *order);
    int rc = order ? 0 : -1;
    if (!order)
        snprintf(err, errlen, "out of memory");
    for (size_t t = 0; order && t < walk.num_lanes; t++)
        order[t] = t;
    sort_walk = &walk;
    if (order)
        qsort(order, walk.num_lanes, sizeof *order, compare_lane_index);
    w->calls = c;
    for (size_t k = 0; rc == 0 && k < walk.num_lanes; k++) {
        size_t t = order[k];
        if (walk.lane_calls[t] == 0)
            continue;
        /* Without lane columns the rank is one lane, named as in the
         * Chrome export. */
        char label[512];
        snprintf(label, sizeof label, "rank %u", data->rank);
        if (c->lane)
            sp_lane_label(profile, data->rank, walk.lanes[t], label, sizeof label);
        if (*num_locs == *cap_locs) {
            size_t cap = *cap_locs ? 2 * *cap_locs : 64;
            location *grown = realloc(*locs, cap * sizeof *grown);
            if (!grown) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
                break;
            }
            *locs = grown;
            *cap_locs = cap;
        }
        int64_t name = string_add(s, label);
        if (name < 0) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            break;
        }
        uint64_t id = *num_locs;
        w->events = OTF2_Archive_GetEvtWriter(w->archive, id);
        if (!w->events) {
            snprintf(err, errlen, "OTF2: cannot open the event file of rank %u, %s",
                     data->rank, label);
            rc = -1;
            break;
        }
        w->last = 0;
        w->written = 0;
        w->status = OTF2_SUCCESS;
        sp_lane_walk_visit(&walk, c, t, enter_call, leave_call, w);
        OTF2_ErrorCode closed = OTF2_Archive_CloseEvtWriter(w->archive, w->events);
        if (w->status != OTF2_SUCCESS || closed != OTF2_SUCCESS) {
            rc = fail_otf2(err, errlen, "writing events",
                           w->status != OTF2_SUCCESS ? w->status : closed);
            break;
        }
        (*locs)[(*num_locs)++] = (location){data->rank, (uint64_t)name, w->written};
    }
    free(order);
    sp_lane_walk_free(&walk);
    return rc;
}

/* Regions: one per region name, with the first call site any row knows.
 * Names starting with MPI_ are MPI's (Vampir colours them so). */
static int write_definitions(OTF2_GlobalDefWriter *g, const sp_profile *profile,
                             const sp_export_options *options, strings *s,
                             const location *locs, size_t num_locs, const writer *w,
                             char *err, size_t errlen)
{
    size_t first_file = s->n;
    int64_t *file_of = malloc((profile->num_names ? profile->num_names : 1) * sizeof *file_of);
    int64_t *line_of = malloc((profile->num_names ? profile->num_names : 1) * sizeof *line_of);
    int64_t description = string_add(s, "scopeprof region");
    int64_t machine_name = string_add(s, sp_export_label(profile, options));
    int64_t machine_class = string_add(s, "machine");
    int rc = 0;
    if (!file_of || !line_of || description < 0 || machine_name < 0 || machine_class < 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
        goto out;
    }
    for (size_t r = 0; r < profile->num_names; r++) {
        file_of[r] = 0;
        line_of[r] = -1;
    }
    for (size_t k = 0; k < profile->num_rows; k++) {
        const sp_row *row = &profile->rows[k];
        if (row->region >= profile->num_names || file_of[row->region] != 0 ||
            !row->source_file[0])
            continue;
        file_of[row->region] = file_string(s, first_file, row->source_file);
        line_of[row->region] = row->source_line;
        if (file_of[row->region] < 0) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            goto out;
        }
    }
    /* Rank labels, after every other string. */
    uint64_t first_rank_string = s->n;
    uint32_t last_rank = UINT32_MAX;
    for (size_t k = 0; k < num_locs; k++) {
        if (locs[k].rank == last_rank)
            continue;
        char label[64];
        snprintf(label, sizeof label, "rank %u", locs[k].rank);
        if (string_add(s, label) < 0) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            goto out;
        }
        last_rank = locs[k].rank;
    }

    OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteClockProperties(
        g, 1000000000u, w->first_ts, w->last_ts - w->first_ts + 1, OTF2_UNDEFINED_TIMESTAMP);
    for (size_t k = 0; e == OTF2_SUCCESS && k < s->n; k++)
        e = OTF2_GlobalDefWriter_WriteString(g, (OTF2_StringRef)k, s->text[k]);
    for (size_t r = 0; e == OTF2_SUCCESS && r < profile->num_names; r++) {
        int mpi = !strncmp(profile->names[r], "MPI_", 4);
        uint32_t line = line_of[r] > 0 && line_of[r] <= UINT32_MAX ? (uint32_t)line_of[r] : 0;
        e = OTF2_GlobalDefWriter_WriteRegion(
            g, (OTF2_RegionRef)r, (OTF2_StringRef)(1 + r), (OTF2_StringRef)(1 + r),
            (OTF2_StringRef)description, OTF2_REGION_ROLE_FUNCTION,
            mpi ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
            (OTF2_StringRef)file_of[r], line, line);
    }
    if (e == OTF2_SUCCESS)
        e = OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, (OTF2_StringRef)machine_name,
                                                     (OTF2_StringRef)machine_class,
                                                     OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    uint64_t rank_string = first_rank_string;
    last_rank = UINT32_MAX;
    for (size_t k = 0; e == OTF2_SUCCESS && k < num_locs; k++) {
        if (locs[k].rank != last_rank) {
            e = OTF2_GlobalDefWriter_WriteLocationGroup(
                g, locs[k].rank, (OTF2_StringRef)rank_string++,
                OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
            last_rank = locs[k].rank;
        }
        if (e == OTF2_SUCCESS)
            e = OTF2_GlobalDefWriter_WriteLocation(g, k, (OTF2_StringRef)locs[k].name,
                                                   OTF2_LOCATION_TYPE_CPU_THREAD,
                                                   locs[k].events, locs[k].rank);
    }
    if (e != OTF2_SUCCESS)
        rc = fail_otf2(err, errlen, "writing definitions", e);
out:
    free(file_of);
    free(line_of);
    return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* A failed export leaves no partial archive behind (DIR itself only when
 * this export created it). */
static void remove_archive(const char *dir, int created_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/traces", dir);
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    snprintf(path, sizeof path, "%s/traces.otf2", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/traces.def", dir);
    unlink(path);
    if (created_dir)
        rmdir(dir);
}

/* OTF2 creates DIR itself but never replaces an archive. */
static int check_target(const char *dir, char *err, size_t errlen)
{
    char anchor[4096];
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s exists and is not a directory: give -o a directory name",
                 dir);
        return -1;
    }
    snprintf(anchor, sizeof anchor, "%s/traces.otf2", dir);
    if (stat(anchor, &st) == 0) {
        snprintf(err, errlen, "%s already holds an OTF2 archive: remove it or choose another -o",
                 dir);
        return -1;
    }
    /* The archive's other names: never written over, so that a failed
     * export removes only what it wrote. */
    static const char *const parts[] = {"traces", "traces.def"};
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, parts[k]);
        if (lstat(path, &st) == 0) {
            snprintf(err, errlen, "%s already exists: remove it or choose another -o", path);
            return -1;
        }
    }
    return 0;
}

int sp_export_otf2(const char *dir, const sp_profile *profile, const sp_export_options *options,
                   char *err, size_t errlen)
{
    if (check_target(dir, err, errlen) < 0)
        return -1;
    const sp_selection *sel = options ? options->selection : NULL;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    if (num_ranks < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    strings s = {0};
    int rc = string_add(&s, "") < 0 ? -1 : 0;
    for (size_t r = 0; rc == 0 && r < profile->num_names; r++)
        if (string_add(&s, profile->names[r]) < 0)
            rc = -1;
    if (rc < 0) {
        snprintf(err, errlen, "out of memory");
        strings_free(&s);
        free(ranks);
        return -1;
    }

    /* Created here, so that a bad path is our one clear line. */
    struct stat st;
    int created_dir = stat(dir, &st) != 0;
    if (created_dir && mkdir(dir, 0777) != 0) {
        snprintf(err, errlen, "%s: cannot create the archive directory: %s", dir,
                 strerror(errno));
        strings_free(&s);
        free(ranks);
        return -1;
    }
    first_library_error[0] = '\0';
    OTF2_ErrorCallback previous = OTF2_Error_RegisterCallback(keep_first_error, NULL);
    OTF2_Archive *archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE,
                                              1024 * 1024, 4 * 1024 * 1024,
                                              OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive) {
        fail_otf2(err, errlen, "cannot create the archive", OTF2_ERROR_EIO);
        remove_archive(dir, created_dir);
        OTF2_Error_RegisterCallback(previous, NULL);
        strings_free(&s);
        free(ranks);
        return -1;
    }
    OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, NULL);
    OTF2_Archive_SetSerialCollectiveCallbacks(archive);
    OTF2_Archive_SetCreator(archive, "scopeprof " SCOPEPROF_VERSION);
    OTF2_Archive_SetDescription(archive, sp_export_label(profile, options));
    OTF2_ErrorCode e = OTF2_Archive_OpenEvtFiles(archive);
    if (e != OTF2_SUCCESS)
        rc = fail_otf2(err, errlen, "opening the event files", e);

    /* Aligned clocks may precede 0 on some rank: shift them all. */
    int64_t origin = sp_selection_first_start(profile, sel);
    writer w = {.archive = archive,
                .shift = origin < 0 ? (uint64_t)-origin : 0,
                .first_ts = UINT64_MAX,
                .last_ts = 0};
    location *locs = NULL;
    size_t num_locs = 0, cap_locs = 0;
    for (long k = 0; rc == 0 && k < num_ranks; k++) {
        sp_rank_data data;
        if (sp_rank_data_load(profile, ranks[k], sel, &data, err, errlen) < 0) {
            rc = -1;
            break;
        }
        if (data.calls.n)
            rc = write_rank(&w, profile, &data, &s, &locs, &num_locs, &cap_locs, err, errlen);
        sp_rank_data_free(&data);
    }
    if (rc == 0 && num_locs == 0) {
        snprintf(err, errlen, "%s: no calls recorded for the selected ranks and filters",
                 profile->path ? profile->path : "profile");
        rc = -1;
    }
    if (rc == 0 && (e = OTF2_Archive_CloseEvtFiles(archive)) != OTF2_SUCCESS)
        rc = fail_otf2(err, errlen, "closing the event files", e);

    /* Local definitions are empty (ids are global); the reader expects one
     * file per location all the same. */
    if (rc == 0 && (e = OTF2_Archive_OpenDefFiles(archive)) != OTF2_SUCCESS)
        rc = fail_otf2(err, errlen, "opening the definition files", e);
    for (size_t k = 0; rc == 0 && k < num_locs; k++) {
        OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(archive, k);
        if (!d || (e = OTF2_Archive_CloseDefWriter(archive, d)) != OTF2_SUCCESS)
            rc = fail_otf2(err, errlen, "writing local definitions", d ? e : OTF2_ERROR_EIO);
    }
    if (rc == 0 && (e = OTF2_Archive_CloseDefFiles(archive)) != OTF2_SUCCESS)
        rc = fail_otf2(err, errlen, "closing the definition files", e);
    if (rc == 0) {
        OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(archive);
        if (!g)
            rc = fail_otf2(err, errlen, "opening the global definitions", OTF2_ERROR_EIO);
        else
            rc = write_definitions(g, profile, options, &s, locs, num_locs, &w, err, errlen);
    }
    e = OTF2_Archive_Close(archive);
    if (rc == 0 && e != OTF2_SUCCESS)
        rc = fail_otf2(err, errlen, "closing the archive", e);
    OTF2_Error_RegisterCallback(previous, NULL);
    if (rc < 0)
        remove_archive(dir, created_dir);
    if (rc == 0) {
        uint64_t events = 0;
        for (size_t k = 0; k < num_locs; k++)
            events += locs[k].events;
        sp_export_warn_events(options, events / 2, "otf2");
    }
    free(locs);
    strings_free(&s);
    free(ranks);
    return rc;
}

#endif /* SP_HAVE_OTF2 */
