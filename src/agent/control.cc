#include "agent/control.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <limits>
#include <nlohmann/json.hpp>

#include "agent/file_util.h"

namespace berth::agent {

namespace {

using Json = nlohmann::json;

Json ToJson(const ControlRequest& r) {
  Json j = {{"seq", r.seq}};
  if (r.action == ControlRequest::Action::kCancel) {
    j["action"] = "cancel";
  } else if (r.action == ControlRequest::Action::kTimeLimit) {
    j["action"] = "time_limit";
    j["time_limit"] = r.time_limit;
  } else {
    j["action"] = "signal";
    j["signal"] = r.signal;
    j["batch_only"] = r.batch_only;
    if (r.full) j["full"] = true;
    if (r.step >= 0) j["step"] = r.step;
  }
  return j;
}

Result<ControlRequest> FromJson(const Json& j) {
  ControlRequest r;
  if (!j.is_object() || !j.contains("seq") || !j["seq"].is_number_integer() ||
      !j.contains("action") || !j["action"].is_string()) {
    return Status::InvalidArgument("control request needs integer 'seq' and string 'action'");
  }
  r.seq = j["seq"].get<int64_t>();
  std::string action = j["action"].get<std::string>();
  if (action == "cancel") {
    r.action = ControlRequest::Action::kCancel;
  } else if (action == "signal") {
    r.action = ControlRequest::Action::kSignal;
    if (!j.contains("signal") || !j["signal"].is_number_integer()) {
      return Status::InvalidArgument("signal request needs integer 'signal'");
    }
    r.signal = j["signal"].get<int32_t>();
    if (j.contains("batch_only")) {
      if (!j["batch_only"].is_boolean()) {
        return Status::InvalidArgument("'batch_only' must be a boolean");
      }
      r.batch_only = j["batch_only"].get<bool>();
    }
    if (j.contains("full")) {
      if (!j["full"].is_boolean()) return Status::InvalidArgument("'full' must be a boolean");
      r.full = j["full"].get<bool>();
    }
    if (j.contains("step")) {
      if (!j["step"].is_number_integer() || j["step"].get<int64_t>() < 0 ||
          j["step"].get<int64_t>() > std::numeric_limits<int32_t>::max()) {
        return Status::InvalidArgument("'step' must be a step number");
      }
      r.step = j["step"].get<int32_t>();
    }
  } else if (action == "time_limit") {
    r.action = ControlRequest::Action::kTimeLimit;
    if (!j.contains("time_limit") || !j["time_limit"].is_number_integer() ||
        j["time_limit"].get<int64_t>() <= 0) {
      return Status::InvalidArgument("time_limit request needs a positive integer 'time_limit'");
    }
    r.time_limit = j["time_limit"].get<int64_t>();
  } else {
    return Status::InvalidArgument("unknown control action '" + action + "'");
  }
  return r;
}

}  // namespace

Result<std::vector<ControlRequest>> ReadControlRequests(const std::string& dir) {
  Result<std::string> text = ReadFile(dir + "/control");
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return std::vector<ControlRequest>{};
    return text.status();
  }
  Json j = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("requests") || !j["requests"].is_array()) {
    return Status::InvalidArgument(dir + "/control: not {\"requests\": [...]}");
  }
  std::vector<ControlRequest> out;
  for (const Json& e : j["requests"]) {
    BERTH_ASSIGN_OR_RETURN(ControlRequest r, FromJson(e));
    out.push_back(r);
  }
  return out;
}

Status AppendControlRequest(const std::string& dir, ControlRequest request) {
  std::string lock_path = dir + "/control.lock";
  int lock = open(lock_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock < 0) return ErrnoStatus("open " + lock_path, errno);
  while (flock(lock, LOCK_EX) != 0) {
    if (errno != EINTR) {
      int err = errno;
      close(lock);
      return ErrnoStatus("flock " + lock_path, err);
    }
  }
  Status s;
  Result<std::vector<ControlRequest>> existing = ReadControlRequests(dir);
  if (!existing.ok()) {
    s = existing.status();
  } else {
    Json list = Json::array();
    int64_t last = 0;
    for (const ControlRequest& r : *existing) {
      list.push_back(ToJson(r));
      last = std::max(last, r.seq);
    }
    request.seq = last + 1;
    list.push_back(ToJson(request));
    s = WriteFileAtomic(dir + "/control", Json{{"requests", list}}.dump() + "\n", 0600);
  }
  close(lock);  // releases the flock
  return s;
}

}  // namespace berth::agent
