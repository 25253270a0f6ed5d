/* test_export.c - selection parsing, rank gathering with stored ids, lane
 * labels, the JSON writer, and the exporters on profiles built by hand. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/export.h"

/* ---- a profile built by hand -------------------------------------------- */

typedef struct call_spec {
    uint32_t rank;
    const char *region;
    int64_t start, end, thread;
} call_spec;

/* Rows grouped per (rank, region) in first-seen order, events in spec order. */
static sp_profile *build(const call_spec *calls, size_t n, int with_threads)
{
    sp_profile *p = sp_profile_new();
    cr_assert_not_null(p);
    p->start = malloc(n * sizeof *p->start);
    p->end = malloc(n * sizeof *p->end);
    if (with_threads)
        p->thread_ids = malloc(n * sizeof *p->thread_ids);
    p->rows = calloc(n, sizeof *p->rows);
    size_t e = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t region = sp_profile_intern_name(p, calls[i].region);
        int seen = 0;
        for (size_t r = 0; r < p->num_rows; r++)
            seen |= p->rows[r].rank == calls[i].rank && p->rows[r].region == (uint32_t)region;
        if (seen)
            continue;
        sp_row *row = &p->rows[p->num_rows++];
        row->region = (uint32_t)region;
        row->rank = calls[i].rank;
        row->offset = e;
        row->source_line = !strcmp(calls[i].region, "solve") ? 42 : -1;
        row->exclusive_total = -1;
        row->source_file = strdup(!strcmp(calls[i].region, "solve") ? "solver.c" : "");
        row->source_text = strdup("");
        row->tags = strdup("[]");
        row->event_metadata = strdup("[]");
        for (size_t k = i; k < n; k++)
            if (calls[k].rank == calls[i].rank && !strcmp(calls[k].region, calls[i].region)) {
                p->start[e] = calls[k].start;
                p->end[e] = calls[k].end;
                if (with_threads)
                    p->thread_ids[e] = calls[k].thread;
                e++;
                row->count++;
            }
        if (calls[i].rank + 1 > p->num_ranks)
            p->num_ranks = calls[i].rank + 1;
    }
    p->num_events = e;
    return p;
}

static const call_spec nested[] = {
    {0, "main", 0, 100, 0},  {0, "setup", 0, 20, 0},    {0, "solve", 20, 90, 0},
    {0, "assemble", 30, 60, 0}, {0, "rec", 200, 300, 0}, {0, "rec", 210, 290, 0},
    {1, "main", 5, 50, 0},   {0, "work", 10, 40, 1},     {0, "solve", 12, 30, 1},
};
#define NESTED (sizeof nested / sizeof nested[0])

/* Run an exporter into memory. */
static char *capture(int (*fn)(FILE *, const sp_profile *, const sp_export_options *, char *,
                               size_t),
                     const sp_profile *p, const sp_export_options *o, int expect_rc, char *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    int rc = fn(f, p, o, err, 512);
    fclose(f);
    cr_assert_eq(rc, expect_rc, "rc %d (%s)", rc, err);
    return text;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *s = hay; (s = strstr(s, needle)); s += strlen(needle))
        n++;
    return n;
}

/* ---- selection ---------------------------------------------------------- */

Test(selection, rank_lists)
{
    sp_selection s;
    sp_selection_init(&s);
    char err[256];
    cr_assert_eq(sp_selection_add_ranks(&s, "3,0,2-3", err, sizeof err), 0);
    cr_assert_eq(s.num_ranks, 3);
    cr_assert(s.ranks[0] == 0 && s.ranks[1] == 2 && s.ranks[2] == 3);
    cr_assert(sp_selection_has_rank(&s, 2) && !sp_selection_has_rank(&s, 1));
    cr_assert_eq(sp_selection_add_ranks(&s, "3-1", err, sizeof err), -1);
    cr_assert(strstr(err, "3-1"));
    cr_assert_eq(sp_selection_add_ranks(&s, "1,,2", err, sizeof err), -1);
    sp_selection_free(&s);
}

