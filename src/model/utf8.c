/* utf8.c - see utf8.h.  Well-formed means RFC 3629 (Unicode table 3-7). */
#include "model/utf8.h"

size_t sp_utf8_sequence(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0; /* overlong */
        else if (c == 0xed)
            hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90; /* overlong */
        else if (c == 0xf4)
            hi = 0x8f; /* past U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return len;
}

void sp_utf8_write(FILE *out, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t plain = 0;
    for (size_t i = 0; i < n;) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = sp_utf8_sequence(u + i, n - i);
        if (k) {
            i += k;
            continue;
        }
        fwrite_unlocked(s + plain, 1, i - plain, out);
        fputs_unlocked(SP_UTF8_REPLACEMENT, out);
        plain = ++i;
    }
    fwrite_unlocked(s + plain, 1, n - plain, out);
}
