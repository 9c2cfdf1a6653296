#include "k8s/pods.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "image/container_spec.h"
#include "k8s/codec.h"
#include "k8s/fields.h"
#include "k8s/manifest_meta.h"
#include "k8s/pod_container.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace fields;

bool IsLabelChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

// RFC 1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric, <= 63.
bool IsDnsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(), IsLabelChar);
}

// Kubernetes' $(VAR) references in command and args: defined variables expand, $$ is a literal
// $, anything else stays as written.
std::string Expand(const std::string& in, const std::map<std::string, std::string>& env) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '$' || i + 1 >= in.size()) {
      out += in[i];
      continue;
    }
    if (in[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    if (in[i + 1] == '(') {
      size_t close = in.find(')', i + 2);
      if (close != std::string::npos) {
        auto it = env.find(in.substr(i + 2, close - i - 2));
        if (it != env.end()) {
          out += it->second;
          i = close;
          continue;
        }
      }
    }
    out += in[i];
  }
  return out;
}

std::string FormatCores(double cores) {
  if (cores == std::floor(cores)) return std::to_string(static_cast<int64_t>(cores));
  return std::to_string(static_cast<int64_t>(std::llround(cores * 1000))) + "m";
}

// The resources of the one container: requests default to limits, as in Kubernetes.
struct Resources {
  double cpu_request = 0, cpu_limit = 0;  // cores; 0 = none
  double mem_request = 0, mem_limit = 0;  // bytes
  int64_t gpus = 0;
  int64_t gpu_shared = 0;   // nvidia.com/gpu.shared units (time-slicing replicas)
  int64_t gpu_milli = 0;    // berth.io/gpu-milli: thousandths of one device
  std::string mig_profile;  // nvidia.com/mig-PROFILE: MIG instances of that profile...
  int64_t mig = 0;          // ...this many
};

// The GPU resources berth places besides cpu and memory. All are Kubernetes extended resources:
// whole numbers, a limit required and equal to the request.
constexpr int64_t kMilliPerDevice = 1000;  // core::kGpuMilliPerDevice
constexpr std::string_view kGpuShared = "nvidia.com/gpu.shared";
constexpr std::string_view kGpuMilli = "berth.io/gpu-milli";
constexpr std::string_view kMigPrefix = "nvidia.com/mig-";

bool IsGpuResource(const std::string& key) {
  return key == "nvidia.com/gpu" || key == kGpuShared || key == kGpuMilli ||
         (key.starts_with(kMigPrefix) && key.size() > kMigPrefix.size());
}

std::optional<FieldProblem> ReadResources(const json& c, const std::string& field, Resources* r) {
  const json& res = At(c, {"resources"});
  if (res.is_null()) return std::nullopt;
  if (!res.is_object()) return Invalid(field + ".resources", Text(res), "must be an object");
  std::map<std::string, double> requests, limits;
  for (const char* kind : {"limits", "requests"}) {
    const json& m = At(res, {kind});
    if (m.is_null()) continue;
    if (!m.is_object()) return Invalid(field + ".resources." + kind, Text(m), "must be a map");
    for (const auto& [key, value] : m.items()) {
      const std::string f = field + ".resources." + kind + "[" + key + "]";
      std::optional<double> q = ParseQuantity(value);
      if (!q || *q < 0) {
        return Invalid(f, Text(value),
                       "must be a quantity (for example \"500m\", \"2\", \"16Gi\")");
      }
      // Far beyond any machine (and beyond what converts to an integer safely).
      if (*q > (key == "memory" || key == "ephemeral-storage" ? 1e18 : 1e9)) {
        return Invalid(f, Text(value), "is too large");
      }
      if (key != "cpu" && key != "memory" && !IsGpuResource(key) && key != "ephemeral-storage") {
        return Unsupported(f, key,
                           "berth places cpu, memory, nvidia.com/gpu, nvidia.com/gpu.shared, "
                           "berth.io/gpu-milli and nvidia.com/mig-PROFILE (ephemeral-storage is "
                           "accepted and ignored)");
      }
      (std::string_view(kind) == "limits" ? limits : requests)[key] = *q;
    }
  }
  for (const auto& [key, value] : limits) requests.emplace(key, value);
  for (const auto& [key, value] : requests) {
    auto lim = limits.find(key);
    const std::string f = field + ".resources.requests[" + key + "]";
    if (IsGpuResource(key)) {
      if (value != std::floor(value)) return Invalid(f, Text(value), "must be an integer");
      if (lim == limits.end()) {
        return Required(field + ".resources.limits[" + key + "]",
                        "Limit must be set for non overcommitable resources");
      }
      if (lim->second != value) {
        return Invalid(f, Text(value),
                       "must be equal to " + key + " limit of " +
                           std::to_string(static_cast<int64_t>(lim->second)));
      }
    } else if (lim != limits.end() && value > lim->second) {
      return Invalid(
          f, key == "cpu" ? FormatCores(value) : std::to_string(int64_t(value)),
          "must be less than or equal to " + key + " limit of " +
              (key == "cpu" ? FormatCores(lim->second) : std::to_string(int64_t(lim->second))));
    }
  }
  auto get = [](const std::map<std::string, double>& m, const char* key) {
    auto it = m.find(key);
    return it == m.end() ? 0.0 : it->second;
  };
  r->cpu_request = get(requests, "cpu");
  r->cpu_limit = get(limits, "cpu");
  r->mem_request = get(requests, "memory");
  r->mem_limit = get(limits, "memory");
  r->gpus = static_cast<int64_t>(get(requests, "nvidia.com/gpu"));
  r->gpu_shared = static_cast<int64_t>(get(requests, "nvidia.com/gpu.shared"));
  r->gpu_milli = static_cast<int64_t>(get(requests, "berth.io/gpu-milli"));
  for (const auto& [key, value] : requests) {
    if (!key.starts_with(kMigPrefix) || value <= 0) continue;
    if (r->mig > 0) {
      return Invalid(field + ".resources.requests[" + key + "]", Text(value),
                     "berth gives a container MIG instances of one profile");
    }
    r->mig_profile = key.substr(kMigPrefix.size());
    r->mig = static_cast<int64_t>(value);
  }
  return std::nullopt;
}

