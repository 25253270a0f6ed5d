/* spill.c - the memory cap and the spill file (format: src/spill_format.h).
 *
 * No background thread: a recording thread spills its own lanes, under the
 * process-wide spill lock, when its tail chunk is full and the cap is
 * reached, or on its slow paths once its flush deadline has passed.  Each
 * spill ends with fsync, so the file survives even a crash of the node. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "spill.h"
#include "record/mpi_side.h"
#include "model/spill_format.h"
#include "record/forks.h"


/* Spill state of one profiler (indexed by its slot). */
struct spill_file {
    char *path;
    int fd;                     /* -1 until the first spill */
    int failed;                 /* could not create or write: no more spilling */
    int finished;               /* removed (or kept) after the final write */
    int separate;               /* a handover beside p's spill file (handover_begin) */
    uint32_t regions_written;   /* region frames written for ids below this */
    int32_t rank_written, size_written;
    uint8_t *thread_written;    /* by thread index */
    size_t thread_cap;
    size_t forks_cursor;        /* fork edges written (record/forks.h) */
};

static pthread_mutex_t spill_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct spill_file **files; /* by profiler slot */
static int files_cap;
/* Event bytes moved to spill files: with ON_FULL=stop they count against
 * the cap too, so that periodic spilling does not lift the event budget. */
static uint64_t spilled_bytes;

void sp_spill_lock(void)
{
    pthread_mutex_lock(&spill_mutex);
}

void sp_spill_unlock(void)
{
    pthread_mutex_unlock(&spill_mutex);
}

/* Spill lock held. */
static struct spill_file *file_of(struct sp_profiler *p)
{
    if (p->slot >= files_cap) {
        int cap = files_cap ? files_cap : 8;
        while (cap <= p->slot)
            cap *= 2;
        struct spill_file **grown = realloc(files, (size_t)cap * sizeof *grown);
        if (!grown)
            return NULL;
        memset(grown + files_cap, 0, (size_t)(cap - files_cap) * sizeof *grown);
        files = grown;
        files_cap = cap;
    }
    if (!files[p->slot]) {
        struct spill_file *f = calloc(1, sizeof *f);
        if (!f)
            return NULL;
        f->fd = -1;
        f->rank_written = -1;
        files[p->slot] = f;
    }
    return files[p->slot];
}

/* ---- writing frames --------------------------------------------------------- */

