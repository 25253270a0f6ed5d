/* export_common.c - small things every exporter needs: the run label and
 * the "this export is huge" warning. */
#include <stdio.h>

#include "scopeprof/export.h"

const char *sp_export_label(const sp_profile *profile, const sp_export_options *options)
{
    if (options && options->label && options->label[0])
        return options->label;
    const char *label = sp_profile_meta_string(profile, "label");
    return label && label[0] ? label : "profile";
}

void sp_export_warn_events(const sp_export_options *options, uint64_t events,
                           const char *format)
{
    if (!options || !options->warnings || events <= SP_EXPORT_WARN_EVENTS)
        return;
    fprintf(options->warnings,
            "scopeprof %s: warning: the %s holds %llu events; viewers get slow "
            "above a million - select less with --ranks, --lanes, --from/--to or "
            "--min-duration, or write Perfetto's binary trace (`scopeprof export perfetto`, "
            "about 22 bytes per call)\n",
            options->command ? options->command : "export", format,
            (unsigned long long)events);
}
