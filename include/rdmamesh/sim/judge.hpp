// `rdmamesh-sim judge`: rank 0's finder on per-pair figures that another tool computed, so that
// tool names causes by the same rule rather than by a copy that can drift (analysis/compare
// judges the ratio of two results files with it).
#pragma once

#include <iosfwd>

namespace rdmamesh::sim {

// Reads one JSON document from `in`:
//   {"ranks": N, "node": [N], "rail": [N] (optional; -1: none), "uplinks": [[switch, [ranks under it]], ...],
//    "slow_pct": 90, "runs": [{"label": "...", "value": [N*N], "round": [N*N]}, ...]}
// `value` is any positive per-pair figure, row-major (sender, receiver); a pair is judged where
// its round is 0 or more. Counts are exact (no counting error). Writes to `out`:
//   {"runs": [{"label": "...", "noise": s, "causes": [{"kind", "basis", "node", "rank", "peer",
//    "send_pct", "recv_pct", "pairs", "fine"}, ...]}]}
// with a side's % of its cohort's median (null: not named). Throws on input it cannot read.
void judge_json(std::istream& in, std::ostream& out);

}  // namespace rdmamesh::sim