int64_t CeilMiB(double bytes) {
  return static_cast<int64_t>(std::ceil(bytes / (1024.0 * 1024.0)));
}

// The berth request keys a nodeSelector term maps to; a problem for a label no berth node
// carries.
std::optional<FieldProblem> ApplyNodeSelector(const json& selector, json* request, json* features,
                                              json* partitions) {
  if (selector.is_null()) return std::nullopt;
  if (!selector.is_object()) {
    return Invalid("spec.nodeSelector", Text(selector), "must be a map of strings");
  }
  for (const auto& [key, value] : selector.items()) {
    const std::string f = "spec.nodeSelector[" + key + "]";
    if (!value.is_string()) return Invalid(f, Text(value), "must be a string");
    const std::string v = value.get<std::string>();
    constexpr std::string_view kPart = "partition.berth.io/";
    constexpr std::string_view kRole = "node-role.kubernetes.io/";
    constexpr std::string_view kFeature = "feature.berth.io/";
    if (key == "kubernetes.io/hostname") {
      (*request)["nodelist"] = v;
    } else if (key == "kubernetes.io/os") {
      if (v != "linux") return Invalid(f, v, "berth nodes run linux");
    } else if (key == "kubernetes.io/arch" || key == "beta.kubernetes.io/arch") {
      // Every node of a berth cluster runs the controller's architecture: nothing to choose.
    } else if (key == "nvidia.com/gpu.product") {
      (*request)["gpu_type"] = v;
    } else if (key.rfind(kPart, 0) == 0 && v == "true") {
      partitions->push_back(key.substr(kPart.size()));
    } else if (key.rfind(kRole, 0) == 0 && v.empty()) {
      partitions->push_back(key.substr(kRole.size()));
    } else if (key.rfind(kFeature, 0) == 0 && v == "true") {
      features->push_back(key.substr(kFeature.size()));
    } else {
      return Unsupported(f, key + "=" + v,
                         "no berth node carries this label: berth nodes are labelled "
                         "kubernetes.io/hostname, kubernetes.io/os, nvidia.com/gpu.product, "
                         "partition.berth.io/P=true, node-role.kubernetes.io/P and "
                         "feature.berth.io/F=true");
    }
  }
  return std::nullopt;
}

// One container as berth runs it: a process, or in containers mode its image.
struct Container {
  std::string name, image;
  std::vector<std::string> argv;  // command + args, $(VAR)s expanded; empty = none given
  // Each as given ($(VAR)s expanded); nullopt = not given (containers mode: the image's own).
  std::optional<std::vector<std::string>> command, args;
  std::map<std::string, std::string> env;
  // The same variables in the order the manifest sets them (containers mode: envFrom first).
  std::vector<std::pair<std::string, std::string>> env_list;
  std::vector<std::string> node_name_env;  // containers mode: fieldRef spec.nodeName
  std::string work_dir;
  Resources res;
  bool stdin = false, stdin_once = false, tty = false;  // as given
};

