/* flame_diff_svg.c - the differential flame graph (`scopeprof flame --diff
 * A B`): the flame graph of B (width = B's inclusive time per call path)
 * with each frame coloured by the change of its own time from A to B, red
 * slower, blue faster, white unchanged, saturated at +-50 % (new paths full
 * red).  A frame whose own time is under 1 % of the graph is paler in
 * proportion: the relative change of a few microseconds is mostly noise and
 * would otherwise paint every thin parent frame.  Every tooltip gives both runs' numbers.  Kept apart from
 * src/export/flame_svg.c on purpose: the plain flame graph stays simple. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/diff.h"
#include "scopeprof/export.h"

#define WIDTH 1200.0
#define MARGIN 10.0
#define ROW 16.0
#define CHAR_W 6.6
#define HEADER 56.0
#define SATURATION 50.0 /* % change drawn at full colour */
#define FULL_WEIGHT 0.01 /* own time (fraction of the graph) drawn at full colour */


/* White (0) to red (+1) or blue (-1). */
static void change_colour(double change, int *r, int *g, int *b)
{
    double t = fabs(change) > 1 ? 1 : fabs(change);
    int fade = (int)lround(245 - 190 * t);
    if (change >= 0) {
        *r = (int)lround(245 - 25 * t);
        *g = *b = fade;
    } else {
        *r = *g = fade;
        *b = (int)lround(245 - 25 * t);
    }
}

static const char script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "var W=%g,M=%g,CW=%g;\n"
    "function frames(){return document.querySelectorAll('g.frame');}\n"
    "function label(n,w){var k=Math.floor((w-6)/CW);if(k<3)return '';"
    "return n.length<=k?n:n.substr(0,k-2)+'..';}\n"
    "function zoom(z){var zx=z?+z.dataset.x:0,zw=z?+z.dataset.w:1;if(zw<=0)return;"
    "frames().forEach(function(g){var x=(+g.dataset.x-zx)/zw,w=+g.dataset.w/zw,"
    "r=g.querySelector('rect'),t=g.querySelector('text');"
    "if(x+w<=0||x>=1){g.style.display='none';return;}g.style.display='';"
    "if(x<0){w+=x;x=0;}if(x+w>1)w=1-x;var px=M+x*(W-2*M),pw=w*(W-2*M);"
    "r.setAttribute('x',px);r.setAttribute('width',pw);t.setAttribute('x',px+3);"
    "t.textContent=label(g.dataset.n,pw);});"
    "document.getElementById('unzoom').style.opacity=z?1:0;}\n"
    "window.addEventListener('load',function(){frames().forEach(function(g){"
    "g.addEventListener('click',function(e){zoom(g);e.stopPropagation();});});"
    "document.getElementById('unzoom').addEventListener('click',function(){zoom(null);});});\n"
    "]]></script>\n";


