// A one-sided rank test (Mann-Whitney, exact): do `x` read lower than `y` more than chance allows?
// It assumes nothing of the noise's shape, only that healthy readings are exchangeable: pairs
// alone on a crowded host have a heavy tail (a healthy pair read 39 % of its class's controls
// while three of them agreed within 5 %), which a scale fitted to a few controls hides.
#pragma once

#include <span>

namespace rdmamesh::stats {

// P(U >= u) when the m values of `x` and the c of `y` are drawn alike, where u counts the
// (x, y) pairs with x below y (a tie counts nothing, so a tie can only raise the figure). 1 where
// either side is empty.
double lower_rank_p(std::span<const double> x, std::span<const double> y);

}  // namespace rdmamesh::stats
