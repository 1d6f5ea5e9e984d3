/// @file gpukern.h
/// libgpukern C API: the stable ABI of the library (FFI, BLAS-style shims).
///
/// Every function returns a gk_status. On failure the library keeps a message
/// naming the argument or the reason, readable with gk_last_error() on the same
/// thread until the next failing call on that thread.
///
/// Matrices are row-major with leading dimensions counted in elements. A leading
/// dimension is at least max(1, stored row length), as in BLAS, even for an empty matrix.
/// Pointers passed to gk_gemm / gk_softmax must be valid on the handle's device
/// (a buffer from gk_malloc, or memory the application allocated itself with the
/// backend's allocator: cudaMalloc, hipMalloc, or plain host memory for "cpu"), and
/// aligned to their element type (4 bytes for f32, 2 for f16 and bf16).
///
/// gk_handle and gk_timer values are opaque: the library checks each against the objects
/// it has open, so a closed, destroyed or made-up value gives GK_INVALID_ARGUMENT.
#ifndef GPUKERN_GPUKERN_H
#define GPUKERN_GPUKERN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define GK_API __declspec(dllexport)
#else
#define GK_API __attribute__((visibility("default")))
#endif

/// Library version (semantic versioning; the SONAME carries the major number).
#define GK_VERSION_MAJOR 0
#define GK_VERSION_MINOR 1
#define GK_VERSION_PATCH 0

/// Result of every call.
typedef enum gk_status {
  GK_SUCCESS = 0,
  GK_INVALID_ARGUMENT = 1,  ///< an argument is out of range; the message names it
  GK_UNSUPPORTED = 2,       ///< valid call, but the chosen rung or backend cannot do it
  GK_UNAVAILABLE = 3,       ///< the backend is not usable here (no driver, no device, no module)
  GK_OUT_OF_MEMORY = 4,     ///< an allocation failed
  GK_DEVICE_ERROR = 5,      ///< the device runtime reported an error
  GK_INTERNAL_ERROR = 6     ///< a bug in libgpukern; please report it
} gk_status;

/// Element storage types. Arithmetic is always float32 (f32 accumulation).
typedef enum gk_dtype { GK_F32 = 0, GK_F16 = 1, GK_BF16 = 2 } gk_dtype;

/// op(X) for gemm.
typedef enum gk_transpose { GK_NO_TRANS = 0, GK_TRANS = 1 } gk_transpose;

/// The two operations.
typedef enum gk_op { GK_OP_GEMM = 0, GK_OP_SOFTMAX = 1 } gk_op;

/// Direction of gk_memcpy.
typedef enum gk_copy_kind { GK_HOST_TO_DEVICE = 0, GK_DEVICE_TO_HOST = 1, GK_DEVICE_TO_DEVICE = 2 } gk_copy_kind;

/// An opened backend device (a stream of its own on GPUs). Thread-safe. An opaque value,
/// not an address.
typedef struct gk_handle_s* gk_handle;

#define GK_NAME_LEN 64
#define GK_TEXT_LEN 256

/// One backend as the registry sees it.
typedef struct gk_backend_info {
  char name[GK_NAME_LEN];    ///< "cpu", "cuda", "hip"
  int available;             ///< 1 when at least one device can be opened
  int device_count;          ///< devices found (0 when unavailable)
  char reason[GK_TEXT_LEN];  ///< why it is unavailable (empty when available)
  char note[GK_TEXT_LEN];    ///< remarks, e.g. "compile-verified only"
} gk_backend_info;

/// A device of an opened handle.
typedef struct gk_device_info {
  char backend[GK_NAME_LEN];  ///< "cpu", "cuda", "hip"
  int index;                  ///< device index within the backend
  char name[GK_TEXT_LEN];     ///< e.g. "NVIDIA H100 80GB HBM3"
  char arch[GK_NAME_LEN];     ///< e.g. "sm_90", "gfx90a", "x86_64-avx512"
  int arch_number;            ///< e.g. 90 for sm_90; 0 on the CPU
  int compute_units;          ///< SMs, CUs or CPU threads used
  int clock_mhz;              ///< peak core clock
  uint64_t memory_bytes;      ///< device memory (host memory on the CPU)
  char driver_version[GK_NAME_LEN];
  char runtime_version[GK_NAME_LEN];
  double peak_f32_gflops;       ///< FP32 FMA peak (units x lanes x 2 x clock)
  double peak_tensor_gflops;    ///< dense f16/bf16 tensor peak, 0 if none
  double peak_bandwidth_gbps;   ///< memory bandwidth by spec, 0 if unknown
  char extra[GK_TEXT_LEN * 2];  ///< "key=value;" pairs (cpu_isa, openblas_core, ...)
} gk_device_info;

