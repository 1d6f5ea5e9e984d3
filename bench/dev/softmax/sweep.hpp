// The development candidates of the tunable softmax rungs: configurations the module's
// policies do not use (or use only for some shapes), instantiated here from the rungs'
// kernel templates, each runnable by name. Names: warp_row "LxP[/fexp][/L][/rN][/gN][/p]"
// (lanes x packs; f32 exps, plain loads, rows a group, blocks an SM, pipelined),
// block_row "TxP", "1024/smem", "TxP+sB" (hybrid, B blocks an SM), split_row "TxP/cN"
// (register cluster of N CTAs, 0 = the smallest that holds the row), "tTsS/cN"
// (streaming cluster, S stages), "TxP+sB[/dD]/cN" (hybrid cluster, pipelined D deep),
// "gTrRsSlL[bB]" (grid-pipelined), "blocks" (the split across blocks).
#pragma once

#include "driver_common.hpp"

#include <vector>

namespace softmax_dev {

/// warp_row's and block_row's candidates (sweep_row_rungs.cu).
void add_row_rung_candidates(std::vector<Variant>& out);
/// split_row's candidates (sweep_split_row.cu).
void add_split_row_candidates(std::vector<Variant>& out);

/// Every candidate, in the order above.
inline std::vector<Variant> sweep_variants() {
  std::vector<Variant> out;
  add_row_rung_candidates(out);
  add_split_row_candidates(out);
  return out;
}

}  // namespace softmax_dev
