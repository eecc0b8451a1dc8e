// The retest of a run's slow pairs: rank 0 plans it from its last record, broadcasts the pairs,
// and every rank runs them alone as one more run.
#include "rdmamesh/app/retest.hpp"

#include <cstdio>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "rdmamesh/app/measure.hpp"
#include "rdmamesh/fabric/rank_info.hpp"
#include "rdmamesh/stats/model_retest.hpp"
#include "rdmamesh/stats/retest.hpp"

namespace rdmamesh::app {
namespace {

// What a pair at the retest's bound counts in a round, at least: ten (a slow pair's count of
// zero is then e^-10 likely at the bound, and a count is good to about a third)
constexpr double retest_messages = 10;

// --retest-duration as given; otherwise -D's short retest round, longer where the controls'
// rates in the run would leave a pair at the bound fewer messages (at most -D: the run's rounds)
double round_seconds(const options& o, const stats::retest_plan& plan, const stats::square<double>& bw,
                     std::uint64_t size) {
  if (!o.duration_mode() || o.retest_duration_s > 0) return o.round_seconds(true);
  return stats::retest_round_seconds(plan, bw, size, o.round_seconds(true), o.duration_s, retest_messages);
}

}  // namespace

stats::model_settings model_settings_of(const options& o) {
  return {.alpha = o.false_alarm_pct / 100 / o.retested_runs(), .slow_pct = o.slow_pct};
}

bool retest_slow_pairs(const context& c, engine::stream& eng, std::uint64_t size, std::uint32_t& index, bool& stopped) {
  stats::retest_plan plan;
  std::optional<stats::model_retest_plan> model;
  std::optional<stats::square<double>> before;
  std::string text;
  double seconds = c.o.round_seconds(true);
  if (c.me == 0) {
    const auto last = c.book.last();
    if (last && last->bw && last->retest_of < 0) {
      const stats::outlier_report none;
      auto job = stats::plan_full_retest(*last->bw, c.classes, model_settings_of(c.o),
                                         last->outliers ? *last->outliers : none, c.node_of, c.nics, c.uplinks);
      plan = std::move(job.pairs);
      model = std::move(job.model);
      before = last->bw->tx_bw;
      seconds = round_seconds(c.o, plan, *before, size);
    }
    if (!plan.slow.empty())
      text = fmt::format("{}|{}|{}", stats::encode_pairs(plan.slow), stats::encode_pairs(plan.controls), seconds);
  }
  {
    guarded_wait g(c.dog, fmt::format("rank {}: the other ranks stopped answering before a retest", c.me),
                   collective_bound_s(c.me, c.o.timeout_s));
    text = c.w.bcast_string(text);
  }
  if (text.empty()) return true;
  const auto bar = text.find('|'), bar2 = text.rfind('|');
  plan.slow = stats::decode_pairs(text.substr(0, bar));
  plan.controls = stats::decode_pairs(text.substr(bar + 1, bar2 - bar - 1));
  seconds = std::stod(text.substr(bar2 + 1));
  stats::pair_list all = plan.slow;
  all.insert(all.end(), plan.controls.begin(), plan.controls.end());
  const plan::subset_schedule sched(plan::alone_rounds(all, fabric::port_ids(c.ranks)), c.n);
  if (c.me == 0 && !c.o.quiet) {
    fmt::print(stderr, "[retest] {} slow pair(s) and {} control pair(s) alone, {} rounds{}\n", plan.slow.size(),
               plan.controls.size(), sched.rounds(),
               c.o.duration_mode() ? fmt::format(" of {:.2g} s", seconds) : std::string());
    std::fflush(stderr);
  }
  const retest_of what{static_cast<std::int32_t>(index - 1), &plan, before ? &*before : nullptr, seconds,
                       model ? &*model : nullptr};
  const bool clean = run_one(c, eng, sched, size, 0, index, stopped, what);
  ++index;
  return clean;
}

}  // namespace rdmamesh::app
