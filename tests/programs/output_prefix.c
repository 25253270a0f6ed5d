/* output_prefix.c - where the file goes when the program moves.
 *
 *   output_prefix INIT DIR
 * INIT: a prefix for sp_init, or "-" for none (SCOPE_PROFILER_OUTPUT or the
 * default then name the file).  Records "work" 3 times, says "recorded" on
 * stderr, then, unless DIR is "-", creates DIR and chdir()s into it before
 * exiting (the file is written at exit). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: output_prefix INIT|- DIR|-\n");
        return 2;
    }
    if (strcmp(argv[1], "-") != 0)
        sp_init(argv[1], 0);
    int work = sp_region("work");
    for (int i = 0; i < 3; i++) {
        sp_begin(work);
        sp_end(work);
    }
    fprintf(stderr, "recorded\n");
    fflush(stderr);
    if (strcmp(argv[2], "-") != 0) {
        if (mkdir(argv[2], 0755) != 0 || chdir(argv[2]) != 0) {
            perror(argv[2]);
            return 1;
        }
    }
    return 0;
}
