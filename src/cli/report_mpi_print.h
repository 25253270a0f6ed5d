/* report_mpi_print.h - the MPI section of `scopeprof report`. */
#ifndef SCOPEPROF_REPORT_MPI_PRINT_H
#define SCOPEPROF_REPORT_MPI_PRINT_H

#include <stdio.h>

#include "scopeprof/report.h"

void cli_print_mpi(FILE *out, int color, const sp_report *report, const sp_report_mpi *mpi);
/* Appended to an MPI function's line of the cross-rank table: its
 * "slowest" rank is the one that waits most; for a collective, also who
 * arrived last most often. */
void cli_print_mpi_cross_note(FILE *out, const sp_report_mpi *mpi, uint32_t region);

#endif
