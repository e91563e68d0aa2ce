/*
 * classify_digits: measures a classifier model's accuracy on labelled images.
 *
 *     classify_digits MODEL images.npy labels.npy
 *
 * images.npy holds float32 images, [N, ...] (for the 8x8 digits [N, 1, 8, 8] or [N, 64]);
 * labels.npy holds the N classes (int64 or int32). The model's first input is a batch of
 * images ([B, ...], B fixed or -1) and its first output the logits [B, classes]. The images
 * run in batches of B (the last one padded with zeros, whose predictions are dropped); the
 * class of an image is the argmax of its logits (the first on ties). Prints
 * `accuracy: 0.9xxx (k/N)`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anfora_runtime.h"
#include "npy.h"

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: classify_digits MODEL images.npy labels.npy\n");
        return 2;
    }
    AnforaModel *model = NULL;
    if (report_status(anfora_model_load(argv[1], &model), argv[1])) return 1;

    int rc = 1;
    char err[8192];
    NpyArray images = {0}, labels = {0};
    AnforaTensor **outputs = NULL;
    float *batch = NULL;
    if (npy_read(argv[2], &images, err, sizeof err) != 0 ||
        npy_read(argv[3], &labels, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        goto done;
    }
    AnforaTensorInfo in, out;
    if (anfora_model_num_inputs(model) != 1 || anfora_model_num_outputs(model) < 1) {
        fprintf(stderr, "error: %s: a classifier takes one input and returns logits\n", argv[1]);
        goto done;
    }
    if (report_status(anfora_model_input_info(model, 0, &in), argv[1]) ||
        report_status(anfora_model_output_info(model, 0, &out), argv[1]))
        goto done;
    if (in.dtype != ANFORA_FLOAT32 || in.ndim < 1 || images.dtype != ANFORA_FLOAT32 ||
        images.ndim < 1) {
        fprintf(stderr, "error: the model's input and the images must be float32 batches\n");
        goto done;
    }
    size_t n = (size_t)images.shape[0];
    if (labels.ndim != 1 || (size_t)labels.shape[0] != n ||
        (labels.dtype != ANFORA_INT64 && labels.dtype != ANFORA_INT32)) {
        fprintf(stderr, "error: %s: the labels must be int64 or int32 [%zu]\n", argv[3], n);
        goto done;
    }
    /* The elements of one image, as the file and as the model see it. */
    size_t per_image = n ? images.byte_size / sizeof(float) / n : 0;
    size_t per_input = npy_numel(in.ndim - 1, in.shape + 1);
    if (per_input != SIZE_MAX && per_input != per_image) {
        fprintf(stderr, "error: the model takes images of %zu elements, the file's have %zu\n",
                per_input, per_image);
        goto done;
    }
    size_t b = in.shape[0] > 0 ? (size_t)in.shape[0] : (n ? n : 1);
    int64_t shape[NPY_MAX_DIMS];
    shape[0] = (int64_t)b;
    if (per_input == SIZE_MAX) {
        for (size_t d = 1; d < images.ndim && d < NPY_MAX_DIMS; d++) shape[d] = images.shape[d];
    } else {
        for (size_t d = 1; d < in.ndim && d < NPY_MAX_DIMS; d++) shape[d] = in.shape[d];
    }
    size_t ndim = per_input == SIZE_MAX ? images.ndim : in.ndim;

    size_t n_outputs = anfora_model_num_outputs(model);
    outputs = calloc(n_outputs, sizeof *outputs);
    batch = calloc(b * per_image > 0 ? b * per_image : 1, sizeof(float));
    if (!outputs || !batch) {
        fprintf(stderr, "error: out of memory\n");
        goto done;
    }
    size_t correct = 0;
    for (size_t start = 0; start < n; start += b) {
        size_t count = n - start < b ? n - start : b;
        memset(batch, 0, b * per_image * sizeof(float));
        memcpy(batch, (const float *)images.data + start * per_image,
               count * per_image * sizeof(float));
        AnforaBuffer input = {ANFORA_FLOAT32, ndim, shape, batch, b * per_image * sizeof(float)};
        if (report_status(anfora_model_run_alloc(model, &input, 1, outputs, n_outputs), argv[1]))
            goto done;
        const AnforaTensor *logits = outputs[0];
        const int64_t *ls = anfora_tensor_shape(logits);
        if (anfora_tensor_ndim(logits) != 2 || (size_t)ls[0] != b || ls[1] < 1 ||
            anfora_tensor_dtype(logits) != ANFORA_FLOAT32) {
            fprintf(stderr, "error: the model's first output is not float32 logits [%zu, classes]\n",
                    b);
            goto done;
        }
        size_t classes = (size_t)ls[1];
        const float *l = anfora_tensor_data(logits);
        for (size_t i = 0; i < count; i++) {
            const float *row = l + i * classes;
            size_t best = 0;
            for (size_t c = 1; c < classes; c++)
                if (row[c] > row[best]) best = c;
            int64_t label = labels.dtype == ANFORA_INT64
                                ? ((const int64_t *)labels.data)[start + i]
                                : ((const int32_t *)labels.data)[start + i];
            correct += (int64_t)best == label;
        }
        for (size_t i = 0; i < n_outputs; i++) {
            anfora_tensor_free(outputs[i]);
            outputs[i] = NULL;
        }
    }
    printf("accuracy: %.4f (%zu/%zu)\n", n ? (double)correct / (double)n : 0.0, correct, n);
    rc = 0;
done:
    if (outputs)
        for (size_t i = 0; i < anfora_model_num_outputs(model); i++) anfora_tensor_free(outputs[i]);
    free(outputs);
    free(batch);
    npy_free(&images);
    npy_free(&labels);
    anfora_model_free(model);
    return rc;
}
