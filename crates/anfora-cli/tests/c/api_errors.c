/*
 * The C API's error paths and threads, run by tests/c_api.rs:
 *
 *     api_errors MLP_MODEL TRUNCATED_MODEL TRAIN_MODEL CHECKED_MODEL SCRATCH_DIR
 *
 * MLP_MODEL takes one float32 [2, 4] input and returns float32 [2, 3]; TRUNCATED_MODEL is a
 * model file cut short; TRAIN_MODEL is a training step with float32 Parameters "W" [4, 1]
 * and "b" [1]; CHECKED_MODEL doubles a float32 [2] that it asserts is at most 100 ("too
 * big"). Every check prints a line on failure; the last line is
 * `api_errors: N checks passed` when all pass (exit status 0), else the count that failed.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anfora_runtime.h"

static int checks, failures;

#define CHECK(cond)                                                        \
    do {                                                                   \
        checks++;                                                          \
        if (!(cond)) {                                                     \
            failures++;                                                    \
            printf("FAILED line %d: %s\n", __LINE__, #cond);               \
        }                                                                  \
    } while (0)

/* Checks that `s` failed with `code` and a message containing `part`, then frees it. */
static void expect(AnforaStatus *s, AnforaCode code, const char *part, int line) {
    checks++;
    if (!s) {
        failures++;
        printf("FAILED line %d: succeeded, expected code %d\n", line, (int)code);
        return;
    }
    const char *m = anfora_status_message(s);
    if (anfora_status_code(s) != code || !m || !strstr(m, part)) {
        failures++;
        printf("FAILED line %d: code %d message '%s', expected code %d with '%s'\n", line,
               (int)anfora_status_code(s), m ? m : "(null)", (int)code, part);
    }
    anfora_status_free(s);
}
#define EXPECT(s, code, part) expect((s), (code), (part), __LINE__)

/* Checks success; on failure prints the message and frees the status. */
static int ok(AnforaStatus *s, int line) {
    checks++;
    if (!s) return 1;
    failures++;
    printf("FAILED line %d: %s\n", line, anfora_status_message(s));
    anfora_status_free(s);
    return 0;
}
#define OK(s) ok((s), __LINE__)

static const int64_t X_SHAPE[2] = {2, 4};
static float X[8] = {1.0f, 2.0f, 3.0f, 4.0f, 0.5f, -1.0f, 0.25f, 2.0f};
static float REFERENCE[6];

struct worker {
    const AnforaModel *model;
    int runs, mismatches, errors;
};

