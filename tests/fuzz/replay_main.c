/* replay_main.c - runs a fuzz target once on each file of the directories
 * given (the committed crash inputs of tests/fuzz/regressions), so every
 * crash the fuzzer ever found is checked by the normal test suite, built
 * with any compiler. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *data = malloc(cap);
    for (size_t got; data && (got = fread(data + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            uint8_t *grown = realloc(data, cap *= 2);
            if (!grown) {
                free(data);
                data = NULL;
            }
            data = grown;
        }
    }
    fclose(f);
    if (!data)
        return -1;
    LLVMFuzzerTestOneInput(data, n);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    int replayed = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d) {
            perror(argv[i]);
            return 1;
        }
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md"))
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            printf("replaying %s\n", path);
            fflush(stdout);
            if (replay_file(path) != 0)
                return 1;
            replayed++;
        }
        closedir(d);
    }
    printf("%d inputs replayed without a crash\n", replayed);
    return 0;
}
