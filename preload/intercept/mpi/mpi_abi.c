/* mpi_abi.c - see mpi_abi.h.  The constants are those of the families'
 * mpi.h (Open MPI 4/5, MPICH 3/4 and its derivatives). */
#include "mpi_abi.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_library.h"

#define MPICH_COMM_WORLD 0x44000000u
#define MPICH_REQUEST_NULL 0x2c000000u

typedef int (*type_size_fn)(sp_mpi_handle type, int *size);
typedef int (*comm_int_fn)(sp_mpi_handle comm, int *out);
typedef int (*comm_group_fn)(sp_mpi_handle comm, sp_mpi_handle *group);
typedef int (*translate_fn)(sp_mpi_handle g1, int n, const int *r1, sp_mpi_handle g2, int *r2);
typedef int (*group_free_fn)(sp_mpi_handle *group);
typedef sp_mpi_handle (*f2c_fn)(int f);

static struct {
    int ready;              /* atomic */
    enum sp_mpi_family family;
    sp_mpi_handle world;
    sp_mpi_handle request_null;
    type_size_fn type_size;
    comm_int_fn comm_rank, comm_size, test_inter;
    comm_group_fn comm_group;
    translate_fn translate;
    group_free_fn group_free;
    sp_mpi_handle world_group;
    int world_rank;
    f2c_fn comm_f2c, type_f2c, win_f2c;
    comm_group_fn win_group;
    const void *f_in_place[4], *f_status_ignore[4], *f_statuses_ignore[4];
} abi;

/* A Fortran common-block symbol in its compilers' spellings. */
static void fortran_symbol(const char *base, const void *out[4])
{
    char name[64];
    static const char *const suffix[3] = {"_", "__", ""};
    for (int i = 0; i < 4; i++) {
        if (i == 3) {
            size_t k = 0;
            for (; base[k] && k + 1 < sizeof name; k++)
                name[k] = (char)(base[k] >= 'a' && base[k] <= 'z' ? base[k] - 32 : base[k]);
            name[k] = '\0';
        } else {
            snprintf(name, sizeof name, "%s%s", base, suffix[i]);
        }
        out[i] = sp_mpi_lookup_data(name);
    }
}

void sp_mpi_abi_bind(void)
{
    abi.family = sp_mpi_family();
    if (abi.family == SP_MPI_FAMILY_UNKNOWN)
        return;
    if (abi.family == SP_MPI_FAMILY_OPENMPI) {
        abi.world = (sp_mpi_handle)sp_mpi_ompi_comm_world();
        abi.request_null = (sp_mpi_handle)sp_mpi_lookup_data("ompi_request_null");
    } else {
        abi.world = MPICH_COMM_WORLD;
        abi.request_null = MPICH_REQUEST_NULL;
    }
    abi.type_size = (type_size_fn)sp_mpi_lookup("MPI_Type_size");
    abi.comm_rank = (comm_int_fn)sp_mpi_lookup("MPI_Comm_rank");
    abi.comm_size = (comm_int_fn)sp_mpi_lookup("MPI_Comm_size");
    abi.test_inter = (comm_int_fn)sp_mpi_lookup("MPI_Comm_test_inter");
    abi.comm_group = (comm_group_fn)sp_mpi_lookup("MPI_Comm_group");
    abi.translate = (translate_fn)sp_mpi_lookup("MPI_Group_translate_ranks");
    abi.group_free = (group_free_fn)sp_mpi_lookup("MPI_Group_free");
    abi.win_group = (comm_group_fn)sp_mpi_lookup("MPI_Win_get_group");
    abi.comm_f2c = (f2c_fn)sp_mpi_lookup("MPI_Comm_f2c");
    abi.type_f2c = (f2c_fn)sp_mpi_lookup("MPI_Type_f2c");
    abi.win_f2c = (f2c_fn)sp_mpi_lookup("MPI_Win_f2c");
    if (abi.family == SP_MPI_FAMILY_OPENMPI) {
        fortran_symbol("mpi_fortran_in_place", abi.f_in_place);
        fortran_symbol("mpi_fortran_status_ignore", abi.f_status_ignore);
        fortran_symbol("mpi_fortran_statuses_ignore", abi.f_statuses_ignore);
    }
    if (!abi.world || !abi.type_size || !abi.comm_rank || !abi.comm_size)
        return;
    if (!abi.comm_group || !abi.translate || abi.comm_group(abi.world, &abi.world_group) != 0)
        abi.translate = NULL;
    if (abi.comm_rank(abi.world, &abi.world_rank) != 0)
        return;
    __atomic_store_n(&abi.ready, 1, __ATOMIC_RELEASE);
}

