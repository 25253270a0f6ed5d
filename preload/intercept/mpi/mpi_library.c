/* mpi_library.c - see mpi_library.h. */
#include "mpi_library.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "base/shim.h"

/* MPICH-family handle of MPI_COMM_WORLD (mpi.h of MPICH, Intel MPI,
 * MVAPICH: `#define MPI_COMM_WORLD ((MPI_Comm)0x44000000)`). */
#define SP_MPICH_COMM_WORLD 0x44000000
/* MPICH-family MPI_BYTE. */
#define SP_MPICH_BYTE 0x4c00010d

/* Returned when the library lacks a function we need. */
#define SP_MPI_MISSING (-1)

typedef int (*comm_int_ptr_ompi)(void *comm, int *out);
typedef int (*comm_int_ptr_mpich)(int comm, int *out);
typedef int (*comm_ompi)(void *comm);
typedef int (*comm_mpich)(int comm);
typedef int (*bcast_ompi)(void *buf, int count, void *type, int root, void *comm);
typedef int (*bcast_mpich)(void *buf, int count, int type, int root, int comm);
typedef int (*int_ptr_fn)(int *out);
typedef int (*version_fn)(char *buf, int *len);

static struct {
    enum sp_mpi_family family;
    void *library;          /* dlopen handle of the anchor's object, or NULL */
    void *ompi_comm_world;  /* &ompi_mpi_comm_world */
    void *ompi_byte;        /* &ompi_mpi_byte */
    void *comm_rank, *comm_size, *barrier, *bcast;
    int_ptr_fn query_thread, initialized;
    version_fn get_version;
} lib;

/* The library's own symbol, preferring the PMPI_ entry point so that our
 * bookkeeping calls do not show up in another tool's MPI profile. */
static void *lookup(const char *name)
{
    char pname[64];
    snprintf(pname, sizeof pname, "P%s", name);
    const char *names[2] = { pname, name };
    for (int i = 0; i < 2; i++) {
        void *sym = lib.library ? dlsym(lib.library, names[i]) : NULL;
        if (!sym)
            sym = dlsym(RTLD_DEFAULT, names[i]);
        if (sym)
            return sym;
    }
    return NULL;
}

/* Data symbols come from the global scope first: an executable that uses
 * MPI_COMM_WORLD holds a copy-relocated `ompi_mpi_comm_world`, and that copy
 * (not the one inside libmpi) is the communicator MPI actually uses. */
static void *lookup_data(const char *name)
{
    void *sym = dlsym(RTLD_DEFAULT, name);
    return sym || !lib.library ? sym : dlsym(lib.library, name);
}

/* Family by symbols first (cheap, exact), by the version text otherwise. */
static enum sp_mpi_family detect_family(void)
{
    if (lib.ompi_comm_world)
        return SP_MPI_FAMILY_OPENMPI;
    if (lookup_data("MPIR_Init_thread") || lookup_data("MPII_Version_ABI"))
        return SP_MPI_FAMILY_MPICH;
    static char text[8192];
    if (sp_mpi_library_version(text, (int)sizeof text) == 0) {
        if (strstr(text, "MPICH") || strstr(text, "MVAPICH") || strstr(text, "Intel(R) MPI"))
            return SP_MPI_FAMILY_MPICH;
    }
    return SP_MPI_FAMILY_UNKNOWN;
}

enum sp_mpi_family sp_mpi_library_bind(const void *anchor)
{
    Dl_info info;
    if (anchor && dladdr(anchor, &info) && info.dli_fname && info.dli_fname[0])
        lib.library = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    lib.ompi_comm_world = lookup_data("ompi_mpi_comm_world");
    lib.comm_rank = lookup("MPI_Comm_rank");
    lib.comm_size = lookup("MPI_Comm_size");
    lib.ompi_byte = lookup_data("ompi_mpi_byte");
    lib.barrier = lookup("MPI_Barrier");
    lib.bcast = lookup("MPI_Bcast");
    lib.query_thread = (int_ptr_fn)lookup("MPI_Query_thread");
    lib.initialized = (int_ptr_fn)lookup("MPI_Initialized");
    lib.get_version = (version_fn)lookup("MPI_Get_library_version");
    lib.family = detect_family();
    sp_debug("MPI library %s, family %s", lib.library ? info.dli_fname : "(global scope)",
             sp_mpi_family_name(lib.family));
    return lib.family;
}

