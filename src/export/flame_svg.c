/* flame_svg.c - self-contained interactive SVG: a flame graph (calls
 * aggregated by call path over the selected ranks and lanes, width =
 * inclusive time, one <g class="frame"> per distinct path) or, with chart, a
 * flame chart (time on x, one labelled band per rank and lane, one frame per
 * call).  A few lines of inline script give search and click-to-zoom. */
#include <stdlib.h>
#include <string.h>

#include "model/utf8.h"
#include "scopeprof/export.h"

#define WIDTH 1200.0
#define MARGIN 10.0
#define ROW 16.0
#define CHAR_W 6.6 /* monospace 11px advance, for clipping labels */
#define HEADER 40.0

static void xml(FILE *out, const char *s)
{
    for (; *s; s++) {
        if ((unsigned char)*s >= 0x80) {
            /* Names are bytes: an XML document must be well-formed UTF-8. */
            size_t k = sp_utf8_sequence((const unsigned char *)s, 4 /* stops at the NUL */);
            if (k) {
                fwrite_unlocked(s, 1, k, out);
                s += k - 1;
            } else {
                fputs_unlocked(SP_UTF8_REPLACEMENT, out);
            }
            continue;
        }
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                putc_unlocked(*s, out);
        }
    }
}

/* Warm colour from the name, stable across runs. */
static void colour(const char *name, int *r, int *g, int *b)
{
    uint32_t h = 2166136261u;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    *r = 205 + (int)(h % 50);
    *g = 80 + (int)((h >> 8) % 130);
    *b = (int)((h >> 16) % 55);
}

/* Label that fits in `width` pixels ("" if not even two characters). */
static void clipped_label(FILE *out, const char *name, double width)
{
    size_t fit = width > 6 ? (size_t)((width - 6) / CHAR_W) : 0;
    size_t n = strlen(name);
    if (fit < 3)
        return;
    if (n <= fit) {
        xml(out, name);
        return;
    }
    char buf[512];
    size_t keep = fit - 2 < sizeof buf - 3 ? fit - 2 : sizeof buf - 3;
    memcpy(buf, name, keep);
    strcpy(buf + keep, "..");
    xml(out, buf);
}

static const char script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "var W=%g,M=%g,CW=%g;\n"
    "function frames(){return document.querySelectorAll('g.frame');}\n"
    "function clip(t,n,w){var k=Math.floor((w-6)/CW);if(k<3)return '';"
    "return n.length<=k?n:n.substr(0,k-2)+'..';}\n"
    "function place(g,zx,zw){var x=+g.dataset.x,w=+g.dataset.w,r=g.querySelector('rect'),"
    "t=g.querySelector('text');var nx=(x-zx)/zw,nw=w/zw;"
    "if(nx+nw<=0||nx>=1){g.style.display='none';return;}g.style.display='';"
    "if(nx<0){nw+=nx;nx=0;}if(nx+nw>1)nw=1-nx;var px=M+nx*(W-2*M),pw=nw*(W-2*M);"
    "r.setAttribute('x',px);r.setAttribute('width',pw);t.setAttribute('x',px+3);"
    "t.textContent=clip(t,g.dataset.n,pw);}\n"
    "function zoom(g){var zx=g?+g.dataset.x:0,zw=g?+g.dataset.w:1;if(zw<=0)return;"
    "frames().forEach(function(f){place(f,zx,zw);});"
    "document.getElementById('unzoom').style.opacity=g?1:0;}\n"
    "function search(){var re=prompt('Search (regular expression)');if(re===null)return;"
    "var m=0,x;try{x=new RegExp(re);}catch(e){alert(e);return;}"
    "frames().forEach(function(f){var r=f.querySelector('rect'),hit=re!==''&&x.test(f.dataset.n);"
    "r.setAttribute('fill',hit?'rgb(230,0,230)':r.dataset.fill);if(hit)m++;});"
    "document.getElementById('matched').textContent=re===''?'':'matched '+m+' frame(s)';}\n"
    "window.addEventListener('load',function(){frames().forEach(function(f){"
    "var r=f.querySelector('rect');r.dataset.fill=r.getAttribute('fill');"
    "f.addEventListener('click',function(e){zoom(f);e.stopPropagation();});});"
    "document.getElementById('unzoom').addEventListener('click',function(){zoom(null);});"
    "document.getElementById('search').addEventListener('click',search);});\n"
    "]]></script>\n";

static void header(FILE *out, double height, const char *title)
{
    fprintf(out,
            "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
            "xmlns=\"http://www.w3.org/2000/svg\">\n"
            "<style>text{font-family:monospace;font-size:11px;fill:#000}"
            "g.frame{cursor:pointer}g.frame:hover rect{stroke:#000;stroke-width:0.5}"
            "#search,#unzoom{cursor:pointer}</style>\n",
            WIDTH, height, WIDTH, height);
    fprintf(out, script, WIDTH, MARGIN, CHAR_W);
    fprintf(out, "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%g\" height=\"%g\" "
                 "fill=\"#f8f8f0\"/>\n", WIDTH, height);
    fprintf(out, "<text x=\"%g\" y=\"20\" style=\"font-size:15px\">", WIDTH / 2 - 150);
    xml(out, title);
    fprintf(out, "</text>\n<text id=\"unzoom\" x=\"%g\" y=\"20\" style=\"opacity:0\">"
                 "Reset zoom</text>\n<text id=\"search\" x=\"%g\" y=\"20\">Search</text>\n"
                 "<text id=\"matched\" x=\"%g\" y=\"34\"></text>\n",
            MARGIN, WIDTH - 60, WIDTH - 160);
}