static int write_all_unguarded(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        size_t left = (size_t)w;
        while (n > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return 0;
}

/* A file size limit (ulimit -f) must fail our write, not kill the program
 * with SIGXFSZ: the signal is blocked on this thread around the write, and
 * the one our write raised is taken before unblocking (a program that
 * blocks SIGXFSZ itself keeps what is pending). */
static int write_all(int fd, struct iovec *iov, int n)
{
    sigset_t xfsz, old;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    int blocked = pthread_sigmask(SIG_BLOCK, &xfsz, &old) == 0;
    int rc = write_all_unguarded(fd, iov, n);
    int write_errno = errno;
    if (blocked) {
        if (rc != 0 && write_errno == EFBIG && !sigismember(&old, SIGXFSZ)) {
            struct timespec zero = {0, 0};
            while (sigtimedwait(&xfsz, NULL, &zero) == SIGXFSZ)
                ;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    errno = write_errno;
    return rc;
}

/* The checksum of the pieces as the reader sees them: one contiguous
 * payload (the hash takes 8-byte words, so a piece whose length is not a
 * multiple of 8 must not end a word early). */
static uint64_t hash_pieces(uint64_t sum, const void *a, size_t alen, const void *b, size_t blen,
                            const void *c, size_t clen)
{
    const unsigned char *piece[3] = {a, b, c};
    size_t len[3] = {alen, blen, clen};
    unsigned char carry[8];
    size_t carried = 0;
    for (int i = 0; i < 3; i++) {
        const unsigned char *p = piece[i];
        size_t n = p ? len[i] : 0;
        while (n && carried) {
            carry[carried++] = *p++;
            n--;
            if (carried == 8) {
                sum = sp_spill_hash(sum, carry, 8);
                carried = 0;
            }
        }
        size_t whole = n & ~(size_t)7;
        sum = sp_spill_hash(sum, p, whole);
        if (n > whole)
            memcpy(carry + carried, p + whole, n - whole);
        carried += n - whole;
    }
    return sp_spill_hash(sum, carry, carried);
}

/* One frame from up to three payload pieces, in a single writev so that a
 * kill leaves at most one torn frame. */
static int write_frame(struct spill_file *f, uint16_t type, uint16_t flags, uint32_t count,
                       int64_t thread, const void *a, size_t alen, const void *b, size_t blen,
                       const void *c, size_t clen)
{
    sp_spill_frame h = {
        .sync = SP_SPILL_FRAME_SYNC,
        .type = type,
        .flags = flags,
        .length = (uint32_t)(alen + blen + clen),
        .count = count,
        .thread = thread,
        .checksum = 0,
    };
    uint64_t sum = sp_spill_hash(SP_SPILL_HASH_INIT, &h, sizeof h);
    h.checksum = hash_pieces(sum, a, alen, b, blen, c, clen);
    struct iovec iov[4] = {
        {&h, sizeof h}, {(void *)a, alen}, {(void *)b, blen}, {(void *)c, clen},
    };
    return write_all(f->fd, iov, 4);
}

static int write_meta(struct spill_file *f, struct sp_profiler *p)
{
    char host[256] = "", exe[PATH_MAX] = "", run_id[400], buf[8192];
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    snprintf(run_id, sizeof run_id, "%s-%d-%lld", host, sp_proc.pid,
             (long long)sp_proc.start_realtime_ns);
    const char *base = strrchr(p->prefix, '/');
    const char *label = sp_cfg.label ? sp_cfg.label : base ? base + 1 : p->prefix;
    const char *pairs[][2] = {
        {"hostname", host}, {"executable", exe}, {"run_id", run_id}, {"label", label},
    };
    size_t len = 0;
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        int w = snprintf(buf + len, sizeof buf - len, "%s%c%s%c", pairs[i][0], 0, pairs[i][1], 0);
        if (w < 0 || (size_t)w >= sizeof buf - len)
            break;
        len += (size_t)w;
    }
    return write_frame(f, SP_SPILL_FRAME_META, 0, 0, 0, buf, len, NULL, 0, NULL, 0);
}

/* Six characters nobody can guess in advance. */
static void random_suffix(char out[7])
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)out ^
            ((uint64_t)sp_proc.pid << 40);
        r *= 0x9e3779b97f4a7c15ull;
    }
    for (int i = 0; i < 6; i++, r /= 36)
        out[i] = alphabet[r % 36];
    out[6] = '\0';
}

/* <out>.spill.<pid>.<random>, created here and nowhere else: O_EXCL and
 * O_NOFOLLOW refuse a file or symlink planted at the name, mode 0600 keeps
 * the recorded calls private.  A name too long for the directory becomes
 * scopeprof.spill.<pid>.<random> in the same directory. */
static int create_spill_file(struct spill_file *f, const char *out)
{
    const char *slash = strrchr(out, '/');
    size_t dir_len = slash ? (size_t)(slash - out) + 1 : 0;
    size_t len = strlen(out) + 64;
    f->path = malloc(len);
    if (!f->path)
        return -1;
    for (int attempt = 0; attempt < 16; attempt++) {
        char suffix[7];
        random_suffix(suffix);
        snprintf(f->path, len, "%s.spill.%d.%s", out, sp_proc.pid, suffix);
        if (strlen(f->path + dir_len) > NAME_MAX)
            snprintf(f->path, len, "%.*sscopeprof.spill.%d.%s", (int)dir_len, out, sp_proc.pid,
                     suffix);
        f->fd = open(f->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC,
                     0600);
        if (f->fd >= 0 || errno != EEXIST)
            break;
    }
    return f->fd >= 0 ? 0 : -1;
}

static int open_file(struct spill_file *f, struct sp_profiler *p)
{
    const char *out = sp_profiler_path(p);
    if (!out || create_spill_file(f, out) != 0)
        return -1;
    sp_spill_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, SP_SPILL_MAGIC, sizeof h.magic);
    h.version = SP_SPILL_VERSION;
    h.header_size = sizeof h;
    h.event_size = sizeof(sp_event);
    h.byte_order = SP_SPILL_BYTE_ORDER;
    h.pid = sp_proc.pid;
    h.rank = p->rank;
    h.start_time_ns = p->start_ns;
    h.start_realtime_ns = sp_proc.start_realtime_ns;
    h.checksum = sp_spill_hash(SP_SPILL_HASH_INIT, &h, offsetof(sp_spill_header, checksum));
    struct iovec iov = {&h, sizeof h};
    if (write_all(f->fd, &iov, 1) != 0 || write_meta(f, p) != 0)
        return -1;
    sp_debug("spilling recorded calls to %s", f->path);
    return 0;
}

