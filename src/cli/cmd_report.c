/* placeholder: being written */
#include <stdio.h>
#include "commands.h"
int cmd_report(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "scopeprof report: not built yet\n");
    return 1;
}