Test(selection, options_and_regexes)
{
    sp_selection s;
    sp_selection_init(&s);
    char err[256];
    char *argv[] = {"x", "--include=^so", "-e", "lve$", "--from", "1.5", "--to", "0.5"};
    int i = 1;
    cr_assert_eq(sp_selection_parse_option(&s, 8, argv, &i, err, sizeof err), 1);
    cr_assert_eq(i, 2);
    cr_assert_eq(sp_selection_parse_option(&s, 8, argv, &i, err, sizeof err), 1);
    cr_assert(sp_selection_keeps_region(&s, "sort"));
    cr_assert(!sp_selection_keeps_region(&s, "solve"));
    cr_assert(!sp_selection_keeps_region(&s, "main"));
    cr_assert_eq(sp_selection_parse_option(&s, 8, argv, &i, err, sizeof err), 1);
    cr_assert_eq(sp_selection_parse_option(&s, 8, argv, &i, err, sizeof err), -1);
    cr_assert(strstr(err, "before"), "%s", err);
    char *bad[] = {"x", "--include", "(", "--min-duration", "-1"};
    i = 1;
    cr_assert_eq(sp_selection_parse_option(&s, 5, bad, &i, err, sizeof err), -1);
    i = 3;
    cr_assert_eq(sp_selection_parse_option(&s, 5, bad, &i, err, sizeof err), -1);
    char *other[] = {"x", "--chart"};
    i = 1;
    cr_assert_eq(sp_selection_parse_option(&s, 2, other, &i, err, sizeof err), 0);
    sp_selection_free(&s);
}

/* ---- lanes and rank gathering ------------------------------------------- */

Test(lanes, labels_follow_the_thread_table)
{
    sp_profile *p = build(nested, NESTED, 1);
    p->has_thread_table = 1;
    p->num_threads = 1;
    p->threads = calloc(1, sizeof *p->threads);
    p->threads[0] = (sp_thread_row){.rank = 0, .index = 0, .name = strdup("MainThread")};
    char buf[64];
    sp_lane_label(p, 0, -2, buf, sizeof buf);
    cr_assert_str_eq(buf, "MainThread");
    sp_lane_label(p, 0, -99, buf, sizeof buf);
    cr_assert_str_eq(buf, "thread 97");
    sp_lane_label(p, 0, -1, buf, sizeof buf);
    cr_assert_str_eq(buf, "unknown lane");
    sp_lane_label(p, 0, 7, buf, sizeof buf);
    cr_assert_str_eq(buf, "task 7");
    cr_assert(sp_lane_matches(p, 0, -3, "thread 1"));
    cr_assert(sp_lane_matches(p, 0, -2, "MainThread"));
    cr_assert(!sp_lane_matches(p, 0, -3, "MainThread"));
    sp_profile_free(p);
}

Test(rank_data, gathers_one_rank_per_lane)
{
    sp_profile *p = build(nested, NESTED, 1);
    sp_rank_data d;
    char err[512];
    cr_assert_eq(sp_rank_data_load(p, 0, NULL, &d, err, sizeof err), 0, "%s", err);
    cr_assert_eq(d.calls.n, 8);
    cr_assert_eq(d.num_lanes, 2);
    cr_assert_eq(d.stored_ids, 0);
    for (size_t i = 0; i < d.calls.n; i++) {
        /* event points back at the profile columns */
        cr_assert_eq(p->start[d.event[i]], d.calls.start[i]);
        cr_assert_eq(d.call_id[i], (int64_t)i);
        int64_t parent = d.calls.parent[i];
        cr_assert_eq(d.parent_id[i], parent >= 0 ? d.call_id[parent] : -1);
        if (!strcmp(p->names[d.calls.region[i]], "solve") && d.calls.start[i] == 12)
            cr_assert_str_eq(p->names[d.calls.region[parent]], "work"); /* lane 1 */
    }
    sp_rank_data_free(&d);
    sp_profile_free(p);
}