void SetVar(Container* out, const std::string& var, const std::string& value) {
  out->env[var] = value;
  bool replaced = false;
  for (auto& [k, v] : out->env_list) {
    if (k == var) v = value, replaced = true;
  }
  if (!replaced) out->env_list.emplace_back(var, value);
  std::erase(out->node_name_env, var);
}

std::optional<FieldProblem> ReadEnv(const json& c, const std::string& field, const json& pod,
                                    const PodContext& ctx, const std::string& name,
                                    Container* out) {
  if (ctx.containers) {
    std::vector<std::pair<std::string, std::string>> from;
    if (auto p = podc::EnvFrom(c, field, ctx, &from)) return p;
    for (const auto& [k, v] : from) SetVar(out, k, v);
  }
  const json& list = At(c, {"env"});
  if (list.is_null()) return std::nullopt;
  if (!list.is_array()) return Invalid(field + ".env", Text(list), "must be a list");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string f = field + ".env[" + std::to_string(i) + "]";
    const json& e = list[i];
    const std::string var = Str(e, {"name"});
    if (var.empty()) return Required(f + ".name");
    if (var.find('=') != std::string::npos) {
      return Invalid(f + ".name", var, "a valid environment variable name has no '='");
    }
    std::string value;
    if (const json& from = At(e, {"valueFrom"}); !from.is_null()) {
      const std::string path = Str(from, {"fieldRef", "fieldPath"});
      if (path == "metadata.name") {
        value = name;
      } else if (path == "metadata.namespace") {
        value = ctx.ns;
      } else if (path.rfind("metadata.labels['", 0) == 0 && path.size() > 19 &&
                 path.substr(path.size() - 2) == "']") {
        value = Str(pod, {"metadata", "labels", path.substr(17, path.size() - 19).c_str()});
      } else if (path.rfind("metadata.annotations['", 0) == 0 && path.size() > 24 &&
                 path.substr(path.size() - 2) == "']") {
        value = Str(pod, {"metadata", "annotations", path.substr(22, path.size() - 24).c_str()});
      } else if (ctx.containers) {
        podc::EnvValue got;
        if (auto p = podc::ValueFrom(from, f, ctx, &got)) return p;
        if (got.node_name) {
          out->env.erase(var);
          std::erase_if(out->env_list, [&](const auto& kv) { return kv.first == var; });
          out->node_name_env.push_back(var);
          continue;
        }
        if (!got.value) continue;  // an optional reference that is not there
        value = *got.value;
      } else {
        return Unsupported(f + ".valueFrom", Text(from),
                           "berth fills metadata.name, metadata.namespace, "
                           "metadata.labels['K'] and metadata.annotations['K'] (no secrets, "
                           "config maps or resource fields yet)");
      }
    } else if (const json& v = At(e, {"value"}); v.is_string()) {
      value = Expand(v.get<std::string>(), out->env);
    } else if (!v.is_null()) {
      return Invalid(f + ".value", Text(v), "must be a string");
    }
    SetVar(out, var, value);
  }
  return std::nullopt;
}

// stdin, stdinOnce and tty: booleans; tty needs stdin (a terminal nobody can type into).
std::optional<FieldProblem> ReadStdio(const json& c, const std::string& cf, Container* out) {
  for (auto [key, into] : {std::pair{"stdin", &out->stdin},
                           std::pair{"stdinOnce", &out->stdin_once}, std::pair{"tty", &out->tty}}) {
    const json& v = At(c, {key});
    if (v.is_null()) continue;
    if (!v.is_boolean()) return Invalid(cf + "." + key, Text(v), "must be a boolean");
    *into = v.get<bool>();
  }
  if (out->tty && !out->stdin) {
    return Invalid(cf + ".tty", "true", "-t/--tty requires -i/--stdin: set stdin: true");
  }
  return std::nullopt;
}