int sp_mpi_abi_ready(void) { return __atomic_load_n(&abi.ready, __ATOMIC_ACQUIRE); }
void sp_mpi_abi_finalized(void) { __atomic_store_n(&abi.ready, 0, __ATOMIC_RELEASE); }

/* MPICH handles are ints: the upper half of the register is not ours. */
static inline sp_mpi_handle canon(sp_mpi_handle h)
{
    return abi.family == SP_MPI_FAMILY_MPICH ? (sp_mpi_handle)(uint32_t)h : h;
}

int64_t sp_mpi_bytes(sp_mpi_handle type, int64_t count)
{
    int size = 0;
    if (!sp_mpi_abi_ready() || count < 0 || abi.type_size(type, &size) != 0 || size < 0)
        return -1;
    return count * size;
}

int sp_mpi_in_place(const void *buf)
{
    uintptr_t v = (uintptr_t)buf;
    return abi.family == SP_MPI_FAMILY_OPENMPI ? v == 1 : v == (uintptr_t)-1;
}

int sp_mpi_comm_rank(sp_mpi_handle comm)
{
    int r = -1;
    if (!sp_mpi_abi_ready())
        return -1;
    if (canon(comm) == abi.world)
        return abi.world_rank;
    return abi.comm_rank(comm, &r) == 0 ? r : -1;
}

int sp_mpi_comm_size(sp_mpi_handle comm)
{
    int n = -1;
    return sp_mpi_abi_ready() && abi.comm_size(comm, &n) == 0 ? n : -1;
}

int sp_mpi_any_source(void) { return abi.family == SP_MPI_FAMILY_OPENMPI ? -1 : -2; }

/* ---- communicators other than MPI_COMM_WORLD: world ranks, cached ------ */

struct comm_info {
    sp_mpi_handle comm;     /* 0: empty slot */
    int size;               /* -1: inter-communicator or unknown */
    int *world;             /* world rank of each member */
    int64_t id;
};

#define COMM_CACHE 256
static struct comm_info cache[COMM_CACHE];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static void fill_info(struct comm_info *info, sp_mpi_handle comm)
{
    info->comm = comm;
    info->size = -1;
    info->world = NULL;
    info->id = -1;
    int inter = 0, n = -1;
    sp_mpi_handle group = 0;
    if ((abi.test_inter && abi.test_inter(comm, &inter) == 0 && inter) || !abi.translate ||
        abi.comm_size(comm, &n) != 0 || n <= 0 || abi.comm_group(comm, &group) != 0)
        return;
    int *ranks = malloc((size_t)n * 2 * sizeof *ranks);
    if (ranks) {
        for (int i = 0; i < n; i++)
            ranks[i] = i;
        if (abi.translate(group, n, ranks, abi.world_group, ranks + n) == 0) {
            memmove(ranks, ranks + n, (size_t)n * sizeof *ranks);
            uint64_t h = 0xcbf29ce484222325ull;
            for (int i = 0; i < n; i++)
                h = (h ^ (uint64_t)(uint32_t)ranks[i]) * 0x100000001b3ull;
            info->id = (int64_t)(h >> 2) | 1; /* positive, never 0 (world) */
            info->world = ranks;
            info->size = n;
        } else {
            free(ranks);
        }
    }
    if (abi.group_free)
        abi.group_free(&group);
}

static struct comm_info *lookup_comm(sp_mpi_handle comm)
{
    size_t h = (size_t)((comm * 0x9e3779b97f4a7c15ull) >> 40) % COMM_CACHE;
    for (size_t k = 0; k < COMM_CACHE; k++) {
        struct comm_info *info = &cache[(h + k) % COMM_CACHE];
        if (info->comm == comm)
            return info;
        if (info->comm == 0) {
            fill_info(info, comm);
            return info;
        }
    }
    return NULL; /* more live communicators than slots: unknown */
}

int64_t sp_mpi_world_peer(sp_mpi_handle comm, int rank)
{
    if (rank < 0 || !sp_mpi_abi_ready())
        return -1;
    comm = canon(comm);
    if (comm == abi.world)
        return rank;
    pthread_mutex_lock(&cache_lock);
    struct comm_info *info = lookup_comm(comm);
    int64_t peer = info && info->world && rank < info->size ? info->world[rank] : -1;
    pthread_mutex_unlock(&cache_lock);
    return peer;
}

int64_t sp_mpi_comm_id(sp_mpi_handle comm)
{
    if (!sp_mpi_abi_ready())
        return -1;
    comm = canon(comm);
    if (comm == abi.world)
        return 0;
    pthread_mutex_lock(&cache_lock);
    struct comm_info *info = lookup_comm(comm);
    int64_t id = info ? info->id : -1;
    pthread_mutex_unlock(&cache_lock);
    return id;
}

