/* report_units.c - durations with a unit chosen per value, three significant
 * digits, so a column of times stays narrow and readable. */
#include <stdio.h>

#include "scopeprof/report.h"

int sp_format_duration(int64_t ns, char *buf, size_t buflen)
{
    if (ns < 0)
        return snprintf(buf, buflen, "-");
    if (ns < 1000)
        return snprintf(buf, buflen, "%lld ns", (long long)ns);
    static const struct {
        double scale;
        const char *unit;
    } units[] = {{1e3, "\xc2\xb5s"}, {1e6, "ms"}, {1e9, "s"}};
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        double v = (double)ns / units[u].scale;
        int last = u + 1 == sizeof units / sizeof units[0];
        /* Decide on the rounded value: 999.96 µs prints as "1.00 ms". */
        if (v < 9.995)
            return snprintf(buf, buflen, "%.2f %s", v, units[u].unit);
        if (v < 99.95)
            return snprintf(buf, buflen, "%.1f %s", v, units[u].unit);
        if (v < 999.5 || last)
            return snprintf(buf, buflen, "%.0f %s", v, units[u].unit);
    }
    return 0; /* not reached: the last unit always prints */
}
