/* placeholder: being written */
#include <stdio.h>
#include "commands.h"
int cmd_flame(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "scopeprof flame: not built yet\n");
    return 1;
}
