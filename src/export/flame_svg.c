/* flame_svg.c - self-contained interactive SVG: a flame graph (calls
 * aggregated by call path over the selected ranks and lanes, width =
 * inclusive time, one <g class="frame"> per distinct path) or, with chart, a
 * flame chart (time on x, one labelled band per rank and lane, one frame per
 * call).  A few lines of inline script give search and click-to-zoom.
 *
 * Size is bounded by the drawing, not by the run: frames narrower than a
 * pixel at the output width are merged into one grey "(n calls)" frame
 * (per parent in the graph, per run of adjacent calls in the chart) and
 * their subtrees are not drawn, so at most ~2 frames per pixel column and
 * depth are written however many calls there are. */
#include <stdlib.h>
#include <string.h>

#include "model/utf8.h"
#include "path_tree_stream.h"
#include "scopeprof/export.h"
#include "scopeprof/report.h" /* sp_rank_clock_offset */
#include "stream_filter.h"

#define WIDTH 1200.0
#define MARGIN 10.0
#define ROW 16.0
#define CHAR_W 6.6 /* monospace 11px advance, for clipping labels */
#define HEADER 40.0

void sp_svg_escape(FILE *out, const char *s)
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

/* Warm colour from the name, stable across runs (the HTML report uses it). */
void sp_flame_colour(const char *name, int *r, int *g, int *b)
{
    uint32_t h = 2166136261u;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    *r = 205 + (int)(h % 50);
    *g = 80 + (int)((h >> 8) % 130);
    *b = (int)((h >> 16) % 55);
}

/* Label that fits in `width` pixels ("" if not even two characters). */
void sp_svg_clipped_label(FILE *out, const char *name, double width)
{
    size_t fit = width > 6 ? (size_t)((width - 6) / CHAR_W) : 0;
    size_t n = strlen(name);
    if (fit < 3)
        return;
    if (n <= fit) {
        sp_svg_escape(out, name);
        return;
    }
    char buf[512];
    size_t keep = fit - 2 < sizeof buf - 3 ? fit - 2 : sizeof buf - 3;
    memcpy(buf, name, keep);
    strcpy(buf + keep, "..");
    sp_svg_escape(out, buf);
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
    sp_svg_escape(out, title);
    fprintf(out, "</text>\n<text id=\"unzoom\" x=\"%g\" y=\"20\" style=\"opacity:0\">"
                 "Reset zoom</text>\n<text id=\"search\" x=\"%g\" y=\"20\">Search</text>\n"
                 "<text id=\"matched\" x=\"%g\" y=\"34\"></text>\n",
            MARGIN, WIDTH - 60, WIDTH - 160);
}

/* One frame: x and w are fractions of the drawing width. */
static void frame_as(FILE *out, const char *cls, const char *attrs, const char *name,
                     const char *file, int64_t line, double x, double w, double y,
                     const char *stats, int grey)
{
    double px = MARGIN + x * (WIDTH - 2 * MARGIN), pw = w * (WIDTH - 2 * MARGIN);
    int r, g, b;
    sp_flame_colour(name, &r, &g, &b);
    if (grey)
        r = g = b = 190;
    fprintf(out, "<g class=\"%s\"%s data-n=\"", cls, attrs);
    sp_svg_escape(out, name);
    fprintf(out, "\" data-x=\"%.9g\" data-w=\"%.9g\"><title>", x, w);
    sp_svg_escape(out, name);
    if (file && file[0]) {
        fputs("  (", out);
        sp_svg_escape(out, file);
        if (line >= 0)
            fprintf(out, ":%lld", (long long)line);
        fputc(')', out);
    }
    fputc('\n', out);
    sp_svg_escape(out, stats);
    fprintf(out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.3f\" height=\"%g\" "
                 "fill=\"rgb(%d,%d,%d)\" rx=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
            px, y, pw, ROW - 1, r, g, b, px + 3, y + ROW - 4.5);
    sp_svg_clipped_label(out, name, pw);
    fputs("</text></g>\n", out);
}

static void frame(FILE *out, const char *name, const char *file, int64_t line, double x,
                  double w, double y, const char *stats)
{
    frame_as(out, "frame", "", name, file, line, x, w, y, stats, 0);
}

