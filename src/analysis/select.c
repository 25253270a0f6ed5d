/* select.c - the CLI selection: ranks, lanes, region regexes, time window,
 * minimum duration, and the option parser shared by report/export/flame. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/analysis.h"

const char sp_selection_help[] =
    "  -r, --ranks LIST      ranks to keep, e.g. 0,2-3 (default: all ranks)\n"
    "      --lanes LIST      lanes to keep: label (MainThread), 'thread N', 'task N',\n"
    "                        'unknown' or 'lane:ID', comma separated\n"
    "  -i, --include RE      keep only regions whose name matches RE (POSIX ERE)\n"
    "  -e, --exclude RE      drop regions whose name matches RE; children of a\n"
    "                        dropped call hang from its nearest kept ancestor\n"
    "      --from S          keep calls ending at or after S seconds after the run start\n"
    "      --to S            keep calls starting at or before S seconds after the run start\n"
    "      --min-duration S  keep calls lasting at least S seconds\n"
    "      --no-graft        merged views keep forked work (OpenMP workers, threads\n"
    "                        started inside a call) at top level, not under its fork\n";

void sp_selection_init(sp_selection *sel)
{
    memset(sel, 0, sizeof *sel);
}

void sp_selection_free(sp_selection *sel)
{
    free(sel->ranks);
    for (size_t i = 0; i < sel->num_lanes; i++)
        free(sel->lanes[i]);
    free(sel->lanes);
    if (sel->has_include)
        regfree(&sel->include);
    if (sel->has_exclude)
        regfree(&sel->exclude);
    sp_selection_init(sel);
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Parse a non-negative decimal rank; returns the end pointer or NULL. */
static const char *parse_rank(const char *p, uint32_t *out)
{
    if (*p < '0' || *p > '9')
        return NULL;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno || v > UINT32_MAX - 1)
        return NULL;
    *out = (uint32_t)v;
    return end;
}

/* Ranges this long are almost certainly typos; refuse them instead of
 * allocating gigabytes. */
#define MAX_RANK_RANGE (1u << 24)

int sp_selection_add_ranks(sp_selection *sel, const char *text, char *err, size_t errlen)
{
    const char *p = text;
    for (;;) {
        uint32_t lo, hi;
        const char *q = parse_rank(p, &lo);
        if (!q)
            goto bad;
        hi = lo;
        if (*q == '-') {
            q = parse_rank(q + 1, &hi);
            if (!q || hi < lo)
                goto bad;
        }
        if (hi - lo >= MAX_RANK_RANGE) {
            snprintf(err, errlen, "--ranks: range %u-%u is too large", lo, hi);
            return -1;
        }
        size_t add = (size_t)(hi - lo) + 1;
        uint32_t *grown = realloc(sel->ranks, (sel->num_ranks + add) * sizeof *grown);
        if (!grown) {
            snprintf(err, errlen, "--ranks: out of memory");
            return -1;
        }
        sel->ranks = grown;
        for (uint32_t r = lo;; r++) {
            sel->ranks[sel->num_ranks++] = r;
            if (r == hi)
                break;
        }
        if (*q == '\0')
            break;
        if (*q != ',')
            goto bad;
        p = q + 1;
    }
    qsort(sel->ranks, sel->num_ranks, sizeof *sel->ranks, compare_u32);
    size_t u = 0;
    for (size_t i = 0; i < sel->num_ranks; i++)
        if (u == 0 || sel->ranks[u - 1] != sel->ranks[i])
            sel->ranks[u++] = sel->ranks[i];
    sel->num_ranks = u;
    return 0;
bad:
    snprintf(err, errlen, "--ranks: '%s' is not a rank list like 0,2-3", text);
    return -1;
}

int sp_selection_add_lanes(sp_selection *sel, const char *text, char *err, size_t errlen)
{
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0) {
            snprintf(err, errlen, "--lanes: empty lane name in '%s'", text);
            return -1;
        }
        char **grown = realloc(sel->lanes, (sel->num_lanes + 1) * sizeof *grown);
        if (!grown)
            goto oom;
        sel->lanes = grown;
        char *copy = strndup(p, len);
        if (!copy)
            goto oom;
        sel->lanes[sel->num_lanes++] = copy;
        if (!comma)
            return 0;
        p = comma + 1;
    }
oom:
    snprintf(err, errlen, "--lanes: out of memory");
    return -1;
}

static int compile(regex_t *re, int *has, const char *option, const char *text,
                   char *err, size_t errlen)
{
    if (*has) {
        regfree(re);
        *has = 0;
    }
    int rc = regcomp(re, text, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char why[160];
        regerror(rc, re, why, sizeof why);
        snprintf(err, errlen, "%s: bad regular expression '%s': %s", option, text, why);
        return -1;
    }
    *has = 1;
    return 0;
}

int sp_selection_set_include(sp_selection *sel, const char *re, char *err, size_t errlen)
{
    return compile(&sel->include, &sel->has_include, "--include", re, err, errlen);
}