const char *sp_mpi_family_name(enum sp_mpi_family family)
{
    switch (family) {
    case SP_MPI_FAMILY_OPENMPI: return "openmpi";
    case SP_MPI_FAMILY_MPICH: return "mpich";
    default: return "unknown";
    }
}

/* MPI_Comm_rank / MPI_Comm_size on MPI_COMM_WORLD, with the family's ABI. */
static int world_query(void *fn, int *out)
{
    if (!fn)
        return SP_MPI_MISSING;
    switch (lib.family) {
    case SP_MPI_FAMILY_OPENMPI:
        return ((comm_int_ptr_ompi)fn)(lib.ompi_comm_world, out);
    case SP_MPI_FAMILY_MPICH:
        return ((comm_int_ptr_mpich)fn)(SP_MPICH_COMM_WORLD, out);
    default:
        return SP_MPI_MISSING;
    }
}

int sp_mpi_world_rank(int *rank) { return world_query(lib.comm_rank, rank); }
int sp_mpi_world_size(int *size) { return world_query(lib.comm_size, size); }

int sp_mpi_world_barrier(void)
{
    if (!lib.barrier)
        return SP_MPI_MISSING;
    switch (lib.family) {
    case SP_MPI_FAMILY_OPENMPI:
        return ((comm_ompi)lib.barrier)(lib.ompi_comm_world);
    case SP_MPI_FAMILY_MPICH:
        return ((comm_mpich)lib.barrier)(SP_MPICH_COMM_WORLD);
    default:
        return SP_MPI_MISSING;
    }
}

int sp_mpi_world_bcast_bytes(void *buf, int count, int root)
{
    if (!lib.bcast)
        return SP_MPI_MISSING;
    switch (lib.family) {
    case SP_MPI_FAMILY_OPENMPI:
        if (!lib.ompi_byte)
            return SP_MPI_MISSING;
        return ((bcast_ompi)lib.bcast)(buf, count, lib.ompi_byte, root, lib.ompi_comm_world);
    case SP_MPI_FAMILY_MPICH:
        return ((bcast_mpich)lib.bcast)(buf, count, SP_MPICH_BYTE, root, SP_MPICH_COMM_WORLD);
    default:
        return SP_MPI_MISSING;
    }
}

int sp_mpi_query_thread(int *provided)
{
    return lib.query_thread ? lib.query_thread(provided) : SP_MPI_MISSING;
}

int sp_mpi_library_version(char *buf, int len)
{
    /* The buffer must hold MPI_MAX_LIBRARY_VERSION_STRING of the library,
     * which we cannot know: 8192 (MPICH's, the largest in use) is enough. */
    static char text[8192];
    int n = 0;
    if (!lib.get_version || len <= 0 || lib.get_version(text, &n) != 0)
        return SP_MPI_MISSING;
    if (n < 0 || n >= (int)sizeof text)
        n = (int)sizeof text - 1;
    text[n] = '\0';
    while (n > 0 && isspace((unsigned char)text[n - 1]))
        text[--n] = '\0';
    snprintf(buf, (size_t)len, "%s", text);
    return 0;
}

void *sp_mpi_lookup(const char *name) { return lookup(name); }
void *sp_mpi_lookup_data(const char *name) { return lookup_data(name); }
enum sp_mpi_family sp_mpi_family(void) { return lib.family; }
void *sp_mpi_ompi_comm_world(void) { return lib.ompi_comm_world; }

int sp_mpi_is_initialized(void)
{
    int flag = 0;
    return lib.initialized && lib.initialized(&flag) == 0 && flag;
}
