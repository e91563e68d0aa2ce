// anfora's C++ API: a header-only wrapper of the C API (anfora_runtime.h), C++17.
//
//     anfora::Model model = anfora::load("mlp.anfora");
//     anfora::Tensor x(std::vector<float>{1, 2, 3, 4}, {1, 4});
//     std::vector<anfora::Tensor> out = model(x);          // or model.run({x})
//     const float* logits = out[0].data<float>();
//
// Models, tensors and errors are plain RAII values: a Model frees itself, a Tensor owns its
// bytes (row-major, little-endian), and every failure of the runtime is thrown as an
// anfora::Error whose code() is the C API's AnforaCode. Link with libanfora_runtime (.a with
// -lpthread -ldl -lm, or .so).
#ifndef ANFORA_RUNTIME_HPP
#define ANFORA_RUNTIME_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "anfora_runtime.h"

namespace anfora {

// Element types, with the C API's codes.
enum class DType : int {
    Bool = ANFORA_BOOL,
    Int32 = ANFORA_INT32,
    Int64 = ANFORA_INT64,
    Float32 = ANFORA_FLOAT32,
    Float64 = ANFORA_FLOAT64,
    Float16 = ANFORA_FLOAT16,
    BFloat16 = ANFORA_BFLOAT16,
    Int8 = ANFORA_INT8,
    UInt8 = ANFORA_UINT8,
};

// numpy's name of a dtype ("float32").
inline const char* dtype_name(DType d) {
    switch (d) {
        case DType::Bool: return "bool";
        case DType::Int32: return "int32";
        case DType::Int64: return "int64";
        case DType::Float32: return "float32";
        case DType::Float64: return "float64";
        case DType::Float16: return "float16";
        case DType::BFloat16: return "bfloat16";
        case DType::Int8: return "int8";
        case DType::UInt8: return "uint8";
    }
    return "unknown";
}

// The size of one element in bytes.
inline std::size_t dtype_size(DType d) {
    switch (d) {
        case DType::Bool:
        case DType::Int8:
        case DType::UInt8: return 1;
        case DType::Int32: return 4;
        case DType::Int64: return 8;
        case DType::Float32: return 4;
        case DType::Float64: return 8;
        case DType::Float16:
        case DType::BFloat16: return 2;
    }
    return 0;
}

// A failure of the runtime: the message of its status and its code.
class Error : public std::runtime_error {
public:
    Error(AnforaCode code, const std::string& message)
        : std::runtime_error(message), code_(code) {}
    AnforaCode code() const noexcept { return code_; }

private:
    AnforaCode code_;
};

namespace detail {

// Throws the status (and frees it) unless it is NULL, success.
inline void check(AnforaStatus* status) {
    if (status == nullptr) return;
    AnforaCode code = anfora_status_code(status);
    std::string message = anfora_status_message(status);
    anfora_status_free(status);
    throw Error(code, message);
}

[[noreturn]] inline void invalid(const std::string& message) {
    throw Error(ANFORA_INVALID_ARGUMENT, message);
}

// The dtype of a C++ element type: float, double, int32_t, int64_t, bool.
template <class T>
struct dtype_of;
template <>
struct dtype_of<float> {
    static constexpr DType value = DType::Float32;
};
template <>
struct dtype_of<double> {
    static constexpr DType value = DType::Float64;
};
template <>
struct dtype_of<std::int32_t> {
    static constexpr DType value = DType::Int32;
};
template <>
struct dtype_of<std::int64_t> {
    static constexpr DType value = DType::Int64;
};
template <>
struct dtype_of<bool> {
    static constexpr DType value = DType::Bool;
};

inline std::size_t numel(const std::vector<std::int64_t>& shape) {
    std::size_t n = 1;
    for (std::int64_t d : shape) {
        if (d < 0) invalid("a tensor's dimensions must not be negative");
        n *= static_cast<std::size_t>(d);
    }
    return n;
}

inline std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); i++) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

}  // namespace detail

// A tensor that owns its elements: row-major little-endian bytes, a dtype and a shape.
class Tensor {
public:
    // An empty float32 tensor of shape [0].
    Tensor() : dtype_(DType::Float32), shape_{0} {}

    // A tensor of `dtype` and `shape` holding `bytes`, whose size must match.
    Tensor(DType dtype, std::vector<std::int64_t> shape, std::vector<std::uint8_t> bytes)
        : dtype_(dtype), shape_(std::move(shape)), bytes_(std::move(bytes)) {
        std::size_t want = detail::numel(shape_) * dtype_size(dtype_);
        if (bytes_.size() != want) {
            detail::invalid(std::string("a ") + dtype_name(dtype_) + detail::shape_text(shape_) +
                            " tensor is " + std::to_string(want) + " bytes, not " +
                            std::to_string(bytes_.size()));
        }
    }