/// Why a rung declines a call: gk_last_decline() after an Unsupported call, and
/// gk_variant_info::decline for a rung this device cannot run.
typedef enum gk_decline {
  GK_DECLINE_NONE = 0,            ///< accepted (or the last error was not a decline)
  GK_DECLINE_DTYPE = 1,           ///< the call's data type
  GK_DECLINE_WRONG_ARCH = 2,      ///< the device's architecture
  GK_DECLINE_MISALIGNED = 3,      ///< a pointer or leading dimension's alignment
  GK_DECLINE_LAYOUT = 4,          ///< a transpose or stride layout the rung does not implement
  GK_DECLINE_SHAPE_LIMIT = 5,     ///< a size beyond what the rung handles
  GK_DECLINE_RESOURCE = 6,        ///< shared memory, clusters or workspace the device lacks
  GK_DECLINE_LIBRARY_MISSING = 7  ///< the vendor library the rung calls is not installed
} gk_decline;

/// One rung of a ladder.
typedef struct gk_variant_info {
  char name[GK_NAME_LEN];         ///< the name to force it with, e.g. "warptile"
  char description[GK_TEXT_LEN];  ///< one line
  char dtypes[GK_NAME_LEN];       ///< comma list: "f32,tf32,f16,bf16"
  char min_arch[GK_NAME_LEN];     ///< the architectures it runs on, e.g. "sm_90a"; empty if any
  int runs_here;                  ///< 1 if this device can run it
  char reason[GK_TEXT_LEN];       ///< why not, when runs_here == 0
  int is_reference;               ///< 1 for the vendor reference (cublas, openblas, ...)
  int experimental;               ///< 1: never run on hardware; forced by name only, never by auto
  int auto_position;              ///< place in auto's order (0 first); -1: auto never picks it
  gk_decline decline;             ///< why not, when runs_here == 0 (GK_DECLINE_WRONG_ARCH, ...)
} gk_variant_info;

/// C = alpha * op(A) * op(B) + beta * C   (row-major; op(A) is m x k, op(B) is k x n).
/// A and B share ab_type; C is ab_type or GK_F32. beta == 0 (+0.0 or -0.0) never reads C.
/// Stored A is m x k (k x m when transposed), lda >= max(1, its row length); likewise B,
/// and ldc >= max(1, n). C must not share memory with A or B (GK_INVALID_ARGUMENT naming
/// both); A and B may share memory.
typedef struct gk_gemm_desc {
  gk_transpose trans_a, trans_b;
  int64_t m, n, k;
  float alpha;
  const void* a;
  int64_t lda;
  const void* b;
  int64_t ldb;
  float beta;
  void* c;
  int64_t ldc;
  gk_dtype ab_type;
  gk_dtype c_type;
  int allow_tf32;       ///< f32 only: permit tensor-core TF32 arithmetic (opt-in, as cuBLAS)
  const char* variant;  ///< rung name; NULL or "auto" = GPUKERN_GEMM_VARIANT or auto
} gk_gemm_desc;

/// y[r, :] = softmax(x[r, :]) (or log-softmax) for each of `rows` rows.
/// y may equal x (in place, with ldy == ldx); otherwise y must not share memory with x
/// (GK_INVALID_ARGUMENT naming both). ldx, ldy >= max(1, cols).
/// A row of all -inf gives NaN (as PyTorch does).
typedef struct gk_softmax_desc {
  int64_t rows, cols;
  const void* x;
  int64_t ldx;
  void* y;
  int64_t ldy;
  gk_dtype dtype;
  int log_softmax;
  const char* variant;  ///< rung name; NULL or "auto" = GPUKERN_SOFTMAX_VARIANT or auto
} gk_softmax_desc;

/// Name of a status, e.g. "InvalidArgument".
GK_API const char* gk_status_name(gk_status status);
/// Message of the last failing call on this thread ("" if none).
GK_API const char* gk_last_error(void);
/// Why the rung declined, when the last failing call on this thread was Unsupported
/// because of a decline; GK_DECLINE_NONE otherwise.
GK_API gk_decline gk_last_decline(void);
/// Name of a decline reason, e.g. "Misaligned".
GK_API const char* gk_decline_name(gk_decline decline);
/// "0.1.0"
GK_API const char* gk_version(void);

/// Sets a configuration option for this process, overriding the environment
/// variable of the same name: "GPUKERN_LOG", "GPUKERN_NUM_THREADS", "GPUKERN_CPU_ISA",
/// "GPUKERN_GEMM_VARIANT", "GPUKERN_SOFTMAX_VARIANT", "GPUKERN_BACKEND",
/// "GPUKERN_MODULE_PATH". value NULL or "" removes the override. Bad names or
/// values give GK_INVALID_ARGUMENT.
GK_API gk_status gk_set_option(const char* name, const char* value);

