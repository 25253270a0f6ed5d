/* report_mpi_print.h - the MPI section of `scopeprof report`. */
#ifndef SCOPEPROF_REPORT_MPI_PRINT_H
#define SCOPEPROF_REPORT_MPI_PRINT_H

#include <stdio.h>

#include "scopeprof/report.h"

void cli_print_mpi(FILE *out, int color, const sp_report *report, const sp_report_mpi *mpi);
/* Appended to an MPI collective's line of the cross-rank table: the rank
 * with the largest time waits most, and who arrived last. */
void cli_print_mpi_cross_note(FILE *out, const sp_report_mpi *mpi, uint32_t region);

#endif