/* ---- frames narrower than a pixel ------------------------------------------
 * (owned by the size bound: everything below this line up to the flame graph
 * section decides what is merged) */

#define DRAW_W (WIDTH - 2 * MARGIN)
#define MIN_FRAME_PX 1.0

static int narrow(double w) { return w * DRAW_W < MIN_FRAME_PX; }

/* Flame graph: the narrow children of one parent. */
typedef struct merge_block {
    uint64_t paths, calls;
    int64_t ns;
} merge_block;

/* One grey frame standing for `calls` calls (on `paths` call paths in the
 * graph), those too narrow to draw one by one and the calls inside them; class "frame merged" so the script
 * zooms and searches it like the others, data-calls for tools. */
static void merged_frame(FILE *out, uint64_t calls, uint64_t paths, int64_t ns, double x,
                         double w, double y)
{
    char name[64], stats[160], attrs[96];
    snprintf(name, sizeof name, "(%llu calls)", (unsigned long long)calls);
    if (paths)
        snprintf(stats, sizeof stats, "%llu call paths narrower than a pixel, inclusive %.6g ms",
                 (unsigned long long)paths, ns / 1e6);
    else
        snprintf(stats, sizeof stats, "calls narrower than a pixel, spanning %.6g ms", ns / 1e6);
    snprintf(attrs, sizeof attrs, " data-calls=\"%llu\" data-paths=\"%llu\"",
             (unsigned long long)calls, (unsigned long long)paths);
    frame_as(out, "frame merged", attrs, name, NULL, -1, x, w, y, stats, 1);
}

/* ---- flame graph -------------------------------------------------------- */

/* Lay out and draw the tree (nodes in creation order, at least one).  0 or
 * -1 (out of memory). */
static int draw_flame_graph(FILE *out, const sp_profile *profile,
                            const sp_export_options *options, const sp_path_tree *tree_,
                            char *err, size_t errlen)
{
    const sp_path_tree tree = *tree_;
    /* Depth and x offset (ns from the left edge) per node, parents first;
     * a child narrower than a pixel is not placed (x = -1) but added to its
     * parent's merged block, drawn after the wide children, with its whole
     * subtree (for unplaced nodes next_x holds the owner of their block). */
    size_t n = tree.n;
    int64_t *x = malloc(n * sizeof *x), *next_x = malloc((n + 1) * sizeof *next_x);
    uint32_t *depth = malloc(n * sizeof *depth);
    merge_block *merged = calloc(n + 1, sizeof *merged); /* [n]: the top level */
    if (!x || !next_x || !depth || !merged) {
        free(x), free(next_x), free(depth), free(merged);
        snprintf(err, errlen, "out of memory laying out the flame graph");
        return -1;
    }
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (tree.nodes[i].parent < 0)
            total += tree.nodes[i].inclusive_ns;
    double scale = total > 0 ? 1.0 / (double)total : 0;
    uint32_t max_depth = 0;
    next_x[n] = 0;
    for (size_t i = 0; i < n; i++) {
        const sp_path_node *nd = &tree.nodes[i];
        size_t up = nd->parent < 0 ? n : (size_t)nd->parent;
        depth[i] = nd->parent < 0 ? 0 : depth[nd->parent] + 1;
        x[i] = -1;
        next_x[i] = 0;
        if (up < n && x[up] < 0) {
            /* inside a merged block: counted there (next_x holds its owner) */
            next_x[i] = next_x[up];
            merged[next_x[i]].paths++;
            merged[next_x[i]].calls += nd->calls;
            continue;
        }
        if (narrow((double)nd->inclusive_ns * scale)) {
            merged[up].paths++;
            merged[up].calls += nd->calls;
            merged[up].ns += nd->inclusive_ns;
            next_x[i] = (int64_t)up;
            continue;
        }
        x[i] = next_x[up];
        next_x[up] += nd->inclusive_ns;
        next_x[i] = x[i];
        if (depth[i] > max_depth)
            max_depth = depth[i];
    }
    double height = HEADER + (max_depth + 2) * ROW + 2 * MARGIN;
    char title[600];
    snprintf(title, sizeof title, "Flame graph - %s", sp_export_label(profile, options));
    header(out, height, title);
    size_t drawn = 0;
    for (size_t i = 0; i <= n; i++) {
        const merge_block *m = &merged[i];
        if (i < n && x[i] >= 0) {
            const sp_path_node *nd = &tree.nodes[i];
            char stats[200];
            snprintf(stats, sizeof stats, "calls %llu, inclusive %.6g ms, exclusive %.6g ms",
                     (unsigned long long)nd->calls, nd->inclusive_ns / 1e6,
                     nd->exclusive_ns / 1e6);
            double y = height - MARGIN - (depth[i] + 1) * ROW;
            frame(out, profile->names[nd->value], nd->source_file, nd->source_line,
                  (double)x[i] * scale, (double)nd->inclusive_ns * scale, y, stats);
            drawn++;
        }
        if (m->paths && (i == n || x[i] >= 0)) {
            /* after the wide children: at the parent's next_x */
            uint32_t d = i == n ? 0 : depth[i] + 1;
            double y = height - MARGIN - (d + 1) * ROW;
            merged_frame(out, m->calls, m->paths, m->ns, (double)next_x[i] * scale,
                         (double)m->ns * scale, y);
            drawn++;
        }
    }
    fputs("</svg>\n", out);
    sp_export_warn_events(options, drawn, "flame graph");
    free(x), free(next_x), free(depth), free(merged);
    return 0;
}

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
        int grafted = sp_selection_grafts(sel) ? sp_rank_data_graft(profile, &data, NULL) : 0;
        int rc = grafted == 0 ? sp_path_tree_add(&tree, profile, &data, -1, 0, NULL) : 0;
        sp_rank_data_free(&data);
        if (grafted != 0 || rc < 0) {
            sp_path_tree_free(&tree);
            if (grafted != 0)
                return sp_graft_failure(grafted, ranks[k], err, errlen);
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
    int rc = draw_flame_graph(out, profile, options, &tree, err, errlen);
    sp_path_tree_free(&tree);
    return rc;
}

