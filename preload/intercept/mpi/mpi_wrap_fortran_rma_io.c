/* mpi_wrap_fortran_rma_io.c - the Fortran bindings of the one-sided and
 * MPI-IO calls wrapped in C (mpi_wrap_rma_io.c, whose byte and peer rules
 * they follow).  Recorded only where the Fortran library bypasses the C
 * bindings (Open MPI); elsewhere they only chain.  Displacements and
 * offsets are INTEGER(KIND=MPI_ADDRESS_KIND/MPI_OFFSET_KIND), 64-bit. */
#include <stddef.h>

#include "mpi_wrap_fortran_common.h"

typedef long long F8;

#define F_SIMPLE(sym, fn, params, call_args, SIDE)                                  \
    SP_EXPORT void sym params;                                                      \
    SP_EXPORT void sym params                                                       \
    {                                                                               \
        typedef void (*fn_t) params;                                                \
        SP_F_REAL(sym, fn_t)                                                        \
        SP_F_BEGIN(fn) { SIDE; }                                                    \
        SP_F_CALL(call_args);                                                       \
    }

#define NOTHING ((void)0)
#define F_WIN_PEER(rank) side.peer = sp_mpi_win_world_peer(sp_mpi_win_f2c(*win), *(rank))

/* ---- one-sided ------------------------------------------------------------ */

#define F_WIN_FENCE(sym, fn)                                                        \
    F_SIMPLE(sym, fn, (const F *assert_, const F *win, F *ierr), (assert_, win, ierr), NOTHING)
#define F_WIN_LOCK(sym, fn)                                                         \
    F_SIMPLE(sym, fn, (const F *type, const F *rank, const F *assert_, const F *win, F *ierr), \
             (type, rank, assert_, win, ierr), F_WIN_PEER(rank))
#define F_WIN_RANK(sym, fn)                                                         \
    F_SIMPLE(sym, fn, (const F *rank, const F *win, F *ierr), (rank, win, ierr), F_WIN_PEER(rank))

#define F_PUT_GET(sym, fn, dir)                                                     \
    F_SIMPLE(sym, fn, (void *obuf, const F *ocount, const F *otype, const F *target, \
                       const F8 *disp, const F *tcount, const F *ttype, const F *win, F *ierr), \
             (obuf, ocount, otype, target, disp, tcount, ttype, win, ierr),         \
             { side.dir = f_bytes(otype, ocount); F_WIN_PEER(target); })
#define F_ACCUMULATE(sym, fn)                                                       \
    F_SIMPLE(sym, fn, (const void *obuf, const F *ocount, const F *otype, const F *target, \
                       const F8 *disp, const F *tcount, const F *ttype, const F *op,  \
                       const F *win, F *ierr),                                      \
             (obuf, ocount, otype, target, disp, tcount, ttype, op, win, ierr),     \
             { side.sent_bytes = f_bytes(otype, ocount); F_WIN_PEER(target); })

SP_F_ALL(F_WIN_FENCE, win_fence, WIN_FENCE, SP_MPI_Win_fence)
SP_F_ALL(F_WIN_LOCK, win_lock, WIN_LOCK, SP_MPI_Win_lock)
SP_F_ALL(F_WIN_RANK, win_unlock, WIN_UNLOCK, SP_MPI_Win_unlock)
SP_F_ALL(F_WIN_RANK, win_flush, WIN_FLUSH, SP_MPI_Win_flush)
SP_F_ALL(F_PUT_GET, put, PUT, SP_MPI_Put, sent_bytes)
SP_F_ALL(F_PUT_GET, get, GET, SP_MPI_Get, recv_bytes)
SP_F_ALL(F_ACCUMULATE, accumulate, ACCUMULATE, SP_MPI_Accumulate)

/* ---- MPI-IO ----------------------------------------------------------------- */

/* The file name is a CHARACTER: its length comes as a hidden last
 * argument (size_t since gfortran 8), passed on unchanged. */
#define F_FILE_OPEN(sym, fn)                                                        \
    F_SIMPLE(sym, fn, (const F *comm, const char *name, const F *amode, const F *info, F *fh, \
                       F *ierr, size_t name_len),                                   \
             (comm, name, amode, info, fh, ierr, name_len),                         \
             side.comm = sp_mpi_comm_id(sp_mpi_comm_f2c(*comm)))
#define F_FILE_CLOSE(sym, fn)                                                       \
    F_SIMPLE(sym, fn, (F *fh, F *ierr), (fh, ierr), NOTHING)
#define F_FILE_RW(sym, fn, dir)                                                     \
    F_SIMPLE(sym, fn, (const F *fh, void *buf, const F *count, const F *type, F *status, \
                       F *ierr),                                                    \
             (fh, buf, count, type, status, ierr), side.dir = f_bytes(type, count))
#define F_FILE_RW_AT(sym, fn, dir)                                                  \
    F_SIMPLE(sym, fn, (const F *fh, const F8 *offset, void *buf, const F *count,    \
                       const F *type, F *status, F *ierr),                          \
             (fh, offset, buf, count, type, status, ierr), side.dir = f_bytes(type, count))

SP_F_ALL(F_FILE_OPEN, file_open, FILE_OPEN, SP_MPI_File_open)
SP_F_ALL(F_FILE_CLOSE, file_close, FILE_CLOSE, SP_MPI_File_close)
SP_F_ALL(F_FILE_RW, file_read, FILE_READ, SP_MPI_File_read, recv_bytes)
SP_F_ALL(F_FILE_RW, file_read_all, FILE_READ_ALL, SP_MPI_File_read_all, recv_bytes)
SP_F_ALL(F_FILE_RW_AT, file_read_at, FILE_READ_AT, SP_MPI_File_read_at, recv_bytes)
SP_F_ALL(F_FILE_RW_AT, file_read_at_all, FILE_READ_AT_ALL, SP_MPI_File_read_at_all, recv_bytes)
SP_F_ALL(F_FILE_RW, file_write, FILE_WRITE, SP_MPI_File_write, sent_bytes)
SP_F_ALL(F_FILE_RW, file_write_all, FILE_WRITE_ALL, SP_MPI_File_write_all, sent_bytes)
SP_F_ALL(F_FILE_RW_AT, file_write_at, FILE_WRITE_AT, SP_MPI_File_write_at, sent_bytes)
SP_F_ALL(F_FILE_RW_AT, file_write_at_all, FILE_WRITE_AT_ALL, SP_MPI_File_write_at_all,
         sent_bytes)
