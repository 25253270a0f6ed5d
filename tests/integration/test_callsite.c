/* test_callsite.c - call sites of regions registered without a location
 * (issue 8): programs built with and without debug information, non-PIE,
 * deleted while running, a dlopen'ed library, Fortran through the module,
 * SCOPE_PROFILER_CALLSITES=0, and misuse messages naming the call sites.
 * Expected lines are read from the "@name" markers in the program sources. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Absolute path of a program source (tests/programs/<name>). */
static const char *source_path(const char *name)
{
    static char buf[4][PATH_MAX];
    static int turn;
    char *out = buf[turn++ & 3];
    char joined[PATH_MAX];
    snprintf(joined, sizeof joined, "%s/programs/%s", TEST_SOURCE_DIR, name);
    cr_assert_not_null(realpath(joined, out), "no source %s", joined);
    return out;
}

/* Line of the "@marker" comment in a program source. */
static int marker_line(const char *name, const char *marker)
{
    FILE *f = fopen(source_path(name), "r");
    cr_assert_not_null(f);
    char text[1024], tag[128];
    snprintf(tag, sizeof tag, "@%s", marker);
    int line = 0, found = -1;
    while (fgets(text, sizeof text, f)) {
        line++;
        const char *at = strstr(text, tag);
        if (at && !(at[strlen(tag)] == '_' || (at[strlen(tag)] >= 'a' && at[strlen(tag)] <= 'z'))) {
            found = line;
            break;
        }
    }
    fclose(f);
    cr_assert_gt(found, 0, "marker @%s not in %s", marker, name);
    return found;
}

/* region_functions entry of a region ("" when unknown). */
static const char *region_function(const sp_profile *p, const char *region)
{
    const sp_meta *m = sp_profile_meta(p, "region_functions");
    cr_assert_not_null(m, "no region_functions metadata");
    cr_assert_eq(m->list_len, p->num_names, "region_functions not aligned with the names");
    long id = harness_region(p, region);
    cr_assert_geq(id, 0, "no region %s", region);
    return m->list[id];
}

static void expect_site(const sp_profile *p, const char *region, const char *file, int line,
                        const char *function)
{
    const sp_row *row = harness_row(p, 0, region);
    cr_assert_not_null(row, "no row %s", region);
    cr_assert_str_eq(row->source_file, file, "region %s", region);
    cr_assert_eq(row->source_line, line, "region %s: line %lld, expected %d", region,
                 (long long)row->source_line, line);
    if (function)
        cr_assert_str_eq(region_function(p, region), function, "region %s", region);
}

static sp_profile *run_program(struct harness_run *run, const char *const *argv,
                               const char *const *env, const char *output)
{
    cr_assert_eq(harness_run(run, argv, env, 1), 0);
    cr_assert_eq(run->exit_code, 0, "stderr: %s", run->err);
    cr_assert_str_eq(run->err, "", "the shim printed: %s", run->err);
    return harness_load(run, output);
}

static void expect_c_sites(const sp_profile *p)
{
    const char *src = source_path("callsite_c.c");
    expect_site(p, "solve", src, marker_line("callsite_c.c", "solve"), "main");
    expect_site(p, "helper", src, marker_line("callsite_c.c", "helper"), "register_helper");
    /* explicit locations win, also over an earlier call site (backfill) */
    expect_site(p, "given", "given.c", 7, "main");
    expect_site(p, "backfilled", "explicit.c", 99, "main");
}