/* The flame graph of a run source (docs/stream.md, "Exports"): the tree
 * built as the calls stream (path_tree_stream.c), drawn once every rank
 * has streamed, so a problem still goes to the in-memory path with nothing
 * written. */
int sp_flame_svg_stream(FILE *out, const struct sp_run_source *src,
                        const sp_export_options *options, char *why, size_t whylen)
{
    sp_path_tree tree;
    sp_path_tree_init(&tree);
    uint64_t calls = 0;
    int rc = sp_path_tree_stream(&tree, src, options ? options->selection : NULL, 0, &calls, why,
                                 whylen);
    if (rc == 0 && tree.n == 0) {
        snprintf(why, whylen, "no calls: the in-memory path words it");
        rc = 1;
    }
    if (rc == 0)
        rc = draw_flame_graph(out, src->profile, options, &tree, why, whylen);
    sp_path_tree_free(&tree);
    return rc;
}

/* ---- flame chart -------------------------------------------------------- */

/* Adjacent calls of one depth narrower than a pixel, merged (x fractions). */
typedef struct chart_block {
    int active;
    double x0, x1;
    uint64_t calls;
} chart_block;

/* A frame kept until its lane is written (the streamed chart: a rank's
 * lanes interleave in its call stream, and a call's exclusive time is known
 * at its end). */
typedef struct chart_frame {
    int merged;
    uint32_t region;        /* merged: calls in `calls` */
    uint64_t calls;
    const char *file;
    int64_t line;
    double x, w, y;
    int64_t start, end, exclusive; /* merged: ns spanned in `start` */
} chart_frame;