/* Regions registered since the last spill, and the rank once MPI knows it:
 * written before any events frame that may refer to them. */
static int write_tables(struct spill_file *f, struct sp_profiler *p, struct sp_thread *t)
{
    if (f->rank_written != p->rank || f->size_written != sp_proc.size) {
        sp_spill_process proc = {p->rank, sp_proc.size};
        if (write_frame(f, SP_SPILL_FRAME_PROCESS, 0, 0, 0, &proc, sizeof proc, NULL, 0, NULL, 0))
            return -1;
        f->rank_written = p->rank;
        f->size_written = sp_proc.size;
    }
    uint32_t n = SP_ACQUIRE(p->num_regions);
    for (uint32_t id = f->regions_written; id < n; id++) {
        struct sp_region *r = sp_region_get(p, id);
        pthread_mutex_lock(&p->lock); /* the source location may be filled in later */
        const char *file = r->source_file;
        sp_spill_region rec = {
            .id = id,
            .name_len = (uint32_t)strlen(r->name),
            .file_len = file ? (uint32_t)strlen(file) : 0,
            .source_line = file ? r->source_line : -1,
            .callsite = r->callsite,
        };
        pthread_mutex_unlock(&p->lock);
        if (write_frame(f, SP_SPILL_FRAME_REGION, 0, id, 0, &rec, sizeof rec, r->name,
                        rec.name_len, file, rec.file_len))
            return -1;
        f->regions_written = id + 1;
    }
    size_t index = (size_t)t->index;
    if (index >= f->thread_cap) {
        size_t cap = f->thread_cap ? f->thread_cap : 64;
        while (cap <= index)
            cap *= 2;
        uint8_t *grown = realloc(f->thread_written, cap);
        if (!grown)
            return -1;
        memset(grown + f->thread_cap, 0, cap - f->thread_cap);
        f->thread_written = grown;
        f->thread_cap = cap;
    }
    if (!f->thread_written[index]) {
        char name[64];
        pthread_mutex_lock(&sp_threads_lock);
        snprintf(name, sizeof name, "%s", t->name);
        pthread_mutex_unlock(&sp_threads_lock);
        sp_spill_thread rec = {
            .index = t->index,
            .ident = (int64_t)t->ident,
            .native_id = t->tid,
            .start_ns = t->start_ns - p->start_ns,
            .daemon = t->daemon,
            .name_len = (uint32_t)strlen(name),
        };
        if (write_frame(f, SP_SPILL_FRAME_THREAD, 0, 0, t->index, &rec, sizeof rec, name,
                        rec.name_len, NULL, 0))
            return -1;
        f->thread_written[index] = 1;
    }
    /* Fork edges kept since the last spill, so that `scopeprof recover`
     * (and any reader of the file alone) can graft forked work. */
    size_t cursor = f->forks_cursor, count = 0;
    sp_fork_edge *forks = sp_forks_since(p, &cursor, &count);
    int rc = 0;
    for (size_t at = 0; at < count && rc == 0;) {
        /* frames stay well below SP_SPILL_MAX_PAYLOAD */
        size_t n = count - at < 65536 ? count - at : 65536;
        rc = write_frame(f, SP_SPILL_FRAME_FORKS, 0, (uint32_t)n, 0, forks + at,
                         n * sizeof *forks, NULL, 0, NULL, 0);
        at += n;
    }
    free(forks);
    if (rc != 0)
        return -1;
    f->forks_cursor = cursor;
    return 0;
}

/* The MPI side data of a lane's calls (record/mpi_side.h): frames of at
 * most one side block each. */
static int write_mpi_frame(void *ctx, const sp_capture_mpi *records, size_t n)
{
    struct spill_file *f = ((void **)ctx)[0];
    const struct sp_lane *lane = ((void **)ctx)[1];
    return write_frame(f, SP_SPILL_FRAME_MPI, 0, (uint32_t)n, lane->thread->index, records,
                       n * sizeof *records, NULL, 0, NULL, 0);
}

/* A chunk's events as the file holds them (24 bytes each; spill lock
 * held): mapped once, not malloc'ed, like every buffer of these paths. */
