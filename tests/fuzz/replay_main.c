/* replay_main.c - run a fuzz target over every file of a stored corpus (CTest driver).
 *
 * Usage: fuzz_NAME_replay DIR.  Files are replayed in name order, each from a heap
 * buffer of exactly its size so a sanitizer build catches any over-read.  Exits 1
 * when DIR is missing, unreadable or holds no regular files.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct name_list {
    char **names;
    size_t n, cap;
} name_list;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_regular(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return 0;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int list_add(name_list *l, const char *name)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **names = realloc(l->names, cap * sizeof *names);
        if (!names)
            return -1;
        l->names = names;
        l->cap = cap;
    }
    if (!(l->names[l->n] = strdup(name)))
        return -1;
    l->n++;
    return 0;
}

/* The regular files of dir, sorted; -1 if dir cannot be read. */
static int list_files(const char *dir, name_list *l)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)))
        if (is_regular(dir, e->d_name))
            rc = list_add(l, e->d_name);
    closedir(d);
    if (l->n)
        qsort(l->names, l->n, sizeof *l->names, by_name);
    return rc;
}

/* Read the whole file into a buffer of exactly its size (1 byte for an empty file). */
static uint8_t *read_file(const char *dir, const char *name, size_t *size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc(n ? (size_t)n : 1)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

int main(int argc, char **argv)
{
    name_list l = {NULL, 0, 0};
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    if (list_files(argv[1], &l) < 0 || l.n == 0) {
        fprintf(stderr, "%s: no corpus files in '%s'\n", argv[0], argv[1]);
        return 1;
    }
    size_t replayed = 0;
    for (size_t i = 0; i < l.n; i++) {
        size_t size;
        uint8_t *data = read_file(argv[1], l.names[i], &size);
        if (!data) {
            fprintf(stderr, "%s: cannot read '%s/%s'\n", argv[0], argv[1], l.names[i]);
            return 1;
        }
        LLVMFuzzerTestOneInput(data, size);
        free(data);
        free(l.names[i]);
        replayed++;
    }
    free(l.names);
    printf("replayed %zu inputs\n", replayed);
    return 0;
}
