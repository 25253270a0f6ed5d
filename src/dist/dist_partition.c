/* dist_partition.c - the rank files of a run split over the processes:
 * contiguous blocks in the order given (rank order for a directory of
 * <prefix>_rank<NNNNN>.h5 files), so that putting the blocks' results
 * back together in process order gives the serial order. */
#include "dist/dist.h"

size_t sp_dist_block(size_t count, int rank, int size, size_t *first)
{
    size_t p = (size_t)(size > 0 ? size : 1), r = (size_t)(rank > 0 ? rank : 0);
    size_t base = count / p, extra = count % p;
    *first = r * base + (r < extra ? r : extra);
    return r < p ? base + (r < extra) : 0;
}
