/* output_path.c - file names: "<prefix>_rank<NNNNN>.h5" with %p (pid),
 * %h (host name), %r (rank) and %% expanded in the prefix. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "output_path.h"

int sp_output_path_format(char *buf, size_t len, const char *prefix, int rank, int pid)
{
    char expanded[4096];
    size_t n = 0;
    for (const char *s = prefix; *s && n + 1 < sizeof expanded; s++) {
        char piece[300];
        const char *add = NULL;
        if (s[0] == '%' && s[1]) {
            switch (s[1]) {
            case 'p': snprintf(piece, sizeof piece, "%d", pid); add = piece; break;
            case 'r': snprintf(piece, sizeof piece, "%05d", rank); add = piece; break;
            case 'h':
                if (gethostname(piece, sizeof piece - 1) != 0)
                    strcpy(piece, "unknown-host");
                piece[sizeof piece - 1] = '\0';
                add = piece;
                break;
            case '%': add = "%"; break;
            default: break;
            }
        }
        if (add) {
            size_t a = strlen(add);
            if (n + a >= sizeof expanded)
                return -1;
            memcpy(expanded + n, add, a);
            n += a;
            s++;
        } else {
            expanded[n++] = *s;
        }
    }
    expanded[n] = '\0';
    int w = snprintf(buf, len, "%s_rank%05d.h5", expanded, rank);
    return (w < 0 || (size_t)w >= len) ? -1 : 0;
}
