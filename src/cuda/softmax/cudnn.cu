// CUDA softmax reference rung, `cudnn`: cudnnSoftmaxForward (CUDNN_SOFTMAX_ACCURATE, or
// CUDNN_SOFTMAX_LOG for log-softmax) over an NCHW tensor with rows as N and columns as
// C (H = W = 1, mode CHANNEL), the row strides ldx / ldy as the N strides of the two
// descriptors. The vendor library the ladder is measured against. Batches: the items as
// further rows when they follow each other so, else one item at a time; a tensor whose span
// exceeds cuDNN's int descriptors goes in several calls of fewer rows; the input
// scale and the causal mask are not fused (the core declines them for this rung).
//
// cuDNN is optional at run time: it is loaded with dlopen (libcudnn.so.9, from
// GPUKERN_CUDNN_PATH when set -- a folder, or the library file itself -- then from the
// loader's normal search path), the few functions it needs are resolved by name, and
// without it the rung declines with the loader's reason. No cuDNN header is needed to
// build: the handful of types and constants below mirror cuDNN 9's ABI (checked
// against cudnn.h by the development driver, built with -DGPUKERN_BUILD_DEV=ON).
#include "cuda/softmax/softmax_common.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace gpukern::cuda::softmax {
namespace {

// ----- the slice of cuDNN 9's ABI this rung uses (cudnn_graph.h, cudnn_ops.h) -----
using cudnnHandle_t = struct cudnnContext*;
using cudnnTensorDescriptor_t = struct cudnnTensorStruct*;
using cudnnStatus_t = int;
constexpr cudnnStatus_t kCudnnSuccess = 0;          // CUDNN_STATUS_SUCCESS
constexpr cudnnStatus_t kCudnnNotSupported = 3000;  // CUDNN_STATUS_NOT_SUPPORTED (3000-3999)
constexpr int kCudnnDataFloat = 0;                  // CUDNN_DATA_FLOAT
constexpr int kCudnnDataHalf = 2;                   // CUDNN_DATA_HALF
constexpr int kCudnnDataBfloat16 = 9;               // CUDNN_DATA_BFLOAT16
constexpr int kCudnnSoftmaxAccurate = 1;            // CUDNN_SOFTMAX_ACCURATE
constexpr int kCudnnSoftmaxLog = 2;                 // CUDNN_SOFTMAX_LOG
constexpr int kCudnnModeChannel = 1;                // CUDNN_SOFTMAX_MODE_CHANNEL
constexpr size_t kCudnnMajor = 9;

/// The resolved entry points, or why cuDNN cannot be used.
struct CudnnLibrary {
  std::string unavailable;  // empty when usable
  size_t (*get_version)() = nullptr;
  const char* (*get_error_string)(cudnnStatus_t) = nullptr;
  cudnnStatus_t (*create)(cudnnHandle_t*) = nullptr;
  cudnnStatus_t (*set_stream)(cudnnHandle_t, cudaStream_t) = nullptr;
  cudnnStatus_t (*create_tensor)(cudnnTensorDescriptor_t*) = nullptr;
  cudnnStatus_t (*destroy_tensor)(cudnnTensorDescriptor_t) = nullptr;
  cudnnStatus_t (*set_tensor_4d_ex)(cudnnTensorDescriptor_t, int, int, int, int, int, int, int, int, int) = nullptr;
  cudnnStatus_t (*softmax_forward)(cudnnHandle_t, int, int, const void*, cudnnTensorDescriptor_t, const void*,
                                   const void*, cudnnTensorDescriptor_t, void*) = nullptr;
};

bool names_a_file(const std::string& path) { return path.find(".so") != std::string::npos; }

/// dlopen of cuDNN: GPUKERN_CUDNN_PATH first, then the normal search path. From a
/// folder, the sub-libraries cuDNN 9 loads by name (graph, ops) are opened first,
/// RTLD_GLOBAL, so that its own dlopen finds them even off the search path.
void* open_cudnn(std::string& tried) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("GPUKERN_CUDNN_PATH"); env && *env) {
    const std::string path = env;
    if (names_a_file(path)) {
      candidates.push_back(path);
    } else {
      for (const char* sub : {"libcudnn_graph.so.9", "libcudnn_ops.so.9"})
        dlopen((path + "/" + sub).c_str(), RTLD_NOW | RTLD_GLOBAL);
      candidates.push_back(path + "/libcudnn.so.9");
    }
  }
  candidates.push_back("libcudnn.so.9");
  for (const auto& name : candidates) {
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL)) return handle;
    const char* err = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(err ? err : name + ": not found");
  }
  return nullptr;
}

