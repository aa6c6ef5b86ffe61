// FlashAttention forward on Hopper (sm_90a): TMA loads into 128B-swizzled shared memory
// behind an mbarrier pipeline, a producer warp and two consumer warpgroups (setmaxnreg
// moves registers to the consumers), both products on wgmma, the softmax of one key tile
// overlapped with the P V product of the previous one (FlashAttention-3's intra-warpgroup
// pipelining), the two consumers' GEMMs interleaved (FA3's ping-pong), a persistent grid
// (non-causal) and O written through shared memory by TMA stores. bf16 or f16 Q, K, V, O;
// f32 scores, statistics and accumulators; LSE in f32.
//
// Math per (b, h), kv head h / group, c = scale log2(e) > 0:
//   S = Q K^T (raw), m = running row max of c S, P = exp2(c S - m),
//   l = l exp2(m_old - m) + rowsum(P), O = O exp2(m_old - m) + P V;  O /= l at the end,
//   LSE = ln(2) (m + log2 l).
//
// Work: tiles of kBM = 128 query rows of one (b, h), in an L2-friendly, longest-first order
// (Schedule): (b, h) in sections whose K and V fit ~32 MB of L2 together; inside a section
// the m blocks outer (causal: the last, longest, first), the heads inner. Non-causal: a
// persistent grid of min(tiles, SMs) CTAs, CTA i taking tiles i, then 2G - 1 - i, ... (snake
// rounds of G CTAs); the K/V ring, Q and O buffers carry over from tile to tile, so the next
// tile's Q and K/V loads and the last tile's O store overlap the consumers' work. Causal: one
// CTA per tile in that order (tiles differ in length; the hardware's block scheduler
// balances them better than a static assignment: persistent causal measured up to 10%
// slower at d = 256, N = 2048).
// Threads (384 a CTA; 512 with HARNESS_FWD_D64_CONSUMERS=3, see Layout's kCons = 3):
//   warpgroup 0, the producer: setmaxnreg.dec 24; one thread issues the TMA copies, per tile
//     Q (64, d) of consumer c   into kD / 64 boxes of {64 d, 64 rows} (8 KB each), as soon
//                               as consumer c has finished the previous tile's last S (its
//                               q_empty barrier)
//     K_j, V_j (kBN, d) for key tile j into a ring of kStages stages each, boxes of
//       {64 d, kBN keys}; K_j and V_j have their own full / empty mbarriers, so that
//       S_j can start while V_j is still landing. The ring position runs on across tiles.
//   warpgroups 1, 2, the consumers (setmaxnreg.inc 240): consumer c owns query rows
//     [64 c, 64 c + 64) of the tile; per key tile j:
//       S_j  = Q K_j^T    wgmma m64n{kBN}k16, A = Q (smem, K-major), B = K_j (smem, K-major);
//                         kBN / 2 f32 a thread
//       P_j  = exp2(c S_j - m) rounded to T in registers: the accumulator's columns
//                         16 kk .. 16 kk + 15 are the RS-form A fragment of k slice kk
//       O   += P_j V_j    wgmma m64n{d}k16, A = P_j (registers), B = V_j (smem, MN-major:
//                         keys are rows, d is contiguous -> transpose bit); d / 2 f32 a thread
//     issue order per step: S_{j+1} then P_j V_j (two commit groups), wait for S_{j+1}
//     (wait_group 1), its softmax while P_j V_j runs, wait_group 0, then O *= alpha.
//     Ping-pong: a consumer issues a step's two GEMMs between bar.sync on its own named
//     barrier and bar.arrive on the other's (consumer 0 starts), so one consumer's GEMMs run
//     while the other does its softmax.
//   Each consumer warp releases a stage (one arrive on its empty barrier, count 8) after
//   the wgmma that read it completed.
//   End of a tile: LSE (rows < N) from registers; O / l rounded to T into the consumer's
//   {64 d, 64 rows} swizzled O boxes (d <= 128; conflict-free 4-byte stores), fence.proxy.async,
//   a consumer-wide named barrier, one thread's TMA stores (rows >= N clipped), waited for
//   (read) only before the next tile's O is written. d = 256: no room, stores from registers.
// Shared memory (kBN = 128 for d <= 128, 80 for d = 256 (d256_key_tile), 192 for d = 64 from N = 2048 on,
// causal from N = 8192 on (d64_key_tile); 2 stages):
//   d = 128: Q 32 KB + K 2 x 32 KB + V 2 x 32 KB + O 32 KB = 192 KB;
//   d = 64: 96 KB (192 keys: Q 16 + K 2 x 24 + V 2 x 24 + O 16 = 128 KB);
//   d = 256: Q 64 + K 80 + V 80 = 224 KB (no O buffer; 64-key tiles: 192 KB); + 1 KB alignment, barriers.
//   192-key tiles keep one P buffer (Layout::kOneP): S 96 + P 48 + O 32 registers a thread.
// Swizzle: TMA SWIZZLE_128B inside each 1024-byte group of 8 rows of 128 bytes; every box
// base is 1024-aligned. Descriptors (arch/sm90_wgmma.cuh):
//   Q, K (K-major): k16 slice kk at box kk / 4, +32 (kk % 4) bytes; sbo 1024.
//   V (MN-major): k16 slice kk (keys 16 kk ..) at +2048 kk bytes; lbo = box bytes (kBN x 128,
//   the next 64 d); sbo 1024.
// Tails: TMA zero-fills rows past N of the (b, h) (3-D tensor maps (d, N, B H)); keys >= N
// and, causal, keys > row get -inf scores in the tiles that can hold them. Causal tiles load
// only key tiles up to their last row.
// FP8 (e4m3, d = 128; T = __nv_fp8_e4m3, Elem<T>::Out = bf16): the same pipeline with
//   Q, K boxes of {128 d, rows} (one-byte elements: a 128-byte row is all of d);
//   S = Q K^T      wgmma m64n128k32 e4m3, SS, both K-major (k32 slice kk at +32 kk bytes);
//   P              exp2(c S - m) rounded to e4m3 (pack4_e4m3): slice kk, group h, register
//                  r + 2h = keys 2t, 2t+1, 8+2t, 9+2t of the 16-key group as k = 4t .. 4t+3;
//   O += P V^T'    wgmma m64n128k32 e4m3, RS, B = V^T (kD rows of kBN key bytes, K-major:
//                  fp8 wgmma has no transpose), its keys stored in that same order within
//                  each 16-key group by v_transpose_fp8_kernel, so P needs no shuffle;
//   c = scale log2(e) s_q s_k; O = s_v acc / l (l from the unrounded P), stored bf16.
//   3 K/V stages: Q 16 + K 48 + V^T 48 + O 32 = 144 KB. Not yet run on a GPU (2026-11-26).
// Measured (H200, bf16, TFLOP/s, 2026-11-26; the SM clock is power-throttled anywhere
// between 1.56 and 1.98 GHz, so one shape moves by up to +-10% between runs; ours from one
// harness call (suites/attention-hopper.yaml shapes, this version), cuDNN (PyTorch 2.11 SDPA)
// from an earlier call on the same kind of machine; ratio ours / cuDNN):
//   d = 128:  B4 N4096 565 / 605 (0.93, run at 1.56 GHz; one CTA per tile: 648 at 1.97 GHz),
//             B1 N16384 697 / 612 (1.14); B2: N2048 535 / 584 (0.92), GQA 635 / 607 (1.05);
//             N8192 590 / 606 (0.97), GQA 695 / 611 (1.14).
//     causal: B2 H32 N3000 457 / 483 (0.95); N2048 474 / 394 (1.20), GQA 499 / 402;
//             N8192 576 / 546 (1.05), GQA 583 / 549.
//   d = 64:   B8 N1024 385 / 401 (0.96); N2048 409 / 425 (0.96), causal 313 / 281 (1.11);
//             N8192 457 / 456 (1.00), causal 424 / 423 (1.00); GQA within 3% of MHA.
//   d = 256:  N2048 568 / 638 (0.89), causal 514 / 467; N8192 625 / 657, causal 698 / 603.
//   The first version (one CTA per tile, no ping-pong, O from registers) measured 372, 315
//   and 258 at d = 128 causal N2048, d = 64 B8 N1024 and d = 64 causal N2048.
// Same-call comparisons that decided the design:
//   persistent vs one CTA per tile (non-causal): d = 64 B8 N1024 385 vs 333, N2048 409 vs
//     383; d = 128 N2048 535 vs 509, GQA 635 vs 601; N >= 8192 equal within the clock noise.
//   Causal (one CTA per tile either way) gained from the first version's 372 -> 474 (d = 128
//     N2048) and 258 -> 313 (d = 64 N2048) with the ping-pong and the across-heads
//     longest-first order together; the two were not measured apart.
//   O by TMA store vs from registers, L2 sections vs one head at a time: equal within the
//     noise (kept: the store overlaps the next tile).
//   Tried and dropped: 3 consumer warpgroups at d = 64 (192 rows, setmaxnreg 24 / 160) with
//     P in registers: 104 bytes of spills at 160 registers even without the intra-warpgroup
//     overlap, and no faster (316 / 382 / 476 vs 317 / 383 / 477 at N = 1024 / 2048 / 8192).
//     With P in shared memory (kCons = 3, 192 keys; HARNESS_FWD_D64_CONSUMERS=3; 28 bytes of
//     spills) against the 192-key default, H100 2026-11-27, one process each, twice: N = 8192
//     2.5-2.9% faster (B = 2 1.25 vs 1.28-1.29 ms), B = 2 N = 1024 35-36% slower and N = 2048
//     6-8% slower (at N = 1024, 192 tiles of 192 rows on 132 CTAs, against 256 of 128: two
//     rounds either way, of 1.5x longer tiles, the last of each head a third full), beside
//     cuDNN at N = 8192 0.902-0.931x against 0.895-0.929x: kept as an experiment, not a default.
//     The same with 160 or 176 keys (no spills; d64_consumers_key_tile): 1-3% faster than the
//     default at N = 8192, slower at N = 3072-4096, no faster over N = 3072-8192 (session 16).
//   Clusters of two CTAs sharing each K/V tile (kCl = 2, HARNESS_FWD_D64_CLUSTER=2, d = 64;
//     Layout's comment), H100 2026-11-27: K and V read from L2 once per 256 query rows, as
//     cuDNN's kernel does, cut the L2 bytes by 40% (ncu, B = 2 H = 16 N = 8192, two device
//     calls: 3.2 against 5.35 GB) and left the time (1.152 against 1.160 ms) and the tensor
//     pipe (51.6% against 51.5%) unchanged; N = 1024 3.6-7.8% slower; beside cuDNN 0.87-0.93x
//     either way; causal not timed (the first CTA of a causal unit runs up to one more key
//     tile than its rows need, fully masked for it): an experiment, not a default. (With
//     .release.cluster arrives it ran 2.04x slower: a MEMBAR per release.)
//   wgmma descriptors built once per tile and stepped by one add (as the backward does), d = 64
//     default-shape kernels (commit b9ccbe7, reverted): 2752 -> 2664 static instructions at 192
//     keys, yet +0.9% / +1.0% slower over the 12 non-causal d = 64 shapes (H200, 2026-11-28,
//     one process each, old / new / new / old, every pair "same"), beside cuDNN 0.866-0.867x
//     against 0.891-0.892x: the uniform-datapath descriptor arithmetic is not the limiter.
//   The producer's try_wait with cuDNN's suspend hint (session 17, reverted): no gain.
//   Without ping-pong at d = 64 (commit ee863a7, reverted): the default kernels with each
//     consumer issuing at will were 13-14% slower over 12 non-causal shapes (H200, 2026-11-28,
//     one process each, old / new / new / old) though they ran at a 6-9% higher SM clock;
//     beside cuDNN 0.690-0.740x against 0.863-0.903x. The turn-taking stays (kPingPong).
//   Not tried: 192-key tiles at d = 128 (S 96 + two P 48 +
//     O 64 = 256 registers a thread with the intra-warpgroup overlap, over the 240).
#include <cfloat>
#include <cstdlib>
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "arch/cluster_launch.hpp"
#include "arch/env_switch.hpp"
#include "arch/numeric.cuh"
#include "arch/sm90_mbarrier.cuh"
#include "arch/sm90_tma.cuh"
#include "arch/sm90_warpgroup.cuh"
#include "arch/sm90_wgmma.cuh"
#include "arch/smem.cuh"
#include "arch/tma_map.hpp"
#include "arch/warp_reduce.cuh"
#include "attention.hpp"
#include "fp8_fragments.hpp"
#include "hopper_support.hpp"

