/* pc_app.c - one call of pc_region, built with `pkg-config --cflags --libs scopeprof`. */
#include <scope_profiler.h>

int main(void)
{
    int r = sp_region("pc_region");
    sp_begin(r);
    sp_end(r);
    return 0;
}
