/* h5_write.c - sp_h5_write: one profile as one schema-3 file, published
 * atomically (h5_publish.c) with the layout of h5_layout.c. */
#include "h5/h5_internal.h"

int sp_h5_write(const char *path, const sp_profile *profile, char *err, size_t errlen)
{
    sp_h5_publish pub;
    if (sp_h5_publish_begin(&pub, path, 1, err, errlen) < 0)
        return -1;
    sp_h5_layout layout = {0};
    sp_h5_layout_add(&layout, profile);

    char why[512];
    sp_h5_sink *sink = sp_h5_sink_create(pub.file, &layout, why, sizeof why);
    if (!sink || sp_h5_sink_put(sink, profile, NULL, why, sizeof why) < 0) {
        sp_h5_sink_abort(sink);
        goto fail;
    }
    if (sp_h5_sink_finish(sink, (const char *const *)profile->names, profile->num_names,
                          profile, NULL, why, sizeof why) < 0)
        goto fail;
    return sp_h5_publish_commit(&pub, err, errlen);
fail:
    sp_h5_errf(err, errlen, "%s: %s%s; a previous file at this path is left untouched", path,
               why, sp_h5_write_hint(why));
    sp_h5_publish_abort(&pub);
    return -1;
}