template <class Fn>
bool resolve(void* lib, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
  return fn != nullptr;
}

/// Loaded once per process and never unloaded (handles made from it live as long).
const CudnnLibrary& cudnn_library() {
  static const CudnnLibrary library = [] {
    CudnnLibrary l;
    std::string tried;
    void* lib = open_cudnn(tried);
    if (!lib) {
      l.unavailable = "cuDNN not found (" + tried + "); set GPUKERN_CUDNN_PATH to the folder holding libcudnn.so.9";
      return l;
    }
    std::string missing;
    resolve(lib, "cudnnGetVersion", l.get_version, missing);
    resolve(lib, "cudnnGetErrorString", l.get_error_string, missing);
    resolve(lib, "cudnnCreate", l.create, missing);
    resolve(lib, "cudnnSetStream", l.set_stream, missing);
    resolve(lib, "cudnnCreateTensorDescriptor", l.create_tensor, missing);
    resolve(lib, "cudnnDestroyTensorDescriptor", l.destroy_tensor, missing);
    resolve(lib, "cudnnSetTensor4dDescriptorEx", l.set_tensor_4d_ex, missing);
    resolve(lib, "cudnnSoftmaxForward", l.softmax_forward, missing);
    if (!missing.empty()) {
      l.unavailable = "cuDNN lacks " + missing;
    } else if (const size_t version = l.get_version(); version / 10000 != kCudnnMajor) {
      l.unavailable = "cuDNN " + std::to_string(version) + " found; this rung speaks cuDNN 9's ABI";
    }
    return l;
  }();
  return library;
}

void check_cudnn(const CudnnLibrary& lib, cudnnStatus_t status, const char* what) {
  if (status == kCudnnSuccess) return;
  const core::Status kind =
      status / 1000 * 1000 == kCudnnNotSupported ? core::Status::Unsupported : core::Status::DeviceError;
  throw core::Error(kind, std::string(what) + " failed: " + lib.get_error_string(status));
}

/// cuDNN handles, pooled per device. A call takes a free one (creating it on first
/// need), binds it to its stream, enqueues, and returns it: concurrent calls never
/// share a handle, and a handle's stream binding cannot change under a call.
/// Handles are never destroyed: they live as long as the process, as the library does
/// (destroying them at exit would race the CUDA runtime's own teardown).
class HandlePool {
 public:
  cudnnHandle_t acquire(const CudnnLibrary& lib, int device) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (size_t i = 0; i < free_.size(); ++i) {
        if (free_[i].device != device) continue;
        const cudnnHandle_t h = free_[i].handle;
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        return h;
      }
    }
    cudnnHandle_t h = nullptr;
    check_cudnn(lib, lib.create(&h), "cudnnCreate");
    return h;
  }
  void release(int device, cudnnHandle_t h) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back({device, h});
  }

 private:
  struct Entry {
    int device;
    cudnnHandle_t handle;
  };
  std::mutex mutex_;
  std::vector<Entry> free_;
};

HandlePool& handle_pool() {
  static HandlePool* pool = new HandlePool;  // never destroyed, like the handles
  return *pool;
}

/// A tensor descriptor for the duration of one call.
class TensorDesc {
 public:
  explicit TensorDesc(const CudnnLibrary& lib) : lib_(lib) {
    check_cudnn(lib, lib.create_tensor(&desc_), "cudnnCreateTensorDescriptor");
  }
  ~TensorDesc() { lib_.destroy_tensor(desc_); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  cudnnTensorDescriptor_t get() const { return desc_; }

 private:
  const CudnnLibrary& lib_;
  cudnnTensorDescriptor_t desc_ = nullptr;
};

int cudnn_data_type(core::DType t) {
  switch (t) {
    case core::DType::F16:
      return kCudnnDataHalf;
    case core::DType::BF16:
      return kCudnnDataBfloat16;
    default:
      return kCudnnDataFloat;
  }
}

/// Whether the batch items follow each other as further rows (stride_x = rows * ldx,
/// stride_y = rows * ldy): then the calls walk all rows as one matrix.
bool items_as_rows(const core::SoftmaxArgs& a) {
  return a.batch == 1 || (a.stride_x == a.rows * a.ldx && a.stride_y == a.rows * a.ldy);
}

/// Rows one cudnnSoftmaxForward call may cover: 4-d descriptors take int sizes and strides,
/// so the span of each call's tensor must fit in int; longer tensors take several calls.
int64_t max_rows_per_call(const core::SoftmaxArgs& a) {
  const int64_t ld = std::max(a.ldx, a.ldy);
  return (INT_MAX - a.cols) / ld + 1;
}

}  // namespace