    // A tensor of the values (float, double, int32_t or int64_t) with `shape`: the number of
    // values must be the shape's.
    template <class T, class = std::enable_if_t<!std::is_same<T, bool>::value>>
    Tensor(const std::vector<T>& values, std::vector<std::int64_t> shape)
        : dtype_(detail::dtype_of<T>::value), shape_(std::move(shape)) {
        if (values.size() != detail::numel(shape_)) {
            detail::invalid(std::to_string(values.size()) + " values do not fill a tensor of shape " +
                            detail::shape_text(shape_));
        }
        bytes_.resize(values.size() * sizeof(T));
        if (!values.empty()) std::memcpy(bytes_.data(), values.data(), bytes_.size());
    }

    // A bool tensor (std::vector<bool> holds bits, so it is taken element by element).
    Tensor(const std::vector<bool>& values, std::vector<std::int64_t> shape)
        : dtype_(DType::Bool), shape_(std::move(shape)) {
        if (values.size() != detail::numel(shape_)) {
            detail::invalid(std::to_string(values.size()) + " values do not fill a tensor of shape " +
                            detail::shape_text(shape_));
        }
        bytes_.reserve(values.size());
        for (bool v : values) bytes_.push_back(v ? 1 : 0);
    }

    // A 0-d tensor holding `value`.
    template <class T>
    static Tensor scalar(T value) {
        return Tensor(std::vector<T>{value}, {});
    }

    // A tensor of zeros.
    static Tensor zeros(DType dtype, std::vector<std::int64_t> shape) {
        std::size_t n = detail::numel(shape) * dtype_size(dtype);
        return Tensor(dtype, std::move(shape), std::vector<std::uint8_t>(n, 0));
    }

    DType dtype() const noexcept { return dtype_; }
    const std::vector<std::int64_t>& shape() const noexcept { return shape_; }
    std::size_t ndim() const noexcept { return shape_.size(); }
    std::size_t numel() const { return detail::numel(shape_); }
    std::size_t byte_size() const noexcept { return bytes_.size(); }
    const std::vector<std::uint8_t>& bytes() const noexcept { return bytes_; }

    // The elements as T, which must be the tensor's dtype (uint8_t reads the raw bytes).
    template <class T>
    const T* data() const {
        check_type<T>();
        return reinterpret_cast<const T*>(bytes_.data());
    }
    template <class T>
    T* data() {
        check_type<T>();
        return reinterpret_cast<T*>(bytes_.data());
    }

    // The elements copied into a vector.
    template <class T>
    std::vector<T> to_vector() const {
        const T* p = data<T>();
        return std::vector<T>(p, p + byte_size() / sizeof(T));
    }

    // The one element of a tensor of one element (a loss, a 0-d result).
    template <class T>
    T item() const {
        if (numel() != 1) {
            detail::invalid("item() of a tensor of " + std::to_string(numel()) + " elements");
        }
        return data<T>()[0];
    }

    // "float32[2, 3]"
    std::string describe() const { return dtype_name(dtype_) + detail::shape_text(shape_); }

    // The C API's view of it (valid while the tensor lives and is not resized).
    AnforaBuffer buffer() const {
        AnforaBuffer b;
        b.dtype = static_cast<AnforaDType>(dtype_);
        b.ndim = shape_.size();
        b.shape = shape_.data();
        b.data = const_cast<std::uint8_t*>(bytes_.data());
        b.byte_size = bytes_.size();
        return b;
    }

private:
    template <class T>
    void check_type() const {
        if (std::is_same<T, std::uint8_t>::value) return;
        if constexpr (std::is_same<T, bool>::value || std::is_same<T, float>::value ||
                      std::is_same<T, double>::value || std::is_same<T, std::int32_t>::value ||
                      std::is_same<T, std::int64_t>::value) {
            if (detail::dtype_of<T>::value == dtype_) return;
        } else if constexpr (std::is_same<T, std::uint16_t>::value) {
            if (dtype_ == DType::Float16 || dtype_ == DType::BFloat16) return;
        }
        detail::invalid("the tensor is " + describe() + "; data<T>() asked for another type");
    }

    DType dtype_;
    std::vector<std::int64_t> shape_;
    std::vector<std::uint8_t> bytes_;
};

// A model's input, output or Parameter: its name, dtype and shape (-1 for a dimension that
// is not fixed).
struct TensorInfo {
    std::string name;
    DType dtype;
    std::vector<std::int64_t> shape;
};

// A loaded model. Several threads may run one model at once.
class Model {
public:
    // Loads and validates the model file at `path`.
    explicit Model(const std::string& path) {
        AnforaModel* m = nullptr;
        detail::check(anfora_model_load(path.c_str(), &m));
        model_.reset(m);
    }

    // Loads a model file held in memory (copied).
    static Model from_buffer(const void* data, std::size_t size) {
        AnforaModel* m = nullptr;
        detail::check(anfora_model_load_from_buffer(data, size, &m));
        return Model(m);
    }
    static Model from_buffer(const std::vector<std::uint8_t>& bytes) {
        return from_buffer(bytes.data(), bytes.size());
    }

