/* report_internal.h - pieces of sp_report_build shared between report_*.c. */
#ifndef SCOPEPROF_REPORT_INTERNAL_H
#define SCOPEPROF_REPORT_INTERNAL_H

#include "scopeprof/report.h"

/* One rank's numbers per region (exclusive -1 = unknown); only the regions
 * the rank touched are listed, so resetting costs what the rank used. */
typedef struct sp_rank_values {
    sp_report_flat_row *row;  /* num_names, indexed by region */
    unsigned char *seen;      /* num_names */
    uint32_t *touched;        /* regions with a row, in first-touch order */
    size_t num_touched;
} sp_rank_values;

/* Cross-rank accumulation, ranks fed in ascending order. */
typedef struct sp_cross_acc {
    sp_report_cross_row *row; /* num_names, indexed by region */
    double *calls_sum, *inclusive_sum, *exclusive_sum;
    unsigned char *exclusive_unknown;
    size_t num_names;
} sp_cross_acc;

int sp_cross_acc_init(sp_cross_acc *acc, size_t num_names);
void sp_cross_acc_free(sp_cross_acc *acc);
void sp_cross_acc_add_rank(sp_cross_acc *acc, uint32_t rank, const sp_rank_values *values);
/* The rows of regions seen on some rank, statistics over num_ranks ranks
 * (absent = 0), sorted by mean inclusive time descending.  0 or -1. */
int sp_cross_acc_finish(sp_cross_acc *acc, const sp_profile *profile, size_t num_ranks,
                        sp_report_cross_row **rows, size_t *count);

/* Thread and task tables of the selected ranks.  0 or -1 (out of memory). */
int sp_report_lane_tables(sp_report *report, const sp_profile *profile,
                          const sp_selection *selection);

#endif