namespace kernels::attention {
namespace {

namespace arch = kernels::arch;

constexpr int kOBoxCols = 64;        // 16-bit O elements per 128-byte swizzled row
constexpr int kBoxBytes = 64 * 128;  // one {128 bytes, 64 rows} box of Q or O
constexpr float kLn2 = 0.6931471805599453f;


// The element types: T for Q, K, V as wgmma reads them, Out for O. FP8 (e4m3) inputs give a
// bf16 O and read V transposed (see the fp8 notes at the top).
template <class T>
struct Elem {
  using Out = T;
  static constexpr bool kFp8 = false;
};
template <>
struct Elem<__nv_fp8_e4m3> {
  using Out = __nv_bfloat16;
  static constexpr bool kFp8 = true;
};

// Tiles and shared memory of one element type, head size and K/V ring depth.
// kBNT: keys of a key tile, 0 for 128 (64 at d = 256); 80 at d = 256 (d256_key_tile); 192 at long non-causal
// d = 64 (d64_key_tile); 160 and 176 at d = 64 for experiments (d64_key_tile). cuDNN's kernel
// at d = 64 reads a 64 x 256 x 64 tile in its name, and ncu showed our per-tile overhead
// trailing (docs/PERFORMANCE.md "Ours and cuDNN in one process"). A key tile over 176 keys
// (192 and the wider ones tried) keeps one P buffer (kOneP): the exponentials of S_j stay f32
// in S until P_{j-1} V_{j-1} is done, then are packed into P. Registers a consumer thread: S 96 + P 48
// + O 32 at 192 keys (ptxas: no spills, wgmma not serialized); at 256 keys S 128 + P 64 + O 32
// spilled 152 bytes and ptxas serialized the wgmmas (C7512). With P in shared memory instead
// (below) a 256-key tile fits (S 128 + O 32), and measured no faster than 192 (H100,
// 2026-11-27, session 13, one process per width, two pairs: N = 8192 +0.2% and +2.5% (B = 2),
// N = 3072 and 6144 1-5% slower, N = 1024 4-8% faster; beside cuDNN at N = 8192 0.881-0.899x
// against 0.861-0.940x), so it is not offered
// (it was this file's P path below with two consumers: kPSmem also for kBN = 256, and a
// dispatch case for HARNESS_FWD_D64_KEYS=256).
// Three consumers (kCons = 3, FlashAttention-3's d = 64 layout: 192 query rows x 192 keys)
// keep P in shared memory (kPSmem): 160 registers a consumer thread (setmaxnreg: 24 for the
// producer, 3 x 160 for the consumers fill the 64K), where S 96 + P 48 + O 32 does not fit.
// Also with 160 or 176 keys (HARNESS_FWD_D64_KEYS; the last box half or three-quarters used).
// Each consumer writes P_j (64 rows, kBN keys, T) into ceil(kBN / 64) swizzled {64 keys, 64 rows}
// boxes laid out as Q's (the 128-byte swizzle, written as the O epilogue writes O:
// conflict-free 4-byte stores), and O += P V takes both operands from shared memory (wgmma
// SS, A = P K-major, B = V MN-major). Shared memory: Q 24 + K 2 x 24 + V 2 x 24 + O 24 + P 72
// = 216 KB (160 keys: K and V 2 x 20 each, 200 KB). An experiment (HARNESS_FWD_D64_CONSUMERS=3,
// see d64_consumers), not a default.
// Clusters (kCl = 2, HARNESS_FWD_D64_CLUSTER=2, see d64_cluster; 16-bit, two consumers): the two
// CTAs of a cluster take adjacent query tiles of one (b, h) (the scheduler's unit is the pair;
// at an odd count of query tiles the second CTA's tile lies past N: TMA fills zeros, nothing is
// stored) and the same key tiles. Each CTA loads kKVRows = kBN / 2 keys of every K and V tile
// (boxes {64 d, kBN / 2 keys}, 1024-byte aligned halves) and multicasts them to the same offset
// in both CTAs; each CTA's full barrier expects the whole stage, its empty barriers count the
// consumer warps of both CTAs (each warp arrives on both, at CTA scope). Both CTAs meet at a
// cluster barrier after the barriers' set-up and before leaving.
// Lazy rescaling (kLazyT; on by default at d = 128 and 256, where it measured faster: see
// flash_hopper_lazy_rescale), after
// FlashAttention-4: the running max m of a row moves only when a tile's max exceeds it by
// more than kRescaleSlack (log2 units), so P = exp2(c S - m) <= 2^kRescaleSlack, and O and l
// are rescaled only on the tiles where one of the thread's rows moved (alpha = 1 exactly
// elsewhere). O / l and LSE = m + log2 l are the same softmax for any m >= the true max -
// kRescaleSlack. 16-bit inputs only (fp8 P stays <= 1: e4m3 tops out at 448).
constexpr float kRescaleSlack = 8.0f;

template <class T, int kD, int kStagesT, int kBNT = 0, bool kLazyT = false, int kConsT = 2, int kClT = 1>
struct Layout {
  static constexpr int kCons = kConsT;                   // consumer warpgroups (64 query rows each)
  static constexpr int kCl = kClT;                       // CTAs of a cluster sharing each K/V tile (multicast)
  static constexpr bool kFp8 = Elem<T>::kFp8;
  static constexpr bool kLazy = kLazyT;                  // lazy rescaling (above)
  static constexpr int kBM = 64 * kCons;                 // query rows of a tile
  static constexpr int kBN = kBNT ? kBNT : (kD == 256 ? 64 : 128);  // keys of a key tile (S is kBN / 2 f32 a thread)
  static constexpr bool kPSmem = kCons == 3;            // P through shared memory (registers: S kBN / 2 + O kD / 2)
  static constexpr bool kOneP = kBN > 176 && !kPSmem;    // one P buffer (registers: S kBN / 2 + P kBN / 4 + O kD / 2)
  static constexpr int kStages = kStagesT;               // K and V ring depth
  static constexpr int kThreads = 128 * (1 + kCons);
  static constexpr int kRegs = kCons == 3 ? 160 : 240;   // consumer registers after setmaxnreg (producer: 24)
  static constexpr bool kOSmem = kD != 256;              // O through shared memory + TMA store
  static constexpr int kBoxCols = 128 / static_cast<int>(sizeof(T));  // Q, K elements per 128-byte row
  static constexpr int kBoxes = kD / kBoxCols;           // 128-byte column boxes of a Q or K row
  static constexpr int kOBoxes = kD / kOBoxCols;         // the same for O (16-bit)
  static constexpr int kQC = kBoxes * kBoxBytes;         // Q bytes of one consumer (64 rows)
  static constexpr int kOC = kOBoxes * kBoxBytes;        // O bytes of one consumer (64 rows)
  static constexpr int kPC = kPSmem ? (kBN + 63) / 64 * kBoxBytes : 0;  // P bytes of one consumer (64 rows, kBN keys)
  static constexpr int kKBox = kBN * 128;                // bytes of one K or V box
  static constexpr int kKVBytes = kBoxes * kKBox;        // one K or V stage (fp8 V^T: kD rows of kBN bytes)
  static constexpr int kKVRows = kBN / kCl;              // keys of a box one CTA loads (and multicasts)
  static constexpr int kQ = 0;
  static constexpr int kK = kQ + kCons * kQC;
  static constexpr int kV = kK + kStages * kKVBytes;
  static constexpr int kO = kV + kStages * kKVBytes;
  static constexpr int kP = kO + (kOSmem ? kCons * kOC : 0);
  static constexpr int kBars = kP + kCons * kPC;
  static constexpr int kNumBars = 2 * kCons + 4 * kStages;
  static constexpr int kSmem = kBars + 8 * kNumBars + 1024;  // + alignment slack
  static_assert(kSmem <= 227 * 1024, "shared memory");
  static_assert(!kFp8 || (kD == 128 && kBN == 128), "fp8: one 128-byte box per row of Q, K and V^T");
  static_assert(!kOneP || (!kFp8 && kD == 64 && kBN % 64 == 0), "the one-P path: 16-bit d = 64 only");
  static_assert(!kPSmem || (!kFp8 && kD == 64), "P through shared memory: 16-bit d = 64 only");
  static_assert(kCons == 2 || (kCons == 3 && kD == 64 && kBN >= 128 && kBN % 16 == 0), "3 consumers: d = 64 only");
  static_assert(128 * 24 + 128 * kCons * kRegs <= 65536, "setmaxnreg: the register file");
  static_assert(!kLazy || !kFp8, "lazy rescaling: 16-bit inputs only");
  static_assert(kCl == 1 || (kCl == 2 && !kFp8 && kCons == 2 && kKVRows % 8 == 0),
                "clusters: 2 CTAs, 16-bit, two consumers, half tiles of whole 1024-byte swizzle groups");
};

// P's RS-form A fragments of one key tile: a k slice is 32 bytes of keys (16-bit: 16 keys,
// fp8: 32), 4 registers a thread each.
template <class T, int kBN>
constexpr int kPSlices = kBN / (32 / static_cast<int>(sizeof(T)));

// Barrier addresses: q_full[c], q_empty[c], then k_full[s], k_empty[s], v_full[s], v_empty[s].
template <int kStages, int kCons>
struct Bars {
  std::uint32_t base;
  __device__ std::uint32_t q_full(int c) const { return base + 8 * c; }
  __device__ std::uint32_t q_empty(int c) const { return base + 8 * (kCons + c); }
  __device__ std::uint32_t k_full(int s) const { return base + 8 * (2 * kCons + s); }
  __device__ std::uint32_t k_empty(int s) const { return base + 8 * (2 * kCons + kStages + s); }
  __device__ std::uint32_t v_full(int s) const { return base + 8 * (2 * kCons + 2 * kStages + s); }
  __device__ std::uint32_t v_empty(int s) const { return base + 8 * (2 * kCons + 3 * kStages + s); }
};

// Named barriers (0 is __syncthreads'): the warpgroup scheduler (ping-pong) barrier of
// consumer c, and consumer c's own epilogue barrier.
constexpr int kSchedBar = 1;  // ids 1 .. kCons (kCons <= 3)
constexpr bool kPingPong = true;  // consumers' GEMMs interleaved (false: each issues at will)
constexpr int kEpiBar = 4;    // ids 4 .. 3 + kCons
constexpr int kPBar = 7;      // ids 7 .. 6 + kCons: consumer c's P stores before its last P V

// The work list: tiles (m block, b h), L2-friendly and longest first. Heads are taken in
// sections of `sec` (b, h) whose K and V fit in L2 together; inside a section the m blocks
// go in the outer order (causal: from the last, the longest), the heads in the inner one.
struct Schedule {
  int m_blocks, bh_count, sec, total, causal;
  __device__ void decode(int t, int& mb, int& bh) const {
    const int per_section = sec * m_blocks;
    const int section = t / per_section;
    const int r = t - section * per_section;
    const int sh = min(sec, bh_count - section * sec);
    const int mi = r / sh;
    bh = section * sec + (r - mi * sh);
    mb = causal ? m_blocks - 1 - mi : mi;
  }
  // The tile of round `round` of CTA `cta` of `ctas` (snake order: the rounds alternate
  // direction so that, causal, no CTA gets the longest tile of every round).
  __device__ int tile(int round, int cta, int ctas) const {
    return round * ctas + ((round & 1) ? ctas - 1 - cta : cta);
  }
};

// Where a thread's accumulator pair j, j + 1 (row 16 warp + g + 8 ((j / 2) % 2), columns
// 8 (j / 4) + 2t, +1 of a (64, N) wgmma tile) goes in 16-bit {64 columns, 64 rows} boxes of
// 128-byte rows swizzled as TMA's SWIZZLE_128B lays them out (16-byte chunk c of row r at
// c ^ (r % 8); r % 8 = g): a warp's 32 4-byte stores hit 32 banks. O's epilogue and the
// kPSmem P use it.
__device__ __forceinline__ std::uint32_t swizzled_pair_addr(std::uint32_t boxes, int j, int warp, int lane) {
  const int row = 16 * warp + lane / 4 + 8 * ((j / 2) % 2);
  const int chunk = (j / 4) % 8, bx = (j / 4) / 8;
  return boxes + bx * kBoxBytes + row * 128 + ((chunk ^ (lane / 4)) << 4) + 4 * (lane % 4);
}

// Masks scores of keys >= n, and (causal) keys > row, in a (64, kBN) accumulator tile.
template <int kBN>
__device__ __forceinline__ void mask_tile(float (&s)[kBN / 2], int key0, int row0, int n, bool causal) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int j = 0; j < kBN / 2; ++j) {
    const int key = key0 + 8 * (j / 4) + 2 * (lane % 4) + (j % 2);
    const int row = row0 + 8 * ((j / 2) % 2);
    if (key >= n || (causal && key > row)) s[j] = -INFINITY;
  }
}

