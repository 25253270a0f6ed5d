/* scopeprof/export.h - exporters for the viewers people already use, the
 * flame graph, and the helpers they share (streaming JSON writer, per-lane
 * walk, call-path aggregation).
 *
 * Every exporter streams to a FILE*: memory is bounded by the input columns
 * plus one rank's reconstruction at a time, never by the output text.
 * Each returns 0, or -1 with a one-line message in err. */
#ifndef SCOPEPROF_EXPORT_H
#define SCOPEPROF_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "scopeprof/analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- streaming JSON writer ---------------------------------------------- */

#define SP_JSON_MAX_DEPTH 32

typedef struct sp_json {
    FILE *out;
    int depth;
    int after_key;                         /* a key was written, value pending */
    unsigned char has_items[SP_JSON_MAX_DEPTH]; /* comma needed at this level */
} sp_json;

void sp_json_init(sp_json *j, FILE *out);
void sp_json_begin_object(sp_json *j);
void sp_json_end_object(sp_json *j);
void sp_json_begin_array(sp_json *j);
void sp_json_end_array(sp_json *j);
void sp_json_key(sp_json *j, const char *key);
void sp_json_string(sp_json *j, const char *s);          /* NULL -> null */
void sp_json_string_n(sp_json *j, const char *s, size_t n);
void sp_json_int(sp_json *j, int64_t v);
void sp_json_uint(sp_json *j, uint64_t v);
void sp_json_double(sp_json *j, double v);               /* non-finite -> null */
/* value / 10^decimals written exactly in decimal (e.g. ns as seconds with 9),
 * trailing zeros dropped: fast and lossless for integer clocks. */
void sp_json_fixed(sp_json *j, int64_t value, unsigned decimals);
void sp_json_bool(sp_json *j, int v);
void sp_json_null(sp_json *j);
/* A value that already is JSON text (caller guarantees validity). */
void sp_json_raw(sp_json *j, const char *json);
/* Raw newline between items, to keep huge documents line-oriented. */
void sp_json_newline(sp_json *j);
/* Write the string escaped for JSON, without quotes (also used by CSV/SVG). */
void sp_json_escape(FILE *out, const char *s, size_t n);
/* Write value / 10^decimals to out (shared by the text exporters). */
void sp_write_fixed(FILE *out, int64_t value, unsigned decimals);
void sp_write_int(FILE *out, int64_t v);

/* ---- per-lane depth-first walk ------------------------------------------ */

/* Children in start order and, per lane (ascending lane id), the chain of
 * that lane's roots in start order (roots are chained through next_sibling,
 * one chain per lane). */
typedef struct sp_lane_walk {
    size_t num_lanes;
    int64_t *lanes;        /* ascending; -1 alone when there is no lane column */
    int64_t *first_root;   /* per lane */
    size_t *lane_calls;    /* per lane: number of calls */
    int64_t *first_child;  /* per call */
    int64_t *next_sibling; /* per call */
} sp_lane_walk;

int sp_lane_walk_build(const sp_calls *calls, sp_lane_walk *walk);
void sp_lane_walk_free(sp_lane_walk *walk);

/* Visit one lane depth first: open(i) before the children of i, close(i)
 * after them; no recursion.  Returns the first nonzero callback result. */
typedef int (*sp_walk_fn)(void *ctx, size_t call);
int sp_lane_walk_visit(const sp_lane_walk *walk, const sp_calls *calls, size_t lane_index,
                       sp_walk_fn open, sp_walk_fn close, void *ctx);

/* ---- call-path aggregation ---------------------------------------------- */

enum { SP_PATH_REGION = 0, SP_PATH_RANK = 1, SP_PATH_LANE = 2 };

typedef struct sp_path_node {
    int64_t parent;        /* -1: a top node */
    int kind;              /* SP_PATH_* */
    int64_t value;         /* region index, rank, or lane id */
    int64_t first_child, last_child, next_sibling; /* first-seen order */
    uint64_t calls;
    int64_t inclusive_ns, exclusive_ns;
    /* source of the first call seen on this path */
    const char *source_file; /* "" unknown */
    int64_t source_line;     /* -1 unknown */
} sp_path_node;

typedef struct sp_path_tree {
    size_t n, cap;
    sp_path_node *nodes;
    int64_t *first_top, *last_top;
    /* open addressing hash of (parent, kind, value) -> node */
    size_t slots;
    int64_t *table;
} sp_path_tree;

void sp_path_tree_init(sp_path_tree *tree);
void sp_path_tree_free(sp_path_tree *tree);
/* The child (kind, value) of parent (-1 = top level), created if new;
 * -1 on allocation failure. */
