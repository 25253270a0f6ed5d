/* app.c - 3 x (c_outer > 2 x c_inner), built with scopeprof::markers. */
#include <scope_profiler.h>

int main(void)
{
    int outer = sp_region("c_outer");
    int inner = sp_region("c_inner");
    for (int i = 0; i < 3; i++) {
        sp_begin(outer);
        for (int j = 0; j < 2; j++) {
            sp_begin(inner);
            sp_end(inner);
        }
        sp_end(outer);
    }
    return 0;
}
