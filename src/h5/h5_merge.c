/* h5_merge.c - sp_h5_merge: many rank files into one multi-rank schema-3
 * file, streaming.  Pass 1 reads each input once to learn its shape and
 * ranks (and to refuse damaged inputs before anything is written); pass 2
 * creates every dataset at its final size and copies the inputs one at a
 * time, lowest rank first.  Memory holds one input plus a few numbers per
 * input, whatever the number of ranks. */
#include <stdlib.h>
#include <string.h>

#include "h5/h5_internal.h"

struct merge_plan {
    sp_input_info *info;
    size_t *order;
    sp_h5_layout layout;
    uint32_t num_ranks;   /* merged mpi_size */
};

static int plan_merge(const char *const *inputs, size_t count, struct merge_plan *plan,
                      char *err, size_t errlen)
{
    plan->info = calloc(count, sizeof *plan->info);
    plan->order = malloc(count * sizeof *plan->order);
    if (!plan->info || !plan->order) {
        sp_h5_errf(err, errlen, "%s: out of memory", inputs[0]);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        sp_profile *profile = sp_h5_read(inputs[i], err, errlen);
        if (!profile)
            return -1;
        int rc = sp_input_info_fill(&plan->info[i], inputs[i], profile);
        sp_h5_layout_add(&plan->layout, profile);
        if (profile->num_ranks > plan->num_ranks)
            plan->num_ranks = profile->num_ranks;
        sp_profile_free(profile);
        if (rc < 0) {
            sp_h5_errf(err, errlen, "%s: out of memory", inputs[i]);
            return -1;
        }
    }
    if (sp_inputs_check(plan->info, count, err, errlen) < 0)
        return -1;
    sp_inputs_order(plan->info, count, plan->order);
    return 0;
}

static void free_plan(struct merge_plan *plan, size_t count)
{
    for (size_t i = 0; plan->info && i < count; i++)
        sp_input_info_free(&plan->info[i]);
    free(plan->info);
    free(plan->order);
}

/* Keeps only the metadata of a profile (the lowest rank's, for the output). */
static sp_profile *keep_metadata(sp_profile *from)
{
    sp_profile *meta = sp_profile_new();
    if (!meta)
        return NULL;
    meta->meta = from->meta;
    meta->num_meta = from->num_meta;
    from->meta = NULL;
    from->num_meta = 0;
    return meta;
}

static int copy_inputs(const char *const *inputs, size_t count, const struct merge_plan *plan,
                       hid_t file, char *err, size_t errlen)
{
    char why[512];
    sp_name_index names = {0};
    sp_profile *meta = NULL;
    sp_h5_sink *sink = sp_h5_sink_create(file, &plan->layout, why, sizeof why);
    if (!sink) {
        sp_h5_errf(err, errlen, "%s%s", why, sp_h5_write_hint(why));
        return -1;
    }
    for (size_t k = 0; k < count; k++) {
        const char *path = inputs[plan->order[k]];
        sp_profile *profile = sp_h5_read(path, err, errlen);
        if (!profile)
            goto fail_quiet; /* changed since pass 1: its own message */
        uint32_t *map = sp_name_index_map(&names, profile);
        int rc = map ? sp_h5_sink_put(sink, profile, map, why, sizeof why) : -1;
        if (!map)
            snprintf(why, sizeof why, "out of memory");
        if (rc == 0 && k == 0 && !(meta = keep_metadata(profile))) {
            snprintf(why, sizeof why, "out of memory");
            rc = -1;
        }
        free(map);
        sp_profile_free(profile);
        if (rc < 0) {
            sp_h5_errf(err, errlen, "copying %s: %s%s", path, why, sp_h5_write_hint(why));
            goto fail_quiet;
        }
    }
    int64_t mpi_size = plan->num_ranks;
    int rc = sp_h5_sink_finish(sink, (const char *const *)names.names, names.count, meta,
                               plan->layout.num_rows ? &mpi_size : NULL, why, sizeof why);
    sink = NULL;
    if (rc < 0)
        sp_h5_errf(err, errlen, "%s%s", why, sp_h5_write_hint(why));
    sp_name_index_free(&names);
    sp_profile_free(meta);
    return rc;
fail_quiet:
    sp_h5_sink_abort(sink);
    sp_name_index_free(&names);
    sp_profile_free(meta);
    return -1;
}

static int merge_files(const char *const *inputs, size_t count, const char *output,
                       char *err, size_t errlen);

int sp_h5_merge(const char *const *args, size_t count, const char *output,
                char *err, size_t errlen)
{
    char **inputs = NULL;
    long n = sp_run_inputs_expand(args, count, &inputs, err, errlen);
    if (n < 0)
        return -1;
    int rc = merge_files((const char *const *)inputs, (size_t)n, output, err, errlen);
    sp_run_inputs_free(inputs, n);
    return rc;
}

static int merge_files(const char *const *inputs, size_t count, const char *output,
                       char *err, size_t errlen)
{
    if (count == 0) {
        sp_h5_errf(err, errlen, "%s: no input files to merge", output);
        return -1;
    }
    struct merge_plan plan = {0};
    if (plan_merge(inputs, count, &plan, err, errlen) < 0) {
        free_plan(&plan, count);
        return -1;
    }
    sp_h5_publish pub;
    int rc = sp_h5_publish_begin(&pub, output, 0, err, errlen);
    if (rc == 0) {
        char why[768];
        rc = copy_inputs(inputs, count, &plan, pub.file, why, sizeof why);
        if (rc == 0) {
            rc = sp_h5_publish_commit(&pub, err, errlen);
        } else {
            sp_h5_errf(err, errlen, "%s: %s", output, why);
            sp_h5_publish_abort(&pub);
        }
    }
    free_plan(&plan, count);
    return rc;
}