// Row r's new running max from the tile's raw max (quad-reduced: one value per row), and
// alpha = exp2(m_old - m_new); lazy (kRescaleSlack): m moves only past m_old + kRescaleSlack,
// else alpha = 1 exactly. Returns mu, the max that P subtracts (0 for a row with nothing
// visible yet, m = -inf).
template <bool kLazy>
__device__ __forceinline__ float update_max(float tile_max, float c, float& m, float& alpha) {
  const float seen = fmaxf(m, tile_max * c);
  const float mx = kLazy && !(seen > m + kRescaleSlack) ? m : seen;
  const float mu = mx == -INFINITY ? 0.0f : mx;  // a row with nothing visible yet
  alpha = kLazy && mx == m ? 1.0f : arch::fast_exp2(m - mu);
  m = mx;
  return mu;
}

// The exponentials stay on MUFU. At d = 64 MUFU's 16 a clock an SM equal the rate at which the
// tensor cores produce S elements (ncu: XU pipe 52.7% beside the tensor pipe's 51.5%), so
// moving 2 or 3 of every 8 of them to the FMA pipe (FlashAttention-4's cubic emulation of 2^x)
// was tried: XU fell to 38.2% and issue rose from 45.2% to 54.2%, and the kernel got slower
// (geometric mean over 10 shapes +3.2% with 2/8, +4.5-5.7% with 3/8; H100, 2026-11-27,
// session 15; commit cccfe6f, reverted; docs/PERFORMANCE.md "Exponentials on the FMA pipe").
// Nor did the row max's dependent FMNMX chain matter: a balanced tree (the same value, depth 6
// instead of 25 at 192 keys) timed within noise (geometric means -0.9% and -0.6% over 6 shapes,
// every verdict "same"; commit 6130394, reverted).
// Online softmax of one tile for this thread's two rows (r = 0: row g, 1: row g + 8):
// updates m, l; P rounded to T as RS-form A fragments; alpha = exp2(m_old - m_new).
// fp8: slice kk (keys 32 kk ..), 16-key group h: register r + 2 h holds this thread's keys
// 2t, 2t + 1, 8 + 2t, 9 + 2t of the group (accumulators 16 kk + 8 h + 2 r, +1, +4, +5) as
// the fragment's k = 4t .. 4t + 3; V^T's keys are stored in that order (v_transpose_fp8).
template <class T, int kBN, bool kLazy = false>
__device__ __forceinline__ void softmax_tile(const float (&s)[kBN / 2], float c, float (&m)[2], float (&l)[2],
                                             std::uint32_t (&p)[kPSlices<T, kBN>][4], float (&alpha)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float raw = -INFINITY;
#pragma unroll
    for (int j = 0; j < kBN / 2; j += 4) raw = fmaxf(raw, fmaxf(s[j + 2 * r], s[j + 2 * r + 1]));
    const float mu = update_max<kLazy>(arch::quad_max(raw), c, m[r], alpha[r]);
    float sum = 0.0f;
    if constexpr (Elem<T>::kFp8) {
#pragma unroll
      for (int kk = 0; kk < kBN / 32; ++kk) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          using fp8::p_accumulator;
          const float p0 = arch::fast_exp2(fmaf(s[p_accumulator(kk, h, r, 0)], c, -mu));
          const float p1 = arch::fast_exp2(fmaf(s[p_accumulator(kk, h, r, 1)], c, -mu));
          const float p2 = arch::fast_exp2(fmaf(s[p_accumulator(kk, h, r, 2)], c, -mu));
          const float p3 = arch::fast_exp2(fmaf(s[p_accumulator(kk, h, r, 3)], c, -mu));
          sum += (p0 + p1) + (p2 + p3);
          p[kk][r + 2 * h] = arch::pack4_e4m3(p0, p1, p2, p3);
        }
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < kBN / 16; ++kk) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // keys 16 kk + 8 h + 2t, +1: accumulators 8 kk + 4 h + 2 r, +1
          const int j = 8 * kk + 4 * h + 2 * r;
          const float p0 = arch::fast_exp2(fmaf(s[j], c, -mu));
          const float p1 = arch::fast_exp2(fmaf(s[j + 1], c, -mu));
          sum += p0 + p1;
          p[kk][r + 2 * h] = arch::pack2<T>(p0, p1);
        }
      }
    }
    l[r] = l[r] * alpha[r] + sum;
  }
}