typedef struct chart_pass {
    FILE *out;               /* NULL in the measuring pass */
    const sp_profile *profile;
    const sp_rank_data *data;
    int64_t origin;          /* left edge of the drawing (--from, else first call) */
    int64_t run_origin;      /* hover times count from the run start */
    double span;             /* ns across the drawing width */
    double top;              /* y of the current band */
    uint32_t max_depth;      /* of the current lane */
    uint64_t frames;         /* frames written */
    chart_block *blocks;     /* per depth of the current lane */
    size_t num_blocks;
    uint32_t hidden_below;   /* calls deeper than this are inside a merged block */
    int failed;              /* out of memory */
    int keep;                /* frames go to `kept`, not to out */
    chart_frame *kept;
    size_t num_kept, cap_kept;
} chart_pass;

#define NOT_HIDING UINT32_MAX

static void chart_write(FILE *out, const chart_pass *c, const chart_frame *f)
{
    if (f->merged) {
        merged_frame(out, f->calls, 0, f->start, f->x, f->w, f->y);
        return;
    }
    char stats[200];
    snprintf(stats, sizeof stats, "start %.6g ms, duration %.6g ms, exclusive %.6g ms",
             (f->start - c->run_origin) / 1e6, (f->end - f->start) / 1e6, f->exclusive / 1e6);
    frame(out, c->profile->names[f->region], f->file, f->line, f->x, f->w, f->y, stats);
}

/* One frame: written, or kept (its index; -1 when it was written). */
static int64_t chart_emit(chart_pass *c, const chart_frame *f)
{
    if (!c->keep) {
        chart_write(c->out, c, f);
        return -1;
    }
    if (c->num_kept == c->cap_kept) {
        size_t cap = c->cap_kept ? 2 * c->cap_kept : 256;
        chart_frame *grown = realloc(c->kept, cap * sizeof *grown);
        if (!grown) {
            c->failed = 1;
            return -1;
        }
        c->kept = grown;
        c->cap_kept = cap;
    }
    c->kept[c->num_kept] = *f;
    return (int64_t)c->num_kept++;
}

static void chart_flush(chart_pass *c, uint32_t d)
{
    chart_block *b = &c->blocks[d];
    if (!b->active)
        return;
    if (c->out || c->keep) {
        chart_frame f = {.merged = 1, .calls = b->calls,
                         .start = (int64_t)((b->x1 - b->x0) * c->span), .x = b->x0,
                         .w = b->x1 - b->x0, .y = c->top + d * ROW};
        chart_emit(c, &f);
    }
    c->frames++;
    b->active = 0;
}

static void chart_flush_all(chart_pass *c)
{
    for (size_t d = 0; d < c->num_blocks; d++)
        chart_flush(c, (uint32_t)d);
}

/* A call at depth d of the current lane: merged, hidden, or a frame.  The
 * frame's index in `kept` when kept (its exclusive time to be set), else -1;
 * -2 out of memory. */
static int64_t chart_call(chart_pass *c, uint32_t d, int64_t start, int64_t end,
                          int64_t exclusive, uint32_t region, const sp_row *row)
{
    if (d > c->max_depth)
        c->max_depth = d;
    if (c->hidden_below != NOT_HIDING && d > c->hidden_below) {
        c->blocks[c->hidden_below].calls++;
        return -1;
    }
    c->hidden_below = NOT_HIDING;
    /* Clipped to the window: --from/--to keep calls that intersect it. */
    double x0 = (double)(start - c->origin) / c->span;
    double x1 = (double)(end - c->origin) / c->span;
    if (x0 < 0)
        x0 = 0;
    if (x1 > 1)
        x1 = 1;
    if (x1 < x0)
        x1 = x0;
    if (d >= c->num_blocks) {
        size_t cap = c->num_blocks ? c->num_blocks : 64;
        while (cap <= d)
            cap *= 2;
        chart_block *grown = realloc(c->blocks, cap * sizeof *grown);
        if (!grown) {
            c->failed = 1;
            return -2;
        }
        memset(grown + c->num_blocks, 0, (cap - c->num_blocks) * sizeof *grown);
        c->blocks = grown;
        c->num_blocks = cap;
    }
    chart_block *b = &c->blocks[d];
    if (narrow(x1 - x0)) {
        if (b->active && narrow(x0 - b->x1)) {
            if (x1 > b->x1)
                b->x1 = x1;
            b->calls++;
        } else {
            chart_flush(c, d);
            *b = (chart_block){1, x0, x1, 1};
        }
        c->hidden_below = d;
        return -1;
    }
    chart_flush(c, d);
    c->frames++;
    if (!c->out && !c->keep)
        return -1;
    chart_frame f = {.region = region, .file = row ? row->source_file : "",
                     .line = row ? row->source_line : -1, .x = x0, .w = x1 - x0,
                     .y = c->top + d * ROW, .start = start, .end = end,
                     .exclusive = exclusive};
    int64_t k = chart_emit(c, &f);
    return c->failed ? -2 : k;
}