int sp_selection_set_exclude(sp_selection *sel, const char *re, char *err, size_t errlen)
{
    return compile(&sel->exclude, &sel->has_exclude, "--exclude", re, err, errlen);
}

int sp_selection_set_seconds(double *out, const char *what, const char *text,
                             int allow_negative, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno || !isfinite(v) || (!allow_negative && v < 0)) {
        snprintf(err, errlen, "%s: '%s' is not a %snumber of seconds", what, text,
                 allow_negative ? "" : "non-negative ");
        return -1;
    }
    *out = v;
    return 0;
}

/* Matches "--name VALUE", "--name=VALUE" and, if given, "-s VALUE".
 * Returns the value, NULL if argv[*i] is another option, or sets *missing. */
static const char *option_value(int argc, char **argv, int *i, const char *name,
                                const char *shortname, int *missing)
{
    const char *arg = argv[*i];
    size_t len = strlen(name);
    if (!strncmp(arg, name, len) && arg[len] == '=') {
        *i += 1;
        return arg + len + 1;
    }
    if (strcmp(arg, name) && (!shortname || strcmp(arg, shortname)))
        return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    *i += 2;
    return argv[*i - 1];
}

int sp_selection_parse_option(sp_selection *sel, int argc, char **argv, int *i,
                              char *err, size_t errlen)
{
    static const struct {
        const char *name, *shortname;
    } options[] = {
        {"--ranks", "-r"}, {"--lanes", NULL}, {"--include", "-i"}, {"--exclude", "-e"},
        {"--from", NULL},  {"--to", NULL},    {"--min-duration", NULL},
    };
    if (!strcmp(argv[*i], "--no-graft")) {
        sel->no_graft = 1;
        (*i)++;
        return 1;
    }
    for (size_t k = 0; k < sizeof options / sizeof options[0]; k++) {
        int missing = 0;
        const char *v = option_value(argc, argv, i, options[k].name, options[k].shortname,
                                     &missing);
        if (missing) {
            snprintf(err, errlen, "%s needs a value", options[k].name);
            return -1;
        }
        if (!v)
            continue;
        int rc;
        switch (k) {
        case 0: rc = sp_selection_add_ranks(sel, v, err, errlen); break;
        case 1: rc = sp_selection_add_lanes(sel, v, err, errlen); break;
        case 2: rc = sp_selection_set_include(sel, v, err, errlen); break;
        case 3: rc = sp_selection_set_exclude(sel, v, err, errlen); break;
        case 4:
            rc = sp_selection_set_seconds(&sel->from_s, "--from", v, 1, err, errlen);
            sel->has_from = rc == 0;
            break;
        case 5:
            rc = sp_selection_set_seconds(&sel->to_s, "--to", v, 1, err, errlen);
            sel->has_to = rc == 0;
            break;
        default:
            rc = sp_selection_set_seconds(&sel->min_duration_s, "--min-duration", v, 0, err,
                                          errlen);
            sel->has_min_duration = rc == 0;
            break;
        }
        if (rc == 0 && sel->has_from && sel->has_to && sel->to_s < sel->from_s) {
            snprintf(err, errlen, "--to (%g s) is before --from (%g s)", sel->to_s, sel->from_s);
            return -1;
        }
        return rc == 0 ? 1 : -1;
    }
    return 0;
}

int sp_selection_has_rank(const sp_selection *sel, uint32_t rank)
{
    if (!sel || !sel->ranks)
        return 1;
    return bsearch(&rank, sel->ranks, sel->num_ranks, sizeof rank, compare_u32) != NULL;
}

int sp_selection_keeps_region(const sp_selection *sel, const char *name)
{
    if (!sel)
        return 1;
    if (sel->has_include && regexec(&sel->include, name, 0, NULL, 0) != 0)
        return 0;
    if (sel->has_exclude && regexec(&sel->exclude, name, 0, NULL, 0) == 0)
        return 0;
    return 1;
}

int sp_selection_filters_calls(const sp_selection *sel)
{
    return sel && (sel->has_include || sel->has_exclude || sel->has_from || sel->has_to ||
                   sel->has_min_duration);
}

int sp_selection_keeps_lane(const sp_selection *sel, const sp_profile *profile,
                            uint32_t rank, int64_t lane)
{
    if (!sel || !sel->lanes)
        return 1;
    for (size_t i = 0; i < sel->num_lanes; i++)
        if (sp_lane_matches(profile, rank, lane, sel->lanes[i]))
            return 1;
    return 0;
}

long sp_selected_ranks(const sp_profile *profile, const sp_selection *sel, uint32_t **ranks)
{
    *ranks = NULL;
    size_t n = 0;
    uint32_t *out = malloc((profile->num_rows ? profile->num_rows : 1) * sizeof *out);
    if (!out)
        return -1;
    for (size_t r = 0; r < profile->num_rows; r++)
        if (sp_selection_has_rank(sel, profile->rows[r].rank))
            out[n++] = profile->rows[r].rank;
    qsort(out, n, sizeof *out, compare_u32);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || out[u - 1] != out[i])
            out[u++] = out[i];
    *ranks = out;
    return (long)u;
}
