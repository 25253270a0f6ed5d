/* cmd_validate.c - `scopeprof validate FILES...`: validate profile files and say
 * what is wrong with the damaged ones (see src/h5/h5_check.c).  This was
 * `scopeprof check` before `check` became the regression gate (cmd_check.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "scopeprof/h5.h"
#include "scopeprof/stream.h"

static const char validate_help[] =
    "usage: scopeprof validate FILES...\n"
    "\n"
    "Validate profile files: the schema attribute, every region row against\n"
    "the event columns (bounds, overlaps, lengths, region ids), summary\n"
    "statistics against the events, thread and task ids against the lane\n"
    "tables, call and parent ids, and the nesting of the calls of every rank.\n"
    "Prints 'OK FILE' for a sound file, else one line per problem.\n"
    "\n"
    "options:\n"
    "  -h, --help   show this help\n"
    "\n"
    "Exit status: 0 all files sound, 1 some file unreadable or damaged,\n"
    "2 usage error.\n";

static void print_problem(void *ctx, const char *problem)
{
    printf("%s: %s\n", (const char *)ctx, problem);
}

int cmd_validate(int argc, char **argv)
{
    int first = 1, files = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            first = i + 1;
            break;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(validate_help, stdout);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "scopeprof validate: unknown option '%s' (try 'scopeprof validate --help')\n",
                    argv[i]);
            return 2;
        }
    }
    int status = 0;
    for (int i = first; i < argc; i++) {
        if (first == 1 && argv[i][0] == '-' && argv[i][1])
            continue;
        files++;
        char err[1024];
        /* A sound file is confirmed in bounded memory (docs/stream.md); any
         * doubt goes to the full checker, which names every problem.
         * SCOPEPROF_VALIDATE_IN_MEMORY=1 always uses the checker (tests). */
        const char *force = getenv("SCOPEPROF_VALIDATE_IN_MEMORY");
        const char *trace = getenv("SCOPEPROF_VALIDATE_TRACE"); /* tests: which path */
        int traced = trace && !strcmp(trace, "1");
        if (!(force && !strcmp(force, "1")) && sp_stream_validate(argv[i], err, sizeof err) == 0) {
            if (traced)
                fprintf(stderr, "scopeprof validate: %s: streamed\n", argv[i]);
            printf("OK %s\n", argv[i]);
            fflush(stdout);
            continue;
        }
        if (traced)
            fprintf(stderr, "scopeprof validate: %s: checker%s%s\n", argv[i],
                    force && !strcmp(force, "1") ? "" : ": ", force && !strcmp(force, "1") ? "" : err);
        long problems = sp_h5_check(argv[i], print_problem, argv[i], err, sizeof err);
        if (problems < 0) {
            fprintf(stderr, "scopeprof validate: %s\n", err);
            status = 1;
        } else if (problems > 0) {
            status = 1;
        } else {
            printf("OK %s\n", argv[i]);
        }
        fflush(stdout);
    }
    if (files == 0) {
        fprintf(stderr, "scopeprof validate: no files given (try 'scopeprof validate --help')\n");
        return 2;
    }
    return status;
}
