/* html_json.c - the run's data as JSON inside the page (the script draws
 * everything from it; the static tables are written by html_page.c from the
 * same structures).  Strings are escaped so the text can never close the
 * <script> element, and invalid UTF-8 becomes U+FFFD so JSON.parse accepts
 * any region name. */
#include <stdlib.h>
#include <string.h>

#include "html_model.h"

/* Length of the valid UTF-8 sequence at s, 0 if invalid. */
static size_t utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t n = s[0] >= 0xf0 && s[0] < 0xf5 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (!n || (n == 4 && s[0] > 0xf4))
        return 0;
    for (size_t k = 1; k < n; k++)
        if ((s[k] & 0xc0) != 0x80)
            return 0;
    if (n == 3 && s[0] == 0xe0 && s[1] < 0xa0)
        return 0;
    if (n == 3 && s[0] == 0xed && s[1] >= 0xa0)
        return 0; /* surrogates */
    if (n == 4 && s[0] == 0xf0 && s[1] < 0x90)
        return 0;
    if (n == 4 && s[0] == 0xf4 && s[1] >= 0x90)
        return 0;
    return n;
}

void html_json_string(sp_json *j, const char *s)
{
    if (!s) {
        sp_json_null(j);
        return;
    }
    size_t cap = strlen(s) * 6 + 3;
    char *buf = malloc(cap), *o = buf;
    if (!buf) {
        sp_json_string(j, "");
        return;
    }
    *o++ = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned char c = *p;
        size_t n = utf8_len(p);
        if (!n) {
            memcpy(o, "\\ufffd", 6);
            o += 6;
            p++;
            continue;
        }
        if (n > 1) {
            memcpy(o, p, n);
            o += n;
            p += n;
            continue;
        }
        if (c == '"' || c == '\\') {
            *o++ = '\\';
            *o++ = (char)c;
        } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
            o += snprintf(o, 7, "\\u%04x", c);
        } else {
            *o++ = (char)c;
        }
        p++;
    }
    *o++ = '"';
    *o = 0;
    sp_json_raw(j, buf);
    free(buf);
}

void html_text(FILE *out, const char *s)
{
    if (!s)
        return;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_len(p);
        if (!n) {
            fputs("\xef\xbf\xbd", out);
            p++;
            continue;
        }
        switch (*p) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default:
            if (*p >= 0x20 || *p == '\n' || *p == '\t')
                fwrite(p, 1, n, out);
        }
        p += n;
    }
}

void html_region_colour(const char *name, char out[8])
{
    int r, g, b;
    sp_flame_colour(name, &r, &g, &b);
    snprintf(out, 8, "#%02x%02x%02x", r & 255, g & 255, b & 255);
}

/* ---- the run ---------------------------------------------------------------- */

static void meta_string(sp_json *j, const sp_profile *p, const char *key, const char *as)
{
    sp_json_key(j, as);
    const sp_meta *m = sp_profile_meta(p, key);
    if (!m)
        sp_json_null(j);
    else if (m->type == SP_META_STRING)
        html_json_string(j, m->s);
    else if (m->type == SP_META_INT)
        sp_json_int(j, m->i);
    else if (m->type == SP_META_FLOAT)
        sp_json_double(j, m->f);
    else
        sp_json_null(j);
}

static void tree_json(sp_json *j, const html_run *run)
{
    const sp_path_tree *t = &run->tree;
    sp_json_begin_object(j);
#define COLUMN(key, expr)                                                                          \
    do {                                                                                           \
        sp_json_key(j, key);                                                                       \
        sp_json_begin_array(j);                                                                    \
        for (size_t i = 0; i < t->n; i++) {                                                        \
            const sp_path_node *nd = &t->nodes[i];                                                 \
            (void)nd;                                                                              \
            sp_json_int(j, (int64_t)(expr));                                                       \
        }                                                                                          \
        sp_json_end_array(j);                                                                      \
    } while (0)
    COLUMN("parent", nd->parent);
    COLUMN("region", nd->value);
    COLUMN("calls", nd->calls);
    COLUMN("incl", nd->inclusive_ns);
    COLUMN("excl", nd->exclusive_ns);
    COLUMN("min", run->stats[i].minimum);
    COLUMN("max", run->stats[i].maximum);
    COLUMN("p95", run->stats[i].p95);
    COLUMN("line", nd->source_line);
#undef COLUMN
    sp_json_key(j, "file");
    sp_json_begin_array(j);
    for (size_t i = 0; i < t->n; i++)
        html_json_string(j, t->nodes[i].source_file ? t->nodes[i].source_file : "");
    sp_json_end_array(j);
    sp_json_end_object(j);
}

static void threads_json(sp_json *j, const sp_report *r, const sp_profile *p)
{
    sp_json_begin_array(j);
    for (size_t k = 0; k < r->num_threads; k++) {
        const sp_report_thread_row *t = &r->threads[k];
        sp_json_begin_object(j);
        sp_json_key(j, "rank");
        sp_json_uint(j, t->rank);
        sp_json_key(j, "index");
        sp_json_int(j, t->index);
        sp_json_key(j, "name");
        html_json_string(j, t->name ? t->name : "");
        sp_json_key(j, "wall");
        sp_json_int(j, t->wall_ns);
        sp_json_key(j, "cpu");
        sp_json_int(j, t->cpu_ns);
        sp_json_key(j, "cpuPercent");
        sp_json_double(j, t->cpu_percent);
        sp_json_key(j, "calls");
        sp_json_uint(j, t->calls);
        sp_json_key(j, "kind");
        sp_json_string(j, html_thread_kind(p, t));
        sp_json_end_object(j);
    }
    sp_json_end_array(j);
}

