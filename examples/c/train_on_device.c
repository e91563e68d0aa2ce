/*
 * train_on_device: runs an exported training step on the device it is deployed to.
 *
 *     train_on_device MODEL x.npy y.npy STEPS OUT_MODEL
 *
 * MODEL is a training step exported with `anfora export` (or `anfora.export`): its inputs are a
 * batch of examples x [B, ...] and their targets y [B, ...], its first output is the loss, and
 * each run updates its Parameters. x.npy and y.npy hold N >= 1 examples with the inputs'
 * dtypes; step i trains on examples i*B, i*B+1, ... (wrapping around). Prints each step's
 * loss, then writes the model with the trained Parameters to OUT_MODEL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anfora_runtime.h"
#include "npy.h"

/* A batch of `b` examples taken from `a` starting at example `first`, wrapping around. */
static void take_batch(const NpyArray *a, size_t first, size_t b, unsigned char *batch) {
    size_t n = (size_t)a->shape[0];
    size_t row = n ? a->byte_size / n : 0;
    for (size_t i = 0; i < b; i++)
        memcpy(batch + i * row, (const unsigned char *)a->data + ((first + i) % n) * row, row);
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: train_on_device MODEL x.npy y.npy STEPS OUT_MODEL\n");
        return 2;
    }
    char *end;
    long steps = strtol(argv[4], &end, 10);
    if (*end || steps < 0) {
        fprintf(stderr, "error: STEPS must be a count, not '%s'\n", argv[4]);
        return 2;
    }
    AnforaModel *model = NULL;
    if (report_status(anfora_model_load(argv[1], &model), argv[1])) return 1;

    int rc = 1;
    char err[8192];
    NpyArray data[2] = {{0}, {0}};
    unsigned char *batches[2] = {NULL, NULL};
    AnforaBuffer inputs[2];
    int64_t shapes[2][NPY_MAX_DIMS];
    size_t n_outputs = anfora_model_num_outputs(model);
    AnforaTensor **outputs = calloc(n_outputs + 1, sizeof *outputs);
    if (anfora_model_num_inputs(model) != 2 || n_outputs < 1) {
        fprintf(stderr, "error: %s: a training step takes x and y and returns the loss\n",
                argv[1]);
        goto done;
    }
    for (int k = 0; k < 2; k++) {
        if (npy_read(argv[2 + k], &data[k], err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            goto done;
        }
        AnforaTensorInfo info;
        if (report_status(anfora_model_input_info(model, (size_t)k, &info), argv[1])) goto done;
        const NpyArray *a = &data[k];
        if (a->ndim < 1 || a->shape[0] < 1 || a->ndim != info.ndim) {
            fprintf(stderr, "error: %s: expected examples [N, ...] for input '%s'\n", argv[2 + k],
                    info.name);
            goto done;
        }
        /* The batch's shape: the model's batch size, the file's other dimensions (a runtime
         * check then compares them with the model's). */
        size_t b = info.shape[0] > 0 ? (size_t)info.shape[0] : (size_t)a->shape[0];
        shapes[k][0] = (int64_t)b;
        for (size_t d = 1; d < a->ndim; d++) shapes[k][d] = a->shape[d];
        size_t row = a->byte_size / (size_t)a->shape[0];
        batches[k] = malloc(b * row > 0 ? b * row : 1);
        if (!batches[k]) {
            fprintf(stderr, "error: out of memory\n");
            goto done;
        }
        inputs[k] = (AnforaBuffer){a->dtype, a->ndim, shapes[k], batches[k], b * row};
    }
    if (shapes[0][0] != shapes[1][0]) {
        fprintf(stderr, "error: x and y batches differ (%lld and %lld examples)\n",
                (long long)shapes[0][0], (long long)shapes[1][0]);
        goto done;
    }
    size_t b = (size_t)shapes[0][0];
    for (long step = 0; step < steps; step++) {
        for (int k = 0; k < 2; k++) take_batch(&data[k], (size_t)step * b, b, batches[k]);
        if (report_status(anfora_model_run_alloc(model, inputs, 2, outputs, n_outputs), argv[1]))
            goto done;
        const AnforaTensor *loss = outputs[0];
        double value;
        if (anfora_tensor_dtype(loss) == ANFORA_FLOAT32 && anfora_tensor_byte_size(loss) == 4) {
            value = *(const float *)anfora_tensor_data(loss);
        } else if (anfora_tensor_dtype(loss) == ANFORA_FLOAT64 &&
                   anfora_tensor_byte_size(loss) == 8) {
            value = *(const double *)anfora_tensor_data(loss);
        } else {
            fprintf(stderr, "error: the first output is not a float loss\n");
            goto done;
        }
        printf("step %ld: loss %.9g\n", step + 1, value);
        for (size_t i = 0; i < n_outputs; i++) {
            anfora_tensor_free(outputs[i]);
            outputs[i] = NULL;
        }
    }
    if (report_status(anfora_model_save(model, argv[5]), argv[5])) goto done;
    printf("saved %s\n", argv[5]);
    rc = 0;
done:
    for (size_t i = 0; i < n_outputs; i++) anfora_tensor_free(outputs[i]);
    free(outputs);
    for (int k = 0; k < 2; k++) {
        free(batches[k]);
        npy_free(&data[k]);
    }
    anfora_model_free(model);
    return rc;
}
