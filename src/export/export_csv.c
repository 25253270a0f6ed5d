/* export_csv.c - one CSV row per call (RFC 4180 quoting), for spreadsheets
 * and pandas: rank, lane, ids, depth, region, call path, absolute times in
 * ns, exclusive time, source. */
#include <stdlib.h>
#include <string.h>

#include "model/utf8.h"
#include "scopeprof/export.h"

/* Names are bytes; the file is UTF-8 text, invalid sequences as U+FFFD. */
static void field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        sp_utf8_write(out, s, strlen(s));
        return;
    }
    putc_unlocked('"', out);
    for (const char *quote; (quote = strchr(s, '"')); s = quote + 1) {
        sp_utf8_write(out, s, (size_t)(quote - s));
        fputs_unlocked("\"\"", out);
    }
    sp_utf8_write(out, s, strlen(s));
    putc_unlocked('"', out);
}

static void number(FILE *out, int64_t v)
{
    putc_unlocked(',', out);
    sp_write_int(out, v);
}

int sp_export_csv(FILE *out, const sp_profile *profile, const sp_export_options *options,
                  char *err, size_t errlen)
{
    const sp_selection *sel = options ? options->selection : NULL;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    size_t cap = 4096;
    char *path = malloc(cap);
    if (num_ranks < 0 || !path) {
        free(ranks);
        free(path);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    fputs("rank,lane,call_id,parent_id,depth,region,call_path,start_ns,end_ns,duration_ns,"
          "exclusive_ns,source_file,source_line\n", out);
    uint64_t events = 0;
    int rc = 0;
    for (long k = 0; k < num_ranks && rc == 0; k++) {
        sp_rank_data data;
        if (sp_rank_data_load(profile, ranks[k], sel, &data, err, errlen) < 0) {
            rc = -1;
            break;
        }
        const sp_calls *c = &data.calls;
        char label[512] = "";
        int64_t labelled = INT64_MIN;
        for (size_t i = 0; i < c->n; i++) {
            int64_t lane = c->lane ? c->lane[i] : -1;
            if (lane != labelled) { /* lanes repeat: label once per change */
                sp_lane_label(profile, data.rank, lane, label, sizeof label);
                labelled = lane;
            }
            size_t need = sp_call_path(c, (const char *const *)profile->names, i, NULL, path, cap);
            if (need + 1 > cap) {
                char *grown = realloc(path, need + 1);
                if (grown) {
                    path = grown;
                    cap = need + 1;
                    sp_call_path(c, (const char *const *)profile->names, i, NULL, path, cap);
                }
            }
            const sp_row *row = sp_rank_data_row(profile, &data, i);
            sp_write_int(out, data.rank);
            putc_unlocked(',', out);
            field(out, c->lane ? label : "");
            number(out, data.call_id[i]);
            number(out, data.parent_id[i]);
            number(out, c->depth[i]);
            putc_unlocked(',', out);
            field(out, profile->names[c->region[i]]);
            putc_unlocked(',', out);
            field(out, path);
            number(out, c->start[i]);
            number(out, c->end[i]);
            number(out, c->end[i] - c->start[i]);
            number(out, c->exclusive[i]);
            putc_unlocked(',', out);
            field(out, row && row->source_file ? row->source_file : "");
            putc_unlocked(',', out);
            if (row && row->source_line >= 0)
                sp_write_int(out, row->source_line);
            putc_unlocked('\n', out);
        }
        events += c->n;
        sp_rank_data_free(&data);
    }
    free(path);
    free(ranks);
    if (rc == 0)
        sp_export_warn_events(options, events, "csv export");
    return rc;
}
