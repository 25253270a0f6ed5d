/* misuse.c - marker API misuse: calls before sp_init, an end without a
 * begin, invalid ids, NULL names, a region left open at exit.  The program
 * must run to the end and every well-formed call must be kept. */
#include <stdio.h>
#include <string.h>

#include "scope_profiler.h"

int main(void)
{
    /* Before sp_init the shim is already recording (it starts at load). */
    int early = sp_region("early");
    sp_begin(early);
    sp_end(early);

    sp_init("misuse", 0);
    int good = sp_region("good");
    int open = sp_region("left_open");
    sp_end(good);                      /* end without begin */
    int unmatched = sp_last_error();
    sp_begin(12345);                   /* invalid ids are ignored */
    sp_end(-7);
    int null_id = sp_region(NULL);
    for (int i = 0; i < 3; i++) {
        sp_begin(good);
        sp_end(good);
    }
    sp_begin(open);                    /* never closed */
    printf("early=%d unmatched=%d (%s) null_id=%d\n", early, unmatched,
           sp_error_string(unmatched), null_id);
    return 0;
}