static void *work(void *arg) {
    struct worker *w = arg;
    for (int i = 0; i < w->runs; i++) {
        float out[6];
        int64_t shape[2] = {2, 3};
        AnforaBuffer in = {ANFORA_FLOAT32, 2, X_SHAPE, X, sizeof X};
        AnforaBuffer o = {ANFORA_FLOAT32, 2, shape, out, sizeof out};
        AnforaStatus *s = anfora_model_run(w->model, &in, 1, &o, 1);
        if (s) {
            w->errors++;
            anfora_status_free(s);
        } else if (memcmp(out, REFERENCE, sizeof out) != 0) {
            w->mismatches++;
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr,
                "usage: api_errors MLP_MODEL TRUNCATED_MODEL TRAIN_MODEL CHECKED_MODEL "
                "SCRATCH_DIR\n");
        return 2;
    }
    const char *mlp_path = argv[1], *truncated = argv[2], *train_path = argv[3];
    const char *checked_path = argv[4], *dir = argv[5];
    /* One kernel thread per calling thread: the calls below never start a pool. */
    anfora_set_num_threads(1);

    /* NULL statuses, models and tensors. */
    CHECK(anfora_status_code(NULL) == ANFORA_OK);
    CHECK(strcmp(anfora_status_message(NULL), "") == 0);
    anfora_status_free(NULL);
    anfora_model_free(NULL);
    anfora_tensor_free(NULL);
    CHECK(anfora_model_num_inputs(NULL) == 0);
    CHECK(anfora_model_num_outputs(NULL) == 0);
    CHECK(anfora_model_num_parameters(NULL) == 0);
    CHECK(strlen(anfora_version()) > 0);

    /* Loading: missing, truncated, NULL arguments. */
    AnforaModel *m = NULL;
    char missing[4096];
    snprintf(missing, sizeof missing, "%s/no-such-model.anfora", dir);
    EXPECT(anfora_model_load(missing, &m), ANFORA_IO_ERROR, "no-such-model.anfora");
    CHECK(m == NULL);
    EXPECT(anfora_model_load(truncated, &m), ANFORA_INVALID_MODEL, "");
    CHECK(m == NULL);
    EXPECT(anfora_model_load(NULL, &m), ANFORA_INVALID_ARGUMENT, "path is NULL");
    EXPECT(anfora_model_load(mlp_path, NULL), ANFORA_INVALID_ARGUMENT, "out is NULL");
    EXPECT(anfora_model_load_from_buffer(NULL, 16, &m), ANFORA_INVALID_ARGUMENT, "data is NULL");
    EXPECT(anfora_model_load_from_buffer("", 0, &m), ANFORA_INVALID_MODEL, "");
    EXPECT(anfora_model_load_from_buffer("not a model file", 16, &m), ANFORA_INVALID_MODEL, "");

    /* The same file from a buffer, then from its path. */
    FILE *f = fopen(mlp_path, "rb");
    CHECK(f != NULL);
    if (!f) return 1;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *bytes = malloc((size_t)len);
    CHECK(fread(bytes, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    AnforaModel *from_buffer = NULL;
    if (!OK(anfora_model_load_from_buffer(bytes, (size_t)len, &from_buffer))) return 1;
    /* The model keeps a copy: the caller's bytes may go. */
    memset(bytes, 0, (size_t)len);
    free(bytes);
    if (!OK(anfora_model_load(mlp_path, &m))) return 1;

    /* Describing inputs and outputs. */
    CHECK(anfora_model_num_inputs(m) == 1);
    CHECK(anfora_model_num_outputs(m) == 1);
    CHECK(anfora_model_num_parameters(m) == 0);
    AnforaTensorInfo info;
    if (OK(anfora_model_input_info(m, 0, &info))) {
        CHECK(info.dtype == ANFORA_FLOAT32);
        CHECK(info.ndim == 2 && info.shape[0] == 2 && info.shape[1] == 4);
        CHECK(info.name != NULL && strlen(info.name) > 0);
    }
    if (OK(anfora_model_output_info(m, 0, &info))) {
        CHECK(info.dtype == ANFORA_FLOAT32);
        CHECK(info.ndim == 2 && info.shape[0] == 2 && info.shape[1] == 3);
    }
    EXPECT(anfora_model_input_info(m, 1, &info), ANFORA_INVALID_ARGUMENT, "input 1 does not exist");
    EXPECT(anfora_model_output_info(m, 5, &info), ANFORA_INVALID_ARGUMENT, "output 5");
    EXPECT(anfora_model_parameter_info(m, 0, &info), ANFORA_INVALID_ARGUMENT, "Parameter 0");
    EXPECT(anfora_model_input_info(m, 0, NULL), ANFORA_INVALID_ARGUMENT, "out is NULL");
    EXPECT(anfora_model_input_info(NULL, 0, &info), ANFORA_INVALID_ARGUMENT, "model is NULL");

    /* A good run, with runtime-allocated outputs and with the caller's buffers. */
    AnforaBuffer in = {ANFORA_FLOAT32, 2, X_SHAPE, X, sizeof X};
    AnforaTensor *out = NULL;
    if (!OK(anfora_model_run_alloc(m, &in, 1, &out, 1))) return 1;
    CHECK(anfora_tensor_dtype(out) == ANFORA_FLOAT32);
    CHECK(anfora_tensor_ndim(out) == 2);
    CHECK(anfora_tensor_shape(out)[0] == 2 && anfora_tensor_shape(out)[1] == 3);
    CHECK(anfora_tensor_byte_size(out) == sizeof REFERENCE);
    memcpy(REFERENCE, anfora_tensor_data(out), sizeof REFERENCE);
    anfora_tensor_free(out);
    float mine[6];
    int64_t out_shape[2] = {2, 3};
    AnforaBuffer o = {ANFORA_FLOAT32, 2, out_shape, mine, sizeof mine};
    if (OK(anfora_model_run(m, &in, 1, &o, 1)))
        CHECK(memcmp(mine, REFERENCE, sizeof mine) == 0);
    if (OK(anfora_model_run(from_buffer, &in, 1, &o, 1)))
        CHECK(memcmp(mine, REFERENCE, sizeof mine) == 0);
    anfora_model_free(from_buffer);

    /* Wrong inputs: shape, dtype, byte size, count, NULLs. */
    int64_t wrong_shape[2] = {3, 4};
    float big[12] = {0};
    AnforaBuffer bad = {ANFORA_FLOAT32, 2, wrong_shape, big, sizeof big};
    EXPECT(anfora_model_run_alloc(m, &bad, 1, &out, 1), ANFORA_INVALID_ARGUMENT, "must be");
    double doubles[8] = {0};
    AnforaBuffer f64 = {ANFORA_FLOAT64, 2, X_SHAPE, doubles, sizeof doubles};
    EXPECT(anfora_model_run_alloc(m, &f64, 1, &out, 1), ANFORA_INVALID_ARGUMENT, "float64");
    AnforaBuffer short_buffer = {ANFORA_FLOAT32, 2, X_SHAPE, X, sizeof X - 4};
    EXPECT(anfora_model_run_alloc(m, &short_buffer, 1, &out, 1), ANFORA_INVALID_ARGUMENT,
           "32 bytes");
    AnforaBuffer no_data = {ANFORA_FLOAT32, 2, X_SHAPE, NULL, sizeof X};
    EXPECT(anfora_model_run_alloc(m, &no_data, 1, &out, 1), ANFORA_INVALID_ARGUMENT,
           "data is NULL");
    AnforaBuffer no_shape = {ANFORA_FLOAT32, 2, NULL, X, sizeof X};
    EXPECT(anfora_model_run_alloc(m, &no_shape, 1, &out, 1), ANFORA_INVALID_ARGUMENT,
           "shape is NULL");
    AnforaBuffer two[2] = {in, in};
    EXPECT(anfora_model_run_alloc(m, two, 2, &out, 1), ANFORA_INVALID_ARGUMENT, "takes 1 inputs");
    EXPECT(anfora_model_run_alloc(m, NULL, 1, &out, 1), ANFORA_INVALID_ARGUMENT,
           "inputs is NULL");
    EXPECT(anfora_model_run_alloc(m, &in, 1, NULL, 1), ANFORA_INVALID_ARGUMENT, "outputs");
    EXPECT(anfora_model_run_alloc(m, &in, 1, &out, 2), ANFORA_INVALID_ARGUMENT, "1 outputs");
    EXPECT(anfora_model_run_alloc(NULL, &in, 1, &out, 1), ANFORA_INVALID_ARGUMENT,
           "model is NULL");
    /* Output buffers of the wrong size or dtype. */
    AnforaBuffer small = {ANFORA_FLOAT32, 2, out_shape, mine, sizeof mine - 4};
    EXPECT(anfora_model_run(m, &in, 1, &small, 1), ANFORA_INVALID_ARGUMENT, "output 0");
    AnforaBuffer ints = {ANFORA_INT32, 2, out_shape, mine, sizeof mine};
    EXPECT(anfora_model_run(m, &in, 1, &ints, 1), ANFORA_INVALID_ARGUMENT, "output 0");
    EXPECT(anfora_model_save(m, NULL), ANFORA_INVALID_ARGUMENT, "path is NULL");

    /* Four threads running one model at once get the reference result every time. */
    pthread_t threads[4];
    struct worker workers[4];
    for (int i = 0; i < 4; i++) {
        workers[i] = (struct worker){m, 25, 0, 0};
        CHECK(pthread_create(&threads[i], NULL, work, &workers[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        CHECK(workers[i].errors == 0);
        CHECK(workers[i].mismatches == 0);
    }
    anfora_model_free(m);

    /* Parameters of a training step: read, write, refuse, save and load back. */
    AnforaModel *t = NULL;
    if (!OK(anfora_model_load(train_path, &t))) return 1;
    CHECK(anfora_model_num_parameters(t) == 2);
    int found_w = 0;
    for (size_t i = 0; i < anfora_model_num_parameters(t); i++) {
        if (OK(anfora_model_parameter_info(t, i, &info)) && strcmp(info.name, "W") == 0) {
            found_w = 1;
            CHECK(info.dtype == ANFORA_FLOAT32 && info.ndim == 2);
            CHECK(info.shape[0] == 4 && info.shape[1] == 1);
        }
    }
    CHECK(found_w);
    float w[4] = {0}, w_new[4] = {0.5f, -0.25f, 2.0f, 8.0f};
    OK(anfora_model_get_parameter(t, "W", w, sizeof w));
    EXPECT(anfora_model_get_parameter(t, "nope", w, sizeof w), ANFORA_INVALID_ARGUMENT, "nope");
    EXPECT(anfora_model_get_parameter(t, "W", w, 8), ANFORA_INVALID_ARGUMENT, "16 bytes");
    EXPECT(anfora_model_get_parameter(t, NULL, w, sizeof w), ANFORA_INVALID_ARGUMENT,
           "name is NULL");
    EXPECT(anfora_model_set_parameter(t, "W", w_new, 12), ANFORA_INVALID_ARGUMENT, "16 bytes");
    EXPECT(anfora_model_set_parameter(t, "W", NULL, sizeof w_new), ANFORA_INVALID_ARGUMENT,
           "data is NULL");
    EXPECT(anfora_model_set_parameter(t, "b2", w_new, 4), ANFORA_INVALID_ARGUMENT, "b2");
    OK(anfora_model_set_parameter(t, "W", w_new, sizeof w_new));
    float back[4] = {0};
    OK(anfora_model_get_parameter(t, "W", back, sizeof back));
    CHECK(memcmp(back, w_new, sizeof back) == 0);
    char saved[4096], unwritable[4096];
    snprintf(saved, sizeof saved, "%s/saved.anfora", dir);
    snprintf(unwritable, sizeof unwritable, "%s/no-such-dir/saved.anfora", dir);
    EXPECT(anfora_model_save(t, unwritable), ANFORA_IO_ERROR, "no-such-dir");
    OK(anfora_model_save(t, saved));
    anfora_model_free(t);
    t = NULL;
    if (OK(anfora_model_load(saved, &t))) {
        memset(back, 0, sizeof back);
        OK(anfora_model_get_parameter(t, "W", back, sizeof back));
        CHECK(memcmp(back, w_new, sizeof back) == 0);
        anfora_model_free(t);
    }

    /* A program that raises: ANFORA_RAISED with its traceback; the model runs on afterwards. */
    AnforaModel *c = NULL;
    if (OK(anfora_model_load(checked_path, &c))) {
        int64_t two = 2;
        float small_values[2] = {1.5f, -3.0f}, big_values[2] = {1.0f, 500.0f}, doubled[2];
        AnforaBuffer big_in = {ANFORA_FLOAT32, 1, &two, big_values, sizeof big_values};
        AnforaBuffer small_in = {ANFORA_FLOAT32, 1, &two, small_values, sizeof small_values};
        AnforaBuffer twice = {ANFORA_FLOAT32, 1, &two, doubled, sizeof doubled};
        EXPECT(anfora_model_run(c, &big_in, 1, &twice, 1), ANFORA_RAISED,
               "AssertionError: too big");
        if (OK(anfora_model_run(c, &small_in, 1, &twice, 1)))
            CHECK(doubled[0] == 3.0f && doubled[1] == -6.0f);
        anfora_model_free(c);
    }

    if (failures) {
        printf("api_errors: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("api_errors: %d checks passed\n", checks);
    return 0;
}