/* One frame: x and w are fractions of the drawing width. */
static void frame(FILE *out, const char *name, const char *file, int64_t line, double x,
                  double w, double y, const char *stats)
{
    double px = MARGIN + x * (WIDTH - 2 * MARGIN), pw = w * (WIDTH - 2 * MARGIN);
    int r, g, b;
    colour(name, &r, &g, &b);
    fputs("<g class=\"frame\" data-n=\"", out);
    xml(out, name);
    fprintf(out, "\" data-x=\"%.9g\" data-w=\"%.9g\"><title>", x, w);
    xml(out, name);
    if (file && file[0]) {
        fputs("  (", out);
        xml(out, file);
        if (line >= 0)
            fprintf(out, ":%lld", (long long)line);
        fputc(')', out);
    }
    fputc('\n', out);
    xml(out, stats);
    fprintf(out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.3f\" height=\"%g\" "
                 "fill=\"rgb(%d,%d,%d)\" rx=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
            px, y, pw, ROW - 1, r, g, b, px + 3, y + ROW - 4.5);
    clipped_label(out, name, pw);
    fputs("</text></g>\n", out);
}

/* ---- flame graph -------------------------------------------------------- */

static int flame_graph(FILE *out, const sp_profile *profile, const sp_export_options *options,
                       const uint32_t *ranks, long num_ranks, char *err, size_t errlen)
{
    const sp_selection *sel = options ? options->selection : NULL;
    sp_path_tree tree;
    sp_path_tree_init(&tree);
    for (long k = 0; k < num_ranks; k++) {
        sp_rank_data data;
        if (sp_rank_data_load(profile, ranks[k], sel, &data, err, errlen) < 0) {
            sp_path_tree_free(&tree);
            return -1;
        }
        int rc = sp_selection_grafts(sel) ? sp_rank_data_graft(profile, &data, NULL) : 0;
        if (rc == 0)
            rc = sp_path_tree_add(&tree, profile, &data, -1, 0, NULL);
        sp_rank_data_free(&data);
        if (rc < 0) {
            sp_path_tree_free(&tree);
            snprintf(err, errlen, "out of memory aggregating call paths");
            return -1;
        }
    }
    if (tree.n == 0) {
        sp_path_tree_free(&tree);
        snprintf(err, errlen, "%s: no calls recorded for the selected ranks and filters",
                 profile->path ? profile->path : "profile");
        return -1;
    }
    /* Depth, x offset (ns from the left edge) per node; parents come first. */
    size_t n = tree.n;
    int64_t *x = malloc(n * sizeof *x), *next_x = malloc(n * sizeof *next_x);
    uint32_t *depth = malloc(n * sizeof *depth);
    if (!x || !next_x || !depth) {
        free(x), free(next_x), free(depth);
        sp_path_tree_free(&tree);
        snprintf(err, errlen, "out of memory laying out the flame graph");
        return -1;
    }
    int64_t total = 0;
    uint32_t max_depth = 0;
    for (size_t i = 0; i < n; i++) {
        const sp_path_node *nd = &tree.nodes[i];
        if (nd->parent < 0) {
            depth[i] = 0;
            x[i] = total;
            total += nd->inclusive_ns;
        } else {
            depth[i] = depth[nd->parent] + 1;
            x[i] = next_x[nd->parent];
            next_x[nd->parent] += nd->inclusive_ns;
        }
        next_x[i] = x[i];
        if (depth[i] > max_depth)
            max_depth = depth[i];
    }
    double scale = total > 0 ? 1.0 / (double)total : 0;
    double height = HEADER + (max_depth + 1) * ROW + 2 * MARGIN;
    char title[600];
    snprintf(title, sizeof title, "Flame graph - %s", sp_export_label(profile, options));
    header(out, height, title);
    for (size_t i = 0; i < n; i++) {
        const sp_path_node *nd = &tree.nodes[i];
        char stats[200];
        snprintf(stats, sizeof stats, "calls %llu, inclusive %.6g ms, exclusive %.6g ms",
                 (unsigned long long)nd->calls, nd->inclusive_ns / 1e6, nd->exclusive_ns / 1e6);
        double y = height - MARGIN - (depth[i] + 1) * ROW;
        frame(out, profile->names[nd->value], nd->source_file, nd->source_line,
              (double)x[i] * scale, (double)nd->inclusive_ns * scale, y, stats);
    }
    fputs("</svg>\n", out);
    sp_export_warn_events(options, n, "flame graph");
    free(x), free(next_x), free(depth);
    sp_path_tree_free(&tree);
    return 0;
}

/* ---- flame chart -------------------------------------------------------- */

