/* placeholder: being written */
#include <stdio.h>
#include "commands.h"
int cmd_export(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "scopeprof export: not built yet\n");
    return 1;
}