void html_run_json(sp_json *j, const html_run *run)
{
    const sp_profile *p = run->profile;
    const sp_report *r = &run->report;
    sp_json_begin_object(j);

    sp_json_key(j, "meta");
    sp_json_begin_object(j);
    meta_string(j, p, "label", "label");
    meta_string(j, p, "executable", "executable");
    meta_string(j, p, "timestamp", "date");
    meta_string(j, p, "hostname", "host");
    meta_string(j, p, "command_line", "command");
    meta_string(j, p, "run_id", "runId");
    sp_json_key(j, "files");
    sp_json_begin_array(j);
    for (size_t k = 0; k < run->num_files; k++)
        html_json_string(j, run->files[k]);
    sp_json_end_array(j);
    sp_json_key(j, "ranks");
    sp_json_uint(j, r->num_ranks);
    sp_json_key(j, "threads");
    sp_json_uint(j, r->num_threads);
    sp_json_key(j, "wall");
    sp_json_int(j, r->wall_ns);
    sp_json_key(j, "calls");
    sp_json_uint(j, r->num_calls);
    sp_json_key(j, "inside");
    sp_json_double(j, run->inside_share);
    sp_json_key(j, "mpiShare");
    sp_json_double(j, html_mpi_share(run));
    sp_json_end_object(j);

    sp_json_key(j, "regions");
    sp_json_begin_object(j);
    sp_json_key(j, "names");
    sp_json_begin_array(j);
    for (size_t k = 0; k < p->num_names; k++)
        html_json_string(j, p->names[k]);
    sp_json_end_array(j);
    sp_json_key(j, "colours");
    sp_json_begin_array(j);
    for (size_t k = 0; k < p->num_names; k++) {
        char c[8];
        html_region_colour(p->names[k], c);
        sp_json_string(j, c);
    }
    sp_json_end_array(j);
    sp_json_end_object(j);

    sp_json_newline(j);
    sp_json_key(j, "tree");
    tree_json(j, run);

    sp_json_newline(j);
    sp_json_key(j, "flat");
    sp_json_begin_array(j);
    for (size_t k = 0; k < r->num_flat; k++) {
        const sp_report_flat_row *f = &r->flat[k];
        sp_json_begin_object(j);
        sp_json_key(j, "region");
        sp_json_uint(j, f->region);
        sp_json_key(j, "calls");
        sp_json_uint(j, f->calls);
        sp_json_key(j, "incl");
        sp_json_int(j, f->inclusive);
        sp_json_key(j, "excl");
        sp_json_int(j, f->exclusive);
        sp_json_key(j, "mean");
        sp_json_double(j, f->mean);
        sp_json_key(j, "min");
        sp_json_int(j, f->minimum);
        sp_json_key(j, "max");
        sp_json_int(j, f->maximum);
        sp_json_end_object(j);
    }
    sp_json_end_array(j);

    sp_json_newline(j);
    sp_json_key(j, "cross");
    sp_json_begin_array(j);
    for (size_t k = 0; k < r->num_cross; k++) {
        const sp_report_cross_row *c = &r->cross[k];
        sp_json_begin_object(j);
        sp_json_key(j, "region");
        sp_json_uint(j, c->region);
        sp_json_key(j, "mean");
        sp_json_double(j, c->inclusive_mean);
        sp_json_key(j, "min");
        sp_json_int(j, c->inclusive_min);
        sp_json_key(j, "max");
        sp_json_int(j, c->inclusive_max);
        sp_json_key(j, "slowest");
        sp_json_uint(j, c->slowest_rank);
        sp_json_key(j, "imbalance");
        sp_json_double(j, c->imbalance);
        sp_json_key(j, "excess");
        sp_json_int(j, (int64_t)((double)c->inclusive_max - c->inclusive_mean + 0.5));
        sp_json_end_object(j);
    }
    sp_json_end_array(j);

    sp_json_newline(j);
    sp_json_key(j, "heat");
    sp_json_begin_object(j);
    sp_json_key(j, "ranks");
    sp_json_begin_array(j);
    for (size_t k = 0; k < r->num_ranks; k++)
        sp_json_uint(j, r->ranks[k]);
    sp_json_end_array(j);
    sp_json_key(j, "values");
    sp_json_begin_array(j);
    for (size_t k = 0; k < r->num_ranks * p->num_names; k++) {
        if (k % p->num_names == 0)
            sp_json_newline(j);
        sp_json_int(j, run->rank_region_ns[k]);
    }
    sp_json_end_array(j);
    sp_json_end_object(j);

    sp_json_newline(j);
    sp_json_key(j, "threads");
    threads_json(j, r, p);

    sp_json_newline(j);
    sp_json_key(j, "mpi");
    html_mpi_json(j, run);

    sp_json_newline(j);
    sp_json_key(j, "timeline");
    if (run->has_timeline)
        html_timeline_json(j, &run->timeline);
    else
        sp_json_null(j);
    sp_json_end_object(j);
}