Test(rank_data, filters_reparent_to_kept_ancestors)
{
    sp_profile *p = build(nested, NESTED, 1);
    sp_selection s;
    sp_selection_init(&s);
    char err[512];
    cr_assert_eq(sp_selection_set_exclude(&s, "^solve$", err, sizeof err), 0);
    cr_assert_eq(sp_selection_add_lanes(&s, "thread 0", err, sizeof err), 0);
    sp_rank_data d;
    cr_assert_eq(sp_rank_data_load(p, 0, &s, &d, err, sizeof err), 0, "%s", err);
    cr_assert_eq(d.calls.n, 5); /* main setup assemble rec rec */
    for (size_t i = 0; i < d.calls.n; i++)
        if (!strcmp(p->names[d.calls.region[i]], "assemble"))
            cr_assert_str_eq(p->names[d.calls.region[d.calls.parent[i]]], "main");
    sp_rank_data_free(&d);
    sp_selection_free(&s);
    sp_selection_init(&s);
    s.has_min_duration = 1;
    s.min_duration_s = 70e-9;
    cr_assert_eq(sp_rank_data_load(p, 0, &s, &d, err, sizeof err), 0, "%s", err);
    cr_assert_eq(d.calls.n, 4); /* main, solve (70), rec, rec */
    sp_rank_data_free(&d);
    sp_profile_free(p);
}

Test(rank_data, stored_ids_must_agree)
{
    static const call_spec two[] = {{0, "outer", 0, 100, 0}, {0, "inner", 10, 20, 0}};
    sp_profile *p = build(two, 2, 0);
    p->call_ids = malloc(2 * sizeof(int64_t));
    p->parent_ids = malloc(2 * sizeof(int64_t));
    p->call_ids[0] = 7, p->call_ids[1] = 8;
    p->parent_ids[0] = -1, p->parent_ids[1] = 7;
    sp_rank_data d;
    char err[512];
    cr_assert_eq(sp_rank_data_load(p, 0, NULL, &d, err, sizeof err), 0, "%s", err);
    cr_assert(d.stored_ids);
    cr_assert(d.call_id[1] == 8 && d.parent_id[1] == 7);
    sp_rank_data_free(&d);
    p->parent_ids[1] = -1; /* claims a root, but the times nest it */
    cr_assert_eq(sp_rank_data_load(p, 0, NULL, &d, err, sizeof err), -1);
    cr_assert(strstr(err, "inner") && strstr(err, "disagree"), "%s", err);
    sp_profile_free(p);
}

/* ---- JSON writer -------------------------------------------------------- */

Test(json_writer, escapes_and_numbers)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sp_json j;
    sp_json_init(&j, f);
    sp_json_begin_object(&j);
    sp_json_key(&j, "s");
    sp_json_string(&j, "a\"b\\c\n\x01");
    sp_json_key(&j, "v");
    sp_json_begin_array(&j);
    sp_json_fixed(&j, 1500000000, 9);
    sp_json_fixed(&j, -1, 9);
    sp_json_fixed(&j, 42000, 3);
    sp_json_int(&j, INT64_MIN);
    sp_json_double(&j, 1.0 / 0.0);
    sp_json_end_array(&j);
    sp_json_end_object(&j);
    fclose(f);
    cr_assert_str_eq(text, "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"v\":[1.5,-0.000000001,42,"
                           "-9223372036854775808,null]}");
    free(text);
}

/* ---- exporters ---------------------------------------------------------- */

