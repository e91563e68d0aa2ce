/*
 * A small reader and writer of numpy's .npy files for the C examples: format versions 1.0,
 * 2.0 and 3.0, little-endian, C order, with the dtypes the runtime takes (bool, int32,
 * int64, float16, float32, float64). Header-only: each example includes it once.
 *
 * The writer produces the header numpy writes (and `anfora run-model` writes), padded so
 * that the data start at a multiple of 64 bytes.
 */
#ifndef ANFORA_EXAMPLES_NPY_H
#define ANFORA_EXAMPLES_NPY_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anfora_runtime.h"

#define NPY_MAX_DIMS 32

/* An array read from a file: `byte_size` bytes of `dtype` elements at `data` (malloc'ed). */
typedef struct {
    AnforaDType dtype;
    size_t ndim;
    int64_t shape[NPY_MAX_DIMS];
    void *data;
    size_t byte_size;
} NpyArray;

static const struct {
    AnforaDType dtype;
    const char *descr;
    size_t size;
    const char *name;
} NPY_DTYPES[] = {
    {ANFORA_BOOL, "|b1", 1, "bool"},      {ANFORA_INT32, "<i4", 4, "int32"},
    {ANFORA_INT64, "<i8", 8, "int64"},    {ANFORA_FLOAT16, "<f2", 2, "float16"},
    {ANFORA_FLOAT32, "<f4", 4, "float32"}, {ANFORA_FLOAT64, "<f8", 8, "float64"},
    {ANFORA_INT8, "|i1", 1, "int8"},      {ANFORA_UINT8, "|u1", 1, "uint8"},
};
#define NPY_NUM_DTYPES (sizeof NPY_DTYPES / sizeof NPY_DTYPES[0])

/* The size of one element (bfloat16 included), 0 for an unknown dtype. */
static inline size_t npy_dtype_size(AnforaDType d) {
    if (d == ANFORA_BFLOAT16) return 2;
    for (size_t i = 0; i < NPY_NUM_DTYPES; i++)
        if (NPY_DTYPES[i].dtype == d) return NPY_DTYPES[i].size;
    return 0;
}

static inline const char *npy_dtype_name(AnforaDType d) {
    if (d == ANFORA_BFLOAT16) return "bfloat16";
    for (size_t i = 0; i < NPY_NUM_DTYPES; i++)
        if (NPY_DTYPES[i].dtype == d) return NPY_DTYPES[i].name;
    return "unknown";
}

/* The number of elements, or SIZE_MAX when a dimension is negative or the count overflows. */
static inline size_t npy_numel(size_t ndim, const int64_t *shape) {
    size_t n = 1;
    for (size_t i = 0; i < ndim; i++) {
        if (shape[i] < 0) return SIZE_MAX;
        if (shape[i] != 0 && n > SIZE_MAX / (uint64_t)shape[i]) return SIZE_MAX;
        n *= (size_t)shape[i];
    }
    return n;
}

