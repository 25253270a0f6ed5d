/* test_scale.c - programs with very many distinct regions (issue 13, items
 * 4 and 5): 5,000 regions once lost the run (a region_functions attribute
 * past HDF5's 64 KiB object-header limit), and interning names was
 * quadratic (a million regions never finished).  Exact names, counts,
 * parents and region_functions are checked, not times. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Run many_regions with n cells and check everything it wrote. */
static void check_many_regions(long n)
{
    struct harness_run run;
    char arg[32];
    snprintf(arg, sizeof arg, "%ld", n);
    const char *argv[] = {harness_program("many_regions"), arg, NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);

    sp_profile *p = harness_load(&run, "scope_profile_rank00000.h5");
    cr_assert_eq(p->num_names, (size_t)n + 1);
    cr_assert_eq(p->num_rows, (size_t)n + 1);
    cr_assert_eq(p->num_events, (size_t)n + 1);
    cr_assert_str_eq(p->names[0], "all");
    /* Region ids follow registration order: cell_i is name i + 1, called
     * once, a child of the single "all" call. */
    const sp_row *all = &p->rows[0];
    cr_assert_eq(p->names[all->region][0], 'a');
    int64_t all_call = p->call_ids[all->offset];
    cr_assert_eq(p->parent_ids[all->offset], -1);
    char want[32];
    for (size_t r = 1; r < p->num_rows; r++) {
        const sp_row *row = &p->rows[r];
        snprintf(want, sizeof want, "cell_%zu", (size_t)row->region - 1);
        cr_assert_str_eq(p->names[row->region], want);
        cr_assert_eq(row->count, 1, "%s", want);
        cr_assert_eq(p->parent_ids[row->offset], all_call, "%s", want);
    }
    /* Call sites on (the default): one function per region, aligned with
     * the names, now a dataset /metadata/region_functions. */
    const sp_meta *functions = sp_profile_meta(p, "region_functions");
    cr_assert_not_null(functions, "no region_functions");
    cr_assert_eq(functions->type, SP_META_STRINGS);
    cr_assert_eq(functions->list_len, p->num_names);
    cr_assert_str_eq(functions->list[0], "main");
    cr_assert_str_eq(functions->list[n], "main");
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(scale, five_thousand_regions_are_written)
{
    check_many_regions(5000);
}

Test(scale, a_million_regions_are_written)
{
    check_many_regions(1000000);
}