static int chart_open(void *ctx, size_t i)
{
    chart_pass *c = ctx;
    const sp_calls *calls = &c->data->calls;
    const sp_row *row = c->out ? sp_rank_data_row(c->profile, c->data, i) : NULL;
    return chart_call(c, calls->depth[i], calls->start[i], calls->end[i], calls->exclusive[i],
                      calls->region[i], row) == -2;
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
    for (size_t l = 0; l < walk.num_lanes && !c->failed; l++) {
        if (c->out) {
            char label[512] = "";
            if (data.calls.lane)
                sp_lane_label(c->profile, rank, walk.lanes[l], label, sizeof label);
            fprintf(c->out, "<text class=\"band\" x=\"%g\" y=\"%.1f\">rank %u%s", MARGIN,
                    *y + ROW - 4, rank, label[0] ? " - " : "");
            sp_svg_escape(c->out, label);
            fputs("</text>\n", c->out);
        }
        c->top = *y + ROW;
        c->max_depth = 0;
        c->hidden_below = NOT_HIDING;
        sp_lane_walk_visit(&walk, &data.calls, l, chart_open, NULL, c);
        if (!c->failed)
            chart_flush_all(c);
        *y += ROW * (c->max_depth + 2) + 4;
    }
    sp_lane_walk_free(&walk);
    sp_rank_data_free(&data);
    if (c->failed) {
        snprintf(err, errlen, "out of memory drawing rank %u", rank);
        return -1;
    }
    return 0;
}

static int flame_chart(FILE *out, const sp_profile *profile, const sp_export_options *options,
                       const uint32_t *ranks, long num_ranks, char *err, size_t errlen)
{
    const sp_selection *sel = options ? options->selection : NULL;
    int64_t run_origin = sp_profile_origin_ns(profile);
    chart_pass c = {.profile = profile, .origin = sp_selection_first_start(profile, sel),
                    .run_origin = run_origin};
    int64_t last = c.origin;
    for (size_t r = 0; r < profile->num_rows; r++) {
        const sp_row *row = &profile->rows[r];
        if (!sp_selection_has_rank(sel, row->rank))
            continue;
        for (uint64_t e = row->offset; e < row->offset + row->count && e < profile->num_events; e++)
            if (profile->end[e] > last)
                last = profile->end[e];
    }
    /* --from/--to: the drawing is the window itself (calls cut at its edges). */
    if (sel && sel->has_from) {
        int64_t from = run_origin + (int64_t)(sel->from_s * 1e9);
        if (from > c.origin && from < last)
            c.origin = from;
    }
    if (sel && sel->has_to) {
        int64_t to = run_origin + (int64_t)(sel->to_s * 1e9);
        if (to < last && to > c.origin)
            last = to;
    }
    c.span = last > c.origin ? (double)(last - c.origin) : 1.0;
    double y = HEADER;
    int rc = 0;
    for (long k = 0; k < num_ranks && rc == 0; k++)
        rc = chart_rank_pass(&c, sel, ranks[k], &y, err, errlen);
    if (rc == 0 && c.frames == 0) {
        snprintf(err, errlen, "%s: no calls recorded for the selected ranks and filters",
                 profile->path ? profile->path : "profile");
        rc = -1;
    }
    if (rc == 0) {
        char title[600];
        snprintf(title, sizeof title, "Flame chart - %s (%.6g ms from %.6g ms)",
                 sp_export_label(profile, options), c.span / 1e6,
                 (c.origin - run_origin) / 1e6);
        header(out, y + MARGIN, title);
        c.out = out;
        c.frames = 0;
        y = HEADER;
        for (long k = 0; k < num_ranks && rc == 0; k++)
            rc = chart_rank_pass(&c, sel, ranks[k], &y, err, errlen);
    }
    if (rc == 0) {
        fputs("</svg>\n", out);
        sp_export_warn_events(options, c.frames, "flame chart");
    }
    free(c.blocks);
    return rc;
}