// The one-P path (Layout::kOneP): softmax_tile split in two. softmax_exp leaves
// P = exp2(c S - m) in S as f32 (m, l, alpha as softmax_tile); pack_p rounds it to T into
// the RS-form A fragments once the previous P V product has released the P registers.
template <int kBN, bool kLazy = false>
__device__ __forceinline__ void softmax_exp(float (&s)[kBN / 2], float c, float (&m)[2], float (&l)[2],
                                            float (&alpha)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float raw = -INFINITY;
#pragma unroll
    for (int j = 0; j < kBN / 2; j += 4) raw = fmaxf(raw, fmaxf(s[j + 2 * r], s[j + 2 * r + 1]));
    const float mu = update_max<kLazy>(arch::quad_max(raw), c, m[r], alpha[r]);
    float sum = 0.0f;
#pragma unroll
    for (int j = 2 * r; j < kBN / 2; j += 4) {  // accumulators j, j + 1: row r
      s[j] = arch::fast_exp2(fmaf(s[j], c, -mu));
      s[j + 1] = arch::fast_exp2(fmaf(s[j + 1], c, -mu));
      sum += s[j] + s[j + 1];
    }
    l[r] = l[r] * alpha[r] + sum;
  }
}
template <class T, int kBN>
__device__ __forceinline__ void pack_p(const float (&s)[kBN / 2], std::uint32_t (&p)[kPSlices<T, kBN>][4]) {
#pragma unroll
  for (int kk = 0; kk < kBN / 16; ++kk)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int j = 8 * kk + 4 * h + 2 * r;
        p[kk][r + 2 * h] = arch::pack2<T>(s[j], s[j + 1]);
      }
}