static sp_event *spill_expanded;

static sp_event *map_expanded(void)
{
    void *m = mmap(NULL, SP_CHUNK_EVENTS * sizeof(sp_event), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

/* Move every event the lane holds in memory to the file (spill lock held);
 * afterwards the lane keeps only its tail chunk, marked spilled up to
 * `used` (head_skip), and goes on appending after that. */
static int spill_lane(struct spill_file *f, struct sp_lane *lane)
{
    struct sp_profiler *p = lane->profiler;
    if (f->failed || f->finished)
        return -1;
    if (lane->head == lane->tail && lane->head_skip >= sp_lane_used(lane))
        return 0; /* nothing new since the last spill */
    if (f->fd < 0 && open_file(f, p) != 0) {
        if (f->fd >= 0) {
            close(f->fd);
            unlink(f->path);
            f->fd = -1;
        }
        goto failed;
    }
    /* On failure the file is cut back to here: events still in memory must
     * not also be in the file. */
    off_t before = lseek(f->fd, 0, SEEK_END);
    if (write_tables(f, p, lane->thread) != 0)
        goto cut;
    uint32_t used = sp_lane_used(lane); /* the owner is the caller: no race */
    uint64_t bytes = 0;
    for (struct sp_chunk *k = lane->head; k; k = k->next) {
        size_t end = k == lane->tail ? used : k->count;
        size_t skip = k == lane->head ? lane->head_skip : 0;
        if (skip >= end)
            continue;
        size_t n = end - skip;
        sp_chunk_convert(k, end);
        if (!spill_expanded && !(spill_expanded = map_expanded()))
            goto cut;
        sp_chunk_expand(k, (uint32_t)skip, (uint32_t)end, spill_expanded);
        int await = k->await_ns != NULL;
        if (write_frame(f, SP_SPILL_FRAME_EVENTS, await ? SP_SPILL_FLAG_AWAIT : 0, (uint32_t)n,
                        lane->thread->index, spill_expanded, n * sizeof(sp_event),
                        await ? k->await_ns + skip : NULL, await ? n * sizeof(int64_t) : 0,
                        NULL, 0))
            goto cut;
        bytes += n * sizeof(sp_event);
    }
    void *mpi_ctx[2] = {f, lane};
    if (sp_mpi_side_spill(lane, write_mpi_frame, mpi_ctx) != 0)
        goto cut;
    __atomic_add_fetch(&spilled_bytes, bytes, __ATOMIC_RELAXED);
    sp_mpi_side_drop(lane);

    /* The recorder counts them (its statistics are derived from events)
     * and frees every chunk but the tail. */
    sp_lane_drop_spilled(lane, used);
    return 0;

cut: {
    int write_errno = errno;
    if (before < 0 || ftruncate(f->fd, before) != 0)
        sp_log("cannot cut the spill file %s back after a failed write (%s); "
               "some calls may appear twice", f->path, strerror(errno));
    errno = write_errno;
}
failed:
    f->failed = 1;
    sp_log("cannot write the spill file %s (%s); recording of timeline events stops at "
           "the memory cap, call counts stay exact",
           f->path ? f->path : "(no path)", strerror(errno));
    return -1;
}

/* The tail chunk was spilled entirely: start over at its beginning. */
static void reuse_tail(struct sp_lane *lane)
{
    sp_lane_restart_tail(lane);
}

static int sync_file(struct spill_file *f)
{
    if (f->fd >= 0 && !f->failed && fsync(f->fd) != 0 && errno != EINVAL && errno != EROFS) {
        f->failed = 1;
        sp_log("cannot fsync the spill file %s (%s)", f->path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Spilling must never fill the user's disk: stop keeping events while less
 * than 5 % of the file system (or 1 GiB, whichever is less) would stay free. */
static int disk_nearly_full(struct spill_file *f)
{
    struct statvfs vfs;
    if (f->fd < 0 || fstatvfs(f->fd, &vfs) != 0)
        return 0;
    uint64_t total = (uint64_t)vfs.f_blocks * vfs.f_frsize;
    uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
    uint64_t reserve = total / 20 < ((uint64_t)1 << 30) ? total / 20 : ((uint64_t)1 << 30);
    if (avail >= reserve + SP_CHUNK_BYTES)
        return 0;
    sp_log("the disk holding the spill file %s is nearly full; recording of timeline events "
           "stops at the memory cap, call counts stay exact", f->path ? f->path : "");
    f->failed = 1;
    return 1;
}

int sp_spill_on_full_chunk(struct sp_lane *lane, int64_t now)
{
    sp_record_tick(lane, now);
    int stop = sp_cfg.on_full == SP_ON_FULL_STOP;
    /* head and head_skip change only on this thread (or under sp_reset). */
    int spilled_whole_tail = lane->head == lane->tail && lane->head_skip == SP_CHUNK_EVENTS;
    uint64_t need = __atomic_load_n(&sp_buffer_bytes, __ATOMIC_RELAXED) + SP_CHUNK_BYTES;
    if (stop)
        need += __atomic_load_n(&spilled_bytes, __ATOMIC_RELAXED);
    if (stop && need > sp_cfg.max_memory) {
        if (!lane->stopped)
            sp_debug("thread %lld reached SCOPE_PROFILER_MAX_MEMORY: events not kept from now on",
                     (long long)lane->thread->index);
        lane->stopped = 1;
        return 1;
    }
    /* Below the cap: a new chunk, without touching the spill lock (a write
     * in progress may hold it for a while). */
    if (!spilled_whole_tail && need <= sp_cfg.max_memory)
        return 0;
    sp_spill_lock();
    if (spilled_whole_tail) {
        /* a periodic spill just took the whole chunk */
        reuse_tail(lane);
        sp_spill_unlock();
        return 1;
    }
    struct spill_file *f = file_of(lane->profiler);
    if (f && !f->failed && !disk_nearly_full(f) && spill_lane(f, lane) == 0 &&
        sync_file(f) == 0) {
        reuse_tail(lane);
    } else {
        if (!f)
            sp_log("out of memory while spilling; recording of timeline events stops at the "
                   "memory cap, call counts stay exact");
        lane->stopped = 1;
    }
    sp_spill_unlock();
    return 1;
}

void sp_spill_tick_slow(struct sp_lane *lane, int64_t now)
{
    if (__atomic_load_n(&sp_tick_pending, __ATOMIC_RELAXED))
        sp_signals_deferred_exit();
    /* `now` and the deadline are ticks (timer.h). */
    int64_t interval = sp_timer_duration_ticks((int64_t)(sp_cfg.flush_interval * 1e9));
    if (interval <= 0) {
        sp_tls_tick_deadline = INT64_MAX;
        return;
    }
    if (sp_tls_tick_deadline == 0 || now < sp_tls_tick_deadline) {
        if (sp_tls_tick_deadline == 0)
            sp_tls_tick_deadline = now + interval;
        return;
    }
    sp_tls_tick_deadline = now + interval;
    /* Every lane of this thread, whatever profiler it records for. */
    struct sp_thread *t = lane->thread;
    sp_spill_lock();
    for (uint32_t i = 0; i < t->num_lanes; i++) {
        struct sp_lane *l = t->lanes[i];
        if (!l || !SP_LOAD(l->profiler->active))
            continue;
        struct spill_file *f = file_of(l->profiler);
        if (f && spill_lane(f, l) == 0)
            sync_file(f);
    }
    sp_spill_unlock();
}

const char *sp_spill_path(struct sp_profiler *p)
{
    if (p->slot >= files_cap || !files[p->slot])
        return NULL;
    struct spill_file *f = files[p->slot];
    return f->fd >= 0 && !f->finished ? f->path : NULL;
}

void sp_spill_finish(struct sp_profiler *p, int written)
{
    if (p->slot >= files_cap || !files[p->slot])
        return;
    struct spill_file *f = files[p->slot];
    if (f->finished || f->fd < 0)
        return;
    f->finished = 1;
    close(f->fd);
    if (written) {
        if (unlink(f->path) != 0)
            sp_log("cannot remove the spill file %s (%s)", f->path, strerror(errno));
    } else {
        sp_log("the recorded calls are kept in %s; 'scopeprof recover %s -o FILE.h5' "
               "turns it into a profile", f->path, f->path);
    }
}

void sp_spill_discard(struct sp_profiler *p)
{
    if (p->slot >= files_cap || !files[p->slot])
        return;
    struct spill_file *f = files[p->slot];
    if (f->fd < 0 || f->finished)
        return;
    /* Everything spilled so far belongs to before the reset: start a new
     * file at the next spill (header, tables and all). */
    close(f->fd);
    if (unlink(f->path) != 0)
        sp_log("cannot remove the spill file %s (%s)", f->path, strerror(errno));
    free(f->path);
    f->path = NULL;
    f->fd = -1;
    f->regions_written = 0;
    f->rank_written = -1;
    f->size_written = 0;
    if (f->thread_written)
        memset(f->thread_written, 0, f->thread_cap * sizeof *f->thread_written);
}

/* A fork child records into files of its own: it must never append to its
 * parent's spill file (the descriptor is inherited) nor remove it. */
static void forget_parent_spills(void)
{
    pthread_mutex_init(&spill_mutex, NULL);
    for (int i = 0; i < files_cap; i++)
        if (files[i] && files[i]->fd >= 0)
            close(files[i]->fd);
    /* The parent's records are dropped, not freed (as fork.c does). */
    files = NULL;
    files_cap = 0;
    spilled_bytes = 0;
    sp_tls_tick_deadline = 0;
}

void sp_spill_install(void)
{
    if (pthread_atfork(NULL, NULL, forget_parent_spills) != 0)
        sp_log("cannot watch fork(); children may append to their parent's spill file");
    sp_signals_install();
}

/* ---- the handover to the writer process (handover.c) ------------------------ */

/* Every region and every thread, so that the file describes them all. */
static int write_all_tables(struct spill_file *f, struct sp_profiler *p)
{
    pthread_mutex_lock(&sp_threads_lock);
    int64_t n = sp_num_threads;
    pthread_mutex_unlock(&sp_threads_lock);
    for (int64_t i = 0; i < n; i++) {
        pthread_mutex_lock(&sp_threads_lock);
        struct sp_thread *t = sp_threads[i];
        pthread_mutex_unlock(&sp_threads_lock);
        if (t && write_tables(f, p, t) != 0)
            return -1;
    }
    if (n == 0) {
        /* no thread registered: the rank and the regions still */
        struct sp_thread none;
        memset(&none, 0, sizeof none);
        snprintf(none.name, sizeof none.name, "main");
        return write_tables(f, p, &none);
    }
    return 0;
}

sp_spill_file *sp_spill_handover_begin(struct sp_profiler *p, int final)
{
    struct spill_file *own = file_of(p);
    if (!own)
        return NULL;
    struct spill_file *f = own;
    /* Only the final write may append to the spill file: after a flush the
     * calls still in memory will be spilled again. */
    if (!final || own->failed || own->finished) {
        f = calloc(1, sizeof *f);
        if (!f)
            return NULL;
        f->fd = -1;
        f->rank_written = -1;
        f->separate = 1;
    }
    if (f->fd < 0 && open_file(f, p) != 0)
        goto fail;
    if (write_all_tables(f, p) != 0)
        goto fail;
    return f;
fail: {
    int open_errno = errno;
    if (f->separate) {
        if (f->fd >= 0) {
            close(f->fd);
            unlink(f->path);
        }
        free(f->path);
        free(f->thread_written);
        free(f);
    } else {
        f->failed = 1;
    }
    errno = open_errno;
    return NULL;
}
}

int sp_spill_handover_frame(sp_spill_file *f, uint16_t type, uint16_t flags, uint32_t count,
                            int64_t thread, const void *a, size_t alen, const void *b,
                            size_t blen, const void *c, size_t clen)
{
    return write_frame(f, type, flags, count, thread, a, alen, b, blen, c, clen);
}

int64_t sp_spill_handover_mark(sp_spill_file *f)
{
    return (int64_t)lseek(f->fd, 0, SEEK_END);
}

int sp_spill_handover_cut(sp_spill_file *f, int64_t mark)
{
    return mark >= 0 && ftruncate(f->fd, (off_t)mark) == 0 ? 0 : -1;
}

const char *sp_spill_handover_path(const sp_spill_file *f)
{
    return f->path;
}

void sp_spill_handover_end(struct sp_profiler *p, sp_spill_file *f, int final, int written)
{
    if (f && f->separate) {
        close(f->fd);
        if (!final || written) {
            if (unlink(f->path) != 0)
                sp_log("cannot remove the handover file %s (%s)", f->path, strerror(errno));
        } else {
            sp_log("the recorded calls are kept in %s; 'scopeprof recover %s -o FILE.h5' "
                   "turns it into a profile", f->path, f->path);
        }
        free(f->path);
        free(f->thread_written);
        free(f);
    }
    if (final)
        sp_spill_finish(p, written);
}