/* Writes "float32[2, 3]" into `buf`. */
static inline void npy_describe(char *buf, size_t len, AnforaDType dtype, size_t ndim,
                         const int64_t *shape) {
    size_t at = (size_t)snprintf(buf, len, "%s[", npy_dtype_name(dtype));
    for (size_t i = 0; i < ndim && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (at < len) snprintf(buf + at, len - at, "]");
}

static inline void npy_free(NpyArray *a) {
    free(a->data);
    a->data = NULL;
    a->byte_size = 0;
}

/* The text after `'key':` in the header dictionary, or NULL. */
static inline const char *npy_field(const char *header, const char *key) {
    char quoted[64];
    snprintf(quoted, sizeof quoted, "'%s'", key);
    const char *at = strstr(header, quoted);
    if (!at) return NULL;
    at += strlen(quoted);
    while (*at == ' ') at++;
    if (*at != ':') return NULL;
    at++;
    while (*at == ' ') at++;
    return at;
}

/* Parses the header dictionary. Returns 0, or -1 with a message in `err`. */
static inline int npy_parse_header(const char *h, NpyArray *out, char *err, size_t errlen) {
    const char *descr = npy_field(h, "descr");
    if (!descr || (*descr != '\'' && *descr != '"')) {
        snprintf(err, errlen, "the header has no descr string");
        return -1;
    }
    char quote = *descr++;
    const char *end = strchr(descr, quote);
    if (!end || end - descr > 15) {
        snprintf(err, errlen, "the header's descr is malformed");
        return -1;
    }
    char d[16];
    memcpy(d, descr, (size_t)(end - descr));
    d[end - descr] = '\0';
    int found = 0;
    for (size_t i = 0; i < NPY_NUM_DTYPES; i++) {
        /* "<i8" or "=i8"/"|b1"/"?" spellings of the same little-endian types. */
        const char *want = NPY_DTYPES[i].descr;
        int same = strcmp(d, want) == 0 || (d[0] == '=' && strcmp(d + 1, want + 1) == 0) ||
                   (NPY_DTYPES[i].dtype == ANFORA_BOOL && strcmp(d, "?") == 0);
        if (same) {
            out->dtype = NPY_DTYPES[i].dtype;
            found = 1;
        }
    }
    if (!found) {
        snprintf(err, errlen,
                 "dtype '%s' is not supported (bool, int32, int64, float16, float32 and float64, "
                 "little-endian, are)",
                 d);
        return -1;
    }
    const char *fortran = npy_field(h, "fortran_order");
    if (fortran && strncmp(fortran, "True", 4) == 0) {
        snprintf(err, errlen, "Fortran-ordered arrays are not supported");
        return -1;
    }
    const char *shape = npy_field(h, "shape");
    if (!shape || *shape != '(') {
        snprintf(err, errlen, "the header has no shape tuple");
        return -1;
    }
    shape++;
    out->ndim = 0;
    for (;;) {
        while (*shape == ' ' || *shape == ',') shape++;
        if (*shape == ')') break;
        if (*shape < '0' || *shape > '9') {
            snprintf(err, errlen, "the header's shape is malformed");
            return -1;
        }
        if (out->ndim == NPY_MAX_DIMS) {
            snprintf(err, errlen, "more than %d dimensions", NPY_MAX_DIMS);
            return -1;
        }
        char *next;
        errno = 0;
        long long dim = strtoll(shape, &next, 10);
        if (errno || dim < 0) {
            snprintf(err, errlen, "the header's shape has a bad dimension");
            return -1;
        }
        out->shape[out->ndim++] = dim;
        shape = next;
    }
    return 0;
}

/* Reads `path` into `out`. Returns 0, or -1 with a message in `err` (`out` then owns
 * nothing). */
static inline int npy_read(const char *path, NpyArray *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    unsigned char pre[12];
    char *header = NULL;
    int ok = -1;
    size_t got = fread(pre, 1, 10, f);
    if (got < 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        snprintf(err, errlen, "%s: not an .npy file (no \\x93NUMPY magic)", path);
        goto done;
    }
    size_t header_len;
    if (pre[6] == 1) {
        header_len = (size_t)pre[8] | (size_t)pre[9] << 8;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) {
            snprintf(err, errlen, "%s: the header is cut short", path);
            goto done;
        }
        header_len = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 |
                     (size_t)pre[11] << 24;
    } else {
        snprintf(err, errlen, "%s: .npy format version %d is not supported", path, pre[6]);
        goto done;
    }
    if (header_len > (1u << 24)) {
        snprintf(err, errlen, "%s: the header is implausibly long", path);
        goto done;
    }
    header = malloc(header_len + 1);
    if (!header || fread(header, 1, header_len, f) != header_len) {
        snprintf(err, errlen, "%s: the header is cut short", path);
        goto done;
    }
    header[header_len] = '\0';
    char why[256];
    if (npy_parse_header(header, out, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", path, why);
        goto done;
    }
    size_t numel = npy_numel(out->ndim, out->shape);
    size_t size = npy_dtype_size(out->dtype);
    if (numel == SIZE_MAX || (numel && size > SIZE_MAX / numel)) {
        snprintf(err, errlen, "%s: the array is too large", path);
        goto done;
    }
    out->byte_size = numel * size;
    out->data = malloc(out->byte_size ? out->byte_size : 1);
    if (!out->data) {
        snprintf(err, errlen, "%s: out of memory for %zu bytes", path, out->byte_size);
        goto done;
    }
    got = fread(out->data, 1, out->byte_size, f);
    if (got != out->byte_size) {
        char what[256];
        npy_describe(what, sizeof what, out->dtype, out->ndim, out->shape);
        snprintf(err, errlen, "%s: a %s array needs %zu bytes of data, the file has %zu", path,
                 what, out->byte_size, got);
        goto done;
    }
    ok = 0;
done:
    free(header);
    fclose(f);
    if (ok != 0) npy_free(out);
    return ok;
}

/* Writes an array to `path` (bfloat16 as float32, which numpy lacks). Returns 0, or -1 with a
 * message in `err`. */
static inline int npy_write(const char *path, AnforaDType dtype, size_t ndim, const int64_t *shape,
                     const void *data, size_t byte_size, char *err, size_t errlen) {
    const char *descr = NULL;
    float *widened = NULL;
    if (dtype == ANFORA_BFLOAT16) {
        size_t n = byte_size / 2;
        widened = malloc(n ? n * sizeof(float) : 1);
        if (!widened) {
            snprintf(err, errlen, "%s: out of memory", path);
            return -1;
        }
        const uint16_t *bits = data;
        for (size_t i = 0; i < n; i++) {
            uint32_t wide = (uint32_t)bits[i] << 16;
            memcpy(&widened[i], &wide, sizeof wide);
        }
        data = widened;
        byte_size = n * sizeof(float);
        dtype = ANFORA_FLOAT32;
    }
    for (size_t i = 0; i < NPY_NUM_DTYPES; i++)
        if (NPY_DTYPES[i].dtype == dtype) descr = NPY_DTYPES[i].descr;
    if (!descr) {
        snprintf(err, errlen, "%s: dtype %d has no .npy spelling", path, (int)dtype);
        free(widened);
        return -1;
    }
    char dict[1024];
    size_t at = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                                 descr);
    for (size_t i = 0; i < ndim && at < sizeof dict; i++)
        at += (size_t)snprintf(dict + at, sizeof dict - at, i ? ", %lld" : "%lld",
                               (long long)shape[i]);
    if (at < sizeof dict)
        at += (size_t)snprintf(dict + at, sizeof dict - at, ndim == 1 ? ",), }" : "), }");
    if (at + 64 >= sizeof dict) {
        snprintf(err, errlen, "%s: too many dimensions", path);
        free(widened);
        return -1;
    }
    /* Pad with spaces and end with a newline so that the data start at a multiple of 64. */
    size_t unpadded = 10 + at + 1;
    size_t padded = (unpadded + 63) / 64 * 64;
    memset(dict + at, ' ', padded - unpadded);
    at += padded - unpadded;
    dict[at++] = '\n';
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(at & 0xff),
                             (unsigned char)(at >> 8)};
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        free(widened);
        return -1;
    }
    int bad = fwrite(pre, 1, 10, f) != 10 || fwrite(dict, 1, at, f) != at ||
              fwrite(data, 1, byte_size, f) != byte_size;
    bad |= fclose(f) != 0;
    free(widened);
    if (bad) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The runtime's view of an array read from a file. */
static inline AnforaBuffer npy_buffer(const NpyArray *a) {
    AnforaBuffer b;
    b.dtype = a->dtype;
    b.ndim = a->ndim;
    b.shape = a->shape;
    b.data = a->data;
    b.byte_size = a->byte_size;
    return b;
}

/* Prints a failed status's message on stderr, frees it and returns 1 (0 for success). */
static inline int report_status(AnforaStatus *s, const char *what) {
    if (!s) return 0;
    fprintf(stderr, "error: %s: %s\n", what, anfora_status_message(s));
    anfora_status_free(s);
    return 1;
}

#endif
