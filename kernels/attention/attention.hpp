#pragma once
// Scaled dot-product attention in FP32 (and bf16/f16 on tensor cores, below): forward (O and the log-sum-exp of each score row)
// and backward (dQ, dK, dV), as plain host launch functions. No harness includes: the
// kernels are usable on their own.
//
// Math, for one (batch b, query head h) with kv head g = h / (H / Hkv):
//   S   = scale * Q K^T                       (N, N)
//   P   = softmax_row(S)  (causal: S[i][j] = -inf where j > i)
//   O   = P V                                 (N, d)
//   LSE = log(sum_j exp(S[i][j]))             (N)       saved for the backward pass
// Backward, given dO:
//   D   = rowsum(dO * O)                      (N)
//   dP  = dO V^T,  dS = P * (dP - D)          (N, N)
//   dV  = P^T dO,  dK = scale * dS^T Q,  dQ = scale * dS K
//   and with GQA/MQA (Hkv < H) dK, dV of a kv head are the sums over its H/Hkv query heads.
//
// Layouts, all contiguous row-major FP32:
//   Q, O, dQ, dO : (B, H,   N, d)
//   K, V, dK, dV : (B, Hkv, N, d)
//   LSE          : (B, H, N)         natural logarithm
//
// GPU launch functions enqueue on `stream`, never synchronize, and return the first CUDA
// error (cudaGetLastError after each launch), so that the caller can report it with its
// own file:line. Shapes they cannot run throw std::invalid_argument (check
// flash_supported() first).
#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

namespace kernels::attention {

struct Shape {
  int batch = 1;
  int heads = 1;
  int kv_heads = 1;     // divides heads; heads / kv_heads query heads share a kv head
  int seq_len = 1;      // N, the same for queries and keys
  int head_dim = 64;    // d
  float scale = 0.0f;   // the softmax scale; 0 means 1/sqrt(d) (see effective_scale)
  bool causal = false;  // query i attends keys j <= i

