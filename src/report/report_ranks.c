/* report_ranks.c - per-region statistics over ranks: min / mean / max of
 * calls, inclusive and exclusive time, imbalance and the slowest rank.
 * Fed one rank at a time so memory does not grow with the rank count. */
#include <stdlib.h>
#include <string.h>

#include "report/report_internal.h"

int sp_cross_acc_init(sp_cross_acc *acc, size_t num_names)
{
    memset(acc, 0, sizeof *acc);
    size_t n = num_names ? num_names : 1;
    acc->num_names = num_names;
    acc->row = calloc(n, sizeof *acc->row);
    acc->calls_sum = calloc(n, sizeof *acc->calls_sum);
    acc->inclusive_sum = calloc(n, sizeof *acc->inclusive_sum);
    acc->exclusive_sum = calloc(n, sizeof *acc->exclusive_sum);
    acc->exclusive_unknown = calloc(n, 1);
    if (!acc->row || !acc->calls_sum || !acc->inclusive_sum || !acc->exclusive_sum ||
        !acc->exclusive_unknown) {
        sp_cross_acc_free(acc);
        return -1;
    }
    return 0;
}

void sp_cross_acc_free(sp_cross_acc *acc)
{
    free(acc->row);
    free(acc->calls_sum);
    free(acc->inclusive_sum);
    free(acc->exclusive_sum);
    free(acc->exclusive_unknown);
    memset(acc, 0, sizeof *acc);
}

void sp_cross_acc_add_rank(sp_cross_acc *acc, uint32_t rank, const sp_rank_values *values)
{
    for (size_t k = 0; k < values->num_touched; k++) {
        uint32_t region = values->touched[k];
        const sp_report_flat_row *v = &values->row[region];
        sp_report_cross_row *row = &acc->row[region];
        if (row->ranks_with_calls++ == 0) {
            row->region = region;
            row->calls_min = row->calls_max = v->calls;
            row->inclusive_min = row->inclusive_max = v->inclusive;
            row->exclusive_min = row->exclusive_max = v->exclusive;
            row->slowest_rank = rank;
        } else {
            if (v->calls < row->calls_min)
                row->calls_min = v->calls;
            if (v->calls > row->calls_max)
                row->calls_max = v->calls;
            if (v->inclusive < row->inclusive_min)
                row->inclusive_min = v->inclusive;
            /* Strictly greater: ranks come in ascending order, so ties keep
             * the lowest rank. */
            if (v->inclusive > row->inclusive_max) {
                row->inclusive_max = v->inclusive;
                row->slowest_rank = rank;
            }
            if (v->exclusive < row->exclusive_min)
                row->exclusive_min = v->exclusive;
            if (v->exclusive > row->exclusive_max)
                row->exclusive_max = v->exclusive;
        }
        acc->calls_sum[region] += (double)v->calls;
        acc->inclusive_sum[region] += (double)v->inclusive;
        if (v->exclusive < 0)
            acc->exclusive_unknown[region] = 1;
        else
            acc->exclusive_sum[region] += (double)v->exclusive;
    }
}

static int by_mean_inclusive(const void *a, const void *b, void *ctx)
{
    const sp_report_cross_row *x = a, *y = b;
    if (x->inclusive_mean != y->inclusive_mean)
        return x->inclusive_mean > y->inclusive_mean ? -1 : 1;
    const sp_profile *profile = ctx;
    return strcmp(profile->names[x->region], profile->names[y->region]);
}

int sp_cross_acc_finish(sp_cross_acc *acc, const sp_profile *profile, size_t num_ranks,
                        sp_report_cross_row **rows, size_t *count)
{
    size_t n = 0;
    for (size_t r = 0; r < acc->num_names; r++)
        n += acc->row[r].ranks_with_calls > 0;
    *count = 0;
    *rows = malloc((n ? n : 1) * sizeof **rows);
    if (!*rows)
        return -1;
    for (size_t r = 0; r < acc->num_names; r++) {
        sp_report_cross_row row = acc->row[r];
        if (row.ranks_with_calls == 0)
            continue;
        /* A rank without calls of the region spent 0 ns in it. */
        if (row.ranks_with_calls < num_ranks) {
            row.calls_min = 0;
            row.inclusive_min = 0;
            if (row.exclusive_min > 0)
                row.exclusive_min = 0;
        }
        row.calls_mean = acc->calls_sum[r] / (double)num_ranks;
        row.inclusive_mean = acc->inclusive_sum[r] / (double)num_ranks;
        if (acc->exclusive_unknown[r]) {
            row.exclusive_min = row.exclusive_max = -1;
            row.exclusive_mean = -1;
        } else {
            row.exclusive_mean = acc->exclusive_sum[r] / (double)num_ranks;
        }
        row.imbalance = row.inclusive_mean > 0 ? (double)row.inclusive_max / row.inclusive_mean
                                               : 0;
        (*rows)[(*count)++] = row;
    }
    qsort_r(*rows, *count, sizeof **rows, by_mean_inclusive, (void *)profile);
    return 0;
}
