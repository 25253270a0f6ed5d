/* test_dist.c - the pieces of the distributed commands that need no MPI:
 * the split into blocks, the launcher's variables, the wire format. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "dist/dist_wire.h"

Test(dist_block, contiguous_blocks_cover_every_file_once_in_order)
{
    for (size_t count = 0; count < 40; count++)
        for (int size = 1; size <= 9; size++) {
            size_t next = 0, largest = 0, smallest = SIZE_MAX;
            for (int rank = 0; rank < size; rank++) {
                size_t first;
                size_t n = sp_dist_block(count, rank, size, &first);
                if (n)
                    cr_assert_eq(first, next, "count %zu size %d rank %d", count, size, rank);
                next += n;
                largest = n > largest ? n : largest;
                smallest = n < smallest ? n : smallest;
            }
            cr_assert_eq(next, count, "count %zu size %d: %zu files covered", count, size, next);
            cr_assert_leq(largest - smallest, 1, "count %zu size %d: uneven", count, size);
        }
}

Test(dist_block, the_first_processes_take_the_remainder)
{
    size_t first;
    cr_assert_eq(sp_dist_block(5, 0, 4, &first), 2);
    cr_assert_eq(first, 0);
    cr_assert_eq(sp_dist_block(5, 1, 4, &first), 1);
    cr_assert_eq(first, 2);
    cr_assert_eq(sp_dist_block(5, 3, 4, &first), 1);
    cr_assert_eq(first, 4);
    cr_assert_eq(sp_dist_block(2, 3, 4, &first), 0, "more processes than files");
}

static void clear_launcher(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
                                       "PMI_SIZE", "PMI_RANK", "PMIX_SIZE", "PMIX_RANK",
                                       "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK",
                                       "SCOPEPROF_DIST"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
}

Test(dist_launch, only_the_launchers_variables_count)
{
    clear_launcher();
    cr_assert_eq(sp_dist_launcher_size(), 0, "no launcher");
    cr_assert_eq(sp_dist_launcher_rank(), -1);
    setenv("PMI_SIZE", "4", 1);
    setenv("PMI_RANK", "2", 1);
    cr_assert_eq(sp_dist_launcher_size(), 4);
    cr_assert_eq(sp_dist_launcher_rank(), 2);
    cr_assert_eq(sp_dist_launcher_is_openmpi(), 0);
    setenv("SCOPEPROF_DIST", "0", 1);
    cr_assert_eq(sp_dist_launcher_size(), 0, "SCOPEPROF_DIST=0 turns it off");
    clear_launcher();
    setenv("PMIX_RANK", "0", 1);
    cr_assert_eq(sp_dist_launcher_size(), -1, "a rank without a size: ask MPI");
    clear_launcher();
    setenv("OMPI_COMM_WORLD_SIZE", "banana", 1);
    cr_assert_eq(sp_dist_launcher_size(), 0, "not a number: not a launch");
    setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
    cr_assert_eq(sp_dist_launcher_size(), 1);
    cr_assert_eq(sp_dist_launcher_is_openmpi(), 1);
    clear_launcher();
}

Test(dist_wire, fields_and_metadata_round_trip)
{
    sp_meta meta[3] = {{.key = "mpi_size", .type = SP_META_INT, .i = 16384},
                       {.key = "label", .type = SP_META_STRING, .s = "run"},
                       {.key = "hosts", .type = SP_META_STRINGS, .list = (char *[]){"a", "b"},
                        .list_len = 2}};
    sp_wire w = {0};
    sp_wire_u64(&w, 42);
    sp_wire_i64(&w, -7);
    sp_wire_f64(&w, 0.25);
    sp_wire_str(&w, "solve");
    sp_wire_str(&w, NULL);
    sp_wire_meta(&w, meta, 3);
    cr_assert_eq(w.failed, 0);

    sp_wire r;
    sp_wire_reader(&r, w.data, w.len);
    cr_assert_eq(sp_wire_get_u64(&r), 42);
    cr_assert_eq(sp_wire_get_i64(&r), -7);
    cr_assert_eq(sp_wire_get_f64(&r), 0.25);
    char *s = sp_wire_get_str(&r), *empty = sp_wire_get_str(&r);
    cr_assert_str_eq(s, "solve");
    cr_assert_str_eq(empty, "");
    size_t n;
    sp_meta *got = sp_wire_get_meta(&r, &n);
    cr_assert_not_null(got);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(got[0].key, "mpi_size");
    cr_assert_eq(got[0].i, 16384);
    cr_assert_null(got[0].s);
    cr_assert_str_eq(got[1].s, "run");
    cr_assert_eq(got[2].type, SP_META_STRINGS);
    cr_assert_eq(got[2].list_len, 2);
    cr_assert_str_eq(got[2].list[1], "b");
    cr_assert_eq(r.failed, 0);
    cr_assert_eq(r.pos, r.len, "everything read");
    sp_wire_meta_free(got, n);
    free(s);
    free(empty);

    /* Cut short anywhere: a failure, never a read past the end. */
    for (size_t cut = 0; cut < w.len; cut++) {
        sp_wire t;
        sp_wire_reader(&t, w.data, cut);
        sp_wire_get_u64(&t);
        sp_wire_get_i64(&t);
        sp_wire_get_f64(&t);
        free(sp_wire_get_str(&t));
        free(sp_wire_get_str(&t));
        size_t m;
        sp_meta *part = sp_wire_get_meta(&t, &m);
        cr_assert(t.failed, "cut at %zu not noticed", cut);
        cr_assert_null(part);
    }
    sp_wire_free(&w);
}