Test(export, speedscope_balanced_one_profile_per_lane)
{
    sp_profile *p = build(nested, NESTED, 1);
    char err[512];
    sp_export_options o = {.call_paths = 1};
    char *text = capture(sp_export_speedscope, p, &o, 0, err);
    cr_assert_eq(count(text, "\"type\":\"O\""), NESTED);
    cr_assert_eq(count(text, "\"type\":\"C\""), NESTED);
    cr_assert_eq(count(text, "\"type\":\"evented\""), 3); /* rank 0 x 2 lanes + rank 1 */
    cr_assert(strstr(text, "\"name\":\"rank 0 - thread 1\""));
    cr_assert(strstr(text, "{\"name\":\"solve\",\"file\":\"solver.c\",\"line\":42}"));
    cr_assert_eq(count(text, "{\"name\":\"rec\""), 1, "recursion reuses one frame");
    free(text);
    sp_profile_free(p);
}

Test(export, nothing_selected_is_an_error)
{
    sp_profile *p = build(nested, NESTED, 1);
    sp_selection s;
    sp_selection_init(&s);
    char err[512];
    cr_assert_eq(sp_selection_set_include(&s, "^nope$", err, sizeof err), 0);
    sp_export_options o = {.selection = &s};
    free(capture(sp_export_speedscope, p, &o, -1, err));
    cr_assert(strstr(err, "no calls"), "%s", err);
    free(capture(sp_export_chrome, p, &o, -1, err));
    sp_selection_free(&s);
    sp_profile_free(p);
}

Test(export, folded_prefixes_ranks_and_lanes)
{
    sp_profile *p = build(nested, NESTED, 1);
    char err[512];
    sp_export_options o = {0};
    char *text = capture(sp_export_folded, p, &o, 0, err);
    cr_assert(strstr(text, "rank 0;thread 0;main;solve;assemble 30\n"), "%s", text);
    cr_assert(strstr(text, "rank 0;thread 1;work;solve 18\n"), "%s", text);
    cr_assert(strstr(text, "rank 1;thread 0;main 45\n"), "%s", text);
    free(text);
    sp_selection s;
    sp_selection_init(&s);
    cr_assert_eq(sp_selection_add_ranks(&s, "0", err, sizeof err), 0);
    cr_assert_eq(sp_selection_add_lanes(&s, "thread 0", err, sizeof err), 0);
    o.selection = &s;
    text = capture(sp_export_folded, p, &o, 0, err);
    cr_assert(strstr(text, "main;solve;assemble 30\n") == text + strcspn(text, "") ||
              strstr(text, "\nmain;solve;assemble 30\n"), "%s", text);
    cr_assert_null(strstr(text, "rank "), "single rank and lane: plain stacks");
    free(text);
    sp_selection_free(&s);
    sp_profile_free(p);
}

Test(export, csv_one_row_per_call)
{
    sp_profile *p = build(nested, NESTED, 1);
    char err[512];
    sp_export_options o = {0};
    char *text = capture(sp_export_csv, p, &o, 0, err);
    cr_assert_eq(count(text, "\n"), NESTED + 1);
    cr_assert(strstr(text, ",solve,main > solve,20,90,70,40,solver.c,42\n"), "%s", text);
    free(text);
    sp_profile_free(p);
}

Test(export, flame_graph_one_frame_per_call_path)
{
    sp_profile *p = build(nested, NESTED, 1);
    char err[512];
    sp_export_options o = {0};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(sp_flame_svg(f, p, &o, 0, err, sizeof err), 0, "%s", err);
    fclose(f);
    /* main, main>setup, main>solve, main>solve>assemble, rec, rec>rec, work, work>solve */
    cr_assert_eq(count(text, "<g class=\"frame\""), 8);
    free(text);
    f = open_memstream(&text, &len);
    cr_assert_eq(sp_flame_svg(f, p, &o, 1, err, sizeof err), 0, "%s", err);
    fclose(f);
    cr_assert_eq(count(text, "<g class=\"frame\""), NESTED);
    cr_assert_eq(count(text, "class=\"band\""), 3);
    free(text);
    sp_profile_free(p);
}

