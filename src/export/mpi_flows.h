/* mpi_flows.h - point-to-point messages as pairs of events (send end,
 * receive end), for the message lines of the Chrome/Perfetto export.
 *
 * A send end is an event with events/mpi_peer, mpi_tag and mpi_comm set; a
 * receive end one with mpi_source, mpi_recv_tag and mpi_comm (wildcards
 * were resolved by the shim).  MPI does not let messages between two ranks
 * with one tag on one communicator overtake each other, so the k-th send
 * from a to b with tag t on communicator c is received by the k-th such
 * receive of b (in start order).  When the two counts of a key differ
 * (a receive whose end was not recorded: several wildcard receives
 * completed by one MPI_Waitall) no message of that key is paired, so a
 * drawn line is never a wrong one. */
#ifndef SCOPEPROF_MPI_FLOWS_H
#define SCOPEPROF_MPI_FLOWS_H

#include <stddef.h>
#include <stdint.h>

#include "scopeprof/export.h"
#include "scopeprof/profile.h"

typedef struct sp_mpi_flow_end {
    uint64_t event;           /* index into the profile's event columns */
    uint64_t id;              /* message number, from 1 */
    int send;                 /* 1: the send end, 0: the receive end */
} sp_mpi_flow_end;

typedef struct sp_mpi_flows {
    size_t num_ends;
    sp_mpi_flow_end *ends;    /* by event, then send before receive */
    uint64_t messages;        /* pairs */
    uint64_t unpaired;        /* ends left out */
} sp_mpi_flows;

/* Pair the ends among events with kept[e] != 0 (kept may be NULL: all).
 * 0, or -1 when out of memory.  A profile without the MPI columns gives
 * no ends. */
int sp_mpi_flows_build(const sp_profile *p, const unsigned char *kept, sp_mpi_flows *out);
/* The same among the calls an export keeps: the selected ranks (ranks[],
 * num_ranks of them) after the selection's filters.  0, or -1 with err. */
int sp_mpi_flows_build_selected(const sp_profile *p, const sp_selection *sel,
                                const uint32_t *ranks, long num_ranks, sp_mpi_flows *out,
                                char *err, size_t errlen);
void sp_mpi_flows_free(sp_mpi_flows *flows);
/* The ends at event e: *count of them (0, 1 or 2) starting at the result. */
const sp_mpi_flow_end *sp_mpi_flows_at(const sp_mpi_flows *flows, uint64_t e, size_t *count);

#endif