std::optional<FieldProblem> ReadContainer(const json& c, const std::string& cf, const json& pod,
                                          const PodContext& ctx, const std::string& pod_name,
                                          Container* out) {
  if (!c.is_object()) return Invalid(cf, Text(c), "must be an object");
  out->name = Str(c, {"name"});
  if (out->name.empty()) return Required(cf + ".name");
  if (!IsDnsLabel(out->name)) {
    return Invalid(cf + ".name", out->name,
                   "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                   "characters or '-', and must start and end with an alphanumeric character");
  }
  out->image = Str(c, {"image"});
  if (out->image.empty()) return Required(cf + ".image");
  for (const char* key : {"command", "args"}) {
    const json& list = At(c, {key});
    if (list.is_null()) continue;
    if (!list.is_array()) return Invalid(cf + "." + key, Text(list), "must be a list of strings");
    for (const json& a : list) {
      if (!a.is_string()) return Invalid(cf + "." + key, Text(a), "must be a list of strings");
    }
  }
  if (auto p = ReadEnv(c, cf, pod, ctx, pod_name, out)) return p;
  for (const char* key : {"command", "args"}) {
    const json& list = At(c, {key});
    if (!list.is_array()) continue;
    std::vector<std::string> expanded;
    for (const json& a : list) expanded.push_back(Expand(a.get<std::string>(), out->env));
    out->argv.insert(out->argv.end(), expanded.begin(), expanded.end());
    (std::string_view(key) == "command" ? out->command : out->args) = std::move(expanded);
  }
  out->work_dir = Str(c, {"workingDir"});
  if (auto p = ReadStdio(c, cf, out)) return p;
  return ReadResources(c, cf, &out->res);
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// One container's command line in the pod's script: in its working directory, with its
// environment; a container without a command fails with a message that says why (berth runs
// processes, not images).
std::string ContainerLine(const Container& c) {
  if (c.argv.empty()) {
    return "echo " +
           ShellQuote("berth: container " + c.name + " (image " + c.image +
                      ") gives no command: berth runs processes, not container images") +
           " >&2; exit 127";
  }
  std::string line = "cd " + ShellQuote(c.work_dir.empty() ? "." : c.work_dir) + " && exec env";
  for (const auto& [k, v] : c.env) line += " " + ShellQuote(k + "=" + v);
  for (const std::string& a : c.argv) line += " " + ShellQuote(a);
  return line;
}

// The script of a pod with init containers or several containers: the init containers one after
// another (the first that fails ends the pod with its status), then every container at once;
// the pod succeeds when all of them do, else it ends with the first failure's status.
std::string PodScript(const std::string& pod, const std::vector<Container>& inits,
                      const std::vector<Container>& mains) {
  std::string s = "#!/bin/sh\n# berth: the containers of pod " + pod + "\n";
  for (const Container& c : inits) {
    s += "(" + ContainerLine(c) + ") || { rc=$?; echo " +
         ShellQuote("berth: init container " + c.name + " failed") + " >&2; exit $rc; }\n";
  }
  for (size_t i = 0; i < mains.size(); ++i) {
    s += "(" + ContainerLine(mains[i]) + ") & pid" + std::to_string(i) + "=$!\n";
  }
  s += "rc=0\n";
  for (size_t i = 0; i < mains.size(); ++i) {
    s += "wait $pid" + std::to_string(i) + "; s=$?; [ $rc -eq 0 ] && rc=$s\n";
  }
  s += "exit $rc\n";
  return s;
}

// kind and apiVersion, the name (generateName plus the context's suffix when only that is
// given), labels and annotations.
std::optional<FieldProblem> CheckPodMeta(const json& pod, const PodContext& ctx,
                                         std::string* name) {
  if (!pod.is_object()) return Invalid("", Text(pod), "the body must be a Pod object");
  if (pod.contains("kind") && pod["kind"] != "Pod") {
    return Invalid("kind", Text(pod["kind"]), "the body must be a Pod");
  }
  if (pod.contains("apiVersion") && pod["apiVersion"] != "v1") {
    return Invalid("apiVersion", Text(pod["apiVersion"]), "Pods are in v1");
  }
  *name = Str(pod, {"metadata", "name"});
  const std::string generate = Str(pod, {"metadata", "generateName"});
  if (name->empty() && !generate.empty()) *name = generate + ctx.name_suffix;
  if (name->empty()) return Required("metadata.name", "name or generateName is required");
  if (std::string p = SubdomainNameProblem(*name); !p.empty()) {
    return Invalid("metadata.name", *name, p);
  }
  return CheckMetadataMaps(At(pod, {"metadata"}));
}

// The init containers and the containers, with names unique across both.
std::optional<FieldProblem> ReadContainers(const json& pod, const PodContext& ctx,
                                           const std::string& name,
                                           std::vector<Container>* init_list,
                                           std::vector<Container>* main_list) {
  const json& spec = At(pod, {"spec"});
  if (!spec.is_object()) return Required("spec");
  const json& containers = At(spec, {"containers"});
  if (!containers.is_array() || containers.empty()) return Required("spec.containers");
  const json& inits = At(spec, {"initContainers"});
  if (!inits.is_null() && !inits.is_array()) {
    return Invalid("spec.initContainers", Text(inits), "must be a list");
  }
  if (ctx.containers) {
    constexpr const char* kOne =
        "berth runs one container per Pod, in its image (init containers and sidecars are not "
        "supported yet)";
    if (inits.is_array() && !inits.empty()) {
      return FieldProblem{"spec.initContainers", "Forbidden", "", kOne};
    }
    if (containers.size() > 1) return FieldProblem{"spec.containers", "Forbidden", "", kOne};
  }
  std::set<std::string> names;
  for (const auto& [list, prefix, into] : {std::tuple{&inits, "spec.initContainers", init_list},
                                           std::tuple{&containers, "spec.containers", main_list}}) {
    if (!list->is_array()) continue;
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string cf = std::string(prefix) + "[" + std::to_string(i) + "]";
      Container c;
      if (auto p = ReadContainer((*list)[i], cf, pod, ctx, name, &c)) return p;
      if (!names.insert(c.name).second) return {{cf + ".name", "Duplicate value", c.name, ""}};
      into->push_back(std::move(c));
    }
  }
  return std::nullopt;
}

// The pod's resources, as Kubernetes reckons them: the containers together, or the largest
// init container when that is more.
Resources PodResources(const std::vector<Container>& init_list,
                       const std::vector<Container>& main_list) {
  Resources res;
  for (const Container& c : main_list) {
    res.cpu_request += c.res.cpu_request;
    res.cpu_limit += c.res.cpu_limit;
    res.mem_request += c.res.mem_request;
    res.mem_limit += c.res.mem_limit;
    res.gpus += c.res.gpus;
    res.gpu_shared += c.res.gpu_shared;
    res.gpu_milli += c.res.gpu_milli;
    res.mig += c.res.mig;
    if (!c.res.mig_profile.empty()) res.mig_profile = c.res.mig_profile;
  }
  for (const Container& c : init_list) {
    res.cpu_request = std::max(res.cpu_request, c.res.cpu_request);
    res.mem_request = std::max(res.mem_request, c.res.mem_request);
    res.mem_limit = std::max(res.mem_limit, c.res.mem_limit);
    res.gpus = std::max(res.gpus, c.res.gpus);
    res.gpu_shared = std::max(res.gpu_shared, c.res.gpu_shared);
    res.gpu_milli = std::max(res.gpu_milli, c.res.gpu_milli);
    if (c.res.mig > res.mig) {
      res.mig = c.res.mig;
      res.mig_profile = c.res.mig_profile;
    }
  }
  return res;
}

// The pod's GPU request, checked: whole GPUs, MIG instances (typed whole devices), or one share
// of one device (gpu.shared units or explicit thousandths), one kind only.
std::optional<FieldProblem> CheckGpus(const Resources& res, const PodContext& ctx) {
  const std::string f = "spec.containers[0].resources.requests";
  int kinds = (res.gpus > 0) + (res.gpu_shared > 0) + (res.gpu_milli > 0) + (res.mig > 0);
  if (kinds > 1) {
    return Invalid(f, "",
                   "berth gives a pod one kind of GPU: nvidia.com/gpu, "
                   "nvidia.com/gpu.shared, berth.io/gpu-milli or nvidia.com/mig-PROFILE");
  }
  const int64_t replicas = std::max(1, ctx.gpu_shared_replicas);
  if (res.gpu_shared > replicas) {
    return Invalid(f + "[nvidia.com/gpu.shared]", std::to_string(res.gpu_shared),
                   "a share is of one device, which offers " + std::to_string(replicas) +
                       " units of nvidia.com/gpu.shared");
  }
  if (res.gpu_milli > kMilliPerDevice) {
    return Invalid(f + "[berth.io/gpu-milli]", std::to_string(res.gpu_milli),
                   "a share is of one device: at most 1000");
  }
  return std::nullopt;
}

// Puts the (checked) GPU request into the berth job request.
void PutGpus(const Resources& res, const PodContext& ctx, json* request) {
  if (res.gpus > 0) (*request)["gpus"] = res.gpus;
  if (res.mig > 0) {
    (*request)["gpus_per_node"] = res.mig;
    (*request)["gpu_type"] = res.mig_profile;
  }
  if (res.gpu_milli > 0) (*request)["gpu_milli"] = res.gpu_milli;
  if (res.gpu_shared > 0) {
    (*request)["gpu_milli"] =
        res.gpu_shared * kMilliPerDevice / std::max(1, ctx.gpu_shared_replicas);
  }
}

// The berth request of the containers: the one process run directly, or a script for several.
json ProcessRequest(const std::string& name, const PodContext& ctx, const Resources& res,
                    const std::vector<Container>& init_list,
                    const std::vector<Container>& main_list) {
  json request = {
      {"name", name.substr(0, 200)},
      {"stdout", ctx.log_dir + "/" + ctx.ns + "_" + name + "_%j.log"},
      {"requeue", false},
      {"wait_if_infeasible", true},  // as the API server: accepted, then Unschedulable
      {"cpus_per_task", std::max<int64_t>(1, std::llround(std::ceil(res.cpu_request - 1e-9)))}};
  json environment = json::object();
  const Container& first = main_list.front();
  if (main_list.size() == 1 && init_list.empty() && !first.argv.empty()) {
    // The usual pod: its one process, run directly.
    request["argv"] = first.argv;
    for (const auto& [k, v] : first.env) environment[k] = v;
    request["work_dir"] = first.work_dir.empty() ? ctx.home : first.work_dir;
  } else {
    request["script"] = PodScript(name, init_list, main_list);
    request["work_dir"] = ctx.home;
  }
  request["environment"] = std::move(environment);
  if (res.mem_request > 0) request["mem_per_node"] = std::max<int64_t>(1, CeilMiB(res.mem_request));
  PutGpus(res, ctx, &request);
  return request;
}

// A pod's stdin/stdinOnce/tty (docs/adr/0006-pod-streams.md, attach): the pod's main process
// gets them (in containers mode the container's), so only a pod of one container may ask.
std::optional<FieldProblem> StdioRequest(const std::vector<Container>& init_list,
                                         const std::vector<Container>& main_list, json* request) {
  const size_t count = init_list.size() + main_list.size();
  for (size_t i = 0; i < count && count > 1; ++i) {
    const bool init = i < init_list.size();
    const Container& c = init ? init_list[i] : main_list[i - init_list.size()];
    if (c.stdin || c.tty) {
      const std::string f = std::string(init ? "spec.initContainers[" : "spec.containers[") +
                            std::to_string(init ? i : i - init_list.size()) + "]." +
                            (c.stdin ? "stdin" : "tty");
      return FieldProblem{f, "Forbidden", "",
                          "berth gives stdin and a terminal only to a pod of one container "
                          "(its process is the pod's main process)"};
    }
  }
  const Container& first = main_list.front();
  if (first.stdin) (*request)["open_stdin"] = true;
  if (first.stdin && first.stdin_once) (*request)["stdin_once"] = true;
  if (first.tty) (*request)["tty"] = true;
  return std::nullopt;
}

// Containers mode: the request of the pod's one container, run in its image (the node takes the
// ENTRYPOINT and CMD from the image: no argv, no script).
std::optional<FieldProblem> ContainerRequest(const std::string& name, const PodContext& ctx,
                                             const Resources& res, const json& spec,
                                             const Container& c, json* request,
                                             std::vector<std::string>* missing_pull_secrets) {
  image::ContainerSpec cs;
  cs.command = c.command;
  cs.args = c.args;
  cs.env = c.env_list;
  cs.node_name_env = c.node_name_env;
  if (auto p = podc::FillSpec(spec, At(spec, {"containers"})[0], "spec.containers[0]", ctx, &cs,
                              missing_pull_secrets)) {
    return p;
  }
  *request = {
      {"name", name.substr(0, 200)},
      {"stdout", ctx.log_dir + "/" + ctx.ns + "_" + name + "_%j.log"},
      {"requeue", false},
      {"wait_if_infeasible", true},
      {"cpus_per_task", std::max<int64_t>(1, std::llround(std::ceil(res.cpu_request - 1e-9)))},
      {"work_dir", ctx.home},
      {"container", image::EncodeContainerSpec(cs)}};
  if (res.mem_request > 0) {
    (*request)["mem_per_node"] = std::max<int64_t>(1, CeilMiB(res.mem_request));
  }
  PutGpus(res, ctx, request);
  return std::nullopt;
}

// The spec's and annotations' scheduling fields in the request: deadline, restart policy (into
// `restart`), node selector and name, partition, constraint, account, QOS.
std::optional<FieldProblem> ApplySchedulingFields(const json& spec, const json& annotations,
                                                  json* request, std::string* restart) {
  if (const json& ads = At(spec, {"activeDeadlineSeconds"}); !ads.is_null()) {
    if (!ads.is_number_integer() || ads.get<int64_t>() <= 0) {
      return Invalid("spec.activeDeadlineSeconds", Text(ads), "must be greater than 0");
    }
    (*request)["time_limit"] = ads.get<int64_t>();
  }
  // Text, not value(): a non-string policy is a 422 like any other bad value, not an exception.
  const json& given_restart = At(spec, {"restartPolicy"});
  *restart = given_restart.is_null() ? "Always" : Text(given_restart);
  if (*restart != "Always" && *restart != "OnFailure" && *restart != "Never") {
    return Unsupported("spec.restartPolicy", *restart,
                       "supported values: \"Always\", \"OnFailure\", \"Never\"");
  }
  json features = json::array(), partitions = json::array();
  if (auto p = ApplyNodeSelector(At(spec, {"nodeSelector"}), request, &features, &partitions)) {
    return p;
  }
  if (const std::string node = Str(spec, {"nodeName"}); !node.empty()) {
    (*request)["nodelist"] = node;
  }
  if (std::string p = Str(annotations, {"berth.io/partition"}); !p.empty()) partitions.push_back(p);
  if (!partitions.empty()) {
    std::string joined;
    for (const json& p : partitions) joined += (joined.empty() ? "" : ",") + p.get<std::string>();
    (*request)["partition"] = joined;
  }
  if (!features.empty()) {
    std::string joined;
    for (const json& f : features) joined += (joined.empty() ? "" : "&") + f.get<std::string>();
    (*request)["constraint"] = joined;
  }
  if (std::string a = Str(annotations, {"berth.io/account"}); !a.empty()) {
    (*request)["account"] = a;
  }
  if (std::string q = Str(spec, {"priorityClassName"}); !q.empty()) (*request)["qos"] = q;
  if (std::string q = Str(annotations, {"berth.io/qos"}); !q.empty()) (*request)["qos"] = q;
  return std::nullopt;
}

// What berth keeps of the spec: the manifest's, defaulted as the API server would.
json KeptSpec(const json& spec, const std::string& restart, bool containers) {
  json kept_spec = spec;
  kept_spec["restartPolicy"] = restart;
  kept_spec["schedulerName"] = "berth";
  kept_spec.erase("nodeName");  // set from the allocation
  if (!kept_spec.contains("terminationGracePeriodSeconds")) {
    kept_spec["terminationGracePeriodSeconds"] = 30;
  }
  if (!kept_spec.contains("dnsPolicy")) kept_spec["dnsPolicy"] = "ClusterFirst";
  for (const char* list : {"initContainers", "containers"}) {
    if (!kept_spec.contains(list) || !kept_spec[list].is_array()) continue;
    for (json& kc : kept_spec[list]) {
      if (!kc.contains("imagePullPolicy")) {
        // Containers mode: from the tag, as the API server defaults it.
        kc["imagePullPolicy"] =
            containers ? podc::DefaultPullPolicy(kc.value("image", "")) : "IfNotPresent";
      }
      if (!kc.contains("resources")) kc["resources"] = json::object();
      if (!kc.contains("terminationMessagePath")) {
        kc["terminationMessagePath"] = "/dev/termination-log";
      }
      if (!kc.contains("terminationMessagePolicy")) kc["terminationMessagePolicy"] = "File";
    }
  }
  return kept_spec;
}

}  // namespace