// c: the softmax scale times log2(e) (fp8: times scale_q scale_k); o_scale: fp8 scale_v
// (O = scale_v (P V_q) / l), unused for 16-bit inputs.
template <class T, int kD, int kStagesT, int kBNT, bool kLazyT, int kConsT, int kClT>
__global__ void __launch_bounds__(Layout<T, kD, kStagesT, kBNT, kLazyT, kConsT, kClT>::kThreads, 1)
    flash_hopper_forward_kernel(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
                                const __grid_constant__ CUtensorMap map_v, const __grid_constant__ CUtensorMap map_o,
                                typename Elem<T>::Out* __restrict__ o, float* __restrict__ lse, const Schedule sched,
                                int heads, int group, int n, float c, float o_scale) {
  using L = Layout<T, kD, kStagesT, kBNT, kLazyT, kConsT, kClT>;
  using TO = typename Elem<T>::Out;
  constexpr int kBN = L::kBN, kBM = L::kBM, kStages = L::kStages, kCons = L::kCons, kCl = L::kCl;
  extern __shared__ unsigned char smem_raw[];
  const std::uint32_t base = (arch::smem_u32(smem_raw) + 1023u) & ~1023u;
  const Bars<kStages, kCons> bars{base + L::kBars};
  const bool causal = sched.causal != 0;

  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / 128;
  // Clusters: the scheduler's unit is kCl adjacent query tiles of one (b, h), one a CTA.
  const int cta = static_cast<int>(blockIdx.x) / kCl, ctas = static_cast<int>(gridDim.x) / kCl;
  const int rank = kCl > 1 ? static_cast<int>(arch::cluster_ctarank()) : 0;
  // The first row of this CTA's tile of unit mb, and the keys the unit needs (causal: up to
  // the unit's last row; both CTAs of a cluster take the same key tiles).
  auto tile_q0 = [&](int mb) { return (mb * kCl + rank) * kBM; };
  auto unit_key_end = [&](int mb) { return causal ? min((mb + 1) * kCl * kBM, n) : n; };

  if (tid == 0) {
    for (int cw = 0; cw < kCons; ++cw) {
      arch::mbar_init(bars.q_full(cw), 1);
      arch::mbar_init(bars.q_empty(cw), 4);  // one arrive per warp of consumer cw
    }
    for (int s = 0; s < kStages; ++s) {
      arch::mbar_init(bars.k_full(s), 1);
      arch::mbar_init(bars.v_full(s), 1);
      // One arrive per consumer warp of every CTA of the cluster: each CTA multicasts its
      // part of a stage into all of them, so all must have released it.
      arch::mbar_init(bars.k_empty(s), kCl * kCons * 4);
      arch::mbar_init(bars.v_empty(s), kCl * kCons * 4);
    }
    arch::mbar_fence_init();
  }
  // Barriers initialised in every CTA of the cluster before anyone multicasts or arrives.
  if constexpr (kCl > 1) arch::cluster_sync();
  else __syncthreads();

  if (wg == 0) {
    // ---- producer ----
    arch::warpgroup_reg_dealloc<24>();
    if (tid == 0) {
      int it = 0;  // key tiles loaded so far (all tiles of this CTA): ring position
      for (int round = 0;; ++round) {
        const int t = sched.tile(round, cta, ctas);
        if (t >= sched.total) break;
        int mb, bh;
        sched.decode(t, mb, bh);
        const int q0 = tile_q0(mb);  // may be >= n (the unit's second tile): TMA fills zeros
        const int bkv = (bh / heads) * (heads / group) + (bh % heads) / group;
        const int n_tiles = (unit_key_end(mb) + kBN - 1) / kBN;
        // Q of each consumer as soon as that consumer's last S of the previous tile is done.
        for (int cw = 0; cw < kCons; ++cw) {
          arch::mbar_wait(bars.q_empty(cw), (round & 1) ^ 1u);
          arch::mbar_expect_tx(bars.q_full(cw), L::kQC);
#pragma unroll
          for (int bx = 0; bx < L::kBoxes; ++bx)
            arch::tma_load_3d(base + L::kQ + cw * L::kQC + bx * kBoxBytes, &map_q, L::kBoxCols * bx, q0 + 64 * cw,
                              bh, bars.q_full(cw));
        }
        for (int j = 0; j < n_tiles; ++j, ++it) {
          const int s = it % kStages;
          const std::uint32_t parity = ((it / kStages) & 1) ^ 1u;  // fresh barriers pass at once
          arch::mbar_wait(bars.k_empty(s), parity);
          arch::mbar_expect_tx(bars.k_full(s), L::kKVBytes);
          // kCl = 1: whole boxes {64 d, kBN keys}. Cluster: this CTA's kKVRows keys of each
          // box (its rank's part), multicast to the same offset in both CTAs; both parts
          // complete on each CTA's full barrier, which expects the whole stage.
          const std::uint32_t part = static_cast<std::uint32_t>(rank * L::kKVRows * 128);
          const int key0 = j * kBN + rank * L::kKVRows;
#pragma unroll
          for (int bx = 0; bx < L::kBoxes; ++bx) {
            const std::uint32_t dst = base + L::kK + s * L::kKVBytes + bx * L::kKBox + part;
            if constexpr (kCl > 1) arch::tma_load_3d_multicast(dst, &map_k, L::kBoxCols * bx, key0, bkv, bars.k_full(s), 0x3);
            else arch::tma_load_3d(dst, &map_k, L::kBoxCols * bx, key0, bkv, bars.k_full(s));
          }
          arch::mbar_wait(bars.v_empty(s), parity);
          arch::mbar_expect_tx(bars.v_full(s), L::kKVBytes);
          if constexpr (kCl > 1) {
#pragma unroll
            for (int bx = 0; bx < L::kBoxes; ++bx)
              arch::tma_load_3d_multicast(base + L::kV + s * L::kKVBytes + bx * L::kKBox + part, &map_v,
                                          L::kBoxCols * bx, key0, bkv, bars.v_full(s), 0x3);
          } else if constexpr (L::kFp8) {  // V^T (d rows, keys contiguous): one {kBN keys, kD rows} box
            arch::tma_load_3d(base + L::kV + s * L::kKVBytes, &map_v, j * kBN, 0, bkv, bars.v_full(s));
          } else {
#pragma unroll
            for (int bx = 0; bx < L::kBoxes; ++bx)
              arch::tma_load_3d(base + L::kV + s * L::kKVBytes + bx * L::kKBox, &map_v, L::kBoxCols * bx, j * kBN,
                                bkv, bars.v_full(s));
          }
        }
      }
    }
    // No CTA leaves while its peer may still multicast into it or arrive on its barriers.
    if constexpr (kCl > 1) arch::cluster_sync();
    return;
  }

  // ---- consumers ----
  arch::warpgroup_reg_alloc<L::kRegs>();
  const int cw = wg - 1;  // rows [64 cw, 64 cw + 64) of each tile
  const int lane = tid % 32, warp = (tid % 128) / 32;
  const bool leader = tid % 128 == 0;
  const std::uint32_t q_smem = base + L::kQ + static_cast<std::uint32_t>(cw) * L::kQC;
  const std::uint32_t o_smem = base + L::kO + static_cast<std::uint32_t>(cw) * L::kOC;
  const std::uint32_t p_smem = base + L::kP + static_cast<std::uint32_t>(cw) * L::kPC;

  auto release = [&](std::uint32_t bar) {
    if (lane == 0) arch::mbar_arrive(bar);
  };
  // A K or V stage goes back to the producers of every CTA of the cluster.
  auto release_kv = [&](std::uint32_t bar) {
    if constexpr (kCl > 1) {
      if (lane == 0) {
        arch::mbar_arrive_cluster_cta_scope(bar, 0);
        arch::mbar_arrive_cluster_cta_scope(bar, 1);
      }
    } else {
      release(bar);
    }
  };
  // Ping-pong: consumer cw issues its GEMMs of a step after consumer cw - 1 issued its own
  // (named barrier: 128 threads arrive, 128 sync), then lets consumer cw + 1 go.
  auto sched_sync = [&] {
    if constexpr (kPingPong) arch::named_bar_sync(kSchedBar + cw, 256);
  };
  auto sched_arrive = [&] {
    if constexpr (kPingPong) arch::named_bar_arrive(kSchedBar + (cw + 1) % kCons, 256);
  };
  // S = Q K_s^T over d (k slices of 32 bytes: kD / 16 for 16-bit, kD / 32 for fp8), issued
  // and committed (not waited for).
  auto issue_s = [&](float (&s)[kBN / 2], int stage) {
    const std::uint32_t k_smem = arch::opaque(base + L::kK + stage * L::kKVBytes);
    arch::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kD / arch::wgmma_k<T>; ++kk) {
      const std::uint32_t off = static_cast<std::uint32_t>(kk % 4) * 32;  // inside the 128-byte row
      const std::uint64_t da = arch::make_smem_desc(q_smem + (kk / 4) * kBoxBytes + off, 16, 1024);
      const std::uint64_t db = arch::make_smem_desc(k_smem + (kk / 4) * L::kKBox + off, 16, 1024);
      arch::wgmma_ss<T, kBN, 0, 0>(s, da, db, kk > 0 ? 1 : 0);
    }
    arch::wgmma_commit();
  };
  // O += P V_s over kBN keys (kPSlices k slices), issued and committed. 16-bit: V is
  // MN-major (transpose bit); fp8: V^T is K-major, k32 slice kk at +32 kk bytes of its rows.
  auto issue_pv = [&](float (&acc)[kD / 2], std::uint32_t (&p)[kPSlices<T, kBN>][4], int stage) {
    const std::uint32_t v_smem = arch::opaque(base + L::kV + stage * L::kKVBytes);
    arch::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kPSlices<T, kBN>; ++kk) {
      if constexpr (L::kFp8) {
        const std::uint64_t db = arch::make_smem_desc(v_smem + kk * 32, 16, 1024);
        arch::wgmma_rs<T, kD, 0>(acc, p[kk], db);
      } else {
        const std::uint64_t db = arch::make_smem_desc(v_smem + kk * 2048, L::kKBox, 1024);
        arch::wgmma_rs<T, kD, 1>(acc, p[kk], db);
      }
    }
    arch::wgmma_commit();
  };
  // kPSmem: O += P V_s with P from this consumer's boxes (K-major as Q: k16 slice kk at box
  // kk / 4, +32 (kk % 4) bytes) and V MN-major as in issue_pv; issued and committed. The
  // warpgroup's P stores are behind a barrier of all its threads by then (sched_sync, or
  // kPBar before the last product).
  auto issue_pv_smem = [&](float (&acc)[kD / 2], int stage) {
    if constexpr (L::kPSmem) {  // (16-bit only: other element types never instantiate it)
      const std::uint32_t v_smem = arch::opaque(base + L::kV + stage * L::kKVBytes);
      arch::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kBN / 16; ++kk) {
        const std::uint64_t da = arch::make_smem_desc(p_smem + (kk / 4) * kBoxBytes + (kk % 4) * 32, 16, 1024);
        const std::uint64_t db = arch::make_smem_desc(v_smem + kk * 2048, L::kKBox, 1024);
        arch::wgmma_ss<T, kD, 0, 1>(acc, da, db, 1);
      }
      arch::wgmma_commit();
    }
  };
  // kPSmem: P = the f32 exponentials in S rounded to T, into this consumer's {64 keys, 64
  // rows} boxes (swizzled_pair_addr), then fence.proxy.async: the wgmma that reads P is in
  // the async proxy. Called only once the previous P V product has completed (it read these
  // boxes).
  auto store_p = [&](const float (&sp)[kBN / 2]) {
    if constexpr (L::kPSmem) {
#pragma unroll
      for (int j = 0; j < kBN / 2; j += 2)
        arch::st_shared_b32(swizzled_pair_addr(p_smem, j, warp, lane), arch::pack2<T>(sp[j], sp[j + 1]));
      arch::fence_proxy_async();
    }
  };

  if (kPingPong && cw == 0) arch::named_bar_arrive(kSchedBar, 256);  // consumer 0 goes first

  float acc[kD / 2];
  float s[kBN / 2];
  std::uint32_t p[kPSlices<T, kBN>][4], p2[L::kOneP || L::kPSmem ? 1 : kPSlices<T, kBN>][4];
  int it = 0;  // key tiles consumed so far: ring position, as the producer's
  for (int round = 0;; ++round) {
    const int t = sched.tile(round, cta, ctas);
    if (t >= sched.total) break;
    int mb, bh;
    sched.decode(t, mb, bh);
    const int q0 = tile_q0(mb);
    const int n_tiles = (unit_key_end(mb) + kBN - 1) / kBN;
    const int row0 = q0 + 64 * cw + 16 * warp + lane / 4;  // this thread's row g (and g + 8)
    // Tiles that can hold keys >= n or (causal) keys past this warpgroup's first row.
    auto needs_mask = [&](int key0) { return key0 + kBN > n || (causal && key0 + kBN - 1 > q0 + 64 * cw); };

#pragma unroll
    for (int i = 0; i < kD / 2; ++i) acc[i] = 0.0f;
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f}, alpha[2];

    arch::mbar_wait(bars.q_full(cw), round & 1);
    // Tile 0: S_0, its softmax.
    {
      const int st = it % kStages;
      arch::mbar_wait(bars.k_full(st), (it / kStages) & 1);
      sched_sync();
      issue_s(s, st);
      sched_arrive();
      arch::wgmma_wait<0>();
      arch::fence_regs(s);
      release_kv(bars.k_empty(st));
      if (n_tiles == 1) release(bars.q_empty(cw));
      if (needs_mask(0)) mask_tile<kBN>(s, 0, row0, n, causal);
      if constexpr (L::kPSmem) {
        softmax_exp<kBN, L::kLazy>(s, c, m, l, alpha);
        store_p(s);
      } else if constexpr (L::kOneP) {
        softmax_exp<kBN, L::kLazy>(s, c, m, l, alpha);
        pack_p<T, kBN>(s, p);
      } else {
        softmax_tile<T, kBN, L::kLazy>(s, c, m, l, p, alpha);
      }
    }

    // Both paths' step j (1 <= j < n_tiles) begins alike: S_j and O += P_{j-1} V_{j-1}
    // (pp = P_{j-1}) issued in this consumer's turn, S_j waited for (K_j's stage released;
    // after the last S the producer may load the next Q) and masked. Returns V_{j-1}'s stage.
    auto begin_step = [&](int j, std::uint32_t (&pp)[kPSlices<T, kBN>][4]) {
      const int g = it + j;  // ring position of key tile j
      const int st = g % kStages, prev = (g - 1) % kStages;
      arch::mbar_wait(bars.k_full(st), (g / kStages) & 1);
      arch::mbar_wait(bars.v_full(prev), ((g - 1) / kStages) & 1);
      sched_sync();
      if constexpr (L::kPSmem && !kPingPong) arch::named_bar_sync(kPBar + cw, 128);  // P stored by all
      issue_s(s, st);
      if constexpr (L::kPSmem) issue_pv_smem(acc, prev);
      else issue_pv(acc, pp, prev);
      sched_arrive();
      arch::wgmma_wait<1>();  // S_j done
      arch::fence_regs(s);
      release_kv(bars.k_empty(st));
      if (j == n_tiles - 1) release(bars.q_empty(cw));
      if (needs_mask(j * kBN)) mask_tile<kBN>(s, j * kBN, row0, n, causal);
      return prev;
    };
    // P_{j-1} V_{j-1} done: acc and pp are free, V_{j-1}'s stage too.
    auto pv_done = [&](std::uint32_t (&pp)[kPSlices<T, kBN>][4], int prev) {
      arch::wgmma_wait<0>();
      arch::fence_regs(acc);
      if constexpr (!L::kPSmem) {
#pragma unroll
        for (int kk = 0; kk < kPSlices<T, kBN>; ++kk) arch::fence_regs(pp[kk]);
      }
      release_kv(bars.v_empty(prev));
    };
    auto rescale_o = [&] {
      if constexpr (L::kLazy) {
        if (alpha[0] == 1.0f && alpha[1] == 1.0f) return;  // neither row's max moved
      }
#pragma unroll
      for (int i = 0; i < kD / 2; ++i) acc[i] *= alpha[(i / 2) % 2];
    };
    // Step j, two P buffers: the softmax of S_j into pn while P_{j-1} V_{j-1} runs, then
    // O *= alpha_j. P alternates between the two register arrays (no copies; the loop is
    // unrolled by two).
    auto step = [&](int j, std::uint32_t (&pp)[kPSlices<T, kBN>][4], std::uint32_t (&pn)[kPSlices<T, kBN>][4]) {
      const int prev = begin_step(j, pp);
      softmax_tile<T, kBN, L::kLazy>(s, c, m, l, pn, alpha);
      pv_done(pp, prev);
      rescale_o();
    };
    // The last product, O += P_last V_last.
    auto finish = [&](std::uint32_t (&pl)[kPSlices<T, kBN>][4]) {
      const int g = it + n_tiles - 1, st = g % kStages;
      arch::mbar_wait(bars.v_full(st), (g / kStages) & 1);
      issue_pv(acc, pl, st);
      arch::wgmma_wait<0>();
      arch::fence_regs(acc);
      release_kv(bars.v_empty(st));
    };
    if constexpr (L::kPSmem) {
      // Step j with P in shared memory: S_j's softmax into S (f32) while P_{j-1} V_{j-1}
      // runs, then P_j stored once that product (which read the boxes) is done.
      for (int j = 1; j < n_tiles; ++j) {
        const int prev = begin_step(j, p);
        softmax_exp<kBN, L::kLazy>(s, c, m, l, alpha);
        pv_done(p, prev);
        store_p(s);
        rescale_o();
      }
      const int g = it + n_tiles - 1, st = g % kStages;
      arch::mbar_wait(bars.v_full(st), (g / kStages) & 1);
      arch::named_bar_sync(kPBar + cw, 128);  // every thread's P stored before the wgmma reads it
      issue_pv_smem(acc, st);
      arch::wgmma_wait<0>();
      arch::fence_regs(acc);
      release_kv(bars.v_empty(st));
    } else if constexpr (L::kOneP) {
      // Step j with one P buffer: S_j's softmax into S (f32) while P_{j-1} V_{j-1} runs,
      // then P_j packed into p once that product is done.
      for (int j = 1; j < n_tiles; ++j) {
        const int prev = begin_step(j, p);
        softmax_exp<kBN, L::kLazy>(s, c, m, l, alpha);
        pv_done(p, prev);
        pack_p<T, kBN>(s, p);
        rescale_o();
      }
      finish(p);
    } else {
      int j = 1;
      for (; j + 1 < n_tiles; j += 2) {
        step(j, p, p2);
        step(j + 1, p2, p);
      }
      if (j < n_tiles) {
        step(j, p, p2);
        finish(p2);
      } else {
        finish(p);
      }
    }
    it += n_tiles;

    // Epilogue: O = acc / l as T pairs (accumulator j: row g + 8 ((j / 2) % 2), columns
    // 8 (j / 4) + 2t, +1), LSE in natural log.
    float inv[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float total = arch::quad_sum(l[r]);
      if constexpr (L::kFp8) inv[r] = o_scale / total;
      else inv[r] = 1.0f / total;
      const int row = row0 + 8 * r;
      if (row < n && lane % 4 == 0)
        lse[static_cast<std::int64_t>(bh) * n + row] = (m[r] + log2f(total)) * kLn2;
    }
    if constexpr (L::kOSmem) {
      // Into this consumer's {64 d, 64 rows} swizzled boxes (swizzled_pair_addr), then one
      // TMA store per box (rows >= n are clipped); the store overlaps the next tile.
      if (leader) arch::bulk_wait_read();  // the previous tile's store has read the boxes
      arch::named_bar_sync(kEpiBar + cw, 128);
#pragma unroll
      for (int j = 0; j < kD / 2; j += 2) {
        const int r = (j / 2) % 2;
        arch::st_shared_b32(swizzled_pair_addr(o_smem, j, warp, lane),
                            arch::pack2<TO>(acc[j] * inv[r], acc[j + 1] * inv[r]));
      }
      arch::fence_proxy_async();
      arch::named_bar_sync(kEpiBar + cw, 128);
      if (leader && q0 + 64 * cw < n) {
#pragma unroll
        for (int bx = 0; bx < L::kOBoxes; ++bx)
          arch::tma_store_3d(&map_o, o_smem + bx * kBoxBytes, kOBoxCols * bx, q0 + 64 * cw, bh);
        arch::bulk_commit();
      }
    } else {
      const std::int64_t o_base = static_cast<std::int64_t>(bh) * n * kD;
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = row0 + 8 * r;
        if (row >= n) continue;
        TO* orow = o + o_base + static_cast<std::int64_t>(row) * kD;
#pragma unroll
        for (int j = 2 * r; j < kD / 2; j += 4)
          *reinterpret_cast<std::uint32_t*>(orow + 8 * (j / 4) + 2 * (lane % 4)) =
              arch::pack2<TO>(acc[j] * inv[r], acc[j + 1] * inv[r]);
      }
    }
  }
  if constexpr (L::kOSmem) {
    if (leader) arch::bulk_wait_all();
  }
  if constexpr (kCl > 1) arch::cluster_sync();  // the producer's counterpart
}


