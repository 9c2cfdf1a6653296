// The state thread's transaction: what one batch of commands changes (durable writes, replies to
// send once they are durable, events to publish, job records to rebuild, launches to send), and
// marks that let a command that fails leave it exactly as it found it.
//
// Thread safety: none; a Txn belongs to the state thread that runs the batch (StateLoop).
// Used by every controller command (they take a Txn&) and by StateLoop, which takes a mark before
// each command and rolls back to it when the command fails (an error status or an exception).
#ifndef BERTH_CONTROLLER_TXN_H_
#define BERTH_CONTROLLER_TXN_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "controller/hubs.h"
#include "core/model/job.h"
#include "store/store.h"

namespace berth::controller {

struct JobRecord;  // job_record.h

// A set of job ids that remembers its changes, so that a mark can undo those made after it.
class JobIdSet {
 public:
  using const_iterator = std::set<core::JobId>::const_iterator;

  // True when `id` was not in the set.
  bool insert(core::JobId id);
  // True when `id` was in the set.
  bool erase(core::JobId id);
  // Empties the set and forgets its history (marks taken before are no longer valid).
  void clear();
  bool contains(core::JobId id) const { return ids_.count(id) != 0; }
  bool empty() const { return ids_.empty(); }
  size_t size() const { return ids_.size(); }
  const_iterator begin() const { return ids_.begin(); }
  const_iterator end() const { return ids_.end(); }

  // The length of the history: a mark.
  size_t journal_size() const { return journal_.size(); }
  // Undoes the changes made since the history was `mark` long.
  void RollBackTo(size_t mark);

 private:
  std::set<core::JobId> ids_;
  std::vector<std::pair<core::JobId, bool>> journal_;  // (id, inserted) for each real change
};

// Where a transaction stood: StateLoop takes one before each command.
struct TxnMark {
  size_t writes = 0;
  size_t replies = 0;
  size_t events = 0;
  size_t touched = 0;  // JobIdSet::journal_size()
  size_t launches = 0;
  size_t record_texts = 0;
  bool nodes_changed = false;
  bool reschedule = false;
};

// A job record whose stored text (writes[write].job.record) is written when the transaction
// commits, many at once on several threads (a batch of submissions, a cancel of thousands); its
// watch event (events[event]) is then set to make its text when a watcher first reads it. The
// record is not changed after it is handed over.
struct RecordText {
  size_t write = 0;
  size_t event = 0;
  std::shared_ptr<const JobRecord> record;
};

// Changes one batch of commands makes: durable writes, replies to send once they are durable,
// and events to publish.
struct Txn {
  std::vector<store::Write> writes;
  // Called with OK once the writes are durable, or with the commit's error (the reply is then
  // that error: nothing was acknowledged).
  std::vector<std::function<void(const Status& commit)>> replies;
  std::vector<WatchEvent> events;
  JobIdSet touched;  // job records to rebuild
  // Jobs whose start this transaction writes: their agents hear of them only once it is
  // committed, so that a controller crash never leaves a job running that the store has pending.
  std::vector<core::JobId> launches;
  // Texts of writes and events still to be written (Controller's Commit writes them).
  std::vector<RecordText> record_texts;
  bool nodes_changed = false;
  bool reschedule = false;
  // When set, the commands of the batch are not run: each Call is answered with this (the
  // controller sets it once a commit failed, Controller::StoreFailure).
  Status refuse;

  TxnMark Mark() const;
  // Leaves the transaction as it was when `mark` was taken.
  // REQUIRES: `mark` was taken from this transaction, and touched was not cleared since.
  void RollBackTo(const TxnMark& mark);
};

using Command = std::function<void(Txn&)>;

// What a command answers: an error, or a JSON body.
struct Reply {
  Status status;
  nlohmann::json body;
  // When not empty, the answer's body instead of `body`: JSON text written without a tree (an
  // answer with a line for each of 10,000 jobs).
  std::string text;
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_TXN_H_
