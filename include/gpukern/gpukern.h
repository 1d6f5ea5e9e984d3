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
#include <string.h>

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
#define GK_VERSION_MINOR 2
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
  GK_DECLINE_NONE = 0,             ///< accepted (or the last error was not a decline)
  GK_DECLINE_DTYPE = 1,            ///< the call's data type
  GK_DECLINE_WRONG_ARCH = 2,       ///< the device's architecture
  GK_DECLINE_MISALIGNED = 3,       ///< a pointer or leading dimension's alignment
  GK_DECLINE_LAYOUT = 4,           ///< a transpose or stride layout the rung does not implement
  GK_DECLINE_SHAPE_LIMIT = 5,      ///< a size beyond what the rung handles
  GK_DECLINE_RESOURCE = 6,         ///< shared memory, clusters or workspace the device lacks
  GK_DECLINE_LIBRARY_MISSING = 7,  ///< the vendor library the rung calls is not installed
  GK_DECLINE_FEATURE = 8           ///< a fused feature (softmax scale or mask) the rung does not implement
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

/// Activation applied by the fused gemm epilogue (gk_gemm_ex_desc::activation).
typedef enum gk_activation {
  GK_ACT_NONE = 0,       ///< identity
  GK_ACT_RELU = 1,       ///< max(x, 0)
  GK_ACT_GELU_TANH = 2,  ///< 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))  (cuBLASLt's GELU)
  GK_ACT_GELU_ERF = 3,   ///< 0.5 x (1 + erf(x / sqrt(2)))
  GK_ACT_SILU = 4        ///< x / (1 + exp(-x))
} gk_activation;

/// Extended gemm: every gk_gemm_desc field (same names, same meaning), plus strided batches
/// and a fused epilogue. For batch item b (0 <= b < batch_count):
///   C_b = act(alpha * op(A_b) * op(B_b) + beta * C_b + bias_b)
/// with A_b = a + b * stride_a (elements; likewise B, C, bias). bias_b is a vector of n values
/// added to every row of C_b (bias[j] to column j: the linear-layer case), in f32 or in C's
/// type; the sum and the activation are computed in f32 before C is rounded once.
/// stride_a or stride_b 0 broadcasts one operand over the batch; the batch items of C must not
/// overlap (stride_c >= (m - 1) * ldc + n, or interleaved rows: stride_c >= n and
/// ldc >= (batch_count - 1) * stride_c + n), else GK_INVALID_ARGUMENT naming stride_c.
/// batch_count 0 does nothing (as m == 0); a negative count or stride is GK_INVALID_ARGUMENT.
///
/// Growth without breaking applications: `size` is sizeof(gk_gemm_ex_desc) as the caller's
/// header declares it (gk_gemm_ex_desc_init sets it). Fields are only ever appended, each with
/// zero meaning "as before"; the library reads `size` bytes and gives a later field its zero
/// default. A size smaller than this first version's, or larger than the library knows with a
/// non-zero byte in the part it does not know, is GK_INVALID_ARGUMENT naming `size`.
typedef struct gk_gemm_ex_desc {
  size_t size;  ///< sizeof(gk_gemm_ex_desc) of the caller's header
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
  int allow_tf32;
  const char* variant;
  int64_t batch_count;                   ///< batch items (gk_gemm_ex_desc_init: 1)
  int64_t stride_a, stride_b, stride_c;  ///< elements between batch items; 0 for A or B broadcasts it
  const void* bias;                      ///< n values per batch item, or NULL for none
  int64_t bias_length;                   ///< must equal n when bias is set, 0 when it is not
  gk_dtype bias_type;                    ///< GK_F32 or c_type
  int64_t stride_bias;                   ///< elements between the batch items' bias vectors; 0 = shared
  gk_activation activation;
} gk_gemm_ex_desc;