json InvalidStatusOf(const std::string& kind, const std::string& name,
                     const FieldProblem& problem) {
  std::string message = problem.type;
  if (!problem.value.empty() || problem.type == "Invalid value") {
    message += ": \"" + problem.value + "\"";
  }
  if (!problem.detail.empty()) message += ": " + problem.detail;
  std::string reason = problem.type == "Required value"      ? "FieldValueRequired"
                       : problem.type == "Unsupported value" ? "FieldValueNotSupported"
                       : problem.type == "Forbidden"         ? "FieldValueForbidden"
                       : problem.type == "Not found"         ? "FieldValueNotFound"
                                                             : "FieldValueInvalid";
  const size_t dot = kind.find('.');
  json details = {
      {"name", name},
      {"kind", kind.substr(0, dot)},
      {"causes",
       json::array({{{"reason", reason}, {"message", message}, {"field", problem.field}}})}};
  if (dot != std::string::npos) details["group"] = kind.substr(dot + 1);
  return StatusBody(422, "Invalid",
                    kind + " \"" + name + "\" is invalid: " + problem.field + ": " + message,
                    details);
}

std::optional<double> ParseQuantity(const json& q) {
  if (q.is_number()) return q.get<double>();
  if (!q.is_string()) return std::nullopt;
  std::string s = q.get<std::string>();
  if (s.empty()) return std::nullopt;
  struct Suffix {
    const char* text;
    double factor;
  };
  static const Suffix kSuffixes[] = {{"Ki", 1024.0},
                                     {"Mi", 1048576.0},
                                     {"Gi", 1073741824.0},
                                     {"Ti", 1099511627776.0},
                                     {"Pi", 1125899906842624.0},
                                     {"Ei", 1152921504606846976.0},
                                     {"n", 1e-9},
                                     {"u", 1e-6},
                                     {"m", 1e-3},
                                     {"k", 1e3},
                                     {"M", 1e6},
                                     {"G", 1e9},
                                     {"T", 1e12},
                                     {"P", 1e15},
                                     {"E", 1e18}};
  double factor = 1;
  for (const Suffix& x : kSuffixes) {
    const size_t n = std::char_traits<char>::length(x.text);
    if (s.size() > n && s.compare(s.size() - n, n, x.text) == 0) {
      factor = x.factor;
      s.resize(s.size() - n);
      break;
    }
  }
  // The number: [+-]digits[.digits][e[+-]digits]; nothing else.
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  bool digits = false;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, digits = true;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, digits = true;
  }
  if (!digits) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E') && factor == 1) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    bool exp_digits = false;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, exp_digits = true;
    if (!exp_digits) return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  return std::strtod(s.c_str(), nullptr) * factor;
}

