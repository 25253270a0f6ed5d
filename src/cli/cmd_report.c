/* cmd_report.c - `scopeprof report [options] FILES...`: option parsing and
 * printing of the tables computed by sp_report_build (src/report.c).
 * Everything fits an 80-column terminal; a name too long for its column
 * goes on a line of its own with the numbers below it, never truncated. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/utf8.h"
#include "cli_util.h"
#include "cmd_report_html.h"
#include "commands.h"
#include "dist/dist.h"
#include "report_mpi_print.h"
#include "scopeprof/analysis.h"
#include "scopeprof/export.h"
#include "scopeprof/h5.h"
#include "scopeprof/report.h"
#include "scopeprof/stream.h"

#define CMD "report"

static const char report_help[] =
    "usage: scopeprof report [options] FILES...\n"
    "\n"
    "Print the call tree, the flat profile, the thread and task tables and the\n"
    "cross-rank statistics of one run (rank files of one run, merged files, or\n"
    "files written by the Python scope-profiler).\n"
    "\n"
    "sections (default: all that apply; several may be given):\n"
    "      --tree           the call tree, merged over ranks and lanes\n"
    "      --flat           the flat profile\n"
    "      --threads[=all]  the thread and task tables (threads that recorded no\n"
    "                       call only with =all)\n"
    "      --ranks-table    per-region statistics over ranks\n"
    "      --mpi            MPI: time, waits, bytes, message sizes, traffic\n"
    "\n"
    "options:\n"
    "      --lanes          one call tree per rank and lane instead of one merged\n"
    "                       tree (to select lanes, use --lanes=LIST)\n"
    "      --depth N        show N levels of the call tree (1 = roots only;\n"
    "                       default 64, so deep recursion stays readable)\n"
    "      --min-percent P  hide tree nodes below P %% of the run\n"
    "      --sort KEY       flat profile order: exclusive (default), inclusive,\n"
    "                       calls, mean, max, name\n"
    "      --format F       text (default); json: every table in one document;\n"
    "                       csv: one table, --flat (default), --tree or\n"
    "                       --ranks-table (keys and columns: docs/compare.md)\n"
    "  -j, --jobs N         worker processes reading rank files (default: the\n"
    "                       number of CPUs; the output is the same for every N);\n"
    "                       under an MPI launcher (mpirun -np N scopeprof report)\n"
    "                       the N processes share the ranks instead\n"
    "  -o, --output FILE    write the report to FILE; FILE.html (or .htm) writes\n"
    "                       one self-contained HTML page instead of text (hotspots,\n"
    "                       call tree, flame graph, timeline, load balance,\n"
    "                       threads, MPI; opens offline in any browser)\n"
    "      --compare        the files after it are another run: the HTML report\n"
    "                       compares the runs with the first one (files of\n"
    "                       different run ids are told apart without it)\n"
    "  -h, --help           show this help\n"
    "\n"
    "selection:\n"
    "%s"
    "\n"
    "Times: inclusive = with children, exclusive = without; the flat inclusive\n"
    "time counts recursive calls once.  %% of the run = inclusive / (wall time x\n"
    "ranks in the tree).  Colour only on a terminal and without NO_COLOR.\n"
    "Exit status: 0 ok, 1 unreadable or damaged file, 2 usage error.\n";

/* ---- output helpers ---------------------------------------------------------- */

typedef struct printer {
    FILE *out;
    int color;
} printer;

static const char *bold(const printer *p) { return p->color ? "\033[1m" : ""; }
static const char *dim(const printer *p) { return p->color ? "\033[2m" : ""; }
static const char *reset(const printer *p) { return p->color ? "\033[0m" : ""; }

/* Terminal columns of a string as sp_utf8_write prints it (µ is one
 * column, two bytes; an invalid byte one U+FFFD). */
static size_t columns(const char *s)
{
    size_t n = 0;
    for (; *s; s++, n++) {
        size_t k = (unsigned char)*s < 0x80 ? 1 : sp_utf8_sequence((const unsigned char *)s, 4);
        s += k ? k - 1 : 0;
    }
    return n;
}

/* `s` right-aligned in `width` columns, after one separating space. */
static void cell(const printer *p, const char *s, size_t width)
{
    size_t c = columns(s);
    fputc(' ', p->out);
    for (; c < width; c++)
        fputc(' ', p->out);
    fputs(s, p->out);
}

static void time_cell(const printer *p, int64_t ns, size_t width)
{
    char buf[32];
    sp_format_duration(ns, buf, sizeof buf);
    cell(p, buf, width);
}

static void count_cell(const printer *p, uint64_t n, size_t width)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)n);
    cell(p, buf, width);
}

/* A name column: `text` (with `extra` dimmed after it) padded to `width`;
 * when too long, alone on its line and the numbers start on the next. */