void sp_mpi_comm_forget(sp_mpi_handle comm)
{
    comm = canon(comm);
    pthread_mutex_lock(&cache_lock);
    /* Open addressing: empty the slot, then re-insert the rest of its run. */
    for (size_t i = 0; i < COMM_CACHE; i++) {
        if (cache[i].comm != comm)
            continue;
        free(cache[i].world);
        cache[i].comm = 0;
        for (size_t k = (i + 1) % COMM_CACHE; cache[k].comm; k = (k + 1) % COMM_CACHE) {
            struct comm_info moved = cache[k];
            cache[k].comm = 0;
            size_t h = (size_t)((moved.comm * 0x9e3779b97f4a7c15ull) >> 40) % COMM_CACHE;
            while (cache[h].comm)
                h = (h + 1) % COMM_CACHE;
            cache[h] = moved;
        }
        break;
    }
    pthread_mutex_unlock(&cache_lock);
}

int64_t sp_mpi_win_world_peer(sp_mpi_handle win, int rank)
{
    sp_mpi_handle group = 0;
    int world = -1;
    if (rank < 0 || !sp_mpi_abi_ready() || !abi.win_group || !abi.translate ||
        abi.win_group(win, &group) != 0)
        return -1;
    if (abi.translate(group, 1, &rank, abi.world_group, &world) != 0)
        world = -1;
    if (abi.group_free)
        abi.group_free(&group);
    return world < 0 ? -1 : world;
}

/* ---- statuses and arrays ---------------------------------------------- */

int sp_mpi_status_ignored(const void *status)
{
    uintptr_t v = (uintptr_t)status;
    return abi.family == SP_MPI_FAMILY_OPENMPI ? v == 0 : v == 1 || v == 0;
}

/* Open MPI: {source, tag, error, cancelled, size_t ucount}; MPICH:
 * {count_lo, count_hi_and_cancelled, source, tag, error}. */
size_t sp_mpi_status_size(void) { return abi.family == SP_MPI_FAMILY_OPENMPI ? 24 : 20; }

static int status_field(const void *status, int index, int ompi_at, int mpich_at)
{
    if (sp_mpi_status_ignored(status))
        return -1;
    const char *s = (const char *)status + (size_t)index * sp_mpi_status_size();
    int v;
    memcpy(&v, s + 4 * (abi.family == SP_MPI_FAMILY_OPENMPI ? ompi_at : mpich_at), sizeof v);
    return v;
}

int sp_mpi_status_source(const void *status, int index) { return status_field(status, index, 0, 2); }
int sp_mpi_status_tag(const void *status, int index) { return status_field(status, index, 1, 3); }

sp_mpi_handle sp_mpi_handle_at(const void *array, int i)
{
    if (abi.family == SP_MPI_FAMILY_MPICH) {
        uint32_t v;
        memcpy(&v, (const char *)array + 4 * (size_t)i, sizeof v);
        return v;
    }
    uintptr_t v;
    memcpy(&v, (const char *)array + sizeof v * (size_t)i, sizeof v);
    return v;
}

int sp_mpi_request_null(sp_mpi_handle request) { return canon(request) == abi.request_null; }

/* ---- Fortran --------------------------------------------------------- */

sp_mpi_handle sp_mpi_comm_f2c(int f)
{
    return sp_mpi_abi_ready() && abi.comm_f2c ? abi.comm_f2c(f) : 0;
}

sp_mpi_handle sp_mpi_type_f2c(int f)
{
    return sp_mpi_abi_ready() && abi.type_f2c ? abi.type_f2c(f) : 0;
}

sp_mpi_handle sp_mpi_win_f2c(int f)
{
    return sp_mpi_abi_ready() && abi.win_f2c ? abi.win_f2c(f) : 0;
}

static int one_of(const void *p, const void *const list[4])
{
    for (int i = 0; i < 4; i++)
        if (list[i] && p == list[i])
            return 1;
    return 0;
}

int sp_mpi_f_in_place(const void *buf) { return one_of(buf, abi.f_in_place); }
int sp_mpi_f_status_ignored(const void *status)
{
    return !status || one_of(status, abi.f_status_ignore);
}

int sp_mpi_f_statuses_ignored(const void *statuses)
{
    return !statuses || one_of(statuses, abi.f_statuses_ignore);
}

int sp_mpi_fortran_calls_c(void) { return abi.family == SP_MPI_FAMILY_MPICH; }
