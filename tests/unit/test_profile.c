/* test_profile.c - the in-memory profile model: name interning. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/profile.h"

/* Interning was a linear search (a million regions never finished): it is
 * hashed.  Ids are dense, in first-seen order, stable on a second lookup. */
Test(profile, interning_a_million_names_gives_dense_stable_ids)
{
    sp_profile *p = sp_profile_new();
    char name[32];
    for (long i = 0; i < 1000000; i++) {
        snprintf(name, sizeof name, "region_%ld", i);
        cr_assert_eq(sp_profile_intern_name(p, name), i);
    }
    cr_assert_eq(p->num_names, 1000000);
    for (long i = 0; i < 1000000; i += 997) {
        snprintf(name, sizeof name, "region_%ld", i);
        cr_assert_eq(sp_profile_intern_name(p, name), i);
        cr_assert_str_eq(p->names[i], name);
    }
    cr_assert_eq(p->num_names, 1000000);
    sp_profile_free(p);
}

/* Loaders fill names[] themselves (an exact array): names not interned
 * through the index are found, and new ones are appended after them. */
Test(profile, names_filled_by_a_loader_are_found)
{
    sp_profile *p = sp_profile_new();
    cr_assert_eq(sp_profile_intern_name(p, "first"), 0);
    char **names = malloc(3 * sizeof *names);
    names[0] = strdup("a");
    names[1] = strdup("b");
    names[2] = strdup("c");
    free(p->names[0]);
    free(p->names);
    p->names = names;
    p->num_names = 3;
    cr_assert_eq(sp_profile_intern_name(p, "c"), 2);
    cr_assert_eq(sp_profile_intern_name(p, "a"), 0);
    cr_assert_eq(sp_profile_intern_name(p, "first"), 3);
    cr_assert_eq(sp_profile_intern_name(p, "d"), 4);
    cr_assert_str_eq(p->names[4], "d");
    sp_profile_free(p);
}