/* ---- the flame chart from a run source (docs/stream.md, "Exports") ----
 *
 * As in memory, one pass measures (the lanes of every rank and their
 * depth: the bands' heights, the document's height in its header; the
 * first kept call: the left edge; the run's start and the last end) and one
 * draws.  A rank's call stream interleaves its lanes, and a frame's hover
 * text holds its exclusive time, known when the call ends: so each lane of
 * the rank being drawn keeps its frames (those the drawing shows, at most a
 * few per pixel column and depth, the merged ones included) and the lanes
 * are written in order at the rank's end.  Memory: the drawing of one rank,
 * the lanes of the run, the stream's. */

typedef struct chart_lane {
    uint32_t rank;
    int64_t lane;
    uint32_t max_depth;      /* of its kept calls */
    uint32_t open_count;     /* kept calls entered, not left */
    uint32_t *open;          /* drawing: frame index in kept (or UINT32_MAX) per
                                kept depth of its open calls */
    size_t open_cap;
    chart_pass pass;         /* drawing */
} chart_lane;

typedef struct chart_stream {
    sp_stream_filter filter;
    chart_lane *lanes;       /* measuring: of the run, by rank then lane id */
    size_t num_lanes, cap_lanes;
    size_t rank_first, rank_lanes; /* the rank being streamed: its lanes */
    size_t cached;
    int64_t first_kept;      /* aligned start of the first kept call */
    int drawing;
    int replayed;            /* calls not delivered nested (a scattered rank) */
} chart_stream;

static chart_lane *chart_lane_of(chart_stream *cs, uint32_t rank, int64_t lane, int create)
{
    chart_lane *first = cs->lanes + cs->rank_first;
    if (cs->cached < cs->rank_lanes && first[cs->cached].lane == lane)
        return &first[cs->cached];
    size_t lo = 0, hi = cs->rank_lanes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (first[mid].lane < lane)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < cs->rank_lanes && first[lo].lane == lane) {
        cs->cached = lo;
        return &first[lo];
    }
    if (!create)
        return NULL;
    if (cs->num_lanes == cs->cap_lanes) {
        size_t cap = cs->cap_lanes ? 2 * cs->cap_lanes : 16;
        chart_lane *grown = realloc(cs->lanes, cap * sizeof *grown);
        if (!grown)
            return NULL;
        cs->lanes = grown;
        cs->cap_lanes = cap;
        first = cs->lanes + cs->rank_first;
    }
    memmove(first + lo + 1, first + lo, (cs->rank_lanes - lo) * sizeof *first);
    first[lo] = (chart_lane){.rank = rank, .lane = lane};
    cs->num_lanes++;
    cs->rank_lanes++;
    cs->cached = lo;
    return &first[lo];
}

/* The user word of a kept call: its depth among the kept calls (the depth
 * of the in-memory reconstruction of the kept calls). */
static int chart_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    chart_stream *cs = ctx;
    *user = parent;
    if (!sp_stream_filter_keeps(&cs->filter, call))
        return 0;
    uint32_t d = parent < 0 ? 0 : (uint32_t)parent + 1;
    *user = d;
    chart_lane *l = chart_lane_of(cs, cs->filter.rank, call->lane, !cs->drawing);
    if (!l)
        return -1;
    /* the lane's open kept calls are the call's ancestors when the calls
     * come nested; a rank replayed from memory (far out of time order:
     * every enter, then every exit) does not */
    if (l->open_count != d) {
        cs->replayed = 1;
        return -1;
    }
    l->open_count++;
    if (!cs->drawing) {
        if (d > l->max_depth)
            l->max_depth = d;
        if (call->start < cs->first_kept)
            cs->first_kept = call->start;
        return 1;
    }
    if (d >= l->open_cap) {
        size_t cap = l->open_cap ? 2 * l->open_cap : 64;
        while (cap <= d)
            cap *= 2;
        uint32_t *grown = realloc(l->open, cap * sizeof *grown);
        if (!grown)
            return -1;
        l->open = grown;
        l->open_cap = cap;
    }
    int64_t row = l->pass.data->row_of_region[call->region];
    int64_t k = chart_call(&l->pass, d, call->start, call->end, 0, call->region,
                           row >= 0 ? &l->pass.profile->rows[row] : NULL);
    if (k == -2)
        return -1;
    l->open[d] = k >= 0 ? (uint32_t)k : UINT32_MAX;
    return 1;
}