typedef struct chart_pass {
    FILE *out;               /* NULL in the measuring pass */
    const sp_profile *profile;
    const sp_rank_data *data;
    int64_t origin;
    double span;             /* ns across the drawing width */
    double top;              /* y of the current band */
    uint32_t max_depth;      /* of the current lane */
    uint64_t frames;
} chart_pass;

static int chart_open(void *ctx, size_t i)
{
    chart_pass *c = ctx;
    const sp_calls *calls = &c->data->calls;
    if (calls->depth[i] > c->max_depth)
        c->max_depth = calls->depth[i];
    c->frames++;
    if (!c->out)
        return 0;
    const sp_row *row = sp_rank_data_row(c->profile, c->data, i);
    char stats[200];
    snprintf(stats, sizeof stats, "start %.6g ms, duration %.6g ms, exclusive %.6g ms",
             (calls->start[i] - c->origin) / 1e6, (calls->end[i] - calls->start[i]) / 1e6,
             calls->exclusive[i] / 1e6);
    frame(c->out, c->profile->names[calls->region[i]], row ? row->source_file : "",
          row ? row->source_line : -1, (double)(calls->start[i] - c->origin) / c->span,
          (double)(calls->end[i] - calls->start[i]) / c->span, c->top + calls->depth[i] * ROW,
          stats);
    return 0;
}

/* Both passes: measure (out NULL: band heights) then draw. */
static int chart_rank_pass(chart_pass *c, const sp_selection *sel, uint32_t rank, double *y,
                           char *err, size_t errlen)
{
    sp_rank_data data;
    if (sp_rank_data_load(c->profile, rank, sel, &data, err, errlen) < 0)
        return -1;
    sp_lane_walk walk;
    if (sp_lane_walk_build(&data.calls, &walk) < 0) {
        sp_rank_data_free(&data);
        snprintf(err, errlen, "out of memory walking rank %u", rank);
        return -1;
    }
    c->data = &data;
    for (size_t l = 0; l < walk.num_lanes; l++) {
        if (c->out) {
            char label[512] = "";
            if (data.calls.lane)
                sp_lane_label(c->profile, rank, walk.lanes[l], label, sizeof label);
            fprintf(c->out, "<text class=\"band\" x=\"%g\" y=\"%.1f\">rank %u%s", MARGIN,
                    *y + ROW - 4, rank, label[0] ? " - " : "");
            xml(c->out, label);
            fputs("</text>\n", c->out);
        }
        c->top = *y + ROW;
        c->max_depth = 0;
        sp_lane_walk_visit(&walk, &data.calls, l, chart_open, NULL, c);
        *y += ROW * (c->max_depth + 2) + 4;
    }
    sp_lane_walk_free(&walk);
    sp_rank_data_free(&data);
    return 0;
}

static int flame_chart(FILE *out, const sp_profile *profile, const sp_export_options *options,
                       const uint32_t *ranks, long num_ranks, char *err, size_t errlen)
{
    const sp_selection *sel = options ? options->selection : NULL;
    chart_pass c = {.profile = profile, .origin = sp_selection_first_start(profile, sel)};
    int64_t last = c.origin;
    for (size_t r = 0; r < profile->num_rows; r++) {
        const sp_row *row = &profile->rows[r];
        if (!sp_selection_has_rank(sel, row->rank))
            continue;
        for (uint64_t e = row->offset; e < row->offset + row->count && e < profile->num_events; e++)
            if (profile->end[e] > last)
                last = profile->end[e];
    }
    if (sel && sel->has_to) {
        int64_t to = sp_profile_origin_ns(profile) + (int64_t)(sel->to_s * 1e9);
        if (to < last && to > c.origin)
            last = to;
    }
    c.span = last > c.origin ? (double)(last - c.origin) : 1.0;
    double y = HEADER;
    for (long k = 0; k < num_ranks; k++)
        if (chart_rank_pass(&c, sel, ranks[k], &y, err, errlen) < 0)
            return -1;
    if (c.frames == 0) {
        snprintf(err, errlen, "%s: no calls recorded for the selected ranks and filters",
                 profile->path ? profile->path : "profile");
        return -1;
    }
    char title[600];
    snprintf(title, sizeof title, "Flame chart - %s (%.6g ms)", sp_export_label(profile, options),
             c.span / 1e6);
    header(out, y + MARGIN, title);
    c.out = out;
    c.frames = 0;
    y = HEADER;
    for (long k = 0; k < num_ranks; k++)
        if (chart_rank_pass(&c, sel, ranks[k], &y, err, errlen) < 0)
            return -1;
    fputs("</svg>\n", out);
    sp_export_warn_events(options, c.frames, "flame chart");
    return 0;
}

int sp_flame_svg(FILE *out, const sp_profile *profile, const sp_export_options *options,
                 int chart, char *err, size_t errlen)
{
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, options ? options->selection : NULL, &ranks);
    if (num_ranks < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = chart ? flame_chart(out, profile, options, ranks, num_ranks, err, errlen)
                   : flame_graph(out, profile, options, ranks, num_ranks, err, errlen);
    free(ranks);
    return rc;
}
