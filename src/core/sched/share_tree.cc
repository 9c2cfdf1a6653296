#include "core/sched/share_tree.h"

#include <algorithm>

namespace berth::core {
namespace {

struct Walk {
  const ClusterState& cs;
  const FairshareTable& t;
  FairshareAlgorithm algorithm;
  double total_usage = 0;
  std::vector<ShareRow> rows;

  void Fill(ShareRow& r, const ShareLevel& level, double usage) {
    r.norm_shares = level.norm_shares;
    r.effective_usage = level.effective_usage;
    r.level_fs = level.level_fs;
    r.raw_usage = usage;
    r.norm_usage = total_usage > 0 ? usage / total_usage : 0;
  }

  void Account(int32_t id, int32_t depth) {
    const AccountInfo& a = cs.accounts()[id];
    ShareRow r;
    r.id = static_cast<int32_t>(rows.size()) + 1;
    r.depth = depth;
    r.account = a.spec.name;
    if (a.parent >= 0) {
      r.parent = cs.accounts()[a.parent].spec.name;
      r.raw_shares = a.spec.shares;
      Fill(r, t.account_level[id], t.account_usage[id]);
    } else {
      // The root: Slurm's root association has no shares, and its usage is the whole.
      r.raw_usage = t.account_usage[id];
      r.norm_usage = 1.0;
      r.effective_usage = 1.0;
    }
    if (algorithm == FairshareAlgorithm::kClassic) {
      r.has_fairshare = true;
      r.fairshare = ClassicFairshareFactor(r.effective_usage, r.norm_shares);
    }
    rows.push_back(std::move(r));
    std::vector<int32_t> users = a.assocs;
    std::sort(users.begin(), users.end(), [&](int32_t x, int32_t y) {
      return cs.users()[cs.assocs()[x].user] < cs.users()[cs.assocs()[y].user];
    });
    for (int32_t as : users) {
      const AssocInfo& assoc = cs.assocs()[as];
      ShareRow u;
      u.id = static_cast<int32_t>(rows.size()) + 1;
      u.depth = depth + 1;
      u.account = a.spec.name;
      u.parent = a.spec.name;
      u.user = cs.users()[assoc.user];
      u.raw_shares = assoc.spec.shares;
      Fill(u, t.assoc_level[as], t.usage[as]);
      u.has_fairshare = true;
      u.fairshare = t.factor[as];
      rows.push_back(std::move(u));
    }
    std::vector<int32_t> kids = a.children;
    std::sort(kids.begin(), kids.end(), [&](int32_t x, int32_t y) {
      return cs.accounts()[x].spec.name < cs.accounts()[y].spec.name;
    });
    for (int32_t c : kids) Account(c, depth + 1);
  }
};

}  // namespace

std::vector<ShareRow> ShareTreeRows(const ClusterState& cs, const FairshareTable& t,
                                    FairshareAlgorithm algorithm) {
  Walk w{cs, t, algorithm, t.account_usage.empty() ? 0.0 : t.account_usage[0], {}};
  if (!cs.accounts().empty()) w.Account(0, 0);
  return std::move(w.rows);
}

}  // namespace berth::core
