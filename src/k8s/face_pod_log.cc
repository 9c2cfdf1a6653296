// pods/log (docs/kubernetes.md): a Pod's output is its job's output file, read where the
// controller can see it (the state folder's pod-logs, or a shared file system); ?follow streams
// it until the job ends, ?tailLines and ?limitBytes cut it.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>

#include "k8s/face.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace http;

// Appends what is in `path` from *offset (at most about 64 MiB) to `out`; false when it cannot
// be opened.
bool ReadFrom(const std::string& path, off_t* offset, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[65536];
  while (true) {
    ssize_t n = ::pread(fd, buf, sizeof(buf), *offset);
    if (n <= 0) break;
    out->append(buf, static_cast<size_t>(n));
    *offset += n;
    if (out->size() > (64u << 20)) break;
  }
  ::close(fd);
  return true;
}

// Keeps the last `tail` lines of `text` (all of it when tail < 0).
void KeepTail(int64_t tail, std::string* text) {
  std::string& first = *text;
  if (tail < 0) return;
  size_t pos = first.size();
  int64_t lines = 0;
  if (pos > 0 && first[pos - 1] == '\n') --pos;
  while (pos > 0) {
    if (first[pos - 1] == '\n' && ++lines == tail) break;
    --pos;
  }
  if (tail == 0) pos = first.size();
  first.erase(0, pos);
}

// A follow stream of `path` from `offset` (`first` already read), until the job ends.
std::function<void(net::ResponseStream&)> FollowLog(ControllerPort& port, uint32_t id,
                                                    std::string path, off_t offset,
                                                    std::string first, int64_t limit) {
  return [&port, id, path, offset, first, limit](net::ResponseStream& out) mutable {
    int64_t sent = static_cast<int64_t>(first.size());
    if (!first.empty() && !out.Write(first)) return;
    uint64_t next = port.WatchNext();
    while (!out.Closed()) {
      std::optional<PodJob> now = port.FindPodJob(id);
      const bool done = !now || now->ended;
      std::string more;
      ReadFrom(path, &offset, &more);
      if (limit >= 0 && sent + static_cast<int64_t>(more.size()) > limit) {
        more.resize(static_cast<size_t>(limit - sent));
      }
      if (!more.empty()) {
        sent += static_cast<int64_t>(more.size());
        if (!out.Write(more)) return;
      }
      if (done || (limit >= 0 && sent >= limit)) return;
      next = port.WatchWait(next, 250);
    }
  };
}

}  // namespace

net::HttpResponse Face::PodLog(const Call& c) {
  const net::HttpRequest& req = c.req;
  const User& who = c.who;
  const std::string& name = c.Name();
  Objects objects = PodObjects(c.Namespace(), name);
  if (objects.empty()) return StatusResponse(NotFoundStatus("pods", name));
  const json pod = objects.begin()->second;
  const uint32_t id = PodJobId(pod);
  std::optional<PodJob> job = port_.FindPodJob(id);
  if (!job) return StatusResponse(NotFoundStatus("pods", name));
  if (!Owns(who, job->uid)) {
    return StatusResponse(
        ForbiddenStatus("pods/log", name,
                        "User \"" + who.name +
                            "\" cannot get resource \"pods/log\": the output of another "
                            "user's job"));
  }
  const std::string container = ContainerName(pod);
  if (std::string q = Query(req, "container"); !q.empty() && q != container) {
    return StatusResponse(
        StatusBody(400, "BadRequest", "container " + q + " is not valid for pod " + name, nullptr));
  }
  if (!job->started) {
    return StatusResponse(StatusBody(400, "BadRequest",
                                     "container \"" + container + "\" in pod \"" + name +
                                         "\" is waiting to start: ContainerCreating",
                                     nullptr));
  }
  const std::string path = port_.OutputFile(id);
  const bool follow = ParseBool(Query(req, "follow")).value_or(false);
  int64_t tail = -1;
  if (std::string t = Query(req, "tailLines"); !t.empty()) tail = std::atoll(t.c_str());
  int64_t limit = -1;
  if (std::string l = Query(req, "limitBytes"); !l.empty()) limit = std::atoll(l.c_str());
  // What is there now, after tailLines and limitBytes.
  off_t offset = 0;
  std::string first;
  ReadFrom(path, &offset, &first);
  KeepTail(tail, &first);
  if (limit >= 0 && static_cast<int64_t>(first.size()) > limit) first.resize(limit);
  net::HttpResponse r;
  r.content_type = "text/plain";
  if (!follow) {
    r.body = std::move(first);
    return r;
  }
  r.stream = FollowLog(port_, id, path, offset, std::move(first), limit);
  return r;
}

}  // namespace berth::k8s