/* Row of `key` among the rows (sorted by key), or -1. */
static long find_row(const sp_diff *d, const char *key, size_t len)
{
    size_t lo = 0, hi = d->num_rows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strncmp(d->rows[mid].key, key, len);
        if (c == 0 && d->rows[mid].key[len])
            c = 1;
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static long parent_row(const sp_diff *d, const sp_diff_row *row)
{
    size_t key_len = strlen(row->key), name_len = strlen(row->name);
    if (row->depth == 0 || key_len < name_len + 3)
        return -1;
    return find_row(d, row->key, key_len - name_len - 3);
}

static void side_text(char *buf, size_t len, const char *side, size_t runs, uint64_t calls,
                      double total, double own)
{
    snprintf(buf, len, "%s%s: calls %llu, inclusive %.6g ms, own %.6g ms", side,
             runs > 1 ? " (mean of runs)" : "", (unsigned long long)calls, total / 1e6,
             own / 1e6);
}

int sp_flame_diff_svg(FILE *out, const sp_run_stats *a, size_t num_a, const sp_run_stats *b,
                      size_t num_b, const char *title, char *err, size_t errlen)
{
    sp_diff total, own;
    if (sp_diff_build(a, num_a, b, num_b, SP_METRIC_TOTAL, &total, err, errlen) != 0)
        return -1;
    if (sp_diff_build(a, num_a, b, num_b, SP_METRIC_OWN, &own, err, errlen) != 0) {
        sp_diff_free(&total);
        return -1;
    }
    size_t n = total.num_rows;
    double *x = calloc(n ? n : 1, sizeof *x), *next = calloc(n ? n : 1, sizeof *next);
    uint32_t *depth = calloc(n ? n : 1, sizeof *depth);
    if (!x || !next || !depth) {
        free(x), free(next), free(depth);
        sp_diff_free(&total);
        sp_diff_free(&own);
        snprintf(err, errlen, "out of memory laying out the differential flame graph");
        return -1;
    }
    /* Keys sort parents before their children: one pass lays out B. */
    double width_total = 0;
    uint32_t max_depth = 0;
    for (size_t k = 0; k < n; k++) {
        const sp_diff_row *row = &total.rows[k];
        if (row->status == SP_DIFF_REMOVED)
            continue;
        long p = parent_row(&total, row);
        if (p < 0 || total.rows[p].status == SP_DIFF_REMOVED) {
            x[k] = width_total;
            width_total += row->b;
            depth[k] = 0;
        } else {
            x[k] = next[p];
            next[p] += row->b;
            depth[k] = depth[p] + 1;
        }
        next[k] = x[k];
        if (depth[k] > max_depth)
            max_depth = depth[k];
    }
    if (width_total <= 0) {
        free(x), free(next), free(depth);
        sp_diff_free(&total);
        sp_diff_free(&own);
        snprintf(err, errlen, "%s: no calls recorded for the selected ranks and filters",
                 num_b ? b[0].description : "B");
        return -1;
    }
    double height = HEADER + (max_depth + 1) * ROW + 2 * MARGIN;
    fprintf(out,
            "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
            "xmlns=\"http://www.w3.org/2000/svg\">\n"
            "<style>text{font-family:monospace;font-size:11px;fill:#000}"
            "g.frame{cursor:pointer}g.frame:hover rect{stroke:#000;stroke-width:0.5}"
            "#unzoom{cursor:pointer}</style>\n",
            WIDTH, height, WIDTH, height);
    fprintf(out, script, WIDTH, MARGIN, CHAR_W);
    fprintf(out, "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%g\" height=\"%g\" "
                 "fill=\"#f8f8f8\"/>\n<text x=\"%g\" y=\"20\" text-anchor=\"middle\" "
                 "style=\"font-size:15px\">",
            WIDTH, height, WIDTH / 2);
    sp_svg_escape(out, title);
    fprintf(out, "</text>\n<text id=\"unzoom\" x=\"%g\" y=\"20\" style=\"opacity:0\">"
                 "Reset zoom</text>\n<text id=\"legend\" x=\"%g\" y=\"36\">width: B; colour: "
                 "change of own time from A to B (red slower, blue faster, full at %g %%; "
                 "paler below 1 %% of the graph)</text>\n<text id=\"removed\" x=\"%g\" y=\"50\">",
            MARGIN, MARGIN, SATURATION, MARGIN);
    size_t removed = 0;
    for (size_t k = 0; k < n; k++) {
        const sp_diff_row *row = &total.rows[k];
        if (row->status != SP_DIFF_REMOVED)
            continue;
        fputs(removed++ ? ", " : "only in A: ", out);
        sp_svg_escape(out, row->key);
        if (removed >= 8 && k + 1 < n) {
            fputs(", ...", out);
            break;
        }
    }
    fputs("</text>\n", out);
    double scale = 1.0 / width_total;
    for (size_t k = 0; k < n; k++) {
        const sp_diff_row *row = &total.rows[k], *orow = &own.rows[k];
        if (row->status == SP_DIFF_REMOVED)
            continue;
        double change = row->status == SP_DIFF_NEW ? 1
                        : isfinite(orow->pct)      ? orow->pct / SATURATION
                        : orow->b > 0              ? 1
                                                   : 0;
        double own_share = (orow->a > orow->b ? orow->a : orow->b) * scale;
        if (own_share < FULL_WEIGHT)
            change *= own_share / FULL_WEIGHT;
        int r, g, bl;
        change_colour(change, &r, &g, &bl);
        double fx = x[k] * scale, fw = row->b * scale;
        double px = MARGIN + fx * (WIDTH - 2 * MARGIN), pw = fw * (WIDTH - 2 * MARGIN);
        double y = height - MARGIN - (depth[k] + 1) * ROW;
        char sa[200], sb[200];
        side_text(sa, sizeof sa, "A", num_a, row->calls_a, row->a, orow->a);
        side_text(sb, sizeof sb, "B", num_b, row->calls_b, row->b, orow->b);
        fputs("<g class=\"frame\" data-n=\"", out);
        sp_svg_escape(out, row->name);
        fprintf(out, "\" data-x=\"%.9g\" data-w=\"%.9g\" data-own-pct=\"", fx, fw);
        if (row->status == SP_DIFF_NEW)
            fputs("new", out);
        else if (isfinite(orow->pct))
            fprintf(out, "%.3f", orow->pct);
        fputs("\"><title>", out);
        sp_svg_escape(out, row->key);
        fputc('\n', out);
        if (row->status == SP_DIFF_NEW) {
            fputs("new in B\n", out);
        } else {
            sp_svg_escape(out, sa);
            fputc('\n', out);
        }
        sp_svg_escape(out, sb);
        if (row->status != SP_DIFF_NEW && isfinite(orow->pct)) {
            fprintf(out, "\nown time %+.1f %%", orow->pct);
            if (isfinite(orow->pct_low))
                fprintf(out, " (90 %% interval %+.1f .. %+.1f %%)", orow->pct_low,
                        orow->pct_high);
        }
        fprintf(out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.3f\" height=\"%g\" "
                     "fill=\"rgb(%d,%d,%d)\" stroke=\"#bbb\" stroke-width=\"0.3\" rx=\"2\"/>"
                     "<text x=\"%.2f\" y=\"%.1f\">",
                px, y, pw, ROW - 1, r, g, bl, px + 3, y + ROW - 4.5);
        sp_svg_clipped_label(out, row->name, pw);
        fputs("</text></g>\n", out);
    }
    fputs("</svg>\n", out);
    free(x), free(next), free(depth);
    sp_diff_free(&total);
    sp_diff_free(&own);
    return ferror(out) ? -1 : 0;
}
