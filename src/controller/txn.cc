#include "controller/txn.h"

namespace berth::controller {

bool JobIdSet::insert(core::JobId id) {
  if (!ids_.insert(id).second) return false;
  journal_.emplace_back(id, true);
  return true;
}

bool JobIdSet::erase(core::JobId id) {
  if (ids_.erase(id) == 0) return false;
  journal_.emplace_back(id, false);
  return true;
}

void JobIdSet::clear() {
  ids_.clear();
  journal_.clear();
}

void JobIdSet::RollBackTo(size_t mark) {
  while (journal_.size() > mark) {
    auto [id, inserted] = journal_.back();
    journal_.pop_back();
    if (inserted) {
      ids_.erase(id);
    } else {
      ids_.insert(id);
    }
  }
}

TxnMark Txn::Mark() const {
  return {writes.size(),   replies.size(),      events.size(), touched.journal_size(),
          launches.size(), record_texts.size(), nodes_changed, reschedule};
}

void Txn::RollBackTo(const TxnMark& mark) {
  writes.resize(mark.writes);
  replies.resize(mark.replies);
  events.resize(mark.events);
  touched.RollBackTo(mark.touched);
  launches.resize(mark.launches);
  record_texts.resize(mark.record_texts);
  nodes_changed = mark.nodes_changed;
  reschedule = mark.reschedule;
}

}  // namespace berth::controller
