/*
 * run_model: runs an anfora model file on .npy inputs through the C API, like
 * `anfora run-model`.
 *
 *     run_model MODEL in0.npy [in1.npy ...] [-o DIR]
 *
 * Writes out0.npy, out1.npy, ... beside the first input (or into DIR) and prints one line per
 * output: its path, dtype and shape. Exits 1 with a message on stderr when a file cannot be
 * read or the model refuses the inputs, 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anfora_runtime.h"
#include "npy.h"

static void usage(void) {
    fprintf(stderr, "usage: run_model MODEL in0.npy [in1.npy ...] [-o DIR]\n");
}

int main(int argc, char **argv) {
    const char *model_path = NULL;
    const char *out_dir = NULL;
    const char **inputs = calloc((size_t)argc, sizeof *inputs);
    size_t n_inputs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0) {
            if (i + 1 == argc) {
                usage();
                return 2;
            }
            out_dir = argv[++i];
        } else if (!model_path) {
            model_path = argv[i];
        } else {
            inputs[n_inputs++] = argv[i];
        }
    }
    if (!model_path) {
        usage();
        return 2;
    }

    AnforaModel *model = NULL;
    if (report_status(anfora_model_load(model_path, &model), model_path)) return 1;

    int rc = 1;
    NpyArray *arrays = calloc(n_inputs + 1, sizeof *arrays);
    AnforaBuffer *buffers = calloc(n_inputs + 1, sizeof *buffers);
    size_t n_outputs = anfora_model_num_outputs(model);
    AnforaTensor **outputs = calloc(n_outputs + 1, sizeof *outputs);
    char err[8192];
    size_t read = 0;
    for (; read < n_inputs; read++) {
        if (npy_read(inputs[read], &arrays[read], err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            goto done;
        }
        buffers[read] = npy_buffer(&arrays[read]);
    }
    if (report_status(anfora_model_run_alloc(model, buffers, n_inputs, outputs, n_outputs),
                      model_path))
        goto done;

    /* The directory of the first input, or ".". */
    char dir[4096];
    if (out_dir) {
        snprintf(dir, sizeof dir, "%s", out_dir);
    } else if (n_inputs > 0 && strrchr(inputs[0], '/')) {
        size_t len = (size_t)(strrchr(inputs[0], '/') - inputs[0]);
        snprintf(dir, sizeof dir, "%.*s", (int)(len ? len : 1), inputs[0]);
    } else {
        snprintf(dir, sizeof dir, ".");
    }
    for (size_t i = 0; i < n_outputs; i++) {
        const AnforaTensor *t = outputs[i];
        char path[4200];
        snprintf(path, sizeof path, "%s/out%zu.npy", dir, i);
        AnforaDType dtype = anfora_tensor_dtype(t);
        size_t ndim = anfora_tensor_ndim(t);
        const int64_t *shape = anfora_tensor_shape(t);
        if (npy_write(path, dtype, ndim, shape, anfora_tensor_data(t),
                      anfora_tensor_byte_size(t), err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            goto done;
        }
        char what[512];
        npy_describe(what, sizeof what, dtype == ANFORA_BFLOAT16 ? ANFORA_FLOAT32 : dtype, ndim,
                     shape);
        printf("%s: %s\n", path, what);
    }
    rc = 0;
done:
    for (size_t i = 0; i < n_outputs; i++) anfora_tensor_free(outputs[i]);
    for (size_t i = 0; i < read; i++) npy_free(&arrays[i]);
    free(outputs);
    free(buffers);
    free(arrays);
    free(inputs);
    anfora_model_free(model);
    return rc;
}