int64_t sp_path_tree_child(sp_path_tree *tree, int64_t parent, int kind, int64_t value);
/* Add every call of a rank: path node = (node of its parent call, region).
 * Roots hang from `top` (-1 = top level), or, with per_lane, from a lane
 * node under `top`.  node_of_call (calls.n entries) may be NULL. */
int sp_path_tree_add(sp_path_tree *tree, const sp_profile *profile, const sp_rank_data *data,
                     int64_t top, int per_lane, int64_t *node_of_call);
/* First top-level node, for iteration through next_sibling. */
int64_t sp_path_tree_first_top(const sp_path_tree *tree);

/* ---- exporters ---------------------------------------------------------- */

typedef struct sp_export_options {
    const sp_selection *selection; /* NULL: everything */
    const char *label;             /* run label; NULL: metadata "label" or "profile" */
    int call_paths;                /* prof: 1 = call-path mode (default) */
    FILE *warnings;                /* warnings go here (stderr); NULL: none */
    const char *command;           /* names the warnings ("flame"); NULL: "export" */
    int call_args;                 /* chrome: per-call args (ids, durations), see
                                      docs/viewers.md; 0: only the region's source */
} sp_export_options;

/* More events than this in one export: warn and suggest filters. */
#define SP_EXPORT_WARN_EVENTS 1000000u

const char *sp_export_label(const sp_profile *profile, const sp_export_options *options);

int sp_export_speedscope(FILE *out, const sp_profile *profile, const sp_export_options *options,
                         char *err, size_t errlen);
int sp_export_chrome(FILE *out, const sp_profile *profile, const sp_export_options *options,
                     char *err, size_t errlen);
/* One rank's pstats dict, in Python's marshal format. */
int sp_export_prof(FILE *out, const sp_profile *profile, uint32_t rank,
                   const sp_export_options *options, char *err, size_t errlen);
/* The same bytes from a run source, one rank at a time (docs/stream.md,
 * "Exports"), in memory that follows the rank's distinct call paths (its
 * regions and callers with --no-call-paths).  open: 0 with the ranks to
 * write (*ranks, to free); 1 (why: export in memory, which words it: the
 * run does not stream, no rank is selected, a problem in a rank left out);
 * -1 out of memory.  rank: one rank's dict into out; 0 with *calls its
 * calls (for sp_export_warn_events, which this does not call); 1 (why:
 * discard every file written, export in memory); -1 out of memory. */
typedef struct sp_prof_stream sp_prof_stream;
struct sp_run_source;
int sp_prof_stream_open(sp_prof_stream **out, const struct sp_run_source *src,
                        const sp_export_options *options, uint32_t **ranks, long *num_ranks,
                        char *why, size_t whylen);
int sp_prof_stream_rank(sp_prof_stream *s, FILE *out, uint32_t rank, uint64_t *calls,
                        char *why, size_t whylen);
void sp_prof_stream_close(sp_prof_stream *s);
int sp_export_folded(FILE *out, const sp_profile *profile, const sp_export_options *options,
                     char *err, size_t errlen);
/* The folded export in its three steps, so that a run exported in parts
 * (src/dist, one part per MPI process) decides the stack prefixes over all
 * parts: the path tree of the selected ranks (no calls is not an error
 * here; *calls counts them), its shape (ranks with calls, whether some rank
 * has several lanes: "rank R" frames are shown when the whole export has
 * more than one such rank, lane frames when some rank has several lanes),
 * and its lines.  sp_export_folded = build, shape, write. */
int sp_folded_build(const sp_profile *profile, const sp_export_options *options,
                    sp_path_tree *tree, uint64_t *calls, char *err, size_t errlen);
void sp_folded_shape(const sp_path_tree *tree, size_t *rank_nodes, int *several_lanes);
void sp_folded_write(FILE *out, const sp_profile *profile, const sp_path_tree *tree,
                     int show_rank, int show_lane);
/* The same lines from a run source, in memory that follows the call paths
 * (docs/stream.md, "Exports"): 0; 1 (why: export in memory, nothing was
 * written); -1 out of memory. */
struct sp_run_source;
int sp_export_folded_stream(FILE *out, const struct sp_run_source *src,
                            const sp_export_options *options, char *why, size_t whylen);
/* Perfetto's native protobuf trace (TrackEvent): a track per rank and lane,
 * interned names, delta-encoded timestamps; about 22 bytes per call. */