/// Extended softmax: every gk_softmax_desc field, plus strided batches, an input scale and a
/// causal mask. For batch item b, rows r < rows, columns c < cols:
///   y_b[r, c] = softmax over the kept columns of (scale * x_b[r, :]), and 0 where masked
/// (log-softmax: -inf where masked). With causal != 0, row r keeps columns c <= r + causal_offset
/// (r counted within its batch item); a row that keeps no column (r + causal_offset < 0) is all
/// zeros (log-softmax: all -inf), never NaN. x_b = x + b * stride_x (elements; 0 broadcasts x),
/// y_b = y + b * stride_y; the batch items of y must not overlap. Growth rule as gk_gemm_ex_desc.
typedef struct gk_softmax_ex_desc {
  size_t size;  ///< sizeof(gk_softmax_ex_desc) of the caller's header
  int64_t rows, cols;
  const void* x;
  int64_t ldx;
  void* y;
  int64_t ldy;
  gk_dtype dtype;
  int log_softmax;
  const char* variant;
  int64_t batch_count;         ///< batch items of rows x cols (gk_softmax_ex_desc_init: 1)
  int64_t stride_x, stride_y;  ///< elements between batch items
  float scale;                 ///< softmax(scale * x) (gk_softmax_ex_desc_init: 1)
  int causal;                  ///< 1: row r keeps columns c <= r + causal_offset
  int64_t causal_offset;
} gk_softmax_ex_desc;

/// Fills a descriptor with the defaults of a valid empty call: size set, no transposes, f32,
/// alpha 1, beta 0, leading dimensions 1, batch_count 1, no bias, no activation, auto.
/// Inline, so `size` is the caller's header's.
static inline void gk_gemm_ex_desc_init(gk_gemm_ex_desc* d) {
  memset(d, 0, sizeof *d);
  d->size = sizeof(gk_gemm_ex_desc);
  d->alpha = 1.0f;
  d->lda = d->ldb = d->ldc = 1;
  d->batch_count = 1;
}
/// The same for softmax: f32, softmax (not log), ldx = ldy = 1, batch_count 1, scale 1, no mask.
static inline void gk_softmax_ex_desc_init(gk_softmax_ex_desc* d) {
  memset(d, 0, sizeof *d);
  d->size = sizeof(gk_softmax_ex_desc);
  d->ldx = d->ldy = 1;
  d->batch_count = 1;
  d->scale = 1.0f;
}

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
/// Reads every byte of [src, src + bytes) of the handle's memory on its stream, at the
/// rate the device streams memory, and writes nothing the caller can see: a read-only
/// bandwidth reference (gpukern-bench's read stream on GPUs). sum: NULL, or where the sum
/// of the bytes read (each an unsigned 8-bit value, modulo 2^64) is stored; with it the
/// call waits for the device, without it the call is queued like gk_memset. bytes == 0
/// reads nothing (*sum = 0); src NULL with bytes > 0 is GK_INVALID_ARGUMENT naming "src".
/// Since 0.3.
GK_API gk_status gk_memread(gk_handle handle, const void* src, size_t bytes, uint64_t* sum);
/// Waits for all work queued on the handle's stream.
GK_API gk_status gk_synchronize(gk_handle handle);
/// Runs later calls on the application's stream (cudaStream_t / hipStream_t);
/// NULL returns to the handle's own stream. Ignored on the CPU.
GK_API gk_status gk_set_stream(gk_handle handle, void* stream);

GK_API gk_status gk_gemm(gk_handle handle, const gk_gemm_desc* desc);
GK_API gk_status gk_softmax(gk_handle handle, const gk_softmax_desc* desc);
/// The extended calls (batches, fused epilogue, scale and mask). gk_gemm and gk_softmax are
/// these with batch_count 1 and nothing fused.
GK_API gk_status gk_gemm_ex(gk_handle handle, const gk_gemm_ex_desc* desc);
GK_API gk_status gk_softmax_ex(gk_handle handle, const gk_softmax_ex_desc* desc);

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
GK_API gk_status gk_gemm_ex_select(gk_handle handle, const gk_gemm_ex_desc* desc, char* name, size_t len);
GK_API gk_status gk_softmax_ex_select(gk_handle handle, const gk_softmax_ex_desc* desc, char* name, size_t len);

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
