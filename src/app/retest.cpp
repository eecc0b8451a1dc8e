// The retest of a run's slow pairs: rank 0 plans it from its last record, broadcasts the pairs,
// and every rank runs them alone as one more run.
#include "rdmamesh/app/retest.hpp"

#include <cstdio>
#include <optional>
#include <set>
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
  return {.alpha = o.false_alarm_pct / 100, .slow_pct = o.slow_pct};
}

namespace {

// Collective: rank 0's plan (the pairs to run alone, and their round's seconds) to every rank,
// then those pairs run alone as one more run. False where there was nothing to run or this rank's
// part was not clean; `ran` says whether a run was recorded.
bool run_alone(const context& c, engine::stream& eng, std::uint64_t size, std::uint32_t& index, bool& stopped,
               stats::retest_plan& plan, const retest_of& what, bool& ran) {
  std::string text;
  if (c.me == 0 && (!plan.slow.empty() || (what.earlier && !plan.controls.empty())))
    text = fmt::format("{}|{}|{}", stats::encode_pairs(plan.slow), stats::encode_pairs(plan.controls), what.seconds);
  {
    guarded_wait g(c.dog, fmt::format("rank {}: the other ranks stopped answering before a retest", c.me),
                   collective_bound_s(c.me, c.o.timeout_s));
    text = c.w.bcast_string(text);
  }
  ran = !text.empty();
  if (!ran) return true;
  const auto bar = text.find('|'), bar2 = text.rfind('|');
  plan.slow = stats::decode_pairs(text.substr(0, bar));
  plan.controls = stats::decode_pairs(text.substr(bar + 1, bar2 - bar - 1));
  retest_of here = what;
  here.seconds = std::stod(text.substr(bar2 + 1));
  stats::pair_list all = plan.slow;
  all.insert(all.end(), plan.controls.begin(), plan.controls.end());
  const plan::subset_schedule sched(plan::alone_rounds(all, fabric::port_ids(c.ranks)), c.n);
  if (c.me == 0 && !c.o.quiet) {
    fmt::print(stderr, "[retest{}] {} {}pair(s) and {} control pair(s) alone, {} rounds{}\n",
               what.earlier ? ", second look" : "", plan.slow.size(), what.earlier ? "undecided parts' " : "slow ",
               plan.controls.size(), sched.rounds(),
               c.o.duration_mode() ? fmt::format(" of {:.2g} s", here.seconds) : std::string());
    std::fflush(stderr);
  }
  const bool clean = run_one(c, eng, sched, size, 0, index, stopped, here);
  ++index;
  return clean;
}

}  // namespace

bool retest_slow_pairs(const context& c, engine::stream& eng, std::uint64_t size, std::uint32_t& index, bool& stopped) {
  stats::retest_plan plan;
  std::optional<stats::model_retest_plan> model;
  std::optional<stats::square<double>> before;
  double seconds = c.o.round_seconds(true);
  const auto retested = static_cast<std::int32_t>(index - 1);
  if (c.me == 0) {
    const auto last = c.book.last();
    if (last && last->bw && last->retest_of < 0) {
      const std::span<const stats::outlier> found =
          last->outliers ? std::span<const stats::outlier>(last->outliers->found) : std::span<const stats::outlier>{};
      std::vector<std::int32_t> rail_of;
      for (const auto& r : c.ranks) rail_of.push_back(r.rail);
      auto job = stats::plan_full_retest(*last->bw, c.classes, model_settings_of(c.o), found, c.node_of, rail_of,
                                         c.nics, c.uplinks);
      plan = std::move(job.pairs);
      if (c.o.false_alarm_pct > 0) model = std::move(job.model);
      before = last->bw->tx_bw;
      seconds = round_seconds(c.o, plan, *before, size);
    }
  }
  const retest_of first{retested, &plan, before ? &*before : nullptr, seconds, model ? &*model : nullptr};
  bool ran = false;
  bool clean = run_alone(c, eng, size, index, stopped, plan, first, ran);
  // the model's second stage: the parts the first left undecided, their pairs and the controls
  // again (every rank takes this branch alike: --false-alarm is the same everywhere)
  if (!ran || !(c.o.false_alarm_pct > 0) || stopped) return clean;
  std::optional<io::run_record> earlier;
  stats::retest_plan again;
  if (c.me == 0 && model) {
    earlier = c.book.last();
    if (earlier && earlier->retest_of == retested && !earlier->interrupted) {
      const std::set<std::pair<std::uint32_t, std::uint32_t>> controls(model->controls.begin(), model->controls.end());
      for (const auto& p : stats::followup_pairs(*model, earlier->retest_parts, model_settings_of(c.o)))
        (controls.contains(p) ? again.controls : again.slow).push_back(p);
    }
  }
  const retest_of second{
      retested, &again, before ? &*before : nullptr, seconds, model ? &*model : nullptr, earlier ? &*earlier : nullptr};
  return run_alone(c, eng, size, index, stopped, again, second, ran) && clean;
}

}  // namespace rdmamesh::app