// V (B Hkv, N, d) fp8 -> V^T (B Hkv, d, Np), Np = N rounded up to 16, keys >= N zero: the
// fp8 P V product needs V K-major (fp8 wgmma has no transpose bit). Inside each group of 16
// keys, position L = 4t + i holds key 2t + i (i < 2) or 8 + 2t + i - 2 (i >= 2): the order in
// which softmax_tile packs P (a thread's accumulator columns 2t, 2t + 1, 8 + 2t, 9 + 2t as
// its fragment's k = 4t .. 4t + 3), so P needs no shuffle across lanes. A block moves a
// (64 keys, 64 d) tile through shared memory, 4 bytes a thread per access. Cost: one read
// and one write of V (2 B Hkv N d bytes), timed with the attention.
constexpr int kVtTile = 64;
__global__ void __launch_bounds__(256) v_transpose_fp8_kernel(const std::uint8_t* __restrict__ v,
                                                               std::uint8_t* __restrict__ vt, int n, int np, int d,
                                                               long long bkv_count) {
  __shared__ __align__(4) std::uint8_t tile[kVtTile][kVtTile + 4];  // [key][d]
  const int key0 = static_cast<int>(blockIdx.x) * kVtTile, col0 = static_cast<int>(blockIdx.y) * kVtTile;
  const int tid = static_cast<int>(threadIdx.x);
  for (long long bkv = blockIdx.z; bkv < bkv_count; bkv += gridDim.z) {
    const std::uint8_t* src = v + bkv * n * d;
#pragma unroll
    for (int pass = 0; pass < 4; ++pass) {  // rows key0 + r, 4 bytes at d = col0 + c4
      const int r = tid / 16 + 16 * pass, c4 = 4 * (tid % 16);
      std::uint32_t w = 0;
      if (key0 + r < n && col0 + c4 < d)
        w = *reinterpret_cast<const std::uint32_t*>(src + static_cast<long long>(key0 + r) * d + col0 + c4);
      *reinterpret_cast<std::uint32_t*>(&tile[r][c4]) = w;
    }
    __syncthreads();
#pragma unroll
    for (int pass = 0; pass < 4; ++pass) {  // row col0 + c of V^T, positions key0 + q4 .. + 3
      const int c = tid / 16 + 16 * pass, q4 = 4 * (tid % 16);
      if (col0 + c < d && key0 + q4 < np) {
        std::uint32_t w = 0;
#pragma unroll
        for (int i = 0; i < 4; ++i) w |= static_cast<std::uint32_t>(tile[fp8::vt_key_of(q4 + i)][c]) << (8 * i);
        *reinterpret_cast<std::uint32_t*>(vt + (bkv * d + col0 + c) * np + key0 + q4) = w;
      }
    }
    __syncthreads();
  }
}
// Keys of a V^T row: N rounded up to 16 (TMA row strides are multiples of 16 bytes).
long long vt_keys(const Shape& s) { return (static_cast<long long>(s.seq_len) + 15) / 16 * 16; }

template <class T>
constexpr CUtensorMapDataType kMapType = std::is_same_v<T, __half>          ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                         : std::is_same_v<T, __nv_bfloat16> ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                                            : CU_TENSOR_MAP_DATA_TYPE_UINT8;