/// Number of known backends (cpu, cuda, hip), and their state. Probing a GPU
/// backend loads its module once; failures make it unavailable, never abort.
GK_API gk_status gk_backend_count(int* count);
GK_API gk_status gk_get_backend_info(int index, gk_backend_info* info);

/// Opens a backend. spec: "cpu", "cuda", "cuda:1", "hip", "auto", or NULL/"" for
/// the GPUKERN_BACKEND environment variable (default auto = cuda, hip, cpu).
GK_API gk_status gk_open(const char* spec, gk_handle* handle);
/// Closes a handle: frees every block its gk_malloc returned that is still allocated and
/// destroys its timers. Using the handle (closing it again included), those blocks or
/// those timers afterwards gives GK_INVALID_ARGUMENT.
GK_API gk_status gk_close(gk_handle handle);
GK_API gk_status gk_get_device_info(gk_handle handle, gk_device_info* info);

/// Allocates device memory (host memory on the CPU), aligned for every dtype; bytes == 0
/// gives NULL. A size the device cannot provide, any size above PTRDIFF_MAX included,
/// gives GK_OUT_OF_MEMORY and *ptr = NULL; the handle keeps working.
GK_API gk_status gk_malloc(gk_handle handle, size_t bytes, void** ptr);
/// Frees a block gk_malloc returned on this handle. Anything else (a pointer into a
/// block, another handle's block, a block already freed, the application's own memory)
/// gives GK_INVALID_ARGUMENT and frees nothing. NULL is a no-op.
GK_API gk_status gk_free(gk_handle handle, void* ptr);
GK_API gk_status gk_memcpy(gk_handle handle, void* dst, const void* src, size_t bytes, gk_copy_kind kind);
GK_API gk_status gk_memset(gk_handle handle, void* dst, int value, size_t bytes);
/// Waits for all work queued on the handle's stream.
GK_API gk_status gk_synchronize(gk_handle handle);
/// Runs later calls on the application's stream (cudaStream_t / hipStream_t);
/// NULL returns to the handle's own stream. Ignored on the CPU.
GK_API gk_status gk_set_stream(gk_handle handle, void* stream);

GK_API gk_status gk_gemm(gk_handle handle, const gk_gemm_desc* desc);
GK_API gk_status gk_softmax(gk_handle handle, const gk_softmax_desc* desc);

/// The ladder of an operation on this handle, in ladder order.
GK_API gk_status gk_variant_count(gk_handle handle, gk_op op, int* count);
GK_API gk_status gk_get_variant_info(gk_handle handle, gk_op op, int index, gk_variant_info* info);
/// One entry of a ladder's measured auto table: `auto` first tries the rung of the entry
/// a call falls in (the first that matches), then walks its ranked order
/// (gk_variant_info::auto_position). GPUKERN_LOG=debug names the entry per call.
typedef struct gk_auto_entry {
  char label[GK_NAME_LEN];    ///< e.g. "bf16/f16 decode"
  char shape[GK_TEXT_LEN];    ///< the shape class: "bf16,f16 T 1..16 k >= 1024" (T = min(m, n))
  char variant[GK_NAME_LEN];  ///< the rung it picks
  char arch[GK_NAME_LEN];     ///< the architectures it applies on, e.g. "sm_90"; empty if any
} gk_auto_entry;
GK_API gk_status gk_auto_entry_count(gk_handle handle, gk_op op, int* count);
GK_API gk_status gk_get_auto_entry(gk_handle handle, gk_op op, int index, gk_auto_entry* entry);
/// Rung used by the last gemm/softmax call on this handle (on any thread).
GK_API gk_status gk_last_variant(gk_handle handle, gk_op op, char* name, size_t len);
/// Which rung `auto` (or the env override) would run for this call, without running it.
GK_API gk_status gk_gemm_select(gk_handle handle, const gk_gemm_desc* desc, char* name, size_t len);
GK_API gk_status gk_softmax_select(gk_handle handle, const gk_softmax_desc* desc, char* name, size_t len);

/// Event timing on the handle's stream: record start, run work, then read elapsed ms.
/// An opaque value, not an address; it lives until gk_timer_destroy or gk_close.
typedef struct gk_timer_s* gk_timer;
GK_API gk_status gk_timer_create(gk_handle handle, gk_timer* timer);
/// Records the start (again, for a timer already used: a new measurement).
GK_API gk_status gk_timer_start(gk_timer timer);
/// Records the stop; GK_INVALID_ARGUMENT before any gk_timer_start.
GK_API gk_status gk_timer_stop(gk_timer timer);
/// Waits for the stop event and returns the time between start and stop.
/// GK_INVALID_ARGUMENT unless the last gk_timer_start was followed by a gk_timer_stop.
GK_API gk_status gk_timer_elapsed_ms(gk_timer timer, double* ms);
GK_API gk_status gk_timer_destroy(gk_timer timer);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // GPUKERN_GPUKERN_H