core::Verdict cudnn_supports(const core::SoftmaxArgs& args, const CudaContext&) {
  const CudnnLibrary& lib = cudnn_library();
  if (!lib.unavailable.empty()) return {core::Decline::LibraryMissing, lib.unavailable};
  // Its table row does not declare these (the core declines them); checked here as well, so
  // that no path can run the call without them.
  if (args.scale != 1.0f || args.causal)
    return {core::Decline::Feature, "cudnnSoftmaxForward has no input scale or causal mask"};
  // 4-d descriptors take int sizes and strides: one row (and its stride) must fit.
  if (std::max(args.ldx, args.ldy) > INT_MAX)
    return {core::Decline::ShapeLimit, "row stride beyond 2^31-1 elements (cuDNN descriptors take int strides)"};
  return {};
}

void cudnn_run(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  const CudnnLibrary& lib = cudnn_library();
  if (!lib.unavailable.empty()) throw core::Error(core::Status::Unavailable, lib.unavailable);
  int previous_device = 0;
  GK_GPU_CHECK(cudaGetDevice(&previous_device));
  if (previous_device != ctx.device) GK_GPU_CHECK(cudaSetDevice(ctx.device));
  HandlePool& pool = handle_pool();
  const cudnnHandle_t handle = pool.acquire(lib, ctx.device);
  try {
    check_cudnn(lib, lib.set_stream(handle, ctx.stream), "cudnnSetStream");
    TensorDesc x_desc(lib), y_desc(lib);
    const int type = cudnn_data_type(args.dtype);
    // Batches: the items as further rows when they are laid out so, else item by item; each
    // in calls of at most max_rows_per_call rows.
    const bool as_rows = items_as_rows(args);
    const int64_t units = as_rows ? 1 : args.batch;
    const int64_t unit_rows = as_rows ? args.rows * args.batch : args.rows;
    const int64_t chunk = std::min(unit_rows, max_rows_per_call(args));
    const size_t es = core::dtype_size(args.dtype);
    const int cols = static_cast<int>(args.cols);
    int64_t described = -1;  // rows the descriptors hold now
    for (int64_t u = 0; u < units; ++u)
      for (int64_t r0 = 0; r0 < unit_rows; r0 += chunk) {
        const int64_t n = std::min(chunk, unit_rows - r0);
        if (n != described) {
          const int rows = static_cast<int>(n);
          check_cudnn(lib,
                      lib.set_tensor_4d_ex(x_desc.get(), type, rows, cols, 1, 1, static_cast<int>(args.ldx), 1, 1, 1),
                      "cudnnSetTensor4dDescriptorEx (x)");
          check_cudnn(lib,
                      lib.set_tensor_4d_ex(y_desc.get(), type, rows, cols, 1, 1, static_cast<int>(args.ldy), 1, 1, 1),
                      "cudnnSetTensor4dDescriptorEx (y)");
          described = n;
        }
        const void* x = static_cast<const char*>(args.x) + static_cast<size_t>(u * args.stride_x + r0 * args.ldx) * es;
        void* y = static_cast<char*>(args.y) + static_cast<size_t>(u * args.stride_y + r0 * args.ldy) * es;
        // Scaling factors are float for float, half and bfloat16 data; beta = 0: y is not read.
        const float alpha = 1.0f, beta = 0.0f;
        check_cudnn(lib,
                    lib.softmax_forward(handle, args.log ? kCudnnSoftmaxLog : kCudnnSoftmaxAccurate, kCudnnModeChannel,
                                        &alpha, x_desc.get(), x, &beta, y_desc.get(), y),
                    "cudnnSoftmaxForward");
      }
  } catch (...) {
    pool.release(ctx.device, handle);
    if (previous_device != ctx.device) cudaSetDevice(previous_device);
    throw;
  }
  pool.release(ctx.device, handle);
  if (previous_device != ctx.device) GK_GPU_CHECK(cudaSetDevice(previous_device));
}

}  // namespace gpukern::cuda::softmax