// c_scale: multiplies the softmax scale in c (fp8: scale_q scale_k; 16-bit: 1); o_scale: fp8
// scale_v. fp8: v is V^T (v_transpose_fp8_kernel's layout).
template <class T, int kD, int kStagesT, int kBNT = 0, bool kLazyT = false, int kConsT = 2, int kClT = 1>
cudaError_t launch(const Shape& s, const void* q, const void* k, const void* v, void* o, float* lse, float c_scale,
                   float o_scale, cudaStream_t stream) {
  using L = Layout<T, kD, kStagesT, kBNT, kLazyT, kConsT, kClT>;
  using TO = typename Elem<T>::Out;
  CUtensorMap mq, mk, mv, mo;
  const long long bh = static_cast<long long>(s.batch) * s.heads, bkv = static_cast<long long>(s.batch) * s.kv_heads;
  using detail::head_tensor_map;
  constexpr int kElem = static_cast<int>(sizeof(T));
  bool ok = head_tensor_map(&mq, kMapType<T>, kElem, q, kD, s.seq_len, bh, 64) &&
            head_tensor_map(&mk, kMapType<T>, kElem, k, kD, s.seq_len, bkv, L::kKVRows) &&
            head_tensor_map(&mo, kMapType<TO>, 2, o, kD, s.seq_len, bh, 64);
  if constexpr (L::kFp8)  // V^T: rows of vt_keys keys, kD rows a head, boxes {kBN keys, kD rows}
    ok = ok && head_tensor_map(&mv, kMapType<T>, 1, v, static_cast<int>(vt_keys(s)), kD, bkv, kD);
  else
    ok = ok && head_tensor_map(&mv, kMapType<T>, kElem, v, kD, s.seq_len, bkv, L::kKVRows);
  if (!ok) return cudaErrorInvalidValue;
  auto* kernel = flash_hopper_forward_kernel<T, kD, kStagesT, kBNT, kLazyT, kConsT, kClT>;
  static const cudaError_t attr =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kSmem);
  if (attr != cudaSuccess) return attr;
  float c = s.effective_scale() * 1.4426950408889634f * c_scale;
  if (c < FLT_MIN) c = FLT_MIN;  // -inf * c stays -inf (a scale under ~8e-39; every score ~0 anyway)
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return cudaErrorInvalidDevice;
  Schedule sched{};
  sched.m_blocks = ((s.seq_len + L::kBM - 1) / L::kBM + kClT - 1) / kClT;  // units of kClT query tiles
  sched.bh_count = static_cast<int>(bh);
  // (b, h) per section: K and V of the section's kv heads within ~32 MB of L2.
  const long long kv_bytes = 2LL * kElem * s.seq_len * kD;
  const long long per_l2 = std::max(1LL, (32LL << 20) / kv_bytes) * s.group();
  sched.sec = static_cast<int>(std::min(per_l2, bh));
  sched.total = sched.m_blocks * sched.bh_count;
  sched.causal = s.causal ? 1 : 0;
  // Persistent (one CTA per SM) without a mask; causal tiles differ in length, and the
  // hardware's block scheduler balances them better than a static assignment.
  if constexpr (kClT == 1) {
    const int ctas = s.causal ? sched.total : std::min(sched.total, sms);
    kernel<<<ctas, L::kThreads, L::kSmem, stream>>>(mq, mk, mv, mo, static_cast<TO*>(o), lse, sched, s.heads,
                                                    s.group(), s.seq_len, c, o_scale);
    return cudaGetLastError();
  } else {
    // Clusters of kClT CTAs along x; persistent: as many clusters as fit at once (the GPCs'
    // SM counts may leave an SM without a partner).
    arch::ClusterLaunch launch(kClT, L::kThreads, L::kSmem, stream);
    static int max_clusters = -1;  // per instantiation; one device assumed, as the attribute above
    if (max_clusters < 0) {
      int fit = 0;
      if (const cudaError_t e = arch::max_active_clusters(kernel, launch, sms, &fit); e != cudaSuccess) return e;
      max_clusters = fit;
    }
    if (max_clusters < 1) return cudaErrorNotSupported;
    const int clusters = s.causal ? sched.total : std::min(sched.total, max_clusters);
    launch.cfg.gridDim = dim3(static_cast<unsigned>(kClT * clusters));
    return cudaLaunchKernelEx(&launch.cfg, kernel, mq, mk, mv, mo, static_cast<TO*>(o), lse, sched, s.heads, s.group(),
                              s.seq_len, c, o_scale);
  }
}

// d = 64 takes 192-key tiles from 2048 keys on without a mask, from 8192 on with the causal
// mask. H100, 2026-11-27, same process as cuDNN (docs/PERFORMANCE.md "192-key tiles at
// d = 64"): N = 8192 1.245 / 1.200 ms (MHA / GQA) against 1.321-1.333 / 1.281-1.289 with
// 128 keys; N = 2048 equal (0.085 ms); N = 1024 5% slower (a 1024-key row is 5.3 tiles of
// 192). Causal (time with 192 / with 128, B = 2 / 8, H = 16, mean of two runs each): N = 2048
// 1.025 / 1.012, 4096 1.004 / 0.987, 8192 0.948 / 0.970: a 128-row query tile's last key
// tile holds up to 191 masked keys instead of 127, which only long rows amortize.
// HARNESS_FWD_D64_KEYS=128, 160, 176 or 192 forces one width, causal or not, for experiments
// (read once per process; another non-zero number: 128; unset, 0 or not a number: the rule).
// 160 and 176 keep two P buffers (Layout's kOneP is for wider tiles): at 192 keys, with one,
// the wait for P_{j-1} V_{j-1} before P_j is packed took 6.0% of the warp samples (ncu source
// counters, session 15); 160 or 176 keys fit S + two P + O in 192 or 208 registers. Measured
// (H100, 2026-11-28, session 16, one process each, 192 / 160 / 176 / 176 / 160 / 192 over
// N = 1024-8192): within the noise of 192 (geometric means +0.6% and -0.2% for 160, +0.3% and
// +0.1% for 176; every pair "same"), so the rule above stays.
int d64_key_tile(const Shape& s) {
  static const int forced = arch::env_int("HARNESS_FWD_D64_KEYS");
  if (forced != 0) return forced == 160 || forced == 176 || forced == 192 ? forced : 128;
  return s.seq_len >= (s.causal ? 8192 : 2048) ? 192 : 128;
}

// HARNESS_FWD_D64_CONSUMERS=3: d = 64 with three consumer warpgroups, 192 query rows x 192
// keys a tile, P in shared memory (FlashAttention-3's d = 64 layout: Layout's kCons = 3), for
// experiments (read once per process); unset or another value: two.
int d64_consumers() {
  static const int forced = arch::env_int("HARNESS_FWD_D64_CONSUMERS");
  return forced == 3 ? 3 : 2;
}

// The key tile of the three-consumer kernels: 192, or 160 / 176 where HARNESS_FWD_D64_KEYS
// forces that width (P lies in shared memory, so S 80 or 88 + O 32 registers fit the 160 of
// setmaxnreg without the 192-key kernel's 28 bytes of spills). H100, 2026-11-28, session 16,
// against the default (two consumers, 192 keys), one process each: at N = 8192 1-3% faster
// (160 and 176 alike), at N = 3072-4096 (B = 2) up to 4.4% slower, N = 6144 mixed; geometric
// mean over N = 3072-8192 +0.2% and 0.0%, every pair "same": not a default.
int d64_consumers_key_tile() {
  const int forced = d64_key_tile(Shape{});
  return forced == 160 || forced == 176 ? forced : 192;
}

// HARNESS_FWD_D64_CLUSTER=2: d = 64 in clusters of two CTAs that take adjacent query tiles of
// one (b, h) and share each K/V tile (each loads half of it and multicasts it to both):
// 256 query rows per K/V tile read from L2, as cuDNN's kernel has, instead of 128
// (docs/PERFORMANCE.md: ncu at B = 2 H = 16 N = 8192, 5.4 GB through L2 against cuDNN's
// 2.4 GB). For experiments (read once per process); unset or another value: no clusters.
int d64_cluster() {
  static const int forced = arch::env_int("HARNESS_FWD_D64_CLUSTER");
  return forced == 2 ? 2 : 1;
}

// d = 256 takes 80-key tiles (FlashAttention-3's d = 256 tile, 128 x 80), not 64.
// Why: at 64 keys S = Q K^T is m64n64k16 with both operands in shared memory, 4 KB read per
// 131 kFLOP a consumer, so the S half of a key tile needs the whole 128 bytes a clock of an
// SM's shared memory at the tensor peak (P V: 64, the TMA writes: 32 more); at 80 keys 4.5 KB
// per 164 kFLOP (115 bytes a clock), and a 2048-key row is 26 tiles, not 32. Registers a
// consumer thread: S 40 + two P 40 + O 128 (no spills); shared memory Q 64 + K 2 x 40 + V
// 2 x 40 = 224 KB. Measured (H200, 2026-11-28, session 21, B = 2 H = 16, docs/PERFORMANCE.md
// "Session 21 on an H200"): beside cuDNN in one process, runs 64 / 80 / 80 / 64, N = 8192 (a
// steady reference) 1.069-1.106x -> 1.176-1.196x, causal 1.111-1.132x -> 1.232-1.249x; N = 2048
// 0.237-0.238 -> 0.228-0.229 ms (577-580 -> 601-602 TFLOP/s; cuDNN too noisy there for a
// ratio); ncu at N = 2048, one launch each at 1.63-1.64 GHz: 0.206 against 0.216 ms, tensor pipe
// 81.7% against 75.9%. HARNESS_FWD_D256_KEYS=64 forces the old width (read once per process;
// unset or another value: 80).
int d256_key_tile() {
  static const int forced = arch::env_int("HARNESS_FWD_D256_KEYS");
  return forced == 64 ? 64 : 80;
}

