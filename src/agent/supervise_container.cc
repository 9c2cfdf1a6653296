// A job attempt in a container (docs/containers.md): the image from the node's store, an overlay
// root in the job's folder, config.json, `runc create` inside the job's cgroups, `runc start`,
// and at the end `runc delete` and the unmount. See supervise_internal.h.
#include <fcntl.h>
#include <grp.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "agent/container.h"
#include "agent/file_util.h"
#include "agent/supervise_internal.h"
#include "image/reference.h"

namespace berth::agent {

namespace {

constexpr const char* kScriptInContainer = "/.berth/script";

// Runs a command as root with stdio on /dev/null (stderr into `err_path` when given), waits at
// most `timeout_s`; the exit status, or -1 when it could not run or was killed for the timeout.
int RunQuiet(const std::vector<std::string>& argv, const std::string& err_path, int timeout_s) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    int err = err_path.empty() ? null : open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(err < 0 ? null : err, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  while (true) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The last line of runc's error output, without its "time=... level=error msg=" decoration.
std::string RuncError(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return "";
  std::string t = *text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  std::string line = t.substr(t.rfind('\n') == std::string::npos ? 0 : t.rfind('\n') + 1);
  size_t msg = line.find("msg=");
  if (msg != std::string::npos) line = line.substr(msg + 4);
  if (line.size() >= 2 && line.front() == '"' && line.back() == '"') {
    line = line.substr(1, line.size() - 2);
  }
  return line.substr(0, 500);
}

// Whether the user may read `path` (and search its parents), checked with the user's fsuid and
// groups, so that a job cannot mount or import what its user could not open.
bool UserMayRead(const std::string& path, uid_t uid, gid_t gid, const std::vector<gid_t>& groups) {
  if (uid == 0) return true;
  if (setgroups(groups.size(), groups.data()) != 0) return false;
  setfsgid(gid);
  setfsuid(uid);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  bool ok = fd >= 0;
  if (fd >= 0) close(fd);
  setfsuid(0);
  setfsgid(0);
  (void)setgroups(0, nullptr);
  return ok;
}

// A file's content read with the user's rights ("" when it cannot be read).
std::string ReadAsUser(const std::string& path, uid_t uid, gid_t gid,
                       const std::vector<gid_t>& groups) {
  if (!UserMayRead(path, uid, gid, groups)) return "";
  Result<std::string> text = ReadFile(path);
  return text.ok() ? *text : "";
}

// `ldconfig -p`: the host's libraries, for the GPU driver's files.
std::string LdconfigOutput() {
  std::string out;
  FILE* f = popen("/sbin/ldconfig -p 2>/dev/null", "r");
  if (f == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  pclose(f);
  return out;
}

// The shared libraries a binary needs and its dynamic loader, from `ldd`: (path, is_loader).
std::vector<std::pair<std::string, bool>> LibrariesOf(const std::string& binary) {
  std::vector<std::pair<std::string, bool>> out;
  std::string cmd = "/usr/bin/ldd '" + binary + "' 2>/dev/null";
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return out;
  char line[4096];
  while (fgets(line, sizeof(line), f) != nullptr) {
    std::string l = line;
    // "\tlibssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3 (0x...)" or
    // "\t/lib64/ld-linux-x86-64.so.2 (0x...)"
    size_t arrow = l.find("=> ");
    size_t start = arrow != std::string::npos ? arrow + 3 : l.find('/');
    if (start == std::string::npos || start >= l.size() || l[start] != '/') continue;
    std::string path = l.substr(start, l.find(' ', start) - start);
    out.emplace_back(path, arrow == std::string::npos);
  }
  pclose(f);
  return out;
}

// kubelet's reason for a pull error.
std::string PullReason(const Status& s) {
  if (s.code() == StatusCode::kFailedPrecondition) return "ErrImageNeverPull";
  return "ErrImagePull";
}

bool IsUnder(const std::string& path, const std::string& dir) {
  if (dir.empty() || dir == "/") return false;
  return path == dir || (path.rfind(dir + "/", 0) == 0);
}

}  // namespace

Status Supervisor::PrepareImage() {
  Result<image::ContainerSpec> spec =
      image::DecodeContainerSpec(nlohmann::json::parse(spec_.container, nullptr, false));
  if (!spec.ok()) {
    image_error_ = "CreateContainerError";
    return spec.status();
  }
  container_ = *spec;
  // The agent's settings: STATE/containers.json, beside STATE/jobs/<this folder>.
  std::filesystem::path state = std::filesystem::path(dir_).parent_path().parent_path();
  if (Result<ContainerSettings> c = ReadContainerSettings(state.string()); c.ok()) {
    containers_ = *c;
  }
  if (containers_.runc.empty()) {
    image_error_ = "CreateContainerError";
    return Status::FailedPrecondition(
        "this node runs no containers (runc not found, or containers are off in the agent's "
        "configuration): the job asks for image " +
        container_->image);
  }
  if (container_->remap_root) {
    image_error_ = "CreateContainerError";
    return Status::InvalidArgument("--container-remap-root is not supported by berth yet");
  }
  if (container_->run_as_root && user_.uid != 0) {
    // The controller allows run_as_root only to operators; the job's user is then root.
    notes_.push_back("runs as root in the container");
  }
  // --container-name: a later step of the job on this node reuses the container an earlier part
  // of the job made, writes included (as pyxis does; its --container-image is then ignored).
  if (!container_->name.empty()) {
    named_dir_ = NamedContainerDir(state.string(), spec_.job_id, spec_.attempt, container_->name);
    Result<NamedContainerLock> lock = NamedContainerLock::Take(named_dir_);
    if (!lock.ok()) {
      image_error_ = "CreateContainerError";
      return lock.status();
    }
    named_lock_.emplace(std::move(*lock));
    Result<std::string> image = ReadFile(named_dir_ + "/image");
    if (image.ok() && !image->empty()) {
      if (!container_->image.empty() && container_->image != *image) {
        notes_.push_back("the job's container '" + container_->name + "' exists: it runs " +
                         *image + ", not " + container_->image);
      }
      container_->image = *image;
      named_exists_ = true;
    } else if (container_->image.empty()) {
      image_error_ = "CreateContainerError";
      return Status::NotFound("no container named '" + container_->name + "' in job " +
                              std::to_string(spec_.job_id) + " on this node" +
                              " (give --container-image with --container-name first)");
    }
  }
  image::StoreOptions so;
  so.skopeo = containers_.skopeo;
  so.ca_dir = containers_.registry_ca_dir;
  so.insecure = containers_.insecure_registries;
  BERTH_ASSIGN_OR_RETURN(store_, image::Store::Open(containers_.image_store, so));
  if (image::IsLocalImagePath(container_->image)) {
    if (!UserMayRead(container_->image, user_.uid, user_.gid, groups_)) {
      image_error_ = "ErrImagePull";
      return Status::PermissionDenied("cannot read the image " + container_->image + " as " +
                                      user_.name);
    }
    Result<std::vector<image::ImageRecord>> imported = store_->Import(container_->image);
    if (!imported.ok() || imported->empty()) {
      image_error_ = "ErrImagePull";
      return imported.ok() ? Status::InvalidArgument("no image in " + container_->image)
                           : imported.status();
    }
    image_ = imported->front();
  } else {
    Result<image::Reference> ref = image::ParseReference(container_->image);
    if (!ref.ok()) {
      image_error_ = "InvalidImageName";
      return ref.status();
    }
    image::Credentials creds;
    creds.uid = user_.uid;
    std::string auth = container_->auth_config;
    if (auth.empty()) {
      for (const char* rel : {"/.config/containers/auth.json", "/.docker/config.json"}) {
        if (user_.home.empty()) break;
        auth = ReadAsUser(user_.home + rel, user_.uid, user_.gid, groups_);
        if (!auth.empty()) break;
      }
    }
    if (!auth.empty()) {
      creds.auth_file = dir_ + "/auth.json";
      BERTH_RETURN_IF_ERROR(WriteFileAtomic(creds.auth_file, auth, 0600));
    } else {
      creds.uid = -1;
    }
    image::PullReport report;
    auto t0 = std::chrono::steady_clock::now();
    // The agent reports this to the controller (a Pod shows ContainerCreating meanwhile).
    (void)WriteFileAtomic(
        dir_ + "/container.json",
        nlohmann::json{{"phase", "pulling"}, {"image", container_->image}}.dump() + "\n");
    Result<image::ImageRecord> rec =
        store_->Ensure(*ref, EffectivePullPolicy(*container_, *ref), creds, &report);
    if (rec.ok() && !image::Store::MayUse(*rec, user_.uid)) {
      if (Status a = store_->CheckAccess(*ref, *rec, creds); !a.ok()) rec = a;
    }
    if (!creds.auth_file.empty()) unlink(creds.auth_file.c_str());
    if (!rec.ok()) {
      image_error_ = PullReason(rec.status());
      return Status(rec.status().code(),
                    "pulling " + container_->image + ": " + rec.status().message());
    }
    image_ = *rec;
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    image_pulled_ = report.pulled;
    pull_seconds_ = seconds;
    if (report.pulled) {
      char text[64];
      std::snprintf(text, sizeof(text), "%.3f", seconds);
      pull_note_ = "pulled " + container_->image + " in " + text + " s";
    }
  }
  // As kubelet shows it (status.containerStatuses[].imageID): "repository@sha256:...".
  std::string name = image_.names.empty() ? container_->image : image_.names.front();
  size_t cut = name.find('@');
  if (cut == std::string::npos) {
    size_t colon = name.rfind(':');
    cut = colon != std::string::npos && colon > name.rfind('/') ? colon : name.size();
  }
  image_digest_ = name.substr(0, cut) + "@" + image_.digest;
  std::string holder = std::filesystem::path(dir_).filename().string() + "-" +
                       std::to_string(std::hash<std::string>{}(dir_) % 1000000007);
  BERTH_RETURN_IF_ERROR(store_->Hold(image_, holder));
  image_holder_ = holder;
  if (!named_dir_.empty() && !named_exists_) {
    // The named container's own hold lasts until the agent removes it (after the job).
    BERTH_RETURN_IF_ERROR(store_->Hold(
        image_, NamedContainerHolder(spec_.job_id, spec_.attempt, container_->name), true));
    if (mkdir(named_dir_.c_str(), 0711) != 0 && errno != EEXIST) {
      return ErrnoStatus("mkdir " + named_dir_, errno);
    }
    BERTH_RETURN_IF_ERROR(WriteFileAtomic(named_dir_ + "/digest", image_.digest, 0600));
  }
  return Status::Ok();
}

Status Supervisor::MountRoot() {
  std::string ctr = dir_ + "/ctr";
  if (mkdir(ctr.c_str(), 0711) != 0 && errno != EEXIST) return ErrnoStatus("mkdir " + ctr, errno);
  // A named container's overlay is in its own folder and stays mounted between the job's steps.
  const std::string base = named_dir_.empty() ? ctr : named_dir_;
  rootfs_ = base + "/rootfs";
  if (!named_dir_.empty() && IsMountPoint(rootfs_)) {
    named_lock_.reset();
    return Status::Ok();
  }
  for (const std::string& d :
       std::vector<std::string>{base + "/upper", base + "/work", base + "/rootfs"}) {
    if (mkdir(d.c_str(), 0711) != 0 && errno != EEXIST) return ErrnoStatus("mkdir " + d, errno);
  }
  std::vector<std::string> dirs = store_->LayerDirs(image_);
  if (dirs.empty())
    return Status::InvalidArgument("the image " + container_->image + " has no layers");
  // Mount from the layers' folder with relative names: the option stays under a page.
  std::string layers_dir = std::filesystem::path(dirs.front()).parent_path().string();
  std::vector<std::string> names;
  for (const std::string& d : dirs) {
    if (std::filesystem::path(d).parent_path().string() != layers_dir) {
      return Status::Internal("image layers in several folders");
    }
    names.push_back(std::filesystem::path(d).filename().string());
  }
  std::string options = OverlayOptions(names, base + "/upper", base + "/work");
  int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (chdir(layers_dir.c_str()) != 0) {
    if (cwd >= 0) close(cwd);
    return ErrnoStatus("chdir " + layers_dir, errno);
  }
  int rc = mount("overlay", rootfs_.c_str(), "overlay", 0, options.c_str());
  int err = errno;
  if (cwd >= 0) {
    (void)fchdir(cwd);
    close(cwd);
  }
  if (rc != 0) return ErrnoStatus("mounting the image's overlay", err);
  if (named_dir_.empty()) {
    rootfs_mounted_ = true;
  } else {
    // Made whole: later steps find it by its image file.
    BERTH_RETURN_IF_ERROR(WriteFileAtomic(named_dir_ + "/image", container_->image, 0600));
    named_lock_.reset();
  }
  return Status::Ok();
}

Result<JobExec> Supervisor::BuildContainerExec(const JobExec& job) {
  BERTH_RETURN_IF_ERROR(PrepareImage());
  if (Status s = MountRoot(); !s.ok()) {
    image_error_ = "CreateContainerError";
    return s;
  }
  const image::ContainerSpec& cs = *container_;
  ContainerPlan plan;
  plan.rootfs = rootfs_;
  plan.readonly_root = !cs.writable;
  // The job's own argv with the script's host path replaced by its path inside.
  std::vector<std::string> job_argv = job.argv;
  const std::string host_script = dir_ + "/script";
  for (std::string& a : job_argv) {
    if (a == host_script) a = kScriptInContainer;
  }
  if (!spec_.script.empty()) {
    plan.mounts.push_back({kScriptInContainer, "bind", host_script, {"rbind", "ro"}});
  }
  // A job step's part on this node runs `berth srun` (its tasks' launcher) in the container:
  // berth's own binary, its libraries and loader are bound read-only under /.berth and it runs
  // through that loader, so the image needs none of them (as pyxis's tasks run in the image).
  char self[4096] = {};
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0 && !job_argv.empty() && job_argv.front() == std::string(self, n)) {
    std::string loader;
    for (const auto& [lib, is_loader] : LibrariesOf(job_argv.front())) {
      std::string dest = "/.berth/lib/" + std::filesystem::path(lib).filename().string();
      plan.mounts.push_back({dest, "bind", lib, {"rbind", "ro"}});
      if (is_loader) loader = dest;
    }
    plan.mounts.push_back({"/.berth/bin/berth", "bind", job_argv.front(), {"rbind", "ro"}});
    job_argv.front() = "/.berth/bin/berth";
    if (!loader.empty()) {
      job_argv.insert(job_argv.begin(), {loader, "--library-path", "/.berth/lib"});
    }
  }
  BERTH_ASSIGN_OR_RETURN(plan.args, ContainerArgs(cs, image_.config, job_argv));
  std::vector<std::string> env = ContainerEnv(image_.config.env, job.env, cs);
  for (const std::string& name : cs.node_name_env) env.push_back(name + "=" + node_name_);
  plan.env = env;
  plan.hostname = spec_.hostname;  // a Pod's: its own UTS name, as kubelet gives it
  plan.terminal = spec_.tty;
  plan.uid = cs.run_as_root ? 0 : user_.uid;
  plan.gid = cs.run_as_root ? 0 : user_.gid;
  if (!cs.run_as_root) plan.groups = groups_;
  plan.root_capabilities = cs.run_as_root;
  // The container's cgroup inside the job's. On v2 an absolute path below the job's group (runc
  // would take a relative one from the parent of its own group, outside the job's limits). On v1
  // a relative one: runc nests it below its own group in each hierarchy, which is the job's
  // wherever berth made one (on a hybrid host the cgroup2 part is fixed after `runc create`).
  plan.cgroup_name = "berth-" + container_id_;
  if (cgroup_ && cgroup_->mode() == CgroupMode::kV2 && !cgroup2_root_.empty() &&
      cgroup_->procs_dir().rfind(cgroup2_root_, 0) == 0) {
    plan.cgroup_name = cgroup_->procs_dir().substr(cgroup2_root_.size()) + "/container";
  }
  plan.mounts.push_back({"/tmp", "tmpfs", "tmpfs", {"nosuid", "nodev", "mode=1777"}});
  std::vector<std::string> bound;  // destinations of host folders, for the working directory
  if (cs.mount_home && !user_.home.empty() && user_.home != "/" &&
      std::filesystem::is_directory(user_.home)) {
    plan.mounts.push_back({user_.home, "bind", user_.home, {"rbind", "rw", "nosuid", "nodev"}});
    bound.push_back(user_.home);
  }
  for (const char* f : {"/etc/hosts", "/etc/resolv.conf"}) {
    if (access(f, R_OK) == 0) plan.mounts.push_back({f, "bind", f, {"rbind", "ro"}});
  }
  for (size_t i = 0; i < cs.mounts.size(); ++i) {
    const image::Mount& m = cs.mounts[i];
    std::string ro = m.read_only ? "ro" : "rw";
    switch (m.kind) {
      case image::Mount::Kind::kBind:
        if (!UserMayRead(m.source, plan.uid, plan.gid, groups_)) {
          image_error_ = "CreateContainerError";
          return Status::PermissionDenied("cannot mount " + m.source + ": " + user_.name +
                                          " may not read it (or it does not exist)");
        }
        plan.mounts.push_back({m.destination, "bind", m.source, {"rbind", ro, "nosuid", "nodev"}});
        bound.push_back(m.destination);
        break;
      case image::Mount::Kind::kTmpfs: {
        std::vector<std::string> o = {"nosuid", "nodev", "mode=1777"};
        if (m.size_bytes > 0) o.push_back("size=" + std::to_string(m.size_bytes));
        plan.mounts.push_back({m.destination, "tmpfs", "tmpfs", o});
        break;
      }
      case image::Mount::Kind::kEmpty:
      case image::Mount::Kind::kFiles: {
        std::string vol = dir_ + "/ctr/vol" + std::to_string(i);
        if (mkdir(vol.c_str(), 0755) != 0 && errno != EEXIST)
          return ErrnoStatus("mkdir " + vol, errno);
        for (const auto& [rel, content] : m.files) {
          std::filesystem::path p = std::filesystem::path(vol) / rel;
          std::error_code ec;
          std::filesystem::create_directories(p.parent_path(), ec);
          BERTH_RETURN_IF_ERROR(WriteFileAtomic(p.string(), content, m.secret ? 0400 : 0444));
          if (chown(p.c_str(), plan.uid, plan.gid) != 0)
            return ErrnoStatus("chown " + p.string(), errno);
        }
        if (m.kind == image::Mount::Kind::kEmpty && chown(vol.c_str(), plan.uid, plan.gid) != 0) {
          return ErrnoStatus("chown " + vol, errno);
        }
        plan.mounts.push_back(
            {m.destination,
             "bind",
             vol,
             {"rbind", m.kind == image::Mount::Kind::kFiles ? "ro" : ro, "nosuid", "nodev"}});
        break;
      }
    }
  }
  plan.devices = NvidiaDevices(spec_.gpu_indices);
  if (!plan.devices.empty()) {
    for (const std::string& f : NvidiaHostFiles(LdconfigOutput())) {
      plan.mounts.push_back({f, "bind", f, {"rbind", "ro", "nosuid", "nodev"}});
    }
  }
  if (!cs.work_dir.empty()) {
    plan.cwd = cs.work_dir;
  } else {
    plan.cwd = image_.config.working_dir.empty() ? "/" : image_.config.working_dir;
    if (cs.entry == image::EntryMode::kJob) {
      for (const std::string& b : bound) {
        if (IsUnder(job.work_dir, b)) plan.cwd = job.work_dir;
      }
    }
  }
  BERTH_RETURN_IF_ERROR(WriteFileAtomic(dir_ + "/ctr/config.json", OciConfig(plan), 0600));

  JobExec e = job;
  e.exec_paths = {containers_.runc};
  e.argv = RuncCreateArgv(containers_.runc, containers_.runc_root, dir_ + "/ctr", container_id_,
                          spec_.tty ? ConsoleSocketPath() : "");
  e.env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"};
  e.files_as_user = e.switch_user;
  e.switch_user = false;
  e.work_dir = dir_ + "/ctr";
  return e;
}

void Supervisor::LaunchContainer(const JobExec& exec) {
  Result<JobStart> start = StartJobProcess(exec);
  if (!start.ok() || start->failure) {
    fail_state_ =
        start.ok() && start->failure->stage != JobStartStage::kCgroup ? "FAILED" : "NODE_FAIL";
    fail_message_ = start.ok() ? DescribeProblem(*start->failure, exec) : start.status().message();
    image_error_ = "CreateContainerError";
    return;
  }
  // `runc create` returns once the container's process waits to be started.
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  pid_t r = 0;
  while ((r = waitpid(start->pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (r == 0) {
    kill(start->pid, SIGKILL);
    waitpid(start->pid, &status, 0);
  }
  Result<std::string> pid_text = ReadFile(dir_ + "/ctr/init.pid");
  pid_t init = pid_text.ok() ? static_cast<pid_t>(std::atoi(pid_text->c_str())) : 0;
  if (r <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || init <= 0) {
    std::string why = RuncError(dir_ + "/ctr/runc.log");
    fail_state_ = "FAILED";
    fail_message_ = "the container did not start: " + (why.empty() ? "runc create failed" : why);
    image_error_ = "CreateContainerError";
    return;
  }
  container_created_ = true;
  if (console_listen_ >= 0) {
    if (Status c = ReceiveConsole(); !c.ok()) {
      fail_state_ = "FAILED";
      fail_message_ = "the container did not start: " + c.message();
      image_error_ = "CreateContainerError";
      kill(init, SIGKILL);
      return;
    }
  }
  // A hybrid host: runc placed the container's cgroup2 part outside the job's group, which serves
  // for the job's process list and cgroup.kill. The process has run nothing of the job yet
  // (it waits for `runc start`): move it back, its children follow.
  if (cgroup_ && cgroup_->mode() == CgroupMode::kV1 && !cgroup_->procs_dir().empty() &&
      cgroup_->procs_dir().rfind(cgroup2_root_, 0) == 0 && !cgroup2_root_.empty()) {
    if (Status m = WriteControlFile(cgroup_->procs_dir() + "/cgroup.procs", std::to_string(init));
        !m.ok()) {
      notes_.push_back("could not move the container into the job's cgroup2 group: " + m.message());
    }
  }
  int rc = RunQuiet({containers_.runc, "--root", containers_.runc_root, "start", container_id_},
                    dir_ + "/ctr/start.err", 60);
  if (rc != 0) {
    std::string why = RuncError(dir_ + "/ctr/start.err");
    fail_state_ = "FAILED";
    fail_message_ = "the container did not start: " + (why.empty() ? "runc start failed" : why);
    image_error_ = "CreateContainerError";
    kill(init, SIGKILL);
    return;
  }
  started_ = Clock::now();
  start_time_ = WallNow();
  job_pid_ = init;
  // For `kubectl exec` into the container (container_exec.h): how to reach it with runc.
  (void)WriteFileAtomic(
      dir_ + "/ctr/runc.json",
      nlohmann::json{
          {"runc", containers_.runc}, {"root", containers_.runc_root}, {"id", container_id_}}
              .dump() +
          "\n",
      0600);
  (void)WriteFileAtomic(dir_ + "/job.pid", std::to_string(job_pid_) + "\n");
  (void)WriteFileAtomic(dir_ + "/container.json", nlohmann::json{{"phase", "started"},
                                                                 {"image", container_->image},
                                                                 {"pulled", image_pulled_},
                                                                 {"seconds", pull_seconds_}}
                                                          .dump() +
                                                      "\n");
  Log(dir_, "container " + container_id_ + " started, pid " + std::to_string(job_pid_) +
                (pull_note_.empty() ? "" : " (" + pull_note_ + ")"));
  if (spec_.time_limit > 0) SetTimeLimit(spec_.time_limit);
  next_control_check_ = started_;
  next_gpu_sample_ = started_ + std::chrono::seconds(1);
}

void Supervisor::TearDownContainer() {
  if (!container_) return;
  named_lock_.reset();
  if (container_created_ || rootfs_mounted_) {
    (void)RunQuiet(
        {containers_.runc, "--root", containers_.runc_root, "delete", "--force", container_id_}, "",
        30);
  }
  if (rootfs_mounted_) {
    std::string rootfs = dir_ + "/ctr/rootfs";
    if (umount2(rootfs.c_str(), MNT_DETACH) != 0) {
      Log(dir_, "unmounting " + rootfs + ": " + ErrnoText(errno));
    }
    rootfs_mounted_ = false;
  }
  std::error_code ec;
  for (const char* sub : {"/ctr/upper", "/ctr/work"}) std::filesystem::remove_all(dir_ + sub, ec);
  for (const auto& entry : std::filesystem::directory_iterator(dir_ + "/ctr", ec)) {
    if (entry.path().filename().string().rfind("vol", 0) == 0) {
      std::filesystem::remove_all(entry.path(), ec);
    }
  }
  if (store_ && !image_holder_.empty()) store_->Release(image_, image_holder_);
  // ImageCacheSize: the node's cache back under its limit, least recently used images first
  // (images other jobs hold stay).
  if (store_ && containers_.cache_bytes > 0) {
    if (Result<image::Store::PruneReport> p = store_->Prune(containers_.cache_bytes); !p.ok()) {
      Log(dir_, "pruning the image cache: " + p.status().message());
    } else if (!p->removed.empty()) {
      Log(dir_, "image cache: removed " + std::to_string(p->removed.size()) + " image(s), " +
                    std::to_string(p->freed_bytes / (1024 * 1024)) + " MiB");
    }
  }
}

}  // namespace berth::agent