static int chart_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    chart_stream *cs = ctx;
    chart_lane *l = chart_lane_of(cs, cs->filter.rank, call->lane, 0);
    if (!l)
        return -1;
    if (l->open_count != (uint64_t)user + 1) {
        cs->replayed = 1;
        return -1;
    }
    l->open_count--;
    if (!cs->drawing)
        return 0;
    uint32_t k = l->open[user];
    if (k != UINT32_MAX)
        l->pass.kept[k].exclusive = call->exclusive;
    return 0;
}

/* One pass over every selected rank (measuring, or drawing: each rank's
 * lanes written at its end).  0, 1 (why), -1. */
static int chart_stream_pass(chart_stream *cs, const sp_run_source *src, const uint32_t *ranks,
                             long num_ranks, chart_pass *shape, double *y, int64_t *run_first,
                             int64_t *run_last, char *why, size_t whylen)
{
    const sp_profile *profile = src->profile;
    sp_call_visitor visitor = {chart_enter, chart_exit, cs};
    sp_rank_data rows = {0};
    int rc = 0;
    if (cs->drawing &&
        !(rows.row_of_region = malloc((profile->num_names ? profile->num_names : 1) *
                                      sizeof *rows.row_of_region)))
        return -1;
    size_t next = 0; /* drawing: the first lane of the rank */
    for (long k = 0; k < num_ranks && rc == 0; k++) {
        uint32_t rank = ranks[k];
        if (sp_stream_rank_file(src, rank) < 0)
            continue;
        sp_stream_filter_rank(&cs->filter, rank);
        if (cs->drawing) {
            cs->rank_first = next;
            cs->rank_lanes = 0;
            while (next < cs->num_lanes && cs->lanes[next].rank == rank) {
                next++;
                cs->rank_lanes++;
            }
            if (cs->rank_lanes == 0)
                continue; /* no kept call */
            sp_stream_rows_of_rank(profile, rank, rows.row_of_region);
            for (size_t l = 0; l < cs->rank_lanes; l++) {
                chart_lane *ln = &cs->lanes[cs->rank_first + l];
                ln->pass = *shape;
                ln->pass.frames = 0;
                ln->pass.data = &rows;
                ln->pass.keep = 1;
                ln->pass.hidden_below = NOT_HIDING;
                ln->pass.top = *y + ROW;
                *y += ROW * (ln->max_depth + 2) + 4;
            }
        } else {
            cs->rank_first = cs->num_lanes;
            cs->rank_lanes = 0;
        }
        cs->cached = 0;
        int64_t offset = sp_rank_clock_offset(profile, rank);
        sp_rank_stream_info info;
        rc = sp_stream_rank(src, rank, offset, &visitor, &info, why, whylen);
        if (rc < 0 && cs->replayed) {
            snprintf(why, whylen, "rank %u: calls far out of time order (replayed from memory, "
                                  "not nested)", rank);
            rc = 1;
        }
        if (rc == 0 && !cs->drawing && info.calls) {
            if (info.first_start + offset < *run_first)
                *run_first = info.first_start + offset;
            if (info.last_end + offset > *run_last)
                *run_last = info.last_end + offset;
        }
        sp_rank_stream_info_free(&info);
        for (size_t l = 0; cs->drawing && l < cs->rank_lanes; l++) {
            chart_lane *ln = &cs->lanes[cs->rank_first + l];
            chart_pass *c = &ln->pass;
            if (rc == 0) {
                chart_flush_all(c);
                if (c->failed)
                    rc = -1;
            }
            if (rc == 0) {
                char label[512] = "";
                if (src->any_thread)
                    sp_lane_label(profile, rank, ln->lane, label, sizeof label);
                fprintf(shape->out, "<text class=\"band\" x=\"%g\" y=\"%.1f\">rank %u%s",
                        MARGIN, c->top - 4, rank, label[0] ? " - " : "");
                sp_svg_escape(shape->out, label);
                fputs("</text>\n", shape->out);
                for (size_t f = 0; f < c->num_kept; f++)
                    chart_write(shape->out, c, &c->kept[f]);
                shape->frames += c->frames;
            }
            free(c->kept);
            free(c->blocks);
            free(ln->open);
            c->kept = NULL;
            c->blocks = NULL;
            ln->open = NULL;
        }
    }
    free(rows.row_of_region);
    if (rc < 0)
        snprintf(why, whylen, "out of memory");
    return rc;
}