/* flame's warnings were signed "scopeprof export:". */
Test(export_warnings, name_the_command_that_wrote)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sp_export_options flame = {.warnings = f, .command = "flame"};
    sp_export_warn_events(&flame, SP_EXPORT_WARN_EVENTS + 1, "flame graph");
    sp_export_options export = {.warnings = f};
    sp_export_warn_events(&export, SP_EXPORT_WARN_EVENTS + 1, "chrome export");
    sp_export_warn_events(&export, SP_EXPORT_WARN_EVENTS, "chrome export");
    fclose(f);
    cr_assert(!strncmp(text, "scopeprof flame: warning: the flame graph holds 1000001 events",
                       strlen("scopeprof flame: warning: the flame graph holds 1000001 events")),
              "%s", text);
    cr_assert(strstr(text, "\nscopeprof export: warning: the chrome export holds 1000001 events"),
              "%s", text);
    cr_assert_eq(strchr(strchr(text, '\n') + 1, '\n')[1], '\0', "a warning at the limit: %s",
                 text);
    free(text);
}

/* ---- the JSON exports point to Perfetto above a million events ---------- */

/* n back-to-back calls of one region on rank 0, built directly (the
 * builder above is for small profiles). */
static sp_profile *many_calls(size_t n)
{
    sp_profile *p = sp_profile_new();
    cr_assert_not_null(p);
    int64_t region = sp_profile_intern_name(p, "tick");
    p->start = malloc(n * sizeof *p->start);
    p->end = malloc(n * sizeof *p->end);
    p->rows = calloc(1, sizeof *p->rows);
    cr_assert(p->start && p->end && p->rows);
    for (size_t i = 0; i < n; i++) {
        p->start[i] = (int64_t)i * 10;
        p->end[i] = (int64_t)i * 10 + 5;
    }
    sp_row *row = &p->rows[p->num_rows++];
    row->region = (uint32_t)region;
    row->count = n;
    row->source_line = -1;
    row->exclusive_total = -1;
    row->source_file = strdup("");
    row->source_text = strdup("");
    row->tags = strdup("[]");
    row->event_metadata = strdup("[]");
    p->num_ranks = 1;
    p->num_events = n;
    return p;
}

/* Each JSON export's warning, or "" when it printed none. */
static char *export_warning(int (*fn)(FILE *, const sp_profile *, const sp_export_options *,
                                      char *, size_t),
                            const sp_profile *p)
{
    char *text = NULL, err[512] = "";
    size_t len = 0;
    FILE *warnings = open_memstream(&text, &len), *out = fopen("/dev/null", "w");
    cr_assert(warnings && out);
    sp_export_options o = {.warnings = warnings, .call_paths = 1};
    cr_assert_eq(fn(out, p, &o, err, sizeof err), 0, "%s", err);
    fclose(out);
    fclose(warnings);
    return text;
}

Test(export_warnings, json_exports_point_to_perfetto_above_a_million_events, .timeout = 120)
{
    static const struct {
        int (*fn)(FILE *, const sp_profile *, const sp_export_options *, char *, size_t);
        const char *says;
    } exports[] = {
        /* chrome and json: an event per call; speedscope: open and close */
        {sp_export_chrome, "the chrome export holds 1000001 events"},
        {sp_export_speedscope, "the speedscope export holds 2000002 events"},
        {sp_export_json, "the json export holds 1000001 events"},
    };
    sp_profile *big = many_calls(1000001), *small = many_calls(500000);
    for (size_t k = 0; k < sizeof exports / sizeof exports[0]; k++) {
        char *text = export_warning(exports[k].fn, big);
        cr_assert(strstr(text, exports[k].says), "%s", text);
        cr_assert(strstr(text, "`scopeprof export perfetto`"), "%s", text);
        free(text);
        text = export_warning(exports[k].fn, small); /* speedscope: exactly a million */
        cr_assert_str_empty(text, "a warning below the limit: %s", text);
        free(text);
    }
    /* the binary trace is the way out: it does not warn */
    char *text = export_warning(sp_export_perfetto, big);
    cr_assert_str_empty(text, "%s", text);
    free(text);
    sp_profile_free(big);
    sp_profile_free(small);
}
