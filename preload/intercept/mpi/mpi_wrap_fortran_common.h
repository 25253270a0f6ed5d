/* mpi_wrap_fortran_common.h - shared by the Fortran wrappers
 * (mpi_wrap_fortran_{calls,coll}.c): finding the real symbol of a
 * spelling, recording only where the Fortran library bypasses the C
 * bindings, and the five spellings each wrapper is generated in. */
#ifndef SCOPEPROF_MPI_WRAP_FORTRAN_COMMON_H
#define SCOPEPROF_MPI_WRAP_FORTRAN_COMMON_H

#include "mpi_wrap_common.h"

typedef int F; /* MPI_Fint: a default INTEGER */

/* Fortran requests are tracked apart from C ones (they are small ints). */
#define FREQ(r) ((sp_mpi_handle)1 << 62 | (uint32_t)(r))

/* MPICH's Fortran library calls the C bindings, whose wrappers record. */
static inline int record_fortran(void)
{
    return !sp_mpi_fortran_calls_c();
}

static inline int64_t f_bytes(const F *type, const F *count)
{
    return type && count ? sp_mpi_bytes(sp_mpi_type_f2c(*type), *count) : -1;
}

/* `real`: the next definition of the wrapper `sym`, or *ierr set. */
#define SP_F_REAL(sym, type)                                                       \
    static void *real_slot_##sym;                                                  \
    type real = (type)sp_mpi_real(&real_slot_##sym, #sym, (const void *)sym,       \
                                  __builtin_return_address(0));                    \
    if (!real) {                                                                   \
        if (ierr)                                                                  \
            *ierr = SP_MPI_ERR_NO_LIBRARY;                                         \
        return;                                                                    \
    }

#define SP_F_BEGIN(fn)                                                             \
    struct sp_mpi_call call;                                                       \
    sp_capture_mpi side = sp_mpi_side_none();                                      \
    call.mode = SP_MPI_MODE_OFF;                                                   \
    if (record_fortran() && sp_mpi_call_begin(fn, &call, SP_MPI_CALLER))

#define SP_F_CALL(args)                                                            \
    sp_mpi_call_start(&call);                                                      \
    real args;                                                                     \
    sp_mpi_call_end(&call, &side)

/* Four spellings of each, and Open MPI's ompi_<name>_f, which its mpi_f08
 * module calls (same arguments: the handles' MPI_VAL integers). */
#define SP_F_ALL(MACRO, base, upper, ...)                                           \
    MACRO(mpi_##base##_, ##__VA_ARGS__)                                             \
    MACRO(mpi_##base##__, ##__VA_ARGS__)                                            \
    MACRO(mpi_##base, ##__VA_ARGS__)                                                \
    MACRO(MPI_##upper, ##__VA_ARGS__)                                               \
    MACRO(ompi_##base##_f, ##__VA_ARGS__)

/* A blocking (B) or non-blocking (I) form: the request argument. */
#define F_REQ_B
#define F_REQ_I , F *req
#define F_REQ_ARG_B
#define F_REQ_ARG_I , req

#endif