int sp_flame_chart_stream(FILE *out, const struct sp_run_source *src,
                          const sp_export_options *options, char *why, size_t whylen)
{
    const sp_profile *profile = src->profile;
    const sp_selection *sel = options ? options->selection : NULL;
    /* (MPI columns are not part of this output: the stream leaves them) */
    const char *reason = sp_run_source_unstreamable_calls(src);
    if (reason) {
        snprintf(why, whylen, "%s", reason);
        return 1;
    }
    chart_stream cs = {.first_kept = INT64_MAX};
    int rc = sp_stream_filter_init(&cs.filter, src, sel, why, whylen);
    if (rc != 0)
        return rc;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    int64_t run_first = INT64_MAX, run_last = INT64_MIN;
    if (num_ranks < 0)
        rc = -1;
    /* the ranks left out: checked, and their first start (the run's start) */
    if (rc == 0 && sp_stream_check_run(src, ranks, num_ranks, &run_first, why, whylen))
        rc = 1;
    chart_pass shape = {0};
    double y = HEADER;
    if (rc == 0)
        rc = chart_stream_pass(&cs, src, ranks, num_ranks, &shape, &y, &run_first, &run_last,
                               why, whylen);
    if (rc == 0 && cs.first_kept == INT64_MAX) {
        snprintf(why, whylen, "no calls: the in-memory path words it");
        rc = 1;
    }
    if (rc == 0) {
        /* as flame_chart, from what the measuring pass learnt */
        int64_t run_origin = 0;
        if (sp_profile_meta_int(profile, "start_time_ns", &run_origin) != 0)
            run_origin = run_first == INT64_MAX ? 0 : run_first;
        shape.profile = profile;
        shape.run_origin = run_origin;
        shape.origin = cs.first_kept;
        int64_t last = shape.origin;
        if (run_last > last)
            last = run_last;
        if (sel && sel->has_from) {
            int64_t from = run_origin + (int64_t)(sel->from_s * 1e9);
            if (from > shape.origin && from < last)
                shape.origin = from;
        }
        if (sel && sel->has_to) {
            int64_t to = run_origin + (int64_t)(sel->to_s * 1e9);
            if (to < last && to > shape.origin)
                last = to;
        }
        shape.span = last > shape.origin ? (double)(last - shape.origin) : 1.0;
        for (size_t l = 0; l < cs.num_lanes; l++)
            y += ROW * (cs.lanes[l].max_depth + 2) + 4;
        char title[600];
        snprintf(title, sizeof title, "Flame chart - %s (%.6g ms from %.6g ms)",
                 sp_export_label(profile, options), shape.span / 1e6,
                 (shape.origin - run_origin) / 1e6);
        header(out, y + MARGIN, title);
        shape.out = out;
        y = HEADER;
        cs.drawing = 1;
        rc = chart_stream_pass(&cs, src, ranks, num_ranks, &shape, &y, &run_first, &run_last,
                               why, whylen);
    }
    if (rc == 0) {
        fputs("</svg>\n", out);
        sp_export_warn_events(options, shape.frames, "flame chart");
    }
    free(cs.lanes);
    sp_stream_filter_free(&cs.filter);
    free(ranks);
    return rc;
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