Test(callsite, c_program_with_debug_info)
{
    struct harness_run run;
    const char *argv[] = {harness_program("callsite_c"), NULL};
    sp_profile *p = run_program(&run, argv, NULL, "callsite_rank00000.h5");
    expect_c_sites(p);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(callsite, non_pie_executable)
{
    struct harness_run run;
    const char *argv[] = {harness_program("callsite_c_nopie"), NULL};
    sp_profile *p = run_program(&run, argv, NULL, "callsite_rank00000.h5");
    expect_c_sites(p);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(callsite, executable_deleted_while_running)
{
    struct harness_run run;
    /* a private copy, which the program deletes before registering */
    const char *argv[] = {"/bin/sh", "-c", "cp \"$0\" ./doomed && exec ./doomed --unlink-self",
                          harness_program("callsite_c"), NULL};
    /* the copy's relative rpath no longer finds the marker library */
    const char *env[] = {"LD_LIBRARY_PATH=" TEST_BUILD_DIR "/../preload", NULL};
    sp_profile *p = run_program(&run, argv, env, "callsite_rank00000.h5");
    cr_assert_eq(harness_exists(&run, "doomed"), 0);
    expect_c_sites(p);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(callsite, without_debug_info_module_offset_and_function)
{
    struct harness_run run;
    const char *argv[] = {harness_program("callsite_c_nodebug"), NULL};
    sp_profile *p = run_program(&run, argv, NULL, "callsite_rank00000.h5");
    const char *prefix = "callsite_c_nodebug+0x";
    const char *regions[] = {"solve", "helper"};
    const char *functions[] = {"main", "register_helper"};
    for (int i = 0; i < 2; i++) {
        const sp_row *row = harness_row(p, 0, regions[i]);
        cr_assert_not_null(row);
        cr_assert_eq(strncmp(row->source_file, prefix, strlen(prefix)), 0, "%s: %s",
                     regions[i], row->source_file);
        char *end = NULL;
        unsigned long off = strtoul(row->source_file + strlen(prefix), &end, 16);
        cr_assert(off > 0 && end && *end == '\0', "%s", row->source_file);
        cr_assert_eq(row->source_line, -1);
        cr_assert_str_eq(region_function(p, regions[i]), functions[i]);
    }
    cr_assert_str_neq(harness_row(p, 0, "solve")->source_file,
                      harness_row(p, 0, "helper")->source_file);
    expect_site(p, "given", "given.c", 7, "main");
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(callsite, region_registered_in_dlopened_library)
{
    struct harness_run run;
    char lib[PATH_MAX];
    snprintf(lib, sizeof lib, "%s", harness_program("libcallsite_lib.so"));
    const char *argv[] = {harness_program("callsite_dlopen"), lib, NULL};
    sp_profile *p = run_program(&run, argv, NULL, "dlopen_rank00000.h5");
    expect_site(p, "in_library", source_path("callsite_lib.c"),
                marker_line("callsite_lib.c", "in_library"), "callsite_lib_work");
    expect_site(p, "in_main", source_path("callsite_dlopen.c"),
                marker_line("callsite_dlopen.c", "in_main"), "main");
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(callsite, fortran_through_the_module_names_the_user_line)
{
    struct harness_run run;
    const char *argv[] = {harness_program("fortran/callsite_fortran"), NULL};
    if (access(argv[0], X_OK) != 0)
        cr_skip_test("%s not built: no gfortran at build time (or with_fortran=disabled)",
                     argv[0]);
    sp_profile *p = run_program(&run, argv, NULL, "scope_profile_rank00000.h5");
    const char *src = source_path("callsite_fortran.f90");
    expect_site(p, "f_solve", src, marker_line("callsite_fortran.f90", "f_solve"),
                "callsite_fortran");
    expect_site(p, "f_work", src, marker_line("callsite_fortran.f90", "f_work"), "work");
    expect_site(p, "f_given", "given.f90", 3, NULL);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(callsite, switched_off)
{
    struct harness_run run;
    const char *argv[] = {harness_program("callsite_c"), NULL};
    const char *env[] = {"SCOPE_PROFILER_CALLSITES=0", NULL};
    sp_profile *p = run_program(&run, argv, env, "callsite_rank00000.h5");
    const sp_row *solve = harness_row(p, 0, "solve");
    cr_assert_str_eq(solve->source_file, "");
    cr_assert_eq(solve->source_line, -1);
    cr_assert_null(sp_profile_meta(p, "region_functions"));
    const sp_row *given = harness_row(p, 0, "given");
    cr_assert_str_eq(given->source_file, "given.c");
    cr_assert_eq(given->source_line, 7);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(callsite, misuse_messages_name_the_call_sites)
{
    struct harness_run run;
    const char *argv[] = {harness_program("callsite_misuse"), NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    char want[1024];
    snprintf(want, sizeof want,
             "sp_end('lonely') without a matching sp_begin (sp_end at callsite_misuse.c:%d "
             "in main; region registered at callsite_misuse.c:%d in main)",
             marker_line("callsite_misuse.c", "unmatched_end"),
             marker_line("callsite_misuse.c", "lonely"));
    cr_assert(strstr(run.err, want), "want: %s\nstderr: %s", want, run.err);

    snprintf(want, sizeof want,
             "region 'left_open' still open at exit (depth 1); its last call(s) are dropped "
             "(registered at callsite_misuse.c:%d in main)",
             marker_line("callsite_misuse.c", "left_open"));
    cr_assert(strstr(run.err, want), "want: %s\nstderr: %s", want, run.err);

    const char *src = source_path("callsite_misuse.c");
    snprintf(want, sizeof want, "'crossing' is registered at %s:%d in main. "
             "'outer' is registered at %s:%d in main.",
             src, marker_line("callsite_misuse.c", "crossing"),
             src, marker_line("callsite_misuse.c", "outer"));
    cr_assert(strstr(run.err, "not properly nested"), "stderr: %s", run.err);
    cr_assert(strstr(run.err, want), "want: %s\nstderr: %s", want, run.err);
    harness_run_free(&run);
}
