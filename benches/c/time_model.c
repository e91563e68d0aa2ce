/* Times a model through the C API: load + validate + plan (the median of LOADS loads of the
 * file held in memory), then RUNS calls on one thread with caller-provided buffers (the
 * median and the minimum). Inputs are filled with a fixed pattern; the model must take
 * float32 or int64 tensors of fixed shapes.
 *
 *   time_model MODEL [RUNS] [LOADS]
 *
 * Prints one line: `load_us=... run_median_us=... run_min_us=...`. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anfora_runtime.h"

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void check(AnforaStatus *s, const char *what) {
    if (s) {
        fprintf(stderr, "%s: %s\n", what, anfora_status_message(s));
        anfora_status_free(s);
        exit(1);
    }
}

static size_t element_size(AnforaDType d) {
    switch (d) {
    case ANFORA_BOOL: case ANFORA_INT8: case ANFORA_UINT8: return 1;
    case ANFORA_FLOAT16: case ANFORA_BFLOAT16: return 2;
    case ANFORA_INT32: case ANFORA_FLOAT32: return 4;
    default: return 8;
    }
}

/* A buffer for a tensor of `info`'s type (every dimension fixed). */
static AnforaBuffer buffer_for(const AnforaTensorInfo *info) {
    AnforaBuffer b;
    size_t n = 1;
    for (size_t d = 0; d < info->ndim; d++) n *= (size_t)info->shape[d];
    b.dtype = info->dtype;
    b.ndim = info->ndim;
    b.shape = info->shape;
    b.byte_size = n * element_size(info->dtype);
    b.data = calloc(1, b.byte_size ? b.byte_size : 1);
    if (info->dtype == ANFORA_FLOAT32)
        for (size_t i = 0; i < n; i++) ((float *)b.data)[i] = (float)((i * 7919) % 101) / 101.0f;
    return b;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: time_model MODEL [RUNS] [LOADS]\n");
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 2000, loads = argc > 3 ? atoi(argv[3]) : 200;
    anfora_set_num_threads(1);
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *bytes = malloc((size_t)len);
    if (fread(bytes, 1, (size_t)len, f) != (size_t)len) { perror("read"); return 1; }
    fclose(f);

    double *times = malloc(sizeof(double) * (size_t)(runs > loads ? runs : loads));
    AnforaModel *model = NULL;
    for (int i = 0; i < loads; i++) {
        double t0 = now_us();
        check(anfora_model_load_from_buffer(bytes, (size_t)len, &model), "load");
        times[i] = now_us() - t0;
        if (i + 1 < loads) anfora_model_free(model);
    }
    qsort(times, (size_t)loads, sizeof(double), cmp);
    double load_us = times[loads / 2];

    size_t n_in = anfora_model_num_inputs(model), n_out = anfora_model_num_outputs(model);
    AnforaBuffer *in = calloc(n_in, sizeof(AnforaBuffer)), *out = calloc(n_out, sizeof(AnforaBuffer));
    for (size_t i = 0; i < n_in; i++) {
        AnforaTensorInfo info;
        check(anfora_model_input_info(model, i, &info), "input info");
        in[i] = buffer_for(&info);
    }
    for (size_t i = 0; i < n_out; i++) {
        AnforaTensorInfo info;
        check(anfora_model_output_info(model, i, &info), "output info");
        out[i] = buffer_for(&info);
    }
    for (int i = 0; i < runs / 10 + 10; i++) check(anfora_model_run(model, in, n_in, out, n_out), "run");
    for (int i = 0; i < runs; i++) {
        double t0 = now_us();
        check(anfora_model_run(model, in, n_in, out, n_out), "run");
        times[i] = now_us() - t0;
    }
    qsort(times, (size_t)runs, sizeof(double), cmp);
    printf("load_us=%.2f run_median_us=%.2f run_min_us=%.2f\n", load_us, times[runs / 2], times[0]);
    anfora_model_free(model);
    return 0;
}