std::string SubdomainNameProblem(std::string_view name) {
  if (name.empty()) return "a name is required";
  if (name.size() > 253) return "must be no more than 253 characters";
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    std::string_view part =
        name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || part.front() == '-' || part.back() == '-' ||
        !std::all_of(part.begin(), part.end(), IsLabelChar)) {
      return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
             "characters, '-' or '.', and must start and end with an alphanumeric character";
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return "";
}

std::optional<FieldProblem> MapPod(const json& pod, const PodContext& ctx, PodMapping* out) {
  std::string name;
  if (auto p = CheckPodMeta(pod, ctx, &name)) return p;
  std::vector<Container> init_list, main_list;
  if (auto p = ReadContainers(pod, ctx, name, &init_list, &main_list)) return p;
  const Resources res = PodResources(init_list, main_list);
  if (auto p = CheckGpus(res, ctx)) return p;
  const json& meta = At(pod, {"metadata"});
  const json& spec = At(pod, {"spec"});
  json request;
  std::vector<std::string> missing_pull_secrets;
  if (ctx.containers) {
    if (auto p = ContainerRequest(name, ctx, res, spec, main_list.front(), &request,
                                  &missing_pull_secrets)) {
      return p;
    }
  } else {
    request = ProcessRequest(name, ctx, res, init_list, main_list);
  }
  if (auto p = StdioRequest(init_list, main_list, &request)) return p;
  // The Pod's host name as kubelet gives it: spec.hostname, else the Pod's name (cut to 63
  // characters); with hostNetwork, the node's.
  const json& hostname = At(spec, {"hostname"});
  if (!hostname.is_null() && !hostname.is_string()) {
    return Invalid("spec.hostname", Text(hostname), "must be a string");
  }
  if (hostname.is_string() && !hostname.get<std::string>().empty()) {
    const std::string h = hostname.get<std::string>();
    if (h.size() > 63 || h.front() == '-' || h.back() == '-' ||
        !std::all_of(h.begin(), h.end(), [](char c) { return IsLabelChar(c); })) {
      return Invalid("spec.hostname", h,
                     "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                     "characters or '-', and must start and end with an alphanumeric character");
    }
    request["hostname"] = h;
  } else if (!(At(spec, {"hostNetwork"}).is_boolean() && At(spec, {"hostNetwork"}).get<bool>())) {
    std::string h = name.substr(0, 63);
    while (!h.empty() && (h.back() == '-' || h.back() == '.')) h.pop_back();
    if (!h.empty()) request["hostname"] = h;
  }
  const json& annotations = At(meta, {"annotations"});
  std::string restart;
  if (auto p = ApplySchedulingFields(spec, annotations, &request, &restart)) return p;
  out->name = name;
  out->request = std::move(request);
  out->missing_pull_secrets = std::move(missing_pull_secrets);
  out->meta = {{"namespace", ctx.ns},
               {"name", name},
               {"labels", At(meta, {"labels"}).is_object() ? At(meta, {"labels"}) : json::object()},
               {"annotations", annotations.is_object() ? annotations : json::object()},
               {"spec", KeptSpec(spec, restart, ctx.containers)},
               {"created", ctx.now}};
  const std::string generate = Str(pod, {"metadata", "generateName"});
  if (!generate.empty()) out->meta["generateName"] = generate;
  if (const json& owners = At(meta, {"ownerReferences"}); owners.is_array()) {
    out->meta["ownerReferences"] = owners;
  }
  if (res.mem_limit > 0) out->meta["mem_limit_mib"] = CeilMiB(res.mem_limit);
  if (res.cpu_limit > 0) out->meta["cpu_limit"] = res.cpu_limit;
  return std::nullopt;
}

}  // namespace berth::k8s