int sp_export_perfetto(FILE *out, const sp_profile *profile, const sp_export_options *options,
                       char *err, size_t errlen);
/* The same bytes from a run source (scopeprof/stream.h), in bounded memory
 * (docs/stream.md, "Exports").  0; 1 when this path does not export this run
 * or a file has a problem (why: the reason; whatever was written to `out`
 * must be discarded and the in-memory exporter run, which words the
 * message); -1 when writing failed.  On stdout (and for runs with thread
 * ids) every rank is checked before the first byte: 1 then means nothing
 * was written. */
struct sp_run_source;
int sp_export_perfetto_stream(FILE *out, const struct sp_run_source *src,
                              const sp_export_options *options, char *why, size_t whylen);
int sp_export_json(FILE *out, const sp_profile *profile, const sp_export_options *options,
                   char *err, size_t errlen);
int sp_export_csv(FILE *out, const sp_profile *profile, const sp_export_options *options,
                  char *err, size_t errlen);
/* An OTF2 archive in directory dir (created if missing; an archive already
 * there is an error): dir/traces.otf2, dir/traces.def, dir/traces/N.evt,
 * one location per rank and lane.  Without libotf2 at build time
 * (sp_export_have_otf2 == 0) it fails, saying how to enable it. */
extern const int sp_export_have_otf2;
int sp_export_otf2(const char *dir, const sp_profile *profile, const sp_export_options *options,
                   char *err, size_t errlen);
/* The same archive from a run source (docs/stream.md, "Exports"), in
 * memory that follows the lanes of a rank (a writer's buffer each), not
 * its calls.  0; 1 (why: nothing left in dir, export in memory, which
 * words the problem: the run does not stream, a file or the target has a
 * problem, no calls); -1 when the library failed (why: the message; the
 * archive is removed). */
int sp_export_otf2_stream(const char *dir, const struct sp_run_source *src,
                          const sp_export_options *options, char *why, size_t whylen);
/* chart = 0: flame graph (aggregated by call path); 1: flame chart (time). */
int sp_flame_svg(FILE *out, const sp_profile *profile, const sp_export_options *options,
                 int chart, char *err, size_t errlen);
/* The flame graph (not the chart) from a run source, in memory that follows
 * the call paths (docs/stream.md, "Exports"): 0; 1 (why: draw it in memory,
 * nothing was written); -1 out of memory. */
struct sp_run_source;
int sp_flame_svg_stream(FILE *out, const struct sp_run_source *src,
                        const sp_export_options *options, char *why, size_t whylen);
/* The flame chart from a run source, in memory that follows the drawing
 * of one rank and the lanes of the run (docs/stream.md, "Exports"): 0; 1
 * (why: draw it in memory; the document may have been begun: discard it);
 * -1 out of memory. */
int sp_flame_chart_stream(FILE *out, const struct sp_run_source *src,
                          const sp_export_options *options, char *why, size_t whylen);
/* The flame graph's colour of a region name (stable: a hash of the name),
 * shared with the HTML report so both views colour a region alike. */
void sp_flame_colour(const char *name, int *r, int *g, int *b);
/* Text for an SVG document: XML-escaped, control characters dropped,
 * invalid UTF-8 as U+FFFD (shared by the flame graphs). */
void sp_svg_escape(FILE *out, const char *s);
/* A frame label that fits `width` pixels of 11px monospace ("" when not
 * even two characters do), escaped as sp_svg_escape. */
void sp_svg_clipped_label(FILE *out, const char *name, double width);

/* The report's tables (scopeprof/report.h) for scripts, `scopeprof report
 * --format json|csv` (export_report.c; keys in docs/compare.md).  JSON: the
 * whole report in one document (header, flat, tree merged and depth first,
 * ranks_table, threads, warnings).  CSV: one table.  0 or -1. */
struct sp_report;
typedef enum sp_report_table {
    SP_REPORT_TABLE_FLAT = 0,
    SP_REPORT_TABLE_TREE,
    SP_REPORT_TABLE_RANKS
} sp_report_table;
int sp_export_report_json(FILE *out, const struct sp_report *report, const char *const *files,
                          size_t num_files);
int sp_export_report_csv(FILE *out, const struct sp_report *report, sp_report_table table);

/* Shared by the exporters: warn (options->warnings) when an export wrote
 * more than SP_EXPORT_WARN_EVENTS events, suggesting filters. */
void sp_export_warn_events(const sp_export_options *options, uint64_t events,
                           const char *format);

#ifdef __cplusplus
}
#endif

#endif /* SCOPEPROF_EXPORT_H */
