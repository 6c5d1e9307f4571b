// ATen-free interface between embedding_bag_cuda.cpp (glue) and the kernels in embedding_bag_*_cuda.cu.
#pragma once
#include <cstdint>

#include "prim/util/dtype.h"
#include "prim/util/workspace.h"
#include "prim/device/segmented_reduce/segment_offsets.h"
#include "prim/util/input_error.cuh"
#include "prim/util/stream.h"

namespace gpuprim {

enum class EmbeddingBagMode : int8_t { kSum, kMean, kMax };

// Sizes of one call. Bag b holds the positions [lo, hi) of segment_bounds(bounds, b, nnz): bounds is int64
// [bags + 1] (offsets normalised: include_last_offset and 2-D input resolved on the ATen side).
// An index is used when 0 <= index < num_weights and index != padding_idx (-1: none); others are skipped.
struct EmbeddingBagShape {
  int64_t num_weights, dim;  // weight [num_weights, dim], contiguous
  int64_t nnz;               // indices [nnz]
  int64_t bags;              // out [bags, dim]
  int64_t padding_idx;       // -1: none
};

// Where the forward kernel records bad indices and offsets (the data rules of embedding_bag_check_data);
// records may be null. from_offsets: bounds hold the user's offsets (1-D indices).
struct EmbeddingBagChecks {
  InputCheck indices;
  InputCheck offsets;
  bool from_offsets;
  bool include_last_offset;
};

// Forward: out [bags, dim] (weight's dtype), bag_size int64 [bags] (used indices per bag), and for kMax
// max_indices int64 [bags, dim] (the weight row of each maximum, -1 for an empty bag; first maximum wins).
// per_sample_weights: nullptr or [nnz] of weight's dtype (kSum only). Floating weight: fp16/bf16/fp32/fp64.
void embedding_bag_cuda_launch(const void* weight, DType type, const void* indices, DType index_type,
                               const int64_t* bounds, const void* per_sample_weights, EmbeddingBagShape shape,
                               EmbeddingBagMode mode, const EmbeddingBagChecks& checks, void* out, int64_t* bag_size,
                               int64_t* max_indices, Workspace& workspace, cudaStream_t stream);

// Bags of more positions than this are long: the forward's bag kernel skips them and
// embedding_bag_long_bags_cuda_launch (embedding_bag_long_cuda.cu) splits them across blocks.
constexpr int64_t kEmbeddingBagLongBag = 1024;

// A call's long bags, known on the device only: the bag kernel writes `token` (unique to the call) into *flag
// when it skips a long bag, and zeroes the bag's ticket, tickets[its first position / kEmbeddingBagLongBag];
// the long-bag kernel returns at once unless it reads the token there. No zero fill: stale memory holds another
// call's token (or a value equal to this one with odds of 2^-64, which only costs the long-bag kernel's full
// pass, never a wrong result: only long bags' tickets are read).
struct LongBags {
  uint64_t* flag;
  uint64_t token;
  unsigned* tickets;  // [ceil(nnz / kEmbeddingBagLongBag)]
};

// A token no earlier call of this process used (a counter mixed with a per-process random start).
uint64_t embedding_bag_long_bag_token();

// The forward's outputs (as embedding_bag_cuda_launch) of the long bags only; bad indices in them are recorded
// through index_check. embedding_bag_cuda_launch calls it after the bag kernel; it does nothing when
// nnz <= kEmbeddingBagLongBag, and its kernel returns at once when the bag kernel met no long bag.
void embedding_bag_long_bags_cuda_launch(const void* weight, DType type, const void* indices, DType index_type,
                                         const int64_t* bounds, const void* per_sample_weights,
                                         EmbeddingBagShape shape, EmbeddingBagMode mode,
                                         const InputCheck& index_check, LongBags long_bags, void* out,
                                         int64_t* bag_size, int64_t* max_indices, Workspace& workspace,
                                         cudaStream_t stream);

// Backward. grad [bags, dim] contiguous (weight's dtype). Writes:
//  - dense (sparse=false): grad_weight [num_weights, dim]; sum/mean write every row (any content on entry),
//    max only the rows that get gradient (must be zero on entry);
//  - sparse (sum/mean only): rows int64 [nnz] (sorted unique rows that got gradient, 0 past num_rows) and
//    grad_weight [nnz, dim] (their gradient rows, must be zero on entry);
//  - num_rows int64 [1]: the number of distinct rows that got gradient (sum/mean; 0 for max);
//  - grad_per_sample_weights [nnz] (weight's dtype, contiguous) when per_sample_weights is not null.
// scale_grad_by_freq (sum/mean): each weight row's gradient times 1 / the number of its pairs.
// Deterministic: the (index, position) pairs are radix sorted and every row is summed in a fixed order.
void embedding_bag_backward_cuda_launch(const void* grad, const void* weight, DType type, const void* indices,
                                        DType index_type, const int64_t* bounds, const int64_t* bag_size,
                                        const int64_t* max_indices, const void* per_sample_weights,
                                        EmbeddingBagShape shape, EmbeddingBagMode mode, bool sparse,
                                        bool scale_grad_by_freq, void* grad_weight, int64_t* rows, int64_t* num_rows,
                                        void* grad_per_sample_weights, Workspace& workspace, cudaStream_t stream);

}  // namespace gpuprim
