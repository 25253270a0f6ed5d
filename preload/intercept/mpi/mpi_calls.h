/* mpi_calls.h - recording the MPI calls that take time as regions named
 * after their C binding (docs/mpi.md): which functions are recorded
 * (SCOPE_PROFILER_MPI_CALLS), their region ids, and one call's begin/end.
 * The wrappers are in mpi_wrap_{p2p,completion,coll}.c. */
#ifndef SCOPEPROF_MPI_CALLS_H
#define SCOPEPROF_MPI_CALLS_H

#include <stdint.h>

#include "mpi_abi.h"
#include "record/mpi_side.h"

/* Every wrapped function; P: a polling call (aggregated by default). */
#define SP_MPI_FUNCTIONS(X, P)                                                     \
    X(MPI_Send) X(MPI_Ssend) X(MPI_Bsend) X(MPI_Rsend) X(MPI_Recv)                 \
    X(MPI_Sendrecv) X(MPI_Sendrecv_replace) X(MPI_Isend) X(MPI_Issend)             \
    X(MPI_Irecv) X(MPI_Probe) P(MPI_Iprobe)                                        \
    X(MPI_Wait) X(MPI_Waitall) X(MPI_Waitany) X(MPI_Waitsome)                      \
    P(MPI_Test) P(MPI_Testall) P(MPI_Testany) P(MPI_Testsome)                      \
    X(MPI_Barrier) X(MPI_Bcast) X(MPI_Reduce) X(MPI_Allreduce) X(MPI_Gather)       \
    X(MPI_Gatherv) X(MPI_Scatter) X(MPI_Scatterv) X(MPI_Allgather)                 \
    X(MPI_Allgatherv) X(MPI_Alltoall) X(MPI_Alltoallv) X(MPI_Alltoallw)            \
    X(MPI_Reduce_scatter) X(MPI_Reduce_scatter_block) X(MPI_Scan) X(MPI_Exscan)    \
    X(MPI_Ibarrier) X(MPI_Ibcast) X(MPI_Ireduce) X(MPI_Iallreduce) X(MPI_Igather)  \
    X(MPI_Igatherv) X(MPI_Iscatter) X(MPI_Iscatterv) X(MPI_Iallgather)             \
    X(MPI_Iallgatherv) X(MPI_Ialltoall) X(MPI_Ialltoallv) X(MPI_Ialltoallw)        \
    X(MPI_Ireduce_scatter) X(MPI_Ireduce_scatter_block) X(MPI_Iscan)               \
    X(MPI_Iexscan)                                                                 \
    X(MPI_Win_fence) X(MPI_Win_lock) X(MPI_Win_unlock) X(MPI_Win_flush)            \
    X(MPI_Put) X(MPI_Get) X(MPI_Accumulate)                                        \
    X(MPI_File_open) X(MPI_File_close) X(MPI_File_read) X(MPI_File_read_all)       \
    X(MPI_File_read_at) X(MPI_File_read_at_all) X(MPI_File_write)                  \
    X(MPI_File_write_all) X(MPI_File_write_at) X(MPI_File_write_at_all)

#define SP_MPI_ENUM(name) SP_##name,
enum sp_mpi_fn { SP_MPI_FUNCTIONS(SP_MPI_ENUM, SP_MPI_ENUM) SP_MPI_NUM_FUNCTIONS };
#undef SP_MPI_ENUM

enum sp_mpi_mode {
    SP_MPI_MODE_OFF = 0,      /* chain only */
    SP_MPI_MODE_AGGREGATE,    /* counts and totals, no events */
    SP_MPI_MODE_EVENTS,       /* one event per call, with side data */
};

/* One call in progress (on the wrapper's stack). */
struct sp_mpi_call {
    struct sp_profiler *p;
    int region;
    int mode;                 /* SP_MPI_MODE_*, OFF: nothing to do at the end */
    int64_t start;            /* ticks, AGGREGATE only */
};

/* The function's mode (SCOPE_PROFILER_MPI_CALLS read on first use). */
extern int sp_mpi_modes[SP_MPI_NUM_FUNCTIONS];
extern int sp_mpi_modes_ready;
void sp_mpi_modes_init(void);

/* Prepare recording a call of fn made from `caller` (its return address).
 * Returns the mode: OFF when nothing is recorded (the wrapper then only
 * chains).  The clock starts with sp_mpi_call_start, so that reading the
 * arguments (type sizes, rank translation) is not timed. */
int sp_mpi_call_begin_slow(enum sp_mpi_fn fn, struct sp_mpi_call *call, uintptr_t caller);
static inline int sp_mpi_call_begin(enum sp_mpi_fn fn, struct sp_mpi_call *call, uintptr_t caller)
{
    call->mode = SP_MPI_MODE_OFF;
    if (__builtin_expect(!__atomic_load_n(&sp_mpi_modes_ready, __ATOMIC_ACQUIRE), 0))
        sp_mpi_modes_init();
    if (sp_mpi_modes[fn] == SP_MPI_MODE_OFF)
        return SP_MPI_MODE_OFF;
    return sp_mpi_call_begin_slow(fn, call, caller);
}

static inline void sp_mpi_call_start(struct sp_mpi_call *call)
{
    if (call->mode == SP_MPI_MODE_EVENTS)
        sp_profiler_begin(call->p, call->region);
    else if (call->mode == SP_MPI_MODE_AGGREGATE)
        call->start = sp_ticks();
}

/* A side record with every value "not applicable". */
static inline sp_capture_mpi sp_mpi_side_none(void)
{
    return (sp_capture_mpi){.sent_bytes = -1, .recv_bytes = -1, .peer = -1, .tag = -1,
                            .comm = -1, .source = -1, .recv_tag = -1};
}

/* End the call begun above (no-op when it was OFF). */
void sp_mpi_call_end(struct sp_mpi_call *call, const sp_capture_mpi *side);

/* Is any function recorded at all (for request tracking)?  */
int sp_mpi_tracking(void);

/* The next definition of `name` after the shim, looked up once into *slot. */
void *sp_mpi_real(void **slot, const char *name, const void *self, const void *caller);

#define SP_MPI_CALLER ((uintptr_t)__builtin_return_address(0))

#endif
