#include "controller/state_loop.h"

#include <exception>
#include <future>
#include <memory>
#include <string>
#include <utility>

namespace berth::controller {

void RunAllOrNothing(const ReplyCommand& c, Txn& t, Reply* out) {
  const TxnMark mark = t.Mark();
  try {
    c(t, out);
  } catch (const std::exception& e) {
    // A request whose JSON had a value of the wrong type: an error for the caller, never the
    // state thread's end.
    out->status = Status::InvalidArgument(std::string("bad request: ") + e.what());
  }
  if (!out->status.ok()) t.RollBackTo(mark);
}

StateLoop::~StateLoop() {
  Stop();
}

void StateLoop::Start(Hooks hooks) {
  hooks_ = std::move(hooks);
  thread_ = std::thread([this] { Run(); });
}

void StateLoop::Run() {
  ThreadRole::Scope state_thread(role_);
  while (true) {
    std::deque<Command> batch;
    {
      std::unique_lock<std::mutex> l(mu_.native());
      // The analysis cannot follow a lock taken through native(): say it is held.
      auto queued = [&]() NO_THREAD_SAFETY_ANALYSIS { return stopping_ || !commands_.empty(); };
      if (!queued()) cv_.wait_until(l, hooks_.next_wake(), queued);
      auto take = [&]() NO_THREAD_SAFETY_ANALYSIS {
        batch.swap(commands_);
        return stopping_;
      };
      if (take() && batch.empty()) return;
    }
    hooks_.run_batch(std::move(batch));
  }
}

bool StateLoop::Post(Command c) {
  {
    MutexLock<Mutex> l(mu_);
    if (stopping_) return false;
    commands_.push_back(std::move(c));
  }
  cv_.notify_all();
  return true;
}

Reply StateLoop::Call(ReplyCommand c) {
  auto promise = std::make_shared<std::promise<Reply>>();
  auto out = std::make_shared<Reply>();
  std::future<Reply> done = promise->get_future();
  bool posted = Post([promise, out, c = std::move(c)](Txn& t) {
    if (t.refuse.ok()) {
      RunAllOrNothing(c, t, out.get());
    } else {
      out->status = t.refuse;
    }
    t.replies.push_back([promise, out](const Status& commit) {
      if (!commit.ok()) *out = Reply{commit, {}, {}};
      promise->set_value(std::move(*out));
    });
  });
  if (!posted) return Reply{Status::Unavailable("the controller is stopping"), {}, {}};
  return done.get();
}

void StateLoop::Stop() {
  {
    MutexLock<Mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace berth::controller
