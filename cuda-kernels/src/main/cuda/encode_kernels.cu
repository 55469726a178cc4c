// embednorm's normalize-then-encode kernels (encode.cuh), their own fatbin (build-fatbin.sh),
// loaded by EncodeKernels. float32 rows only; the encoding (Encoding.ordinal()) is an argument,
// the op part of the name, as in embednorm_kernels.cu. One signature:
//   (const float* input, unsigned char* values, float* scales, const long long* offsets,
//    const long long* value_starts, long long rows, int width, int group, double eps,
//    const float* weight, const float* bias, int encoding)
// offsets and value_starts are null for contiguous rows (row r: elements [r*width, (r+1)*width),
// bytes from r * rowBytes(width)); else row r's elements start at offsets[r] (width: the widest
// row) and its bytes at value_starts[r]. scales (int8 only) takes one float a row.
//   embednorm_encode_warp_<op>_p<PACK>_c<PACKS>: `group` lanes a row (PACK 4: aligned rows whose
//     widths are multiples of 4; PACK 1: group 32), up to 32 * PACK * PACKS elements a row.
//   embednorm_encode_registers_<op>_<encoding>: aligned rows of 513 to 4096 elements, a block of
//     up to 256 threads a row, 4 packs a thread, the row in registers.
//   embednorm_encode_block_<op>_cached / _uncached: a block a row, cached in shared memory or not.

#include "encode.cuh"

using namespace embednorm;

#define EMBEDNORM_ENCODE_SIGNATURE                                                              \
  (const float* input, unsigned char* values, float* scales, const long long* offsets,          \
   const long long* value_starts, long long rows, int width, int group, double eps,             \
   const float* weight, const float* bias, int encoding)

#define EMBEDNORM_ENCODE_WARP(OP_NAME, OP, PACK, PACKS)                                         \
  extern "C" __global__ void __launch_bounds__(kWarpBlock, 4)                                    \
      embednorm_encode_warp_##OP_NAME##_p##PACK##_c##PACKS EMBEDNORM_ENCODE_SIGNATURE {         \
    encode_warp_rows<OP, PACK, PACKS>(input, values, scales, offsets, value_starts, rows,       \
                                      width, group, eps, weight, bias, encoding);               \
  }

// Blocks of 256 an SM the register kernels are built for (encode.cuh, "Register path").
constexpr int register_blocks(int op) { return op == kLayerNorm ? 4 : 5; }

// One register kernel per op and encoding: the encoding a constant, so that each kernel holds only
// its own encoding's code and registers.
#define EMBEDNORM_ENCODE_REGISTERS(OP_NAME, OP, ENCODING_NAME, ENCODING)                        \
  extern "C" __global__ void __launch_bounds__(256, register_blocks(OP))                        \
      embednorm_encode_registers_##OP_NAME##_##ENCODING_NAME EMBEDNORM_ENCODE_SIGNATURE {       \
    (void)group;                                                                                \
    (void)encoding;                                                                             \
    encode_register_rows<OP, 4>(input, values, scales, offsets, value_starts, rows, width, eps, \
                                weight, bias, ENCODING);                                        \
  }

#define EMBEDNORM_ENCODE_BLOCK(OP_NAME, OP, SUFFIX, CACHED)                                     \
  extern "C" __global__ void __launch_bounds__(1024)                                            \
      embednorm_encode_block_##OP_NAME##SUFFIX EMBEDNORM_ENCODE_SIGNATURE {                     \
    (void)group;                                                                                \
    encode_block_rows<OP, CACHED>(input, values, scales, offsets, value_starts, rows, width,    \
                                  eps, weight, bias, encoding);                                 \
  }

#define EMBEDNORM_ENCODE_OP(OP_NAME, OP)                                                        \
  EMBEDNORM_ENCODE_WARP(OP_NAME, OP, 1, 1)                                                      \
  EMBEDNORM_ENCODE_WARP(OP_NAME, OP, 1, 2)                                                      \
  EMBEDNORM_ENCODE_WARP(OP_NAME, OP, 1, 4)                                                      \
  EMBEDNORM_ENCODE_WARP(OP_NAME, OP, 1, 8)                                                      \
  EMBEDNORM_ENCODE_WARP(OP_NAME, OP, 4, 1)                                                      \
  EMBEDNORM_ENCODE_WARP(OP_NAME, OP, 4, 2)                                                      \
  EMBEDNORM_ENCODE_WARP(OP_NAME, OP, 4, 4)                                                      \
  EMBEDNORM_ENCODE_WARP(OP_NAME, OP, 4, 8)                                                      \
  EMBEDNORM_ENCODE_REGISTERS(OP_NAME, OP, float16, kEncodeFloat16)                              \
  EMBEDNORM_ENCODE_REGISTERS(OP_NAME, OP, bfloat16, kEncodeBFloat16)                            \
  EMBEDNORM_ENCODE_REGISTERS(OP_NAME, OP, int8, kEncodeInt8)                                    \
  EMBEDNORM_ENCODE_REGISTERS(OP_NAME, OP, binary, kEncodeBinary)                                \
  EMBEDNORM_ENCODE_BLOCK(OP_NAME, OP, _cached, true)                                            \
  EMBEDNORM_ENCODE_BLOCK(OP_NAME, OP, _uncached, false)

EMBEDNORM_ENCODE_OP(rms_norm, kRmsNorm)
EMBEDNORM_ENCODE_OP(layer_norm, kLayerNorm)
EMBEDNORM_ENCODE_OP(softmax, kSoftmax)
EMBEDNORM_ENCODE_OP(log_softmax, kLogSoftmax)
EMBEDNORM_ENCODE_OP(l2_normalize, kL2Normalize)
EMBEDNORM_ENCODE_OP(l1_normalize, kL1Normalize)
EMBEDNORM_ENCODE_OP(linf_normalize, kLinfNormalize)
