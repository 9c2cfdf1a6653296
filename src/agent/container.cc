#include "agent/container.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace berth::agent {
namespace {

using json = nlohmann::json;

std::string NameOf(const std::string& kv) {
  return kv.substr(0, kv.find('='));
}

void Set(std::map<std::string, std::string>* env, const std::string& kv) {
  size_t eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) return;
  (*env)[kv.substr(0, eq)] = kv.substr(eq + 1);
}

}  // namespace

Result<std::vector<std::string>> ContainerArgs(const image::ContainerSpec& spec,
                                               const image::ImageConfig& config,
                                               const std::vector<std::string>& job_argv) {
  std::vector<std::string> args;
  if (spec.entry == image::EntryMode::kJob) {
    args = job_argv;
  } else if (spec.command) {
    args = *spec.command;
    if (spec.args) args.insert(args.end(), spec.args->begin(), spec.args->end());
  } else {
    args = config.entrypoint;
    const std::vector<std::string>& rest = spec.args ? *spec.args : config.cmd;
    args.insert(args.end(), rest.begin(), rest.end());
  }
  if (args.empty()) {
    return Status::InvalidArgument("the image " + spec.image +
                                   " gives no ENTRYPOINT or CMD, and the job no command");
  }
  return args;
}

std::vector<std::string> ContainerEnv(const std::vector<std::string>& image_env,
                                      const std::vector<std::string>& job_env,
                                      const image::ContainerSpec& spec) {
  std::map<std::string, std::string> env;
  for (const std::string& kv : image_env) Set(&env, kv);
  if (!env.contains("PATH"))
    env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  for (const std::string& kv : job_env) {
    std::string name = NameOf(kv);
    if (name == "PATH" || name == "LD_LIBRARY_PATH") continue;
    Set(&env, kv);
  }
  for (const auto& [k, v] : spec.env) env[k] = v;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::string OciConfig(const ContainerPlan& p) {
  json caps = json::array();
  if (p.root_capabilities) {
    caps = {"CAP_CHOWN",   "CAP_DAC_OVERRIDE", "CAP_FSETID",           "CAP_FOWNER",
            "CAP_MKNOD",   "CAP_NET_RAW",      "CAP_SETGID",           "CAP_SETUID",
            "CAP_SETFCAP", "CAP_SETPCAP",      "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
            "CAP_KILL",    "CAP_AUDIT_WRITE"};
  }
  json user = {{"uid", p.uid}, {"gid", p.gid}};
  if (!p.groups.empty()) user["additionalGids"] = p.groups;
  json process = {
      {"terminal", p.terminal},
      {"user", user},
      {"args", p.args},
      {"env", p.env},
      {"cwd", p.cwd.empty() ? "/" : p.cwd},
      {"capabilities",
       {{"bounding", caps}, {"effective", caps}, {"permitted", caps}, {"inheritable", caps}}},
      {"noNewPrivileges", true},
  };
  if (p.terminal) process["consoleSize"] = {{"height", 24}, {"width", 80}};
  std::vector<std::string> shm = {"nosuid", "nodev", "mode=1777"};
  if (p.shm_bytes > 0) shm.push_back("size=" + std::to_string(p.shm_bytes));
  json mounts = json::array({
      {{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}},
      {{"destination", "/dev"},
       {"type", "tmpfs"},
       {"source", "tmpfs"},
       {"options", {"nosuid", "strictatime", "mode=755", "size=65536k"}}},
      {{"destination", "/dev/pts"},
       {"type", "devpts"},
       {"source", "devpts"},
       {"options", {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}}},
      {{"destination", "/dev/shm"}, {"type", "tmpfs"}, {"source", "shm"}, {"options", shm}},
      {{"destination", "/dev/mqueue"},
       {"type", "mqueue"},
       {"source", "mqueue"},
       {"options", {"nosuid", "noexec", "nodev"}}},
      {{"destination", "/sys"},
       {"type", "sysfs"},
       {"source", "sysfs"},
       {"options", {"nosuid", "noexec", "nodev", "ro"}}},
  });
  for (const OciMount& m : p.mounts) {
    json o = {{"destination", m.destination}, {"type", m.type}, {"source", m.source}};
    if (!m.options.empty()) o["options"] = m.options;
    mounts.push_back(std::move(o));
  }
  json devices = json::array();
  json allow = json::array({{{"allow", false}, {"access", "rwm"}}});
  // runc's default device list (null, zero, full, tty, random, urandom, ptmx, pts) is added by
  // runc itself; the GPUs are added here.
  for (const OciDevice& d : p.devices) {
    devices.push_back({{"path", d.path},
                       {"type", "c"},
                       {"major", d.major},
                       {"minor", d.minor},
                       {"fileMode", 0666},
                       {"uid", 0},
                       {"gid", 0}});
    allow.push_back({{"allow", true},
                     {"type", "c"},
                     {"major", d.major},
                     {"minor", d.minor},
                     {"access", "rwm"}});
  }
  json linux_ = {
      {"namespaces", json::array({{{"type", "mount"}}, {{"type", "ipc"}}})},
      {"cgroupsPath", p.cgroup_name},
      {"resources", {{"devices", allow}}},
      {"devices", devices},
      {"maskedPaths",
       {"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
        "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
        "/proc/scsi"}},
      {"readonlyPaths", {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}},
  };
  json config = {
      {"ociVersion", "1.0.2"},
      {"process", process},
      {"root", {{"path", p.rootfs}, {"readonly", p.readonly_root}}},
      {"mounts", mounts},
      {"linux", linux_},
  };
  if (!p.hostname.empty()) {
    config["hostname"] = p.hostname;
    config["linux"]["namespaces"].push_back({{"type", "uts"}});
  }
  return config.dump(2) + "\n";
}

std::vector<std::string> RuncCreateArgv(const std::string& runc, const std::string& runc_root,
                                        const std::string& bundle_dir, const std::string& id,
                                        const std::string& console_socket) {
  std::vector<std::string> argv = {
      runc,     "--root",   runc_root,  "--log",      bundle_dir + "/runc.log",
      "create", "--bundle", bundle_dir, "--pid-file", bundle_dir + "/init.pid"};
  if (!console_socket.empty()) argv.insert(argv.end(), {"--console-socket", console_socket});
  argv.push_back(id);
  return argv;
}

std::vector<OciDevice> NvidiaDevices(const std::vector<int32_t>& gpu_indices,
                                     const std::string& dev_dir) {
  std::vector<OciDevice> out;
  auto add = [&](const std::string& name) {
    std::string path = dev_dir + "/" + name;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return false;
    out.push_back({"/dev/" + name, static_cast<int64_t>(major(st.st_rdev)),
                   static_cast<int64_t>(minor(st.st_rdev))});
    return true;
  };
  bool any = false;
  for (int32_t i : gpu_indices) any = add("nvidia" + std::to_string(i)) || any;
  if (!any) return {};
  for (const char* name : {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"}) {
    add(name);
  }
  return out;
}

std::vector<std::string> NvidiaHostFiles(const std::string& ldconfig_output) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < ldconfig_output.size()) {
    size_t end = ldconfig_output.find('\n', start);
    if (end == std::string::npos) end = ldconfig_output.size();
    std::string line = ldconfig_output.substr(start, end - start);
    start = end + 1;
    // "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1"
    size_t arrow = line.find(" => ");
    if (arrow == std::string::npos || line.find("x86-64") == std::string::npos) continue;
    std::string path = line.substr(arrow + 4);
    std::string base = path.substr(path.rfind('/') + 1);
    bool wanted = base.rfind("libcuda.so", 0) == 0 || base.rfind("libnvidia-", 0) == 0 ||
                  base.rfind("libcudadebugger.so", 0) == 0 || base.rfind("libnvcuvid.so", 0) == 0;
    if (wanted && std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  }
  if (out.empty()) return out;
  for (const char* bin : {"/usr/bin/nvidia-smi", "/usr/bin/nvidia-debugdump"}) {
    struct stat st {};
    if (stat(bin, &st) == 0) out.push_back(bin);
  }
  return out;
}

image::PullPolicy EffectivePullPolicy(const image::ContainerSpec& spec,
                                      const image::Reference& ref) {
  if (spec.pull_policy != image::PullPolicy::kDefault) return spec.pull_policy;
  if (ref.digest.empty() && (ref.tag.empty() || ref.tag == "latest")) {
    return image::PullPolicy::kAlways;
  }
  return image::PullPolicy::kIfNotPresent;
}

std::string OverlayOptions(const std::vector<std::string>& layer_names_bottom_first,
                           const std::string& upper, const std::string& work) {
  std::string lower;
  for (auto it = layer_names_bottom_first.rbegin(); it != layer_names_bottom_first.rend(); ++it) {
    if (!lower.empty()) lower += ':';
    lower += *it;
  }
  return "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work;
}

}  // namespace berth::agent