template <class T, bool kLazy>
cudaError_t dispatch_as(const Shape& s, const void* q, const void* k, const void* v, void* o, float* lse,
                        cudaStream_t stream) {
  switch (s.head_dim) {
    case 64:
      if (d64_consumers() == 3) {
        switch (d64_consumers_key_tile()) {
          case 160: return launch<T, 64, 2, 160, kLazy, 3>(s, q, k, v, o, lse, 1.0f, 1.0f, stream);
          case 176: return launch<T, 64, 2, 176, kLazy, 3>(s, q, k, v, o, lse, 1.0f, 1.0f, stream);
          default: return launch<T, 64, 2, 192, kLazy, 3>(s, q, k, v, o, lse, 1.0f, 1.0f, stream);
        }
      }
      if (d64_cluster() == 2) {
        if (d64_key_tile(s) == 192) return launch<T, 64, 2, 192, kLazy, 2, 2>(s, q, k, v, o, lse, 1.0f, 1.0f, stream);
        return launch<T, 64, 2, 0, kLazy, 2, 2>(s, q, k, v, o, lse, 1.0f, 1.0f, stream);
      }
      switch (d64_key_tile(s)) {
        case 192: return launch<T, 64, 2, 192, kLazy>(s, q, k, v, o, lse, 1.0f, 1.0f, stream);
        case 176: return launch<T, 64, 2, 176, kLazy>(s, q, k, v, o, lse, 1.0f, 1.0f, stream);
        case 160: return launch<T, 64, 2, 160, kLazy>(s, q, k, v, o, lse, 1.0f, 1.0f, stream);
        default: return launch<T, 64, 2, 0, kLazy>(s, q, k, v, o, lse, 1.0f, 1.0f, stream);
      }
    case 128: return launch<T, 128, 2, 0, kLazy>(s, q, k, v, o, lse, 1.0f, 1.0f, stream);
    case 256:
      if (d256_key_tile() == 64) return launch<T, 256, 2, 0, kLazy>(s, q, k, v, o, lse, 1.0f, 1.0f, stream);
      return launch<T, 256, 2, 80, kLazy>(s, q, k, v, o, lse, 1.0f, 1.0f, stream);
    default:
      throw std::invalid_argument("attention: the Hopper flash forward supports head_dim 64, 128, 256, not " +
                                  std::to_string(s.head_dim));
  }
}

template <class T>
cudaError_t dispatch(const Shape& s, const void* q, const void* k, const void* v, void* o, float* lse,
                     cudaStream_t stream) {
  return flash_hopper_lazy_rescale(s.head_dim) ? dispatch_as<T, true>(s, q, k, v, o, lse, stream)
                                                : dispatch_as<T, false>(s, q, k, v, o, lse, stream);
}

// fp8 K/V ring depth: a key tile's two products take half the tensor time of bf16's, so one
// more stage than bf16's 2 keeps the TMA loads ahead (3 x 32 KB of K + V^T; 144 KB in all).
constexpr int kFp8Stages = 3;

}  // namespace

// Lazy rescaling is the default at d = 128 and 256. H100, 2026-11-27, one process beside
// cuDNN, runs off / on / on / off (docs/PERFORMANCE.md "Lazy rescaling"), ms with it off
// (two runs) against on (two runs):
//   d = 256 B = 2 H = 16: N = 2048 0.248 / 0.249 against 0.237 / 0.237, causal 0.141 / 0.145
//     against 0.137 / 0.135; N = 8192 causal 1.750 / 1.731 against 1.670 / 1.681;
//   d = 128: B = 2 H = 16 N = 8192 1.814 / 1.829 against 1.744 / 1.784; B = 1 N = 16384
//     3.428 / 3.429 against 3.360 / 3.358; B = 2 H = 32 N = 3000 causal 0.331 / 0.331 against
//     0.326 / 0.321; B = 4 N = 4096 0.946 / 0.946 against 0.947 / 0.932 (in time; per cycle,
//     time x the median clock under the power cap, mixed: part came with a higher clock);
//   d = 64 B = 2 H = 16 N = 8192 it was slower: 1.239 / 1.266 against 1.293 / 1.266 without a
//     mask, 0.646 / 0.655 against 0.662 / 0.662 causal: at d = 64 a rescale of O is 32
//     multiplies a thread, cheaper than the branch and max tests that skip it.
// HARNESS_FWD_LAZY_RESCALE=1 / 0 takes it at every head size / at none, for experiments
// (read once per process).
bool flash_hopper_lazy_rescale(int head_dim) {
  // Unset or empty: -1 (by head size); "1": on; any other value: off.
  static const int forced =
      !arch::env_set("HARNESS_FWD_LAZY_RESCALE") ? -1 : arch::env_is("HARNESS_FWD_LAZY_RESCALE", "1") ? 1 : 0;
  if (forced >= 0) return forced == 1;
  return head_dim >= 128;
}

std::string flash_hopper_config(const Shape& s) {
  using B = __nv_bfloat16;  // the 16-bit layouts' tiles do not depend on bf16 / f16
  int rows = 0, keys = 0;
  switch (s.head_dim) {
    case 64:
      rows = 64 * d64_consumers();
      keys = d64_consumers() == 3 ? d64_consumers_key_tile() : d64_key_tile(s);
      if (d64_consumers() == 2 && d64_cluster() == 2 && keys != 192) keys = 128;  // the cluster kernels' widths
      break;
    case 128: rows = Layout<B, 128, 2>::kBM, keys = Layout<B, 128, 2>::kBN; break;
    case 256: rows = Layout<B, 256, 2>::kBM, keys = d256_key_tile(); break;
    default: return {};
  }
  const bool cluster = s.head_dim == 64 && d64_consumers() == 2 && d64_cluster() == 2;
  return std::to_string(rows) + " x " + std::to_string(keys) + " tiles (query rows x keys), " +
         (cluster ? "clusters of 2 sharing K/V (multicast), " : "") +
         (flash_hopper_lazy_rescale(s.head_dim) ? "lazy" : "eager") + " rescaling";
}

const char* flash_hopper_unsupported(const Shape& shape) {
  if (shape.head_dim != 64 && shape.head_dim != 128 && shape.head_dim != 256)
    return "the Hopper (wgmma) flash forward has kernels for head_dim 64, 128 and 256";
  if (!(shape.effective_scale() > 0.0f)) return "the Hopper (wgmma) flash forward takes a positive softmax scale";
  return detail::hopper_device_unsupported(false);
}

cudaError_t flash_hopper_forward(const Shape& shape, Precision precision, const void* q, const void* k,
                                 const void* v, void* o, float* lse, cudaStream_t stream) {
  const std::string why = shape_error(shape);
  if (!why.empty()) throw std::invalid_argument("attention: " + why);
  if (const char* reason = flash_hopper_unsupported(shape)) throw std::invalid_argument(std::string("attention: ") + reason);
  if ((reinterpret_cast<std::uintptr_t>(q) | reinterpret_cast<std::uintptr_t>(k) |
       reinterpret_cast<std::uintptr_t>(v)) % 16 != 0)
    return cudaErrorMisalignedAddress;
  return precision == Precision::bf16 ? dispatch<__nv_bfloat16>(shape, q, k, v, o, lse, stream)
                                      : dispatch<__half>(shape, q, k, v, o, lse, stream);
}

const char* flash_hopper_fp8_unsupported(const Shape& shape) {
  if (shape.head_dim != 128) return "the FP8 Hopper flash forward has a kernel for head_dim 128 only";
  if (!(shape.effective_scale() > 0.0f)) return "the FP8 Hopper flash forward takes a positive softmax scale";
  return detail::hopper_device_unsupported(false);
}

std::size_t flash_hopper_fp8_workspace_bytes(const Shape& shape) {
  return static_cast<std::size_t>(shape.batch) * static_cast<std::size_t>(shape.kv_heads) *
         static_cast<std::size_t>(shape.head_dim) * static_cast<std::size_t>(vt_keys(shape));
}

cudaError_t flash_hopper_forward_fp8(const Shape& shape, Fp8Scales scales, const void* q, const void* k,
                                     const void* v, void* o, float* lse, void* workspace, cudaStream_t stream) {
  const std::string why = shape_error(shape);
  if (!why.empty()) throw std::invalid_argument("attention: " + why);
  if (const char* reason = flash_hopper_fp8_unsupported(shape))
    throw std::invalid_argument(std::string("attention: ") + reason);
  if (!(scales.q > 0.0f && scales.k > 0.0f && scales.v > 0.0f) || !std::isfinite(scales.q * scales.k) ||
      !std::isfinite(scales.v))
    throw std::invalid_argument("attention: the FP8 scales must be positive and finite");
  if ((reinterpret_cast<std::uintptr_t>(q) | reinterpret_cast<std::uintptr_t>(k) |
       reinterpret_cast<std::uintptr_t>(v) | reinterpret_cast<std::uintptr_t>(workspace)) % 16 != 0)
    return cudaErrorMisalignedAddress;
  const long long bkv = static_cast<long long>(shape.batch) * shape.kv_heads, np = vt_keys(shape);
  const dim3 grid(static_cast<unsigned>((np + kVtTile - 1) / kVtTile),
                  static_cast<unsigned>((shape.head_dim + kVtTile - 1) / kVtTile),
                  static_cast<unsigned>(std::min(bkv, 65535LL)));
  auto* vt = static_cast<std::uint8_t*>(workspace);
  v_transpose_fp8_kernel<<<grid, 256, 0, stream>>>(static_cast<const std::uint8_t*>(v), vt, shape.seq_len,
                                                   static_cast<int>(np), shape.head_dim, bkv);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  return launch<__nv_fp8_e4m3, 128, kFp8Stages>(shape, q, k, vt, o, lse, scales.q * scales.k, scales.v, stream);
}

}  // namespace kernels::attention
