// The C++ wrapper (anfora_runtime.hpp), run by tests/c_api.rs:
//
//     api_wrapper MLP_MODEL TRAIN_MODEL SCRATCH_DIR
//
// MLP_MODEL takes one float32 [2, 4] input and returns float32 [2, 3]; TRAIN_MODEL has float32
// Parameters "W" [4, 1] and "b" [1]. Prints the MLP's output for a fixed input as
// `out0 float32[2, 3] <hex of its bytes>` (the test compares it with `anfora run-model`), and
// `api_wrapper: N checks passed` when every check passes.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "anfora_runtime.hpp"

static int checks = 0, failures = 0;

#define CHECK(cond)                                                         \
    do {                                                                    \
        checks++;                                                           \
        if (!(cond)) {                                                      \
            failures++;                                                     \
            std::printf("FAILED line %d: %s\n", __LINE__, #cond);           \
        }                                                                   \
    } while (0)

// Runs `f`, which must throw anfora::Error with `code` and a message containing `part`.
template <class F>
static void expect_error(F f, AnforaCode code, const std::string& part, int line) {
    checks++;
    try {
        f();
        failures++;
        std::printf("FAILED line %d: no exception\n", line);
    } catch (const anfora::Error& e) {
        if (e.code() != code || std::string(e.what()).find(part) == std::string::npos) {
            failures++;
            std::printf("FAILED line %d: code %d '%s'\n", line, static_cast<int>(e.code()),
                        e.what());
        }
    }
}
#define EXPECT_ERROR(code, part, ...) expect_error([&] { __VA_ARGS__; }, code, part, __LINE__)

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: api_wrapper MLP_MODEL TRAIN_MODEL SCRATCH_DIR\n");
        return 2;
    }
    const std::string dir = argv[3];
    anfora::set_num_threads(1);
    CHECK(!anfora::version().empty());
    try {
        anfora::Model mlp = anfora::load(argv[1]);
        auto inputs = mlp.inputs();
        CHECK(inputs.size() == 1);
        CHECK(inputs[0].dtype == anfora::DType::Float32);
        CHECK((inputs[0].shape == std::vector<int64_t>{2, 4}));
        CHECK(!inputs[0].name.empty());
        auto outputs = mlp.outputs();
        CHECK(outputs.size() == 1 && (outputs[0].shape == std::vector<int64_t>{2, 3}));
        CHECK(mlp.parameters().empty());

        anfora::Tensor x(std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f, 0.5f, -1.0f, 0.25f, 2.0f},
                         {2, 4});
        std::vector<anfora::Tensor> out = mlp(x);
        CHECK(out.size() == 1);
        CHECK(out[0].describe() == "float32[2, 3]");
        CHECK(out[0].to_vector<float>().size() == 6);
        std::string hex;
        for (uint8_t b : out[0].bytes()) {
            char two[3];
            std::snprintf(two, sizeof two, "%02x", b);
            hex += two;
        }
        std::printf("out0 %s %s\n", out[0].describe().c_str(), hex.c_str());

        // The same model from a buffer, run through run().
        std::ifstream file(argv[1], std::ios::binary);
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                   std::istreambuf_iterator<char>());
        anfora::Model copy = anfora::Model::from_buffer(bytes);
        CHECK(copy.run({x})[0].bytes() == out[0].bytes());

        // Moving a model moves the handle.
        anfora::Model moved = std::move(copy);
        CHECK(moved.get() != nullptr && copy.get() == nullptr);

        // Errors: wrong shape, dtype, count, element type, missing file, bad tensor.
        anfora::Tensor wide(std::vector<float>(12, 0.0f), {3, 4});
        EXPECT_ERROR(ANFORA_INVALID_ARGUMENT, "must be", mlp.run({wide}));
        anfora::Tensor doubles(std::vector<double>(8, 0.0), {2, 4});
        EXPECT_ERROR(ANFORA_INVALID_ARGUMENT, "float64", mlp(doubles));
        EXPECT_ERROR(ANFORA_INVALID_ARGUMENT, "inputs", mlp(x, x));
        EXPECT_ERROR(ANFORA_INVALID_ARGUMENT, "float32", out[0].data<double>());
        EXPECT_ERROR(ANFORA_IO_ERROR, "missing.anfora", anfora::load(dir + "/missing.anfora"));
        EXPECT_ERROR(ANFORA_INVALID_MODEL, "", anfora::Model::from_buffer("junk", 4));
        EXPECT_ERROR(ANFORA_INVALID_ARGUMENT, "shape", anfora::Tensor(std::vector<float>(3), {2, 2}));
        EXPECT_ERROR(ANFORA_INVALID_ARGUMENT, "bytes",
                     anfora::Tensor(anfora::DType::Int64, {2}, std::vector<uint8_t>(4)));
        CHECK(anfora::Tensor::scalar(int64_t{7}).item<int64_t>() == 7);
        CHECK((anfora::Tensor(std::vector<bool>{true, false}, {2}).to_vector<bool>() ==
               std::vector<bool>{true, false}));

        // Parameters: read, write, save and load back.
        anfora::Model train(argv[2]);
        CHECK(train.parameters().size() == 2);
        anfora::Tensor w = train.parameter("W");
        CHECK(w.describe() == "float32[4, 1]");
        anfora::Tensor w_new(std::vector<float>{1.5f, -2.0f, 0.25f, 4.0f}, {4, 1});
        train.set_parameter("W", w_new);
        CHECK(train.parameter("W").to_vector<float>() == w_new.to_vector<float>());
        EXPECT_ERROR(ANFORA_INVALID_ARGUMENT, "no Parameter 'V'", train.parameter("V"));
        EXPECT_ERROR(ANFORA_INVALID_ARGUMENT, "float32[2]",
                     train.set_parameter("W", anfora::Tensor(std::vector<float>{1, 2}, {2})));
        train.save(dir + "/wrapper-saved.anfora");
        anfora::Model reloaded(dir + "/wrapper-saved.anfora");
        CHECK(reloaded.parameter("W").to_vector<float>() == w_new.to_vector<float>());
        CHECK(reloaded.parameter("b").bytes() == train.parameter("b").bytes());
    } catch (const anfora::Error& e) {
        std::printf("FAILED: uncaught anfora::Error %d: %s\n", static_cast<int>(e.code()), e.what());
        return 1;
    }
    if (failures) {
        std::printf("api_wrapper: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    std::printf("api_wrapper: %d checks passed\n", checks);
    return 0;
}