static void name_cell(const printer *p, size_t indent, const char *text, const char *extra,
                      size_t width)
{
    size_t used = indent + columns(text) + (extra && extra[0] ? 2 + columns(extra) : 0);
    /* Names are bytes: the terminal gets UTF-8, U+FFFD for the rest. */
    fprintf(p->out, "%*s", (int)indent, "");
    sp_utf8_write(p->out, text, strlen(text));
    if (extra && extra[0]) {
        fprintf(p->out, "  %s", dim(p));
        sp_utf8_write(p->out, extra, strlen(extra));
        fputs(reset(p), p->out);
    }
    if (used > width) {
        fputc('\n', p->out);
        used = 0;
    }
    for (; used < width; used++)
        fputc(' ', p->out);
}

static void section(const printer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void section(const printer *p, const char *fmt, ...)
{
    va_list ap;
    fprintf(p->out, "\n%s", bold(p));
    va_start(ap, fmt);
    vfprintf(p->out, fmt, ap);
    va_end(ap);
    fprintf(p->out, "%s\n", reset(p));
}

/* "0-3,5,7-8" */
static void print_rank_list(FILE *out, const uint32_t *ranks, size_t n)
{
    for (size_t k = 0; k < n;) {
        size_t j = k;
        while (j + 1 < n && ranks[j + 1] == ranks[j] + 1)
            j++;
        fprintf(out, "%s%u", k ? "," : "", ranks[k]);
        if (j > k)
            fprintf(out, "-%u", ranks[j]);
        k = j + 1;
    }
}

/* ---- header ------------------------------------------------------------------ */

static void print_header(const printer *p, const sp_report *r, const sp_profile *profile,
                         char **files, size_t num_files)
{
    const char *label = sp_profile_meta_string(profile, "label");
    fprintf(p->out, "%sscopeprof report%s%s%s\n", bold(p), label && label[0] ? ": " : "",
            label && label[0] ? label : "", reset(p));
    fprintf(p->out, "  files  ");
    /* Long file lists (one file per rank) are shortened to first ... last. */
    for (size_t k = 0; k < num_files; k++) {
        if (num_files > 4 && k == 2) {
            fprintf(p->out, " ...");
            k = num_files - 1;
        }
        fprintf(p->out, "%s%s", k ? " " : "", files[k]);
    }
    if (num_files > 4)
        fprintf(p->out, " (%zu files)", num_files);
    char wall[32];
    sp_format_duration(r->wall_ns, wall, sizeof wall);
    fprintf(p->out, "\n  ranks  %zu", r->num_ranks);
    if (r->num_ranks) {
        fprintf(p->out, " (");
        print_rank_list(p->out, r->ranks, r->num_ranks);
        fprintf(p->out, ")");
    }
    fprintf(p->out, "   wall time  %s   calls  %llu\n", wall, (unsigned long long)r->num_calls);
}

/* ---- call tree ------------------------------------------------------------- */

typedef struct tree_view {
    long max_depth;           /* levels shown; 0 = all */
    double min_percent;
} tree_view;

#define TREE_NAME_W 25
/* Deep recursion (10^6 levels happen) must not print a terabyte of
 * indentation: levels are cut at 64 unless --depth says otherwise, and the
 * indentation stops growing after 16 levels, where "[N]" gives the depth. */
#define DEFAULT_TREE_DEPTH 64
#define MAX_INDENT_LEVELS 16

static double node_percent(const sp_report *r, const sp_report_tree *t, const sp_report_node *n)
{
    if (r->wall_ns <= 0 || t->num_ranks == 0)
        return -1;
    return 100.0 * (double)n->inclusive / ((double)r->wall_ns * (double)t->num_ranks);
}

static void tree_columns(const printer *p)
{
    fprintf(p->out, "%s%-*s", dim(p), TREE_NAME_W, "region");
    cell(p, "calls", 7);
    cell(p, "%run", 5);
    static const char *const heads[] = {"incl", "excl", "mean", "min", "max"};
    for (size_t k = 0; k < 5; k++)
        cell(p, heads[k], 7);
    fprintf(p->out, "%s\n", reset(p));
}

static void print_node(const printer *p, const sp_report *r, const sp_report_tree *t,
                       const sp_report_node *n)
{
    const sp_profile *profile = r->profile;
    char where[512] = "";
    const char *file = r->source_file[n->region];
    if (file) {
        const char *base = strrchr(file, '/');
        if (r->source_line[n->region] >= 0)
            snprintf(where, sizeof where, "%s:%lld", base ? base + 1 : file,
                     (long long)r->source_line[n->region]);
        else
            snprintf(where, sizeof where, "%s", base ? base + 1 : file);
    }
    if (n->depth > MAX_INDENT_LEVELS) {
        char marked[600];
        snprintf(marked, sizeof marked, "[%u] %s", n->depth, profile->names[n->region]);
        name_cell(p, 2 * MAX_INDENT_LEVELS, marked, where, TREE_NAME_W);
    } else {
        name_cell(p, 2 * (size_t)n->depth, profile->names[n->region], where, TREE_NAME_W);
    }
    count_cell(p, n->calls, 7);
    double pct = node_percent(r, t, n);
    char buf[32];
    if (pct < 0)
        snprintf(buf, sizeof buf, "-");
    else
        snprintf(buf, sizeof buf, "%.1f", pct);
    cell(p, buf, 5);
    time_cell(p, n->inclusive, 7);
    time_cell(p, n->exclusive, 7);
    time_cell(p, n->calls ? (int64_t)((double)n->inclusive / (double)n->calls + 0.5) : -1, 7);
    time_cell(p, n->minimum, 7);
    time_cell(p, n->maximum, 7);
    if (n->fork_lanes > 1) {
        /* imbalance: the busiest thread's time over the mean thread's */
        double mean = (double)n->fork_lane_total / (double)n->fork_lanes;
        fprintf(p->out, "  %s%llu threads, imbalance %.2f, barrier", dim(p),
                (unsigned long long)n->fork_lanes,
                mean > 0 ? (double)n->fork_lane_max / mean : 1.0);
        time_cell(p, n->fork_barrier, 0);
        fprintf(p->out, "%s", reset(p));
    }
    fputc('\n', p->out);
}

static int node_shown(const sp_report *r, const sp_report_tree *t, const sp_report_node *n,
                      const tree_view *v)
{
    if (v->max_depth > 0 && n->depth >= (uint32_t)v->max_depth)
        return 0;
    double pct = node_percent(r, t, n);
    return pct < 0 || pct >= v->min_percent;
}

/* Depth first, children by inclusive time; a hidden node hides its subtree. */
static void print_tree(const printer *p, const sp_report *r, const sp_report_tree *t,
                       const tree_view *v)
{
    tree_columns(p);
    size_t hidden = 0;
    int64_t i = t->first_root;
    while (i >= 0) {
        const sp_report_node *n = &t->nodes[i];
        int shown = node_shown(r, t, n, v);
        if (shown)
            print_node(p, r, t, n);
        else
            hidden++;
        if (shown && n->first_child >= 0) {
            i = n->first_child;
            continue;
        }
        while (i >= 0 && t->nodes[i].next_sibling < 0)
            i = t->nodes[i].parent;
        if (i >= 0)
            i = t->nodes[i].next_sibling;
    }
    if (hidden)
        fprintf(p->out, "%s(%zu branch%s hidden by --depth/--min-percent)%s\n", dim(p), hidden,
                hidden == 1 ? "" : "es", reset(p));
}

static void print_trees(const printer *p, const sp_report *r, int per_lane, int lanes_selected,
                        const tree_view *v)
{
    if (!r->has_tree) {
        section(p, "Call tree");
        fprintf(p->out, "%s(none: %s)%s\n", dim(p),
                r->profile->aggregate ? "the file keeps totals per region only (aggregate layout)"
                : r->num_ranks == 0   ? "no rank selected"
                                      : "no rank could be reconstructed",
                reset(p));
        return;
    }
    if (!per_lane) {
        /* With --lanes=LIST the tree merges the lanes chosen, not every thread. */
        const char *lanes = lanes_selected ? "selected lanes" : "threads";
        if (r->tree.num_ranks > 1)
            section(p, "Call tree (ranks and %s merged)", lanes);
        else
            section(p, "Call tree (%s merged)", lanes);
        print_tree(p, r, &r->tree, v);
        return;
    }
    for (size_t k = 0; k < r->num_lane_trees; k++) {
        const sp_report_tree *t = &r->lane_trees[k];
        char label[256];
        sp_lane_label(r->profile, t->rank, t->lane, label, sizeof label);
        section(p, "Call tree: rank %u, %s", t->rank, label);
        print_tree(p, r, t, v);
    }
}

/* ---- flat profile ------------------------------------------------------------- */

#define FLAT_NAME_W 31

static void print_flat(const printer *p, const sp_report *r)
{
    section(p, "Flat profile (%zu region%s)", r->num_flat, r->num_flat == 1 ? "" : "s");
    fprintf(p->out, "%s%-*s", dim(p), FLAT_NAME_W, "region");
    cell(p, "calls", 7);
    static const char *const heads[] = {"incl", "excl", "mean", "min", "max"};
    for (size_t k = 0; k < 5; k++)
        cell(p, heads[k], 7);
    fprintf(p->out, "%s\n", reset(p));
    for (size_t k = 0; k < r->num_flat; k++) {
        const sp_report_flat_row *f = &r->flat[k];
        name_cell(p, 0, r->profile->names[f->region], NULL, FLAT_NAME_W);
        count_cell(p, f->calls, 7);
        time_cell(p, f->inclusive, 7);
        time_cell(p, f->exclusive, 7);
        time_cell(p, (int64_t)(f->mean + 0.5), 7);
        time_cell(p, f->minimum, 7);
        time_cell(p, f->maximum, 7);
        fputc('\n', p->out);
    }
}

/* ---- threads and tasks ---------------------------------------------------------- */

static void print_threads(const printer *p, const sp_report *r, int all_threads)
{
    int ranked = r->num_ranks > 1;
    if (r->num_threads) {
        section(p, "Threads");
        fprintf(p->out, "%s", dim(p));
        if (ranked)
            fprintf(p->out, "%5s ", "rank");
        fprintf(p->out, "%-*s", ranked ? 14 : 20, "thread");
        fprintf(p->out, "%-7s", "kind");
        cell(p, "wall", 9);
        cell(p, "CPU", 9);
        cell(p, "CPU/wall", 8);
        cell(p, "calls", 10);
        cell(p, "idle", 9);
        fprintf(p->out, "%s\n", reset(p));
        size_t hidden = 0;
        for (size_t k = 0; k < r->num_threads; k++) {
            const sp_report_thread_row *t = &r->threads[k];
            /* Runtime threads (MPI progress, OpenMP spares) that recorded
             * nothing only crowd the table. */
            if (!t->calls && !all_threads) {
                hidden++;
                continue;
            }
            if (ranked)
                fprintf(p->out, "%5u ", t->rank);
            name_cell(p, 0, t->label, NULL, ranked ? 14 : 20);
            fprintf(p->out, "%-7s", t->kind[0] ? t->kind : "-");
            time_cell(p, t->wall_ns, 9);
            time_cell(p, t->cpu_ns, 9);
            char pct[32];
            if (t->cpu_percent < 0)
                snprintf(pct, sizeof pct, "-");
            else
                snprintf(pct, sizeof pct, "%.1f%%", t->cpu_percent);
            cell(p, pct, 8);
            count_cell(p, t->calls, 10);
            time_cell(p, t->idle_ns, 9);
            fputc('\n', p->out);
        }
        if (hidden)
            fprintf(p->out, "%s%zu thread%s without calls not shown (--threads=all)%s\n", dim(p),
                    hidden, hidden == 1 ? "" : "s", reset(p));
    }
    if (r->num_tasks) {
        section(p, "Tasks");
        fprintf(p->out, "%s", dim(p));
        if (ranked)
            fprintf(p->out, "%5s ", "rank");
        fprintf(p->out, "%-8s %-*s %-14s", "kind", ranked ? 16 : 22, "name", "thread");
        cell(p, "steps", 7);
        cell(p, "running", 8);
        cell(p, "suspended", 9);
        fprintf(p->out, "%s\n", reset(p));
        for (size_t k = 0; k < r->num_tasks; k++) {
            const sp_report_task_row *t = &r->tasks[k];
            if (ranked)
                fprintf(p->out, "%5u ", t->rank);
            char thread[256];
            sp_lane_label(r->profile, t->rank, sp_lane_id(t->thread_index, -1), thread,
                          sizeof thread);
            fprintf(p->out, "%-8s ", t->kind);
            name_cell(p, 0, t->name, NULL, ranked ? 16 : 22);
            fputc(' ', p->out);
            name_cell(p, 0, thread, NULL, 14);
            count_cell(p, t->steps >= 0 ? (uint64_t)t->steps : 0, 7);
            time_cell(p, t->running_ns, 8);
            time_cell(p, t->suspended_ns, 9);
            fputc('\n', p->out);
        }
    }
}

/* ---- cross-rank statistics ----------------------------------------------------- */

#define CROSS_NAME_W 26

static void print_cross(const printer *p, const sp_report *r, const sp_report_mpi *mpi)
{
    section(p, "Across %zu ranks (a rank without calls of a region counts as 0)", r->num_ranks);
    fprintf(p->out, "%s%-*s %-9s", dim(p), CROSS_NAME_W, "region", "");
    cell(p, "min", 8);
    cell(p, "mean", 8);
    cell(p, "max", 8);
    cell(p, "max/mean", 8);
    cell(p, "slowest", 7);
    fprintf(p->out, "%s\n", reset(p));
    for (size_t k = 0; k < r->num_cross; k++) {
        const sp_report_cross_row *c = &r->cross[k];
        char buf[32];
        name_cell(p, 0, r->profile->names[c->region], NULL, CROSS_NAME_W);
        fprintf(p->out, " %-9s", "inclusive");
        time_cell(p, c->inclusive_min, 8);
        time_cell(p, (int64_t)(c->inclusive_mean + 0.5), 8);
        time_cell(p, c->inclusive_max, 8);
        snprintf(buf, sizeof buf, "%.2f", c->imbalance);
        cell(p, buf, 8);
        snprintf(buf, sizeof buf, "rank %u", c->slowest_rank);
        cell(p, buf, 7);
        /* An MPI collective's longest time is its most waiting rank. */
        cli_print_mpi_cross_note(p->out, mpi, c->region);
        fprintf(p->out, "\n%-*s %-9s", CROSS_NAME_W, "", "exclusive");
        time_cell(p, c->exclusive_min, 8);
        time_cell(p, c->exclusive_mean < 0 ? -1 : (int64_t)(c->exclusive_mean + 0.5), 8);
        time_cell(p, c->exclusive_max, 8);
        fprintf(p->out, "\n%-*s %-9s", CROSS_NAME_W, "", "calls");
        count_cell(p, c->calls_min, 8);
        snprintf(buf, sizeof buf, "%.1f", c->calls_mean);
        cell(p, buf, 8);
        count_cell(p, c->calls_max, 8);
        fputc('\n', p->out);
    }
}

/* ---- command ------------------------------------------------------------------- */

/* The input file holding `rank`.  Rank files of one run are loaded into one
 * profile without a path, so a warning about a rank has to find its file:
 * each input's rows are read once (without events), on the first warning,
 * so many warnings over many files cost one index read per file. */
typedef struct rank_files {
    int ready;
    uint32_t **ranks;         /* per input: the ranks of its rows (NULL: unreadable) */
    size_t *num_ranks;
} rank_files;

static uint32_t *ranks_of_file(const char *path, size_t *count)
{
    char err[512];
    sp_h5_event_shape shape;
    sp_profile *p = sp_h5_read_skeleton(path, &shape, err, sizeof err);
    if (!p) /* schema 1 has no skeleton read */
        p = sp_h5_read(path, err, sizeof err);
    *count = 0;
    if (!p)
        return NULL;
    uint32_t *ranks = malloc((p->num_rows + 1) * sizeof *ranks);
    for (size_t r = 0; ranks && r < p->num_rows; r++)
        ranks[(*count)++] = p->rows[r].rank;
    sp_profile_free(p);
    return ranks;
}

static const char *file_of_rank(rank_files *c, char **files, size_t num_files, uint32_t rank)
{
    if (num_files == 1)
        return files[0];
    if (!c->ready) {
        c->ready = 1;
        c->ranks = calloc(num_files, sizeof *c->ranks);
        c->num_ranks = calloc(num_files, sizeof *c->num_ranks);
        for (size_t k = 0; c->ranks && c->num_ranks && k < num_files; k++)
            c->ranks[k] = ranks_of_file(files[k], &c->num_ranks[k]);
    }
    for (size_t k = 0; c->ranks && c->num_ranks && k < num_files; k++)
        for (size_t i = 0; i < c->num_ranks[k]; i++)
            if (c->ranks[k][i] == rank)
                return files[k];
    return NULL;
}

static void rank_files_free(rank_files *c, size_t num_files)
{
    for (size_t k = 0; c->ranks && k < num_files; k++)
        free(c->ranks[k]);
    free(c->ranks);
    free(c->num_ranks);
}

static void warn_rank(const sp_report_warning *w, const sp_profile *profile, char **files,
                      size_t num_files, rank_files *cache)
{
    const char *msg = w->message;
    /* The reconstruction names profile->path, or "profile" without one. */
    const char *named = profile->path ? profile->path : "profile";
    size_t len = strlen(named);
    if (!strncmp(msg, named, len) && !strncmp(msg + len, ": ", 2))
        msg += len + 2;
    const char *file = file_of_rank(cache, files, num_files, w->rank);
    cli_warning(CMD, "%s%s%s (its calls are counted from the file's per-region totals; "
                     "exclusive time unknown)",
                file ? file : "", file ? ": " : "", msg);
}

enum { SHOW_TREE = 1, SHOW_FLAT = 2, SHOW_THREADS = 4, SHOW_RANKS = 8, SHOW_MPI = 16 };

int cmd_report(int argc, char **argv)
{
    sp_selection sel;
    sp_selection_init(&sel);
    sp_report_options opt = {.selection = &sel, .sort = SP_SORT_EXCLUSIVE};
    tree_view view = {DEFAULT_TREE_DEPTH, 0};
    int show = 0, status = 2, all_threads = 0;
    const char *format = "text";
    char **files = malloc((size_t)argc * sizeof *files);
    size_t *run_of = malloc((size_t)argc * sizeof *run_of);
    size_t num_files = 0, num_runs = 1;
    const char *out_path = NULL;
    FILE *text_out = NULL;
    sp_profile *profile = NULL;
    sp_run_source source;
    memset(&source, 0, sizeof source);
    sp_report report;
    memset(&report, 0, sizeof report);
    sp_report_mpi mpi;
    memset(&mpi, 0, sizeof mpi);
    int has_mpi = 0;
    /* Under an MPI launcher (docs/distributed.md): the processes share the
     * streamed report's ranks; process 0 prints. */
    sp_dist_session dist = {0};
    sp_dist_report remote = {0};
    int shared = 0, worker = 0;
    if (!files || !run_of) {
        status = cli_file_error(CMD, NULL, "out of memory");
        goto out;
    }
    int only_files = 0;
    for (int i = 1; i < argc;) {
        const char *v;
        int r;
        if (only_files || argv[i][0] != '-' || !strcmp(argv[i], "-")) {
            run_of[num_files] = num_runs - 1;
            files[num_files++] = argv[i++];
            continue;
        }
        if (cli_flag(argv, &i, "--", NULL)) {
            only_files = 1;
        } else if (cli_flag(argv, &i, "--help", "-h")) {
            printf(report_help, sp_selection_help);
            status = 0;
            goto out;
        } else if (cli_flag(argv, &i, "--compare", NULL)) {
            if (num_files == 0 || run_of[num_files - 1] != num_runs - 1) {
                status = cli_usage_error(CMD, "--compare: give the files of a run before it");
                goto out;
            }
            num_runs++;
        } else if ((r = cli_option_value(CMD, argc, argv, &i, "--output", "-o", &v))) {
            if (r < 0)
                goto out;
            out_path = v;
        } else if (cli_flag(argv, &i, "--lanes", NULL)) {
            /* Bare --lanes: one tree per lane.  --lanes=LIST (below) selects. */
            opt.per_lane = 1;
        } else if (cli_flag(argv, &i, "--tree", NULL)) {
            show |= SHOW_TREE;
        } else if (cli_flag(argv, &i, "--flat", NULL)) {
            show |= SHOW_FLAT;
        } else if (cli_flag(argv, &i, "--threads", NULL)) {
            show |= SHOW_THREADS;
        } else if (cli_flag(argv, &i, "--threads=all", NULL)) {
            show |= SHOW_THREADS;
            all_threads = 1;
        } else if (cli_flag(argv, &i, "--ranks-table", NULL)) {
            show |= SHOW_RANKS;
        } else if (cli_flag(argv, &i, "--mpi", NULL)) {
            show |= SHOW_MPI;
        } else if ((r = cli_option_value(CMD, argc, argv, &i, "--depth", NULL, &v))) {
            if (r < 0)
                goto out;
            if (cli_parse_long(v, 1, 1000000, &view.max_depth) != 0) {
                status = cli_usage_error(CMD, "--depth: '%s' is not a positive integer", v);
                goto out;
            }
        } else if ((r = cli_option_value(CMD, argc, argv, &i, "--min-percent", NULL, &v))) {
            if (r < 0)
                goto out;
            if (cli_parse_double(v, 0, &view.min_percent) != 0) {
                status = cli_usage_error(CMD, "--min-percent: '%s' is not a number >= 0", v);
                goto out;
            }
        } else if ((r = cli_option_value(CMD, argc, argv, &i, "--format", NULL, &v))) {
            if (r < 0)
                goto out;
            if (strcmp(v, "text") && strcmp(v, "json") && strcmp(v, "csv")) {
                status = cli_usage_error(CMD, "--format: '%s' is not one of text, json, csv", v);
                goto out;
            }
            format = v;
        } else if ((r = cli_option_value(CMD, argc, argv, &i, "--jobs", "-j", &v))) {
            if (r < 0)
                goto out;
            long jobs;
            if (cli_parse_long(v, 1, 1024, &jobs) != 0) {
                status = cli_usage_error(CMD, "--jobs: '%s' is not a number of processes "
                                              "from 1 to 1024", v);
                goto out;
            }
            opt.jobs = (size_t)jobs;
        } else if ((r = cli_option_value(CMD, argc, argv, &i, "--sort", NULL, &v))) {
            if (r < 0)
                goto out;
            if (sp_report_parse_sort(v, &opt.sort) != 0) {
                status = cli_usage_error(CMD, "--sort: '%s' is not one of exclusive, inclusive, "
                                              "calls, mean, max, name", v);
                goto out;
            }
        } else if (cli_selection_option(CMD, &sel, argc, argv, &i) <= 0) {
            /* an option (files were taken above): selection or unknown */
            status = 2;
            goto out;
        }
    }
    if (num_files == 0) {
        status = cli_usage_error(CMD, "no input files");
        goto out;
    }
    if (!strcmp(format, "csv") && (show & (show - 1))) {
        status = cli_usage_error(CMD, "--format csv holds one table: give one of --flat, "
                                      "--tree, --ranks-table");
        goto out;
    }
    if (num_runs > 1 && run_of[num_files - 1] != num_runs - 1) {
        status = cli_usage_error(CMD, "--compare: no files after it");
        goto out;
    }
    if (show == 0)
        show = SHOW_TREE | SHOW_FLAT | SHOW_THREADS | SHOW_RANKS | SHOW_MPI;
    int html = out_path && cli_is_html_path(out_path);
    if (num_runs > 1 && !html) {
        status = cli_usage_error(CMD, "--compare needs an HTML report (-o report.html)");
        goto out;
    }

    /* A missing file gets the system's own words, before any reader runs. */
    for (size_t k = 0; k < num_files; k++)
        if (access(files[k][0] == '@' && files[k][1] ? files[k] + 1 : files[k], R_OK) != 0) {
            status = cli_file_error(CMD, files[k], "%s", strerror(errno));
            goto out;
        }
    enum sp_dist_mode mode = sp_dist_session_begin(&dist, CMD);
    if (mode == SP_DIST_STANDBY) {
        status = 0;
        goto out;
    }
    if (mode == SP_DIST_PARALLEL) {
        sp_dist_report_init(&remote, &dist);
        opt.remote = &remote.remote;
        shared = 1;
        worker = dist.rank != 0;
    }
    if (html) {
        /* one document: process 0 alone */
        status = worker ? 0 : cmd_report_html(files, num_files, run_of, num_runs, &sel, out_path);
        goto out;
    }
    char err[1024];
    /* Streamed first (bounded memory); whatever it cannot do, and every
     * file with a problem, goes through the in-memory path, which words
     * the messages (docs/stream.md).  SCOPEPROF_REPORT_IN_MEMORY=1 forces
     * that path (tests compare both). */
    if (opt.jobs == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        opt.jobs = cpus > 0 ? (size_t)cpus : 1;
    }
    const char *force = getenv("SCOPEPROF_REPORT_IN_MEMORY");
    int streamed = 0;
    /* The MPI tables read these columns in windows: the run source checks
     * only what they leave (docs/stream.md, "Checks on the way"). */
    enum {
        REPORT_READS_ITSELF = 1u << SP_EXTRA_MPI_SENT_BYTES | 1u << SP_EXTRA_MPI_RECV_BYTES |
                              1u << SP_EXTRA_MPI_PEER | 1u << SP_EXTRA_MPI_COMM
    };
    /* Under a launcher a process other than 0 opens only its block of files
     * (src/dist/dist_report_source.c). */
    if (!(force && !strcmp(force, "1")) &&
        (shared ? sp_dist_report_open(&remote, &dist, (const char *const *)files, num_files,
                                      sel.has_from || sel.has_to, REPORT_READS_ITSELF, &source,
                                      err, sizeof err)
                : sp_run_source_open_deferring(&source, (const char *const *)files, num_files,
                                               REPORT_READS_ITSELF, err, sizeof err)) == 0) {
        int rc = sp_report_build_stream(&source, &opt, &report, err, sizeof err);
        if (shared) {
            /* The others have given what process 0 wanted; they print nothing. */
            sp_dist_report_finish(&remote);
            shared = 0;
            if (worker) {
                const char *trace = getenv("SCOPEPROF_REPORT_TRACE");
                if (trace && !strcmp(trace, "1")) {
                    /* and the files whose indexes it read (its block), in
                     * one write: the processes' lines must not mix */
                    char *line = NULL;
                    size_t len = 0;
                    FILE *f = open_memstream(&line, &len);
                    if (f) {
                        fprintf(f, "scopeprof report: process %d streamed %zu ranks from %zu "
                                   "of %zu files:",
                                dist.rank, remote.sent, source.num_paths, remote.num_files);
                        for (size_t k = 0; k < source.num_paths; k++)
                            fprintf(f, " %s", source.paths[k]);
                        fputc('\n', f);
                    }
                    if (f && fclose(f) == 0)
                        (void)!write(2, line, len);
                    free(line);
                }
                status = 0;
                goto out;
            }
        }
        if (rc < 0) {
            status = cli_file_error(CMD, NULL, "%s", err);
            goto out;
        }
        streamed = rc == 0;
        /* For tests and benchmarks: which path ran, and why. */
        const char *trace = getenv("SCOPEPROF_REPORT_TRACE");
        if (trace && !strcmp(trace, "1"))
            fprintf(stderr, "scopeprof report: %s%s\n", streamed ? "streamed" : "in memory: ",
                    streamed ? "" : err);
        if (!streamed)
            sp_run_source_close(&source);
        else
            profile = source.profile;
    }
    if (shared) { /* the stream was not tried: nothing for the others to give */
        sp_dist_report_finish(&remote);
        shared = 0;
    }
    if (worker) {
        status = 0;
        goto out;
    }
    if (!streamed) {
        profile = sp_load_run((const char *const *)files, num_files, err, sizeof err);
        if (!profile) {
            status = cli_file_error(CMD, num_files == 1 ? files[0] : NULL, "%s", err);
            goto out;
        }
        if (sp_report_build(profile, &opt, &report, err, sizeof err) != 0) {
            status = cli_file_error(CMD, NULL, "%s", err);
            goto out;
        }
    }
    has_mpi = streamed ? sp_report_mpi_build_stream(&report, &source, &mpi)
                       : sp_report_mpi_build(&report, &mpi);
    if (streamed && has_mpi != 2 && sp_run_source_check_deferred(&source) != 0) {
        /* A value of the columns the MPI tables read that they did not
         * (another row, a rank left out) does not read: the in-memory
         * reader refuses the file, and the load below words it. */
        if (has_mpi == 1)
            sp_report_mpi_free(&mpi);
        has_mpi = 2;
    }
    if (has_mpi == 2) {
        /* An MPI column the windows could not read, or a collective row too
         * large to sort: the MPI tables from the run in memory. */
        const char *trace = getenv("SCOPEPROF_REPORT_TRACE");
        if (trace && !strcmp(trace, "1"))
            fprintf(stderr, "scopeprof report: MPI tables in memory\n");
        sp_profile *full = sp_load_run((const char *const *)files, num_files, err, sizeof err);
        if (!full) {
            status = cli_file_error(CMD, num_files == 1 ? files[0] : NULL, "%s", err);
            goto out;
        }
        sp_report on_full = report;
        on_full.profile = full;
        has_mpi = sp_report_mpi_build(&on_full, &mpi);
        sp_profile_free(full);
    }
    if (has_mpi < 0) {
        status = cli_file_error(CMD, NULL, "out of memory");
        goto out;
    }
    rank_files cache = {0};
    for (size_t k = 0; k < report.num_warnings; k++)
        warn_rank(&report.warnings[k], profile, files, num_files, &cache);
    rank_files_free(&cache, num_files);
    if (report.num_ranks == 0 && profile->num_rows > 0)
        cli_warning(CMD, "--ranks selects none of the ranks in these files");

    if (out_path && !(text_out = fopen(out_path, "w"))) {
        status = cli_file_error(CMD, out_path, "cannot create: %s", strerror(errno));
        goto out;
    }
    FILE *dest = text_out ? text_out : stdout;
    if (strcmp(format, "text") != 0) {
        int failed = !strcmp(format, "json")
                         ? sp_export_report_json(dest, &report, (const char *const *)files,
                                                 num_files)
                         : sp_export_report_csv(dest, &report,
                                               show == SHOW_TREE    ? SP_REPORT_TABLE_TREE
                                               : show == SHOW_RANKS ? SP_REPORT_TABLE_RANKS
                                                                    : SP_REPORT_TABLE_FLAT);
        status = !failed && fflush(dest) == 0
                     ? 0
                     : cli_file_error(CMD, NULL, "cannot write the report: %s", strerror(errno));
        goto out;
    }
    printer p = {dest, cli_use_color(dest)};
    print_header(&p, &report, profile, files, num_files);
    if (show & SHOW_TREE)
        print_trees(&p, &report, opt.per_lane, sel.num_lanes > 0, &view);
    if (show & SHOW_FLAT)
        print_flat(&p, &report);
    if ((show & SHOW_THREADS) && (report.num_threads || report.num_tasks))
        print_threads(&p, &report, all_threads);
    else if (show == SHOW_THREADS)
        fprintf(dest, "\n(no thread or task table in %s)\n",
                num_files == 1 ? files[0] : "these files");
    if ((show & SHOW_RANKS) && report.num_ranks > 1)
        print_cross(&p, &report, has_mpi ? &mpi : NULL);
    else if (show == SHOW_RANKS)
        fprintf(dest, "\n(one rank selected: no cross-rank statistics)\n");
    if ((show & SHOW_MPI) && has_mpi)
        cli_print_mpi(dest, p.color, &report, &mpi);
    else if (show == SHOW_MPI)
        fprintf(dest, "\n(no MPI calls recorded in %s)\n",
                num_files == 1 ? files[0] : "these files");
    status = fflush(dest) == 0 && !ferror(dest)
                 ? 0
                 : cli_file_error(CMD, NULL, "cannot write the report: %s", strerror(errno));
out:
    if (shared)
        sp_dist_report_finish(&remote);
    sp_dist_session_end(&dist);
    sp_report_mpi_free(&mpi);
    if (text_out && fclose(text_out) != 0 && status == 0)
        status = cli_file_error(CMD, out_path, "write failed: %s", strerror(errno));
    sp_report_free(&report);
    if (source.profile)
        sp_run_source_close(&source);
    else if (profile)
        sp_profile_free(profile);
    sp_selection_free(&sel);
    free(files);
    free(run_of);
    return status;
}
