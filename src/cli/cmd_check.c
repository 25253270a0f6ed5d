/* placeholder: being written */
#include <stdio.h>
#include "commands.h"
int cmd_check(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "scopeprof check: not built yet\n");
    return 1;
}