    std::vector<TensorInfo> inputs() const {
        return infos(anfora_model_num_inputs(get()), anfora_model_input_info);
    }
    std::vector<TensorInfo> outputs() const {
        return infos(anfora_model_num_outputs(get()), anfora_model_output_info);
    }
    std::vector<TensorInfo> parameters() const {
        return infos(anfora_model_num_parameters(get()), anfora_model_parameter_info);
    }

    // Runs the model: one tensor per input, one per output back.
    std::vector<Tensor> run(const std::vector<Tensor>& inputs) const {
        std::vector<AnforaBuffer> buffers;
        buffers.reserve(inputs.size());
        for (const Tensor& t : inputs) buffers.push_back(t.buffer());
        std::size_t n = anfora_model_num_outputs(get());
        std::vector<AnforaTensor*> raw(n, nullptr);
        detail::check(anfora_model_run_alloc(get(), buffers.data(), buffers.size(), raw.data(), n));
        // Owned at once, so an exception below frees them all.
        std::vector<std::unique_ptr<AnforaTensor, TensorDeleter>> owned;
        owned.reserve(n);
        for (AnforaTensor* t : raw) owned.emplace_back(t);
        std::vector<Tensor> results;
        results.reserve(n);
        for (const auto& t : owned) {
            const std::int64_t* dims = anfora_tensor_shape(t.get());
            std::vector<std::int64_t> shape(dims, dims + anfora_tensor_ndim(t.get()));
            const auto* data = static_cast<const std::uint8_t*>(anfora_tensor_data(t.get()));
            std::size_t size = anfora_tensor_byte_size(t.get());
            std::vector<std::uint8_t> bytes(size);
            if (size) std::memcpy(bytes.data(), data, size);
            results.emplace_back(static_cast<DType>(anfora_tensor_dtype(t.get())),
                                 std::move(shape), std::move(bytes));
        }
        return results;
    }

    // model(x, y) is model.run({x, y}).
    template <class... Ts>
    std::vector<Tensor> operator()(const Ts&... inputs) const {
        return run(std::vector<Tensor>{Tensor(inputs)...});
    }

    // Parameter `name`'s current value.
    Tensor parameter(const std::string& name) const {
        for (const TensorInfo& p : parameters()) {
            if (p.name != name) continue;
            Tensor t = Tensor::zeros(p.dtype, p.shape);
            detail::check(anfora_model_get_parameter(get(), name.c_str(), t.data<std::uint8_t>(),
                                                     t.byte_size()));
            return t;
        }
        detail::invalid("the model has no Parameter '" + name + "'");
    }

    // Sets Parameter `name`; the value must have its dtype and shape.
    void set_parameter(const std::string& name, const Tensor& value) {
        for (const TensorInfo& p : parameters()) {
            if (p.name == name && (p.dtype != value.dtype() || p.shape != value.shape())) {
                detail::invalid("Parameter '" + name + "' is " + dtype_name(p.dtype) +
                                detail::shape_text(p.shape) + ", not " + value.describe());
            }
        }
        detail::check(anfora_model_set_parameter(model_.get(), name.c_str(),
                                                 value.bytes().data(), value.byte_size()));
    }

    // Writes the model, with the Parameters' current values, to `path`.
    void save(const std::string& path) const {
        detail::check(anfora_model_save(get(), path.c_str()));
    }

    // The C handle, for calls the wrapper does not cover.
    AnforaModel* get() const noexcept { return model_.get(); }

private:
    struct ModelDeleter {
        void operator()(AnforaModel* m) const noexcept { anfora_model_free(m); }
    };
    struct TensorDeleter {
        void operator()(AnforaTensor* t) const noexcept { anfora_tensor_free(t); }
    };

    explicit Model(AnforaModel* m) : model_(m) {}

    template <class Describe>
    std::vector<TensorInfo> infos(std::size_t n, Describe describe) const {
        std::vector<TensorInfo> out;
        out.reserve(n);
        for (std::size_t i = 0; i < n; i++) {
            AnforaTensorInfo info;
            detail::check(describe(get(), i, &info));
            out.push_back(TensorInfo{info.name, static_cast<DType>(info.dtype),
                                     std::vector<std::int64_t>(info.shape, info.shape + info.ndim)});
        }
        return out;
    }

    std::unique_ptr<AnforaModel, ModelDeleter> model_;
};

// anfora.load(path)
inline Model load(const std::string& path) { return Model(path); }

// Sets how many threads the kernels of a thread that has not run a model yet use (0: one per
// core; 1: the calling thread alone).
inline void set_num_threads(std::size_t n) { anfora_set_num_threads(n); }

// The runtime's version, e.g. "0.1.0".
inline std::string version() { return anfora_version(); }

}  // namespace anfora

#endif  // ANFORA_RUNTIME_HPP
