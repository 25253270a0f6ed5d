/* process.c - the state of this process (pid, rank, MPI phase), read by
 * every layer, written by the life cycle and the MPI wrappers. */
#include "shim.h"

struct sp_process sp_proc = {.rank_guess = -1, .size = 1};
