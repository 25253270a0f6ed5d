/* mpi_wrap_rma_io.c - one-sided synchronisation and transfers (the window
 * calls that wait, MPI_Put/Get/Accumulate) and MPI-IO reads and writes.
 * Bytes: a put or an accumulate sends its origin buffer, a get receives
 * into it; a file write counts as sent, a read as received.  The peer of a
 * transfer or of a lock is the target as a world rank. */
#include "mpi_wrap_common.h"

typedef long long Offset;   /* MPI_Offset: 64-bit in both families */
typedef intptr_t Aint;      /* MPI_Aint */

#define SP_SIMPLE(name, params, call_args, SIDE)                                   \
    SP_EXPORT int name params;                                                     \
    SP_EXPORT int name params                                                      \
    {                                                                              \
        typedef int (*fn_t) params;                                                \
        SP_MPI_REAL(name, fn_t);                                                   \
        struct sp_mpi_call call;                                                   \
        sp_capture_mpi side = sp_mpi_side_none();                                  \
        if (sp_mpi_call_begin(SP_##name, &call, SP_MPI_CALLER)) {                  \
            SIDE;                                                                  \
        }                                                                          \
        sp_mpi_call_start(&call);                                                  \
        int rc = real call_args;                                                   \
        sp_mpi_call_end(&call, &side);                                             \
        return rc;                                                                 \
    }

#define NOTHING ((void)0)

/* ---- one-sided ------------------------------------------------------------ */

SP_SIMPLE(MPI_Win_fence, (int assert_, H win), (assert_, win), NOTHING)
SP_SIMPLE(MPI_Win_lock, (int type, int rank, int assert_, H win), (type, rank, assert_, win),
          side.peer = sp_mpi_win_world_peer(win, rank))
SP_SIMPLE(MPI_Win_unlock, (int rank, H win), (rank, win),
          side.peer = sp_mpi_win_world_peer(win, rank))
SP_SIMPLE(MPI_Win_flush, (int rank, H win), (rank, win),
          side.peer = sp_mpi_win_world_peer(win, rank))
SP_SIMPLE(MPI_Put,
          (const void *obuf, int ocount, H otype, int target, Aint disp, int tcount, H ttype,
           H win),
          (obuf, ocount, otype, target, disp, tcount, ttype, win),
          { side.sent_bytes = sp_mpi_bytes(otype, ocount);
            side.peer = sp_mpi_win_world_peer(win, target); })
SP_SIMPLE(MPI_Get,
          (void *obuf, int ocount, H otype, int target, Aint disp, int tcount, H ttype, H win),
          (obuf, ocount, otype, target, disp, tcount, ttype, win),
          { side.recv_bytes = sp_mpi_bytes(otype, ocount);
            side.peer = sp_mpi_win_world_peer(win, target); })
SP_SIMPLE(MPI_Accumulate,
          (const void *obuf, int ocount, H otype, int target, Aint disp, int tcount, H ttype,
           H op, H win),
          (obuf, ocount, otype, target, disp, tcount, ttype, op, win),
          { side.sent_bytes = sp_mpi_bytes(otype, ocount);
            side.peer = sp_mpi_win_world_peer(win, target); })

/* ---- MPI-IO ----------------------------------------------------------------- */

SP_SIMPLE(MPI_File_open, (H comm, const char *name, int amode, H info, H *fh),
          (comm, name, amode, info, fh), side.comm = sp_mpi_comm_id(comm))
SP_SIMPLE(MPI_File_close, (H *fh), (fh), NOTHING)

#define FILE_RW(name, dir)                                                          \
    SP_SIMPLE(name, (H fh, void *buf, int count, H type, void *status),            \
              (fh, buf, count, type, status), side.dir = sp_mpi_bytes(type, count))
#define FILE_RW_AT(name, dir)                                                       \
    SP_SIMPLE(name, (H fh, Offset offset, void *buf, int count, H type, void *status), \
              (fh, offset, buf, count, type, status), side.dir = sp_mpi_bytes(type, count))

FILE_RW(MPI_File_read, recv_bytes)
FILE_RW(MPI_File_read_all, recv_bytes)
FILE_RW_AT(MPI_File_read_at, recv_bytes)
FILE_RW_AT(MPI_File_read_at_all, recv_bytes)
FILE_RW(MPI_File_write, sent_bytes)
FILE_RW(MPI_File_write_all, sent_bytes)
FILE_RW_AT(MPI_File_write_at, sent_bytes)
FILE_RW_AT(MPI_File_write_at_all, sent_bytes)