  std::int64_t q_elements() const { return std::int64_t(batch) * heads * seq_len * head_dim; }
  std::int64_t kv_elements() const { return std::int64_t(batch) * kv_heads * seq_len * head_dim; }
  std::int64_t lse_elements() const { return std::int64_t(batch) * heads * seq_len; }
  int group() const { return heads / kv_heads; }
  float effective_scale() const;
};

// Empty when `shape` is valid for every function here, else why not ("kv_heads (3) must
// divide heads (32)"). head_dim support of the flash kernels is separate (flash_supported).
std::string shape_error(const Shape& shape);

// ---- GPU: naive (materializes the (N, N) score matrix of every (b, h) in `workspace`) ----

// Scratch bytes naive_forward needs: S/P for all (b, h) at once, B*H*N*N floats.
std::size_t naive_forward_workspace_bytes(const Shape& shape);
// q, k, v: inputs; o, lse: outputs; workspace: naive_forward_workspace_bytes(shape) bytes.
cudaError_t naive_forward(const Shape& shape, const float* q, const float* k, const float* v,
                          float* o, float* lse, float* workspace, cudaStream_t stream);

// Scratch bytes naive_backward needs: P and dP/dS for all (b, h) (2*B*H*N*N floats) plus D.
std::size_t naive_backward_workspace_bytes(const Shape& shape);
// o, lse: the forward's outputs for these q, k, v. dq, dk, dv are overwritten.
cudaError_t naive_backward(const Shape& shape, const float* q, const float* k, const float* v,
                           const float* o, const float* lse, const float* d_o, float* dq,
                           float* dk, float* dv, float* workspace, cudaStream_t stream);

// ---- GPU: FlashAttention-2 (O(N) extra memory) ----

// head_dim 32, 64 and 128 have kernels; anything else is refused.
bool flash_supported(int head_dim);
cudaError_t flash_forward(const Shape& shape, const float* q, const float* k, const float* v,
                          float* o, float* lse, cudaStream_t stream);

// The same FlashAttention-2 with every product on tensor cores by the 3xTF32 split
// (x = tf32(x) + tf32(x - tf32(x)); a b from three TF32 MMAs, f32 accumulation: ~2^-21
// relative error per product, checked at the FP32 tolerances; the method of PyTorch's FP32
// memory-efficient SDPA on sm_80+). sm_80+, head_dim 32, 64, 128 (flash_supported).
// key_tile: keys per tile, 32 or 64; 0 = flash_tf32x3_key_tile(head_dim) (tests and tuning
// run both).
cudaError_t flash_forward_tf32x3(const Shape& shape, const float* q, const float* k, const float* v,
                                 float* o, float* lse, cudaStream_t stream, int key_tile = 0);
int flash_tf32x3_key_tile(int head_dim);

// Scratch bytes flash_backward needs: D = rowsum(dO * O), B*H*N floats.
std::size_t flash_backward_workspace_bytes(const Shape& shape);
// dq, dk, dv are overwritten (zeroed on `stream`, then accumulated with atomics).
cudaError_t flash_backward(const Shape& shape, const float* q, const float* k, const float* v,
                           const float* o, const float* lse, const float* d_o, float* dq,
                           float* dk, float* dv, float* workspace, cudaStream_t stream);

// flash_backward with every product in 3xTF32 (as flash_forward_tf32x3); same workspace
// (flash_backward_workspace_bytes). dq is zeroed and accumulated with atomics; dk, dv are
// stored (GQA: the query heads of a kv head are summed in registers).
cudaError_t flash_backward_tf32x3(const Shape& shape, const float* q, const float* k, const float* v,
                                  const float* o, const float* lse, const float* d_o, float* dq,
                                  float* dk, float* dv, float* workspace, cudaStream_t stream);

// ---- GPU: FlashAttention-2 on tensor cores (bf16 / f16 tensors, f32 statistics) ----
// Same math and layouts as above, with Q, K, V, O, dO, dQ, dK, dV of type `Precision`
// (__nv_bfloat16 or __half, passed as void pointers) and LSE in f32. Scores, softmax
// statistics and every accumulation are f32; P and dS are rounded to the 16-bit type as
// the A operands of mma.sync (as in FlashAttention-2). flash_tc_forward.cu and
// flash_tc_backward.cu describe the tiles and the data path.

enum class Precision { bf16, f16 };

// Forward block shapes: rows64 (4 warps x one 16-row m-tile), rows128 (4 warps x two
// m-tiles), rows128_w8 (8 warps x one m-tile, Q in registers, 64-key tiles), rows128_deep
// (rows128 with 48-key tiles at d = 128 instead of 32; at d = 64 rows128); automatic is
// flash_tc_forward_tiles(head_dim). Backward (key blocks): rows64 = 64 keys, 4 warps x 16;
// rows128 = 128 keys, 4 warps x 32 (d = 64 only: cudaErrorInvalidValue at d = 128);
// rows128_w8 = 128 keys, 8 warps x 16; rows128_deep = rows128_w8 with 64-query steps at
// d = 128 instead of 32 (at d = 64 rows128_w8); automatic is flash_tc_backward_tiles(head_dim).
// Exposed so that tests and tuning (the flash_tc_r64/_r128/_w8/_deep variants) run every shape.
enum class TcTiles { automatic, rows64, rows128, rows128_w8, rows128_deep };
TcTiles flash_tc_forward_tiles(int head_dim);
TcTiles flash_tc_backward_tiles(int head_dim);

// head_dim 64 and 128 have kernels; anything else is refused (std::invalid_argument).
bool flash_tc_supported(int head_dim);
cudaError_t flash_tc_forward(const Shape& shape, Precision precision, const void* q,
                             const void* k, const void* v, void* o, float* lse,
                             cudaStream_t stream, TcTiles tiles = TcTiles::automatic);

// Scratch bytes flash_tc_backward needs: the f32 dQ accumulator (B*H*N*d floats), with GQA
// (heads > kv_heads) the f32 dK and dV sums (2*B*kv_heads*N*d floats), and D = rowsum(dO * O)
// (B*H*N floats).
std::size_t flash_tc_backward_workspace_bytes(const Shape& shape);
// o, lse: the forward's outputs for these q, k, v. dq, dk, dv are overwritten.
cudaError_t flash_tc_backward(const Shape& shape, Precision precision, const void* q,
                              const void* k, const void* v, const void* o, const float* lse,
                              const void* d_o, void* dq, void* dk, void* dv, void* workspace,
                              cudaStream_t stream, TcTiles tiles = TcTiles::automatic);

// ---- GPU: FlashAttention forward on Hopper (wgmma + TMA + warp specialization, sm_90a) ----
// Same math, layouts and precision as flash_tc_forward (bf16/f16 tensors, f32 statistics
// and LSE); flash_hopper_forward.cu describes the tiles and the pipeline.
// nullptr when flash_hopper_forward can run `shape` on the current device, else why not
// (head_dim other than 64/128/256, a non-positive scale, not an sm_90 GPU, no TMA encoder).
const char* flash_hopper_unsupported(const Shape& shape);
// Throws std::invalid_argument for shapes it cannot run (check flash_hopper_unsupported
// first); q, k, v must be 16-byte aligned (TMA), else cudaErrorMisalignedAddress.
cudaError_t flash_hopper_forward(const Shape& shape, Precision precision, const void* q, const void* k,
                                 const void* v, void* o, float* lse, cudaStream_t stream);
// The kernel flash_hopper_forward runs for a 16-bit `shape`, in words, by the dispatch's own
// rules (key tile width, lazy rescaling, and the environment's overrides of both), for the
// result's config: e.g. "128 x 192 tiles (query rows x keys), eager rescaling". Empty for a
// head_dim it has no kernel for. Host only: no device needed.
std::string flash_hopper_config(const Shape& shape);
// Whether flash_hopper_forward runs its lazy-rescaling kernels at this head size: the
// running max moves only by more than 8 (log2 units) and O is rescaled only where it moved
// (flash_hopper_forward.cu). By default at head_dim 128 and 256 (where it measured faster);
// HARNESS_FWD_LAZY_RESCALE=1 / 0 forces it on / off at every size (read once per process).
bool flash_hopper_lazy_rescale(int head_dim);

// ---- GPU: FP8 (E4M3) forward on Hopper (flash_hopper_forward.cu, FlashAttention-3's FP8 path) ----
// Q, K, V hold E4M3 bytes q_x with per-tensor scales: the values are scale_x * q_x. Same
// layouts; O is bf16, LSE f32 (natural log of the scaled scores' sum):
//   S = scale * (s_q s_k) Q_q K_q^T,  P = exp(S - m) rounded to E4M3,  O = s_v (P V_q) / l
// with l = rowsum(P) in f32 before the rounding. V is first transposed into `workspace`
// (flash_hopper_fp8_workspace_bytes: B Hkv d N16 bytes, N16 = N rounded up to 16; timed with
// the attention), as FP8 wgmma reads both operands K-major.
struct Fp8Scales {
  float q = 1.0f, k = 1.0f, v = 1.0f;
};
// nullptr when flash_hopper_forward_fp8 can run `shape` on the current device (head_dim 128,
// a positive scale, sm_90), else why not.
const char* flash_hopper_fp8_unsupported(const Shape& shape);
std::size_t flash_hopper_fp8_workspace_bytes(const Shape& shape);
// Throws std::invalid_argument for shapes it cannot run or scales that are not positive and
// finite; q, k, v and workspace must be 16-byte aligned, else cudaErrorMisalignedAddress.
cudaError_t flash_hopper_forward_fp8(const Shape& shape, Fp8Scales scales, const void* q, const void* k,
                                     const void* v, void* o, float* lse, void* workspace, cudaStream_t stream);

// The Hopper backward (flash_hopper_backward.cu: wgmma for all five products, TMA, warp
// specialization), same math and layouts as flash_tc_backward. nullptr when it can run
// `shape` on the current device (head_dim 64 or 128, sm_90), else why not.
const char* flash_hopper_backward_unsupported(const Shape& shape);
// Scratch bytes: the f32 dQ accumulator, with GQA the f32 dK and dV sums, D (as
// flash_tc_backward_workspace_bytes) and the deterministic mode's turn counters; deterministic:
// room for its dQ partial sums (flash_hopper_backward_dq_chains) too.
std::size_t flash_hopper_backward_workspace_bytes(const Shape& shape, bool deterministic = false);
// o, lse: the forward's outputs for these q, k, v. dq, dk, dv are overwritten. q, k, v, dO
// and the workspace must be 16-byte aligned (TMA), else cudaErrorMisalignedAddress.
// deterministic: dQ (and with GQA dK, dV) summed in a fixed order, so that equal inputs give
// equal bits (the key blocks of a query tile take turns by counters in the workspace).
cudaError_t flash_hopper_backward(const Shape& shape, Precision precision, const void* q, const void* k,
                                  const void* v, const void* o, const float* lse, const void* d_o, void* dq, void* dk,
                                  void* dv, void* workspace, cudaStream_t stream, bool deterministic = false);
// Which kernel flash_hopper_backward runs, from the environment (read once per process):
// "default" (unset, empty or HARNESS_BWD_LEAN=15: wgmma descriptors stepped by one add, mask
// tests only on the tiles that need them, dS^T stored by stmatrix, and at d = 64 the next
// step's S^T, dP^T issued early; flash_hopper_backward.cu),
// "lean N" (HARNESS_BWD_LEAN=N: N = 0, 1, 2 or 4, the bits of the first three changes, 0 none,
// the session-15 kernel; N = 7, those three, the session-17 default),
// "ping-pong" (HARNESS_BWD_PINGPONG set, not 0, with HARNESS_BWD_LEAN unset, empty or 0: ping-pong
// with none of the lean changes). Throws std::invalid_argument for another HARNESS_BWD_LEAN value,
// and for ping-pong beside a lean value other than 0. Host only.
const char* flash_hopper_backward_kernel_choice();
// The kernel that runs at `head_dim` under that choice, named with its bits so that a report
// says what ran whichever default it was made under: "default (lean 15)" at d = 64 and
// "default (lean 7)" at d = 128 for the default; "default (lean 7)" for "lean 7" at d = 128
// (bit 8 exists at d = 64 only, so at d = 128 the two are one kernel); else the choice.
// Host only; throws as the choice. (HARNESS_BWD_PINGPONG with HARNESS_BWD_LEAN=15 is refused
// like any other lean value beside ping-pong.)
const char* flash_hopper_backward_kernel_at(int head_dim);
// Deterministic mode's dQ partial sums (HARNESS_BWD_DET_CHAINS = 1, 2 or 4; unset or empty: 2),
// read once per process; throws std::invalid_argument for another value. Host only.
int flash_hopper_backward_dq_chains();

// ---- CPU references: double accumulation, multithreaded (std::thread) ----
// Host pointers, same layouts. `threads` 0 means std::thread::hardware_concurrency().

void forward_cpu(const Shape& shape, const float* q, const float* k, const float* v, float* o,
                 float* lse, unsigned threads = 0);

// Only the listed rows: rows[i] (i < row_count) is a global query row index
// (b*H + h)*N + n. Row i of `o` (o + i*d) and lse[i] receive that row's output. For a sampled check where the full
// reference would take hours (N = 131072: every row costs N*d*2 multiply-adds).
void forward_cpu_rows(const Shape& shape, const float* q, const float* k, const float* v,
                      const std::int64_t* rows, std::size_t row_count, float* o,
                      float* lse, unsigned threads = 0);

// Recomputes the forward in double internally (O and LSE are not taken from a GPU run).
void backward_cpu(const Shape& shape, const float* q, const float* k, const float* v,
                  const float* d_o, float* dq, float* dk, float* dv, unsigned threads = 0);

// dQ of the listed query rows only (rows as in forward_cpu_rows; row i of `dq` receives
// row rows[i]). Each needs just its own row of P and dP: O(N*d) per row. (dK and dV rows
// need every query's LSE and D, O(N^2*d) in all, so there is no sampled form of them.)
void backward_cpu_dq_rows(const Shape& shape, const float* q, const float* k, const float* v,
                          const float* d_o, const std::int64_t* rows, std::size_t row_count,
                          float* dq, unsigned threads = 0);

}  // namespace kernels::attention
