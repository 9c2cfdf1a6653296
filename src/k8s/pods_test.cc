// Pods, Jobs and Events as berth serves them: quantities, names, a Pod manifest's mapping to a
// berth request and its refusals (with the field path a 422 names), berth jobs encoded as Pods,
// Job defaulting and the Pods made from its template, the Table cells and field selectors of all
// three, and the RFC 3339 times the Age columns read back.
#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "k8s/codec.h"
#include "k8s/jobs.h"

namespace berth::k8s {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1796270518;  // 2026-12-03T04:01:58Z

// ---- Quantities and names -------------------------------------------------------------------

TEST(K8sQuantityTest, ReadsKubernetesQuantities) {
  const std::pair<json, double> cases[] = {
      {"500m", 0.5},
      {"2", 2},
      {1.5, 1.5},  // a JSON number, as kubectl sends "nvidia.com/gpu": 1
      {1, 1},
      {"16Gi", 16.0 * 1024 * 1024 * 1024},
      {"1e9", 1e9},
      {"1E3", 1e3},
      {"128Mi", 128.0 * 1024 * 1024},
      {"1G", 1e9},
      {"1k", 1e3},
      {"1.5Gi", 1.5 * 1024 * 1024 * 1024},
      {"0.5", 0.5},
      {"+2", 2},
      {"250u", 250e-6},
      {"1Ki", 1024},
      {"2Ti", 2.0 * 1024 * 1024 * 1024 * 1024},
  };
  for (const auto& [text, value] : cases) {
    std::optional<double> q = ParseQuantity(text);
    ASSERT_TRUE(q.has_value()) << text;
    EXPECT_DOUBLE_EQ(*q, value) << text;
  }
}

TEST(K8sQuantityTest, RefusesWhatIsNotAQuantity) {
  const json bad[] = {"",     "abc", "1Xi", "--1",    true,  nullptr, json::array({1}), "1K", "Gi",
                      "1 Gi", " 2",  "1e",  "1.5e3m", "1ki", "m",     json::object()};
  for (const json& q : bad) EXPECT_EQ(ParseQuantity(q), std::nullopt) << q.dump();
}

TEST(K8sPodNameTest, SubdomainNames) {
  for (const char* good :
       {"train", "a", "train-1", "0abc", "job.batch.example", "a-b.c-d", "x1.2y"}) {
    EXPECT_EQ(SubdomainNameProblem(good), "") << good;
  }
  EXPECT_EQ(SubdomainNameProblem(std::string(253, 'a')), "");
  EXPECT_NE(SubdomainNameProblem(""), "");
  EXPECT_NE(SubdomainNameProblem(std::string(254, 'a')), "");
  for (const char* bad :
       {"Train", "train_1", "-train", "train-", "a..b", ".a", "a.", "a.-b", "a b", "tr@in", "ä"}) {
    EXPECT_NE(SubdomainNameProblem(bad), "") << bad;
  }
}

// ---- Pod manifests --------------------------------------------------------------------------

PodContext Ctx() {
  PodContext ctx;
  ctx.ns = "ml";
  ctx.home = "/home/alice";
  ctx.log_dir = "/var/log/berth/pods";
  ctx.name_suffix = "x7k2q";
  ctx.now = kNow;
  return ctx;
}

// A typical GPU training pod, valid as it stands.
json GpuPod() {
  return json::parse(R"json({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "train", "labels": {"app": "llm", "team": "vision"},
                 "annotations": {"berth.io/account": "ml-research", "note": "first try"}},
    "spec": {
      "containers": [{
        "name": "main", "image": "pytorch:2.3",
        "command": ["python", "train.py"],
        "args": ["--out=$(OUT_DIR)/$(POD_NAME)", "--price=$$(OUT_DIR)", "$(UNDEFINED)", "$$$$",
                 "--team=$(TEAM)", "$(OUT_DIR"],
        "env": [
          {"name": "OUT_DIR", "value": "/scratch"},
          {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
          {"name": "POD_NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
          {"name": "TEAM", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['team']"}}},
          {"name": "NOTE",
           "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['note']"}}},
          {"name": "CKPT", "value": "$(OUT_DIR)/ckpt"},
          {"name": "EMPTY"}
        ],
        "resources": {
          "requests": {"cpu": "1500m", "memory": "1G", "nvidia.com/gpu": 2},
          "limits": {"cpu": "2", "memory": "16Gi", "nvidia.com/gpu": "2",
                     "ephemeral-storage": "10Gi"}
        }
      }],
      "activeDeadlineSeconds": 3600,
      "priorityClassName": "high"
    }
  })json");
}

PodMapping MustMap(const json& pod, const PodContext& ctx = Ctx()) {
  PodMapping m;
  std::optional<FieldProblem> p = MapPod(pod, ctx, &m);
  EXPECT_EQ(p, std::nullopt) << (p ? p->field + ": " + p->type + ": " + p->detail : "");
  return m;
}

// A problem as one line, for comparisons that print well.
std::string Show(const FieldProblem& p) {
  return p.field + " | " + p.type + " | " + p.value + " | " + p.detail;
}

TEST(K8sPodMapTest, GpuPodBecomesABerthRequest) {
  PodMapping m = MustMap(GpuPod());
  EXPECT_EQ(m.name, "train");
  const json& r = m.request;
  EXPECT_EQ(r["name"], "train");
  EXPECT_EQ(r["cpus_per_task"], 2);   // 1500m rounded up
  EXPECT_EQ(r["mem_per_node"], 954);  // 1e9 bytes = 953.67 MiB, rounded up
  EXPECT_EQ(r["gpus"], 2);
  EXPECT_EQ(r["argv"], json({"python", "train.py", "--out=/scratch/train", "--price=$(OUT_DIR)",
                             "$(UNDEFINED)", "$$", "--team=vision", "$(OUT_DIR"}));
  EXPECT_EQ(r["environment"], json({{"OUT_DIR", "/scratch"},
                                    {"POD_NAME", "train"},
                                    {"POD_NS", "ml"},
                                    {"TEAM", "vision"},
                                    {"NOTE", "first try"},
                                    {"CKPT", "/scratch/ckpt"},
                                    {"EMPTY", ""},
                                    {"HOSTNAME", "train"}}));
  EXPECT_EQ(r["work_dir"], "/home/alice");
  EXPECT_EQ(r["stdout"], "/var/log/berth/pods/ml_train_%j.log");
  EXPECT_EQ(r["requeue"], false);
  EXPECT_EQ(r["time_limit"], 3600);
  EXPECT_EQ(r["account"], "ml-research");
  EXPECT_EQ(r["qos"], "high");
  EXPECT_FALSE(r.contains("partition"));
  EXPECT_FALSE(r.contains("nodelist"));
  EXPECT_FALSE(r.contains("constraint"));
  EXPECT_FALSE(r.contains("gpu_type"));
}

TEST(K8sPodMapTest, MetaKeepsTheDefaultedManifest) {
  PodMapping m = MustMap(GpuPod());
  const json& meta = m.meta;
  EXPECT_EQ(meta["namespace"], "ml");
  EXPECT_EQ(meta["name"], "train");
  EXPECT_EQ(meta["created"], kNow);
  EXPECT_EQ(meta["labels"], json({{"app", "llm"}, {"team", "vision"}}));
  EXPECT_EQ(meta["annotations"]["note"], "first try");
  EXPECT_EQ(meta["mem_limit_mib"], 16384);
  EXPECT_DOUBLE_EQ(meta["cpu_limit"].get<double>(), 2.0);
  EXPECT_FALSE(meta.contains("generateName"));
  const json& spec = meta["spec"];
  EXPECT_EQ(spec["restartPolicy"], "Always");
  EXPECT_EQ(spec["schedulerName"], "berth");
  EXPECT_EQ(spec["terminationGracePeriodSeconds"], 30);
  EXPECT_EQ(spec["dnsPolicy"], "ClusterFirst");
  EXPECT_EQ(spec["activeDeadlineSeconds"], 3600);
  const json& c = spec["containers"][0];
  EXPECT_EQ(c["name"], "main");
  EXPECT_EQ(c["image"], "pytorch:2.3");
  EXPECT_EQ(c["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(c["terminationMessagePath"], "/dev/termination-log");
  EXPECT_EQ(c["terminationMessagePolicy"], "File");
  EXPECT_EQ(c["resources"]["requests"]["cpu"], "1500m");  // as written, not as parsed
}

TEST(K8sPodMapTest, GivenPolicyAndWorkingDirAreKept) {
  json pod = GpuPod();
  pod["spec"]["restartPolicy"] = "Never";
  pod["spec"]["containers"][0]["workingDir"] = "/scratch/run7";
  PodMapping m = MustMap(pod);
  EXPECT_EQ(m.request["work_dir"], "/scratch/run7");
  EXPECT_EQ(m.meta["spec"]["restartPolicy"], "Never");
  pod["spec"]["restartPolicy"] = "OnFailure";
  EXPECT_EQ(MustMap(pod).meta["spec"]["restartPolicy"], "OnFailure");
}

TEST(K8sPodMapTest, RequestsDefaultToLimits) {
  json pod = GpuPod();
  pod["spec"]["containers"][0]["resources"] = {
      {"limits", {{"cpu", "500m"}, {"memory", "128Mi"}, {"nvidia.com/gpu", 1}}}};
  PodMapping m = MustMap(pod);
  EXPECT_EQ(m.request["cpus_per_task"], 1);  // 500m rounds up to a whole core
  EXPECT_EQ(m.request["mem_per_node"], 128);
  EXPECT_EQ(m.request["gpus"], 1);
  EXPECT_EQ(m.meta["mem_limit_mib"], 128);
}

TEST(K8sPodMapTest, NoResourcesAskForOneCpu) {
  json pod = GpuPod();
  pod["spec"]["containers"][0].erase("resources");
  PodMapping m = MustMap(pod);
  EXPECT_EQ(m.request["cpus_per_task"], 1);
  EXPECT_FALSE(m.request.contains("mem_per_node"));
  EXPECT_FALSE(m.request.contains("gpus"));
  EXPECT_FALSE(m.meta.contains("mem_limit_mib"));
  EXPECT_FALSE(m.meta.contains("cpu_limit"));
  EXPECT_EQ(m.meta["spec"]["containers"][0]["resources"], json::object());
}

TEST(K8sPodMapTest, WholeCoresAreNotRoundedUp) {
  json pod = GpuPod();
  pod["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "3"}}}};
  EXPECT_EQ(MustMap(pod).request["cpus_per_task"], 3);
  pod["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "3000m"}}}};
  EXPECT_EQ(MustMap(pod).request["cpus_per_task"], 3);
  pod["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "3001m"}}}};
  EXPECT_EQ(MustMap(pod).request["cpus_per_task"], 4);
}

TEST(K8sPodMapTest, OnlyArgsIsEnough) {
  json pod = GpuPod();
  pod["spec"]["containers"][0].erase("command");
  pod["spec"]["containers"][0]["args"] = json::array({"/bin/true"});
  EXPECT_EQ(MustMap(pod).request["argv"], json::array({"/bin/true"}));
}

// A pod with a sidecar: GpuPod's trainer and a logger.
json TwoContainerPod() {
  json pod = GpuPod();
  pod["spec"]["containers"].push_back(
      json{{"name", "logger"},
           {"image", "busybox"},
           {"command", {"sh", "-c", "echo it's up"}},
           {"workingDir", "/scratch/logs"},
           {"env", json::array({json{{"name", "LEVEL"}, {"value", "info"}}})},
           {"resources", {{"requests", {{"cpu", "1"}, {"memory", "512Mi"}}}}}});
  return pod;
}

TEST(K8sPodMapTest, SeveralContainersRunAsOneScript) {
  PodMapping m = MustMap(TwoContainerPod());
  const json& r = m.request;
  EXPECT_FALSE(r.contains("argv"));
  ASSERT_TRUE(r["script"].is_string());
  const std::string script = r["script"];
  EXPECT_EQ(script.rfind("#!/bin/sh\n", 0), 0u);
  // Each container with its own directory, environment and (quoted) command line.
  EXPECT_NE(script.find("cd '.' && exec env"), std::string::npos) << script;
  EXPECT_NE(script.find("'python' 'train.py' '--out=/scratch/train'"), std::string::npos) << script;
  EXPECT_NE(script.find("'CKPT=/scratch/ckpt'"), std::string::npos) << script;
  EXPECT_NE(script.find("cd '/scratch/logs' && exec env 'LEVEL=info' 'sh' '-c' 'echo it'\\''s up'"),
            std::string::npos)
      << script;
  // Only the pod-wide HOSTNAME is in the job's own environment.
  EXPECT_EQ(r["environment"], json::object({{"HOSTNAME", "train"}}));
  EXPECT_EQ(r["work_dir"], "/home/alice");
  // The pod's requests are the containers' together: 1.5 + 1 cores, 1e9 bytes + 512 MiB.
  EXPECT_EQ(r["cpus_per_task"], 3);
  EXPECT_EQ(r["mem_per_node"], 954 + 512);
  EXPECT_EQ(r["gpus"], 2);
  const json& kept = m.meta["spec"]["containers"];
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1]["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(kept[1]["terminationMessagePolicy"], "File");
}

TEST(K8sPodMapTest, InitContainersRunFirst) {
  json pod = GpuPod();
  pod["spec"]["initContainers"] =
      json::array({json{{"name", "fetch"},
                        {"image", "busybox"},
                        {"command", json::array({"fetch-data", "$(OUT_DIR)"})},
                        {"env", json::array({json{{"name", "OUT_DIR"}, {"value", "/data"}}})},
                        {"resources", {{"limits", {{"cpu", "4"}, {"memory", "8Gi"}}}}}}});
  PodMapping m = MustMap(pod);
  const std::string script = m.request["script"];
  const size_t init = script.find("'fetch-data' '/data'");
  const size_t main = script.find("'python' 'train.py'");
  ASSERT_NE(init, std::string::npos) << script;
  ASSERT_NE(main, std::string::npos) << script;
  EXPECT_LT(init, main);
  EXPECT_NE(script.find("berth: init container fetch failed"), std::string::npos) << script;
  // The larger of the init container and the containers: 4 cores, 8 GiB.
  EXPECT_EQ(m.request["cpus_per_task"], 4);
  EXPECT_EQ(m.request["mem_per_node"], 8192);
  EXPECT_EQ(m.request["gpus"], 2);
  EXPECT_EQ(m.meta["spec"]["initContainers"][0]["imagePullPolicy"], "IfNotPresent");
}

TEST(K8sPodMapTest, AContainerWithoutCommandFailsSayingWhy) {
  json pod = GpuPod();
  pod["spec"]["containers"][0].erase("command");
  pod["spec"]["containers"][0].erase("args");
  PodMapping m = MustMap(pod);
  EXPECT_FALSE(m.request.contains("argv"));
  const std::string script = m.request["script"];
  EXPECT_NE(script.find("container main (image pytorch:2.3) gives no command: berth runs "
                        "processes, not container images"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("exit 127"), std::string::npos) << script;
  pod["spec"]["containers"][0]["command"] = json::array();
  pod["spec"]["containers"][0]["args"] = json::array();
  EXPECT_NE(MustMap(pod).request["script"].get<std::string>().find("gives no command"),
            std::string::npos);
}

TEST(K8sPodMapTest, NodeSelectorAndAnnotationsChooseNodes) {
  json pod = GpuPod();
  pod["spec"]["nodeSelector"] = {
      {"kubernetes.io/hostname", "gpu07"}, {"kubernetes.io/os", "linux"},
      {"kubernetes.io/arch", "amd64"},     {"nvidia.com/gpu.product", "h100"},
      {"partition.berth.io/gpu", "true"},  {"node-role.kubernetes.io/debug", ""},
      {"feature.berth.io/ib", "true"},     {"feature.berth.io/nvlink", "true"}};
  pod["metadata"]["annotations"]["berth.io/partition"] = "extra";
  pod["metadata"]["annotations"]["berth.io/qos"] = "urgent";
  PodMapping m = MustMap(pod);
  EXPECT_EQ(m.request["nodelist"], "gpu07");
  EXPECT_EQ(m.request["gpu_type"], "h100");
  EXPECT_EQ(m.request["partition"], "debug,gpu,extra");
  EXPECT_EQ(m.request["constraint"], "ib&nvlink");
  EXPECT_EQ(m.request["qos"], "urgent");  // the annotation wins over priorityClassName
  EXPECT_EQ(m.meta["spec"]["nodeSelector"]["nvidia.com/gpu.product"], "h100");
}

TEST(K8sPodMapTest, NodeNameNamesTheNodeButIsNotKept) {
  json pod = GpuPod();
  pod["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", "gpu07"}};
  pod["spec"]["nodeName"] = "gpu09";
  PodMapping m = MustMap(pod);
  EXPECT_EQ(m.request["nodelist"], "gpu09");
  EXPECT_FALSE(m.meta["spec"].contains("nodeName"));  // set from the allocation instead
}

TEST(K8sPodMapTest, GenerateNameTakesTheSuffix) {
  json pod = GpuPod();
  pod["metadata"].erase("name");
  pod["metadata"]["generateName"] = "train-";
  PodMapping m = MustMap(pod);
  EXPECT_EQ(m.name, "train-x7k2q");
  EXPECT_EQ(m.meta["name"], "train-x7k2q");
  EXPECT_EQ(m.meta["generateName"], "train-");
  EXPECT_EQ(m.request["environment"]["HOSTNAME"], "train-x7k2q");
  EXPECT_EQ(m.request["environment"]["POD_NAME"], "train-x7k2q");
  EXPECT_EQ(m.request["argv"][2], "--out=/scratch/train-x7k2q");
  EXPECT_EQ(m.request["stdout"], "/var/log/berth/pods/ml_train-x7k2q_%j.log");
  // A given name wins over generateName.
  pod["metadata"]["name"] = "fixed";
  EXPECT_EQ(MustMap(pod).name, "fixed");
}

TEST(K8sPodMapTest, OwnerReferencesAreKept) {
  json pod = GpuPod();
  pod["metadata"]["ownerReferences"] =
      json::array({json{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", "j"}, {"uid", "u"}}});
  EXPECT_EQ(MustMap(pod).meta["ownerReferences"][0]["kind"], "Job");
}

TEST(K8sPodMapTest, KindAndApiVersionMayBeLeftOut) {
  json pod = GpuPod();
  pod.erase("kind");
  pod.erase("apiVersion");
  EXPECT_EQ(MustMap(pod).name, "train");
}

struct Refusal {
  const char* what;
  std::function<void(json&)> change;
  const char* field;
  const char* type;
};

TEST(K8sPodMapTest, RefusalsNameTheField) {
  auto c0 = [](json& p) -> json& { return p["spec"]["containers"][0]; };
  const std::vector<Refusal> cases = {
      {"not an object", [](json& p) { p = json::array(); }, "", "Invalid value"},
      {"wrong kind", [](json& p) { p["kind"] = "Job"; }, "kind", "Invalid value"},
      {"wrong apiVersion", [](json& p) { p["apiVersion"] = "batch/v1"; }, "apiVersion",
       "Invalid value"},
      {"no name", [](json& p) { p["metadata"].erase("name"); }, "metadata.name", "Required value"},
      {"bad name", [](json& p) { p["metadata"]["name"] = "Train_1"; }, "metadata.name",
       "Invalid value"},
      {"non-string label", [](json& p) { p["metadata"]["labels"]["gpus"] = 8; },
       "metadata.labels[gpus]", "Invalid value"},
      {"non-string annotation", [](json& p) { p["metadata"]["annotations"]["ok"] = true; },
       "metadata.annotations[ok]", "Invalid value"},
      {"no spec", [](json& p) { p.erase("spec"); }, "spec", "Required value"},
      {"no containers", [](json& p) { p["spec"].erase("containers"); }, "spec.containers",
       "Required value"},
      {"empty containers", [](json& p) { p["spec"]["containers"] = json::array(); },
       "spec.containers", "Required value"},
      {"two containers of one name",
       [](json& p) { p["spec"]["containers"].push_back(p["spec"]["containers"][0]); },
       "spec.containers[1].name", "Duplicate value"},
      {"an init container named like a container",
       [](json& p) {
         p["spec"]["initContainers"] =
             json::array({json{{"name", "main"}, {"image", "busybox"}, {"command", {"true"}}}});
       },
       "spec.containers[0].name", "Duplicate value"},
      {"init container without image",
       [](json& p) {
         p["spec"]["initContainers"] =
             json::array({json{{"name", "fetch"}, {"command", {"fetch-data"}}}});
       },
       "spec.initContainers[0].image", "Required value"},
      {"second container without image",
       [](json& p) {
         p["spec"]["containers"].push_back(json{{"name", "sidecar"}, {"command", {"true"}}});
       },
       "spec.containers[1].image", "Required value"},
      {"initContainers not a list", [](json& p) { p["spec"]["initContainers"] = "fetch"; },
       "spec.initContainers", "Invalid value"},
      {"no container name", [&](json& p) { c0(p).erase("name"); }, "spec.containers[0].name",
       "Required value"},
      {"bad container name", [&](json& p) { c0(p)["name"] = "Main.1"; }, "spec.containers[0].name",
       "Invalid value"},
      {"no image", [&](json& p) { c0(p).erase("image"); }, "spec.containers[0].image",
       "Required value"},
      {"non-string arg",
       [&](json& p) {
         c0(p)["args"] = json::array({"a", 1});
       },
       "spec.containers[0].args", "Invalid value"},
      {"command not a list", [&](json& p) { c0(p)["command"] = "python train.py"; },
       "spec.containers[0].command", "Invalid value"},
      {"cpu request over limit",
       [&](json& p) {
         c0(p)["resources"] = {{"requests", {{"cpu", "2"}}}, {"limits", {{"cpu", "1"}}}};
       },
       "spec.containers[0].resources.requests[cpu]", "Invalid value"},
      {"memory request over limit",
       [&](json& p) {
         c0(p)["resources"] = {{"requests", {{"memory", "2Gi"}}}, {"limits", {{"memory", "1Gi"}}}};
       },
       "spec.containers[0].resources.requests[memory]", "Invalid value"},
      {"gpu request without limit",
       [&](json& p) {
         c0(p)["resources"] = {{"requests", {{"nvidia.com/gpu", 1}}}};
       },
       "spec.containers[0].resources.limits[nvidia.com/gpu]", "Required value"},
      {"gpu request unequal to limit",
       [&](json& p) {
         c0(p)["resources"] = {{"requests", {{"nvidia.com/gpu", 1}}},
                               {"limits", {{"nvidia.com/gpu", 2}}}};
       },
       "spec.containers[0].resources.requests[nvidia.com/gpu]", "Invalid value"},
      {"fractional gpu",
       [&](json& p) {
         c0(p)["resources"] = {{"limits", {{"nvidia.com/gpu", "500m"}}}};
       },
       "spec.containers[0].resources.requests[nvidia.com/gpu]", "Invalid value"},
      {"unsupported resource",
       [&](json& p) { c0(p)["resources"]["limits"]["example.com/fpga"] = "1"; },
       "spec.containers[0].resources.limits[example.com/fpga]", "Unsupported value"},
      {"not a quantity", [&](json& p) { c0(p)["resources"]["requests"]["cpu"] = "lots"; },
       "spec.containers[0].resources.requests[cpu]", "Invalid value"},
      {"negative quantity", [&](json& p) { c0(p)["resources"]["limits"]["memory"] = "-1Gi"; },
       "spec.containers[0].resources.limits[memory]", "Invalid value"},
      {"resources not an object", [&](json& p) { c0(p)["resources"] = "big"; },
       "spec.containers[0].resources", "Invalid value"},
      {"unknown nodeSelector label",
       [](json& p) {
         p["spec"]["nodeSelector"] = {{"disktype", "ssd"}};
       },
       "spec.nodeSelector[disktype]", "Unsupported value"},
      {"windows",
       [](json& p) {
         p["spec"]["nodeSelector"] = {{"kubernetes.io/os", "windows"}};
       },
       "spec.nodeSelector[kubernetes.io/os]", "Invalid value"},
      {"partition label not true",
       [](json& p) {
         p["spec"]["nodeSelector"] = {{"partition.berth.io/gpu", "yes"}};
       },
       "spec.nodeSelector[partition.berth.io/gpu]", "Unsupported value"},
      {"non-string nodeSelector value",
       [](json& p) {
         p["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", 7}};
       },
       "spec.nodeSelector[kubernetes.io/hostname]", "Invalid value"},
      {"bad restartPolicy", [](json& p) { p["spec"]["restartPolicy"] = "Sometimes"; },
       "spec.restartPolicy", "Unsupported value"},
      {"non-string restartPolicy", [](json& p) { p["spec"]["restartPolicy"] = 5; },
       "spec.restartPolicy", "Unsupported value"},
      {"activeDeadlineSeconds 0", [](json& p) { p["spec"]["activeDeadlineSeconds"] = 0; },
       "spec.activeDeadlineSeconds", "Invalid value"},
      {"negative activeDeadlineSeconds", [](json& p) { p["spec"]["activeDeadlineSeconds"] = -5; },
       "spec.activeDeadlineSeconds", "Invalid value"},
      {"text activeDeadlineSeconds", [](json& p) { p["spec"]["activeDeadlineSeconds"] = "1h"; },
       "spec.activeDeadlineSeconds", "Invalid value"},
      {"secretKeyRef env",
       [&](json& p) {
         c0(p)["env"][1] = {{"name", "TOKEN"},
                            {"valueFrom", {{"secretKeyRef", {{"name", "s"}, {"key", "k"}}}}}};
       },
       "spec.containers[0].env[1].valueFrom", "Unsupported value"},
      {"spec.nodeName fieldRef env",
       [&](json& p) {
         c0(p)["env"][0] = {{"name", "NODE"},
                            {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}};
       },
       "spec.containers[0].env[0].valueFrom", "Unsupported value"},
      {"env without name", [&](json& p) { c0(p)["env"][0].erase("name"); },
       "spec.containers[0].env[0].name", "Required value"},
      {"env name with =", [&](json& p) { c0(p)["env"][2]["name"] = "A=B"; },
       "spec.containers[0].env[2].name", "Invalid value"},
      {"non-string env value", [&](json& p) { c0(p)["env"][0]["value"] = 3; },
       "spec.containers[0].env[0].value", "Invalid value"},
      {"env not a list",
       [&](json& p) {
         c0(p)["env"] = {{"A", "b"}};
       },
       "spec.containers[0].env", "Invalid value"},
  };
  for (const Refusal& r : cases) {
    json pod = GpuPod();
    r.change(pod);
    PodMapping m;
    std::optional<FieldProblem> p;
    try {
      p = MapPod(pod, Ctx(), &m);
    } catch (const std::exception& e) {
      ADD_FAILURE() << r.what << ": threw " << e.what();
      continue;
    }
    if (!p.has_value()) {
      ADD_FAILURE() << r.what << ": mapped";
      continue;
    }
    EXPECT_EQ(p->field, r.field) << r.what;
    EXPECT_EQ(p->type, r.type) << r.what << " (" << p->field << ")";
  }
}

TEST(K8sPodMapTest, RefusalsSayWhatIsWrong) {
  auto refusal = [](std::function<void(json&)> change) {
    json pod = GpuPod();
    change(pod);
    PodMapping m;
    std::optional<FieldProblem> p = MapPod(pod, Ctx(), &m);
    return p.value_or(FieldProblem{"<mapped>", "", "", ""});
  };
  auto show = [&](std::function<void(json&)> change) { return Show(refusal(change)); };
  EXPECT_EQ(show([](json& p) {
              p["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "1500m"}}},
                                                         {"limits", {{"cpu", "1"}}}};
            }),
            "spec.containers[0].resources.requests[cpu] | Invalid value | 1500m | must be less "
            "than or equal to cpu limit of 1");
  EXPECT_EQ(show([](json& p) {
              p["spec"]["containers"][0]["resources"] = {{"requests", {{"nvidia.com/gpu", 1}}}};
            }),
            "spec.containers[0].resources.limits[nvidia.com/gpu] | Required value |  | Limit "
            "must be set for non overcommitable resources");
  FieldProblem os = refusal([](json& p) {
    p["spec"]["nodeSelector"] = {{"kubernetes.io/os", "windows"}};
  });
  EXPECT_EQ(os.value, "windows");
  FieldProblem label = refusal([](json& p) { p["spec"]["nodeSelector"] = {{"disktype", "ssd"}}; });
  EXPECT_EQ(label.value, "disktype=ssd");
  EXPECT_NE(label.detail.find("partition.berth.io/P=true"), std::string::npos);
  FieldProblem restart = refusal([](json& p) { p["spec"]["restartPolicy"] = "Sometimes"; });
  EXPECT_EQ(restart.value, "Sometimes");
  EXPECT_EQ(restart.detail, "supported values: \"Always\", \"OnFailure\", \"Never\"");
  FieldProblem deadline = refusal([](json& p) { p["spec"]["activeDeadlineSeconds"] = 0; });
  EXPECT_EQ(deadline.value, "0");
}

TEST(K8sPodMapTest, NothingIsWrittenOnRefusal) {
  json pod = GpuPod();
  pod["spec"]["containers"][0].erase("image");
  PodMapping m;
  m.name = "untouched";
  ASSERT_TRUE(MapPod(pod, Ctx(), &m).has_value());
  EXPECT_EQ(m.name, "untouched");
  EXPECT_TRUE(m.request.is_null());
}

// ---- 422 Invalid ----------------------------------------------------------------------------

TEST(K8sPodInvalidTest, StatusAsKubectlPrintsIt) {
  json s = InvalidStatusOf("Pod", "x", {"spec.containers[0].image", "Required value", "", ""});
  EXPECT_EQ(s["kind"], "Status");
  EXPECT_EQ(s["status"], "Failure");
  EXPECT_EQ(s["code"], 422);
  EXPECT_EQ(s["reason"], "Invalid");
  EXPECT_EQ(s["message"], "Pod \"x\" is invalid: spec.containers[0].image: Required value");
  EXPECT_EQ(s["details"]["name"], "x");
  EXPECT_EQ(s["details"]["kind"], "Pod");
  EXPECT_FALSE(s["details"].contains("group"));
  ASSERT_EQ(s["details"]["causes"].size(), 1u);
  EXPECT_EQ(s["details"]["causes"][0]["field"], "spec.containers[0].image");
  EXPECT_EQ(s["details"]["causes"][0]["reason"], "FieldValueRequired");
  EXPECT_EQ(s["details"]["causes"][0]["message"], "Required value");
}

TEST(K8sPodInvalidTest, ValueAndDetailInTheMessage) {
  json s = InvalidStatusOf("Job.batch", "train",
                           {"spec.template.spec.restartPolicy", "Unsupported value", "Always",
                            "supported values: \"OnFailure\", \"Never\""});
  EXPECT_EQ(s["message"],
            "Job.batch \"train\" is invalid: spec.template.spec.restartPolicy: Unsupported value: "
            "\"Always\": supported values: \"OnFailure\", \"Never\"");
  EXPECT_EQ(s["details"]["kind"], "Job");
  EXPECT_EQ(s["details"]["group"], "batch");
  EXPECT_EQ(s["details"]["causes"][0]["reason"], "FieldValueNotSupported");
  EXPECT_EQ(s["details"]["causes"][0]["field"], "spec.template.spec.restartPolicy");
  // An Invalid value shows its value even when empty, as Kubernetes does.
  json e = InvalidStatusOf("Pod", "", {"metadata.name", "Invalid value", "", "bad"});
  EXPECT_EQ(e["message"], "Pod \"\" is invalid: metadata.name: Invalid value: \"\": bad");
  EXPECT_EQ(e["details"]["causes"][0]["reason"], "FieldValueInvalid");
  json r = InvalidStatusOf("Pod", "p",
                           {"spec.containers[0].command", "Required value", "", "say what to run"});
  EXPECT_EQ(r["message"],
            "Pod \"p\" is invalid: spec.containers[0].command: Required value: say what to run");
  json f = InvalidStatusOf("Pod", "p", {"spec", "Forbidden", "", "no"});
  EXPECT_EQ(f["details"]["causes"][0]["reason"], "FieldValueForbidden");
}

TEST(K8sPodInvalidTest, MapPodProblemsReadAsKubernetesMessages) {
  json pod = GpuPod();
  pod["metadata"]["name"] = "x";
  pod["spec"]["containers"][0].erase("image");
  PodMapping m;
  std::optional<FieldProblem> p = MapPod(pod, Ctx(), &m);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(InvalidStatusOf("Pod", "x", *p)["message"],
            "Pod \"x\" is invalid: spec.containers[0].image: Required value");
}

// ---- Berth jobs as Pods ---------------------------------------------------------------------

// The facts of the GPU pod in `state`, submitted at kNow - 100.
struct PodJob {
  json meta = MustMap(GpuPod()).meta;
  PodFacts Facts(const std::string& state) const {
    PodFacts f;
    f.job_id = 42;
    f.state = state;
    f.submit_time = kNow - 100;
    f.resource_version = "17";
    f.user = "alice";
    f.account = "ml-research";
    f.partition = "gpu";
    f.meta = &meta;
    if (state != "PENDING") {
      f.node = "gpu07";
      f.start_time = kNow - 60;
    }
    if (PodPhase(state) != "Pending" && PodPhase(state) != "Running") f.end_time = kNow - 10;
    return f;
  }
};

const json& Condition(const json& pod, const std::string& type) {
  static const json kNone;
  for (const json& c : pod["status"]["conditions"]) {
    if (c["type"] == type) return c;
  }
  return kNone;
}

std::string TableStatus(const json& pod) {
  return PodTableCells(pod, kNow)[2];
}

TEST(K8sPodEncodeTest, Phases) {
  EXPECT_EQ(PodPhase("PENDING"), "Pending");
  EXPECT_EQ(PodPhase("SUSPENDED"), "Running");  // it keeps its node
  EXPECT_EQ(PodPhase("CONFIGURING"), "Running");
  EXPECT_EQ(PodPhase("RUNNING"), "Running");
  EXPECT_EQ(PodPhase("COMPLETING"), "Running");
  EXPECT_EQ(PodPhase("COMPLETED"), "Succeeded");
  for (const char* s : {"FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED",
                        "BOOT_FAIL", "DEADLINE"}) {
    EXPECT_EQ(PodPhase(s), "Failed") << s;
  }
}

TEST(K8sPodEncodeTest, ObjectAndMetadata) {
  PodJob j;
  json pod = EncodePod(j.Facts("RUNNING"));
  EXPECT_EQ(pod["apiVersion"], "v1");
  EXPECT_EQ(pod["kind"], "Pod");
  const json& md = pod["metadata"];
  EXPECT_EQ(md["name"], "train");
  EXPECT_EQ(md["namespace"], "ml");
  EXPECT_EQ(md["resourceVersion"], "17");
  EXPECT_EQ(md["creationTimestamp"], Rfc3339(kNow));  // when the manifest was mapped
  EXPECT_EQ(md["uid"].get<std::string>().size(), 36u);
  EXPECT_EQ(md["uid"], EncodePod(j.Facts("COMPLETED"))["metadata"]["uid"]);  // stable
  PodFacts other = j.Facts("RUNNING");
  other.job_id = 43;
  EXPECT_NE(md["uid"], EncodePod(other)["metadata"]["uid"]);
  EXPECT_EQ(md["labels"]["app"], "llm");
  EXPECT_EQ(md["labels"]["berth.io/job-id"], "42");
  EXPECT_EQ(md["annotations"]["note"], "first try");
  EXPECT_EQ(md["annotations"]["berth.io/job-id"], "42");
  EXPECT_EQ(md["annotations"]["berth.io/state"], "RUNNING");
  EXPECT_EQ(md["annotations"]["berth.io/partition"], "gpu");
  EXPECT_FALSE(md.contains("deletionTimestamp"));
  EXPECT_EQ(pod["spec"]["containers"][0]["name"], "main");
  EXPECT_EQ(pod["spec"]["restartPolicy"], "Always");
  EXPECT_EQ(PodNamespace(j.Facts("RUNNING")), "ml");
  EXPECT_EQ(PodName(j.Facts("RUNNING")), "train");
}

TEST(K8sPodEncodeTest, Pending) {
  PodJob j;
  PodFacts f = j.Facts("PENDING");
  f.reason = "Resources";
  f.reason_detail = "2 GPUs free, 4 asked";
  json pod = EncodePod(f);
  EXPECT_EQ(pod["status"]["phase"], "Pending");
  const json& sched = Condition(pod, "PodScheduled");
  EXPECT_EQ(sched["status"], "False");
  EXPECT_EQ(sched["reason"], "Unschedulable");
  EXPECT_EQ(sched["message"], "berth: Resources (2 GPUs free, 4 asked)");
  EXPECT_EQ(sched["lastTransitionTime"], Rfc3339(kNow - 100));
  EXPECT_TRUE(Condition(pod, "Ready").is_null());
  EXPECT_FALSE(pod["status"].contains("containerStatuses"));
  EXPECT_FALSE(pod["status"].contains("startTime"));
  EXPECT_FALSE(pod["spec"].contains("nodeName"));
  EXPECT_EQ(PodTableCells(pod, kNow),
            json({"train", "0/1", "Pending", 0, "0s", "<none>", "<none>", "<none>", "<none>"}));
  f.reason = "";
  f.reason_detail = "";
  EXPECT_EQ(Condition(EncodePod(f), "PodScheduled")["message"],
            "waiting for the scheduler's next pass");
}

TEST(K8sPodEncodeTest, Running) {
  PodJob j;
  json pod = EncodePod(j.Facts("RUNNING"));
  const json& st = pod["status"];
  EXPECT_EQ(st["phase"], "Running");
  EXPECT_EQ(st["startTime"], Rfc3339(kNow - 60));
  EXPECT_EQ(st["hostIP"], "127.0.0.1");
  EXPECT_EQ(pod["spec"]["nodeName"], "gpu07");
  for (const char* type :
       {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
    EXPECT_EQ(Condition(pod, type)["status"], "True") << type;
  }
  ASSERT_EQ(st["containerStatuses"].size(), 1u);
  const json& cs = st["containerStatuses"][0];
  EXPECT_EQ(cs["name"], "main");
  EXPECT_EQ(cs["image"], "pytorch:2.3");
  EXPECT_EQ(cs["ready"], true);
  EXPECT_EQ(cs["started"], true);
  EXPECT_EQ(cs["state"], json::object({{"running", {{"startedAt", Rfc3339(kNow - 60)}}}}));
  EXPECT_FALSE(st.contains("reason"));
  const json cells = PodTableCells(pod, kNow + 20);
  EXPECT_EQ(cells[0], "train");
  EXPECT_EQ(cells[1], "1/1");
  EXPECT_EQ(cells[2], "Running");
  EXPECT_EQ(cells[3], 0);
  EXPECT_EQ(cells[4], "20s");
  EXPECT_EQ(cells[6], "gpu07");
  for (const char* s : {"CONFIGURING", "COMPLETING"}) {
    EXPECT_EQ(EncodePod(j.Facts(s))["status"]["phase"], "Running") << s;
  }
}

TEST(K8sPodEncodeTest, Completed) {
  PodJob j;
  json pod = EncodePod(j.Facts("COMPLETED"));
  EXPECT_EQ(pod["status"]["phase"], "Succeeded");
  const json& cs = pod["status"]["containerStatuses"][0];
  EXPECT_EQ(cs["ready"], false);
  const json& t = cs["state"]["terminated"];
  EXPECT_EQ(t["exitCode"], 0);
  EXPECT_EQ(t["reason"], "Completed");
  EXPECT_EQ(t["startedAt"], Rfc3339(kNow - 60));
  EXPECT_EQ(t["finishedAt"], Rfc3339(kNow - 10));
  EXPECT_FALSE(t.contains("signal"));
  EXPECT_EQ(Condition(pod, "Ready")["status"], "False");
  EXPECT_EQ(Condition(pod, "Ready")["reason"], "PodCompleted");
  EXPECT_EQ(Condition(pod, "PodScheduled")["status"], "True");
  EXPECT_EQ(TableStatus(pod), "Completed");
  EXPECT_EQ(PodTableCells(pod, kNow)[1], "0/1");
}

TEST(K8sPodEncodeTest, FailedCarriesTheExitCode) {
  PodJob j;
  PodFacts f = j.Facts("FAILED");
  f.exit_code = 3;
  json pod = EncodePod(f);
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  const json& t = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(t["exitCode"], 3);
  EXPECT_EQ(t["reason"], "Error");
  EXPECT_EQ(TableStatus(pod), "Error");
  // A failure is never exit code 0.
  f.exit_code = 0;
  EXPECT_EQ(EncodePod(f)["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 1);
}

TEST(K8sPodEncodeTest, OutOfMemory) {
  PodJob j;
  PodFacts f = j.Facts("OUT_OF_MEMORY");
  f.message = "out of memory: 16384 MiB";
  json pod = EncodePod(f);
  const json& t = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(t["reason"], "OOMKilled");
  EXPECT_EQ(t["exitCode"], 137);
  EXPECT_EQ(t["message"], "out of memory: 16384 MiB");
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  EXPECT_EQ(TableStatus(pod), "OOMKilled");
}

TEST(K8sPodEncodeTest, Timeout) {
  PodJob j;
  json pod = EncodePod(j.Facts("TIMEOUT"));
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  EXPECT_EQ(pod["status"]["reason"], "DeadlineExceeded");
  EXPECT_EQ(pod["status"]["message"],
            "Pod was active on the node longer than the specified deadline");
  EXPECT_EQ(TableStatus(pod), "DeadlineExceeded");
}

TEST(K8sPodEncodeTest, CancelledBySignal) {
  PodJob j;
  PodFacts f = j.Facts("CANCELLED");
  f.term_signal = 15;
  json pod = EncodePod(f);
  const json& t = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(t["exitCode"], 143);
  EXPECT_EQ(t["signal"], 15);
  EXPECT_EQ(t["reason"], "Error");
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  EXPECT_EQ(pod["status"]["message"], "cancelled");
}

TEST(K8sPodEncodeTest, EndedBeforeItWasPlaced) {
  PodJob j;
  PodFacts f = j.Facts("CANCELLED");
  f.start_time = 0;
  f.node = "";
  json pod = EncodePod(f);
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  const json& sched = Condition(pod, "PodScheduled");
  EXPECT_EQ(sched["status"], "False");
  EXPECT_EQ(sched["lastTransitionTime"], Rfc3339(kNow - 10));
  EXPECT_FALSE(pod["status"].contains("startTime"));
  const json& t = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(t["startedAt"], Rfc3339(kNow - 10));
  EXPECT_EQ(t["finishedAt"], Rfc3339(kNow - 10));
}

TEST(K8sPodEncodeTest, OtherEndings) {
  PodJob j;
  json preempted = EncodePod(j.Facts("PREEMPTED"));
  EXPECT_EQ(preempted["status"]["reason"], "Preempted");
  EXPECT_EQ(TableStatus(preempted), "Preempted");
  json lost = EncodePod(j.Facts("NODE_FAIL"));
  EXPECT_EQ(lost["status"]["reason"], "NodeLost");
  EXPECT_EQ(lost["status"]["message"], "the node gpu07 was lost");
}

TEST(K8sPodEncodeTest, DeletionShowsTerminatingWhileRunning) {
  PodJob j;
  PodFacts f = j.Facts("RUNNING");
  f.deleted_at = kNow - 5;
  json pod = EncodePod(f);
  EXPECT_EQ(pod["metadata"]["deletionTimestamp"], Rfc3339(kNow - 5));
  EXPECT_EQ(pod["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_EQ(TableStatus(pod), "Terminating");
  PodFacts pending = j.Facts("PENDING");
  pending.deleted_at = kNow - 5;
  EXPECT_EQ(TableStatus(EncodePod(pending)), "Terminating");
  // Once it has ended, it shows how it ended.
  PodFacts done = j.Facts("COMPLETED");
  done.deleted_at = kNow - 5;
  EXPECT_EQ(TableStatus(EncodePod(done)), "Completed");
}

TEST(K8sPodEncodeTest, RestartsAreCounted) {
  PodJob j;
  PodFacts f = j.Facts("RUNNING");
  f.restart_count = 2;
  json pod = EncodePod(f);
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["restartCount"], 2);
  EXPECT_EQ(PodTableCells(pod, kNow)[3], 2);
}

// The Python client refuses a containerStatus without these.
// (SUSPENDED is left out: nothing in berth suspends a job yet, and a started job in the Pending
// phase would get a container state of null.)
TEST(K8sPodEncodeTest, EveryContainerStatusHasTheRequiredFields) {
  PodJob j;
  for (const char* state :
       {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "COMPLETED", "FAILED", "CANCELLED",
        "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE"}) {
    json pod = EncodePod(j.Facts(state));
    for (const json& c : pod["status"]["conditions"]) {
      EXPECT_TRUE(c["type"].is_string()) << state;
      EXPECT_TRUE(c["status"].is_string()) << state;
    }
    const json& list = pod["status"]["containerStatuses"];
    if (list.is_null()) continue;
    for (const json& cs : list) {
      EXPECT_TRUE(cs["name"].is_string()) << state;
      EXPECT_TRUE(cs["image"].is_string()) << state;
      EXPECT_TRUE(cs["imageID"].is_string()) << state;
      EXPECT_TRUE(cs["ready"].is_boolean()) << state;
      EXPECT_TRUE(cs["restartCount"].is_number_integer()) << state;
      EXPECT_TRUE(cs["state"].is_object()) << state;
    }
  }
}

TEST(K8sPodEncodeTest, EveryContainerHasAStatus) {
  PodJob j;
  j.meta = MustMap(TwoContainerPod()).meta;
  json pod = EncodePod(j.Facts("RUNNING"));
  const json& list = pod["status"]["containerStatuses"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["name"], "main");
  EXPECT_EQ(list[0]["image"], "pytorch:2.3");
  EXPECT_EQ(list[1]["name"], "logger");
  EXPECT_EQ(list[1]["image"], "busybox");
  EXPECT_EQ(list[1]["state"], list[0]["state"]);  // one berth job: one state
  EXPECT_EQ(PodTableCells(pod, kNow)[1], "2/2");
  EXPECT_EQ(PodTableCells(EncodePod(j.Facts("PENDING")), kNow)[1], "0/2");
  EXPECT_EQ(PodTableCells(EncodePod(j.Facts("COMPLETED")), kNow)[1], "0/2");
}

TEST(K8sPodEncodeTest, SlurmJobAsAPod) {
  PodFacts f;
  f.job_id = 1234;
  f.state = "RUNNING";
  f.node = "cpu03";
  f.submit_time = kNow - 300;
  f.start_time = kNow - 200;
  f.user = "bob";
  f.account = "physics";
  f.cpus = 4;
  f.mem_mib = 16384;
  f.gpus = 2;
  f.time_limit = 7200;
  EXPECT_EQ(PodNamespace(f), kSlurmNamespace);
  EXPECT_EQ(PodName(f), "job-1234");
  json pod = EncodePod(f);
  const json& md = pod["metadata"];
  EXPECT_EQ(md["namespace"], "slurm");
  EXPECT_EQ(md["name"], "job-1234");
  EXPECT_EQ(md["creationTimestamp"], Rfc3339(kNow - 300));
  EXPECT_EQ(md["labels"]["berth.io/user"], "bob");
  EXPECT_EQ(md["labels"]["berth.io/account"], "physics");
  EXPECT_EQ(md["labels"]["berth.io/job-id"], "1234");
  const json& spec = pod["spec"];
  EXPECT_EQ(spec["restartPolicy"], "Never");
  EXPECT_EQ(spec["schedulerName"], "berth");
  EXPECT_EQ(spec["nodeName"], "cpu03");
  EXPECT_EQ(spec["activeDeadlineSeconds"], 7200);
  ASSERT_EQ(spec["containers"].size(), 1u);
  const json& c = spec["containers"][0];
  EXPECT_EQ(c["name"], "batch");
  const json requests = {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", "2"}};
  EXPECT_EQ(c["resources"]["requests"], requests);
  EXPECT_EQ(c["resources"]["limits"], requests);
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["name"], "batch");
  EXPECT_EQ(pod["status"]["phase"], "Running");
  // No memory or GPUs asked: neither appears; no CPUs counted: one.
  PodFacts small;
  small.job_id = 7;
  small.state = "PENDING";
  json s = EncodePod(small);
  EXPECT_EQ(s["spec"]["containers"][0]["resources"]["requests"], json::object({{"cpu", "1"}}));
  EXPECT_FALSE(s["spec"].contains("activeDeadlineSeconds"));
}

TEST(K8sPodTableTest, Columns) {
  json cols = PodTableColumns();
  std::vector<std::string> names;
  for (const json& c : cols) names.push_back(c["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"Name", "Ready", "Status", "Restarts", "Age", "IP",
                                             "Node", "Nominated Node", "Readiness Gates"}));
  for (size_t i = 0; i < cols.size(); ++i) EXPECT_EQ(cols[i]["priority"], i < 5 ? 0 : 1) << i;
  EXPECT_EQ(cols[0]["format"], "name");
  EXPECT_EQ(cols[3]["type"], "integer");
  EXPECT_EQ(PodTableCells(EncodePod(PodJob().Facts("RUNNING")), kNow).size(), cols.size());
}

TEST(K8sPodTableTest, CellsOfAForeignPod) {
  // A pod as another server would write it: podIP, and a waiting container.
  json pod = json::parse(R"json({
    "metadata": {"name": "p", "creationTimestamp": "2026-12-03T03:59:53Z"},
    "spec": {"nodeName": "n1"},
    "status": {"phase": "Pending", "podIP": "10.0.0.7",
               "containerStatuses": [{"ready": false, "restartCount": 1,
                                      "state": {"waiting": {"reason": "ContainerCreating"}}}]}
  })json");
  EXPECT_EQ(PodTableCells(pod, kNow), json({"p", "0/1", "ContainerCreating", 1, "2m5s", "10.0.0.7",
                                            "n1", "<none>", "<none>"}));
}

TEST(K8sPodTableTest, FieldSelectors) {
  PodJob j;
  json pod = EncodePod(j.Facts("RUNNING"));
  EXPECT_EQ(PodField(pod, "metadata.name"), "train");
  EXPECT_EQ(PodField(pod, "metadata.namespace"), "ml");
  EXPECT_EQ(PodField(pod, "spec.nodeName"), "gpu07");
  EXPECT_EQ(PodField(pod, "status.phase"), "Running");
  EXPECT_EQ(PodField(pod, "spec.restartPolicy"), "Always");
  EXPECT_EQ(PodField(pod, "spec.schedulerName"), "berth");
  EXPECT_EQ(PodField(pod, "spec.serviceAccountName"), "");
  EXPECT_EQ(PodField(pod, "status.podIP"), "");
  EXPECT_EQ(PodField(pod, "status.nominatedNodeName"), "");
  EXPECT_EQ(PodField(EncodePod(j.Facts("PENDING")), "spec.nodeName"), "");
  for (const char* other :
       {"metadata.uid", "metadata.labels", "spec.containers", "status", "", "status.phase.x"}) {
    EXPECT_EQ(PodField(pod, other), std::nullopt) << other;
  }
}

// ---- Jobs -----------------------------------------------------------------------------------

json JobManifest() {
  return json::parse(R"json({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "train"},
    "spec": {"template": {
      "metadata": {"labels": {"app": "llm"}},
      "spec": {"restartPolicy": "Never",
               "containers": [{"name": "main", "image": "pytorch:2.3",
                               "command": ["python", "train.py",
                                           "--shard=$(JOB_COMPLETION_INDEX)"],
                               "env": [{"name": "A", "value": "1"}],
                               "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}
  })json");
}

constexpr const char* kUid = "6a1f7c1e-3b1d-4c5e-9f00-0123456789ab";

json MustDefault(const json& manifest) {
  json out;
  std::optional<FieldProblem> p = DefaultJob(manifest, "ml", kUid, kNow, &out);
  EXPECT_EQ(p, std::nullopt) << (p ? p->field + ": " + p->type + ": " + p->detail : "");
  return out;
}

TEST(K8sJobDefaultTest, Defaults) {
  json job = MustDefault(JobManifest());
  EXPECT_EQ(job["apiVersion"], "batch/v1");
  EXPECT_EQ(job["kind"], "Job");
  const json& md = job["metadata"];
  EXPECT_EQ(md["name"], "train");
  EXPECT_EQ(md["namespace"], "ml");
  EXPECT_EQ(md["uid"], kUid);
  EXPECT_EQ(md["creationTimestamp"], Rfc3339(kNow));
  EXPECT_EQ(md["generation"], 1);
  EXPECT_TRUE(md["labels"].is_object());
  const json& spec = job["spec"];
  EXPECT_EQ(spec["parallelism"], 1);
  EXPECT_EQ(spec["completions"], 1);
  EXPECT_EQ(spec["backoffLimit"], 6);
  EXPECT_EQ(spec["completionMode"], "NonIndexed");
  EXPECT_EQ(spec["suspend"], false);
  EXPECT_EQ(spec["manualSelector"], false);
  EXPECT_EQ(spec["podReplacementPolicy"], "TerminatingOrFailed");
  EXPECT_EQ(spec["selector"],
            json::object({{"matchLabels", {{"batch.kubernetes.io/controller-uid", kUid}}}}));
  EXPECT_EQ(spec["template"]["metadata"]["labels"],
            json({{"app", "llm"},
                  {"batch.kubernetes.io/controller-uid", kUid},
                  {"batch.kubernetes.io/job-name", "train"},
                  {"controller-uid", kUid},
                  {"job-name", "train"}}));
  EXPECT_EQ(job["status"], json::object());
  EXPECT_FALSE(spec.contains("activeDeadlineSeconds"));
  EXPECT_FALSE(spec.contains("ttlSecondsAfterFinished"));
}

TEST(K8sJobDefaultTest, ParallelismAloneMakesAWorkQueue) {
  json m = JobManifest();
  m["spec"]["parallelism"] = 3;
  json job = MustDefault(m);
  EXPECT_EQ(job["spec"]["parallelism"], 3);
  EXPECT_TRUE(job["spec"]["completions"].is_null());  // as the API server leaves it
  EXPECT_EQ(JobTableCells(job, kNow)[2], "0/1 of 3");
  m["spec"]["completions"] = 10;
  job = MustDefault(m);
  EXPECT_EQ(job["spec"]["completions"], 10);
  m = JobManifest();
  m["spec"]["completions"] = 4;
  job = MustDefault(m);
  EXPECT_EQ(job["spec"]["parallelism"], 1);
  EXPECT_EQ(job["spec"]["completions"], 4);
}

TEST(K8sJobDefaultTest, GivenValuesAreKept) {
  json m = JobManifest();
  m["spec"]["backoffLimit"] = 0;
  m["spec"]["suspend"] = true;
  m["spec"]["completionMode"] = "Indexed";
  m["spec"]["completions"] = 5;
  m["spec"]["activeDeadlineSeconds"] = 600;
  m["spec"]["ttlSecondsAfterFinished"] = 0;
  m["metadata"]["labels"] = {{"team", "vision"}};
  json job = MustDefault(m);
  EXPECT_EQ(job["spec"]["backoffLimit"], 0);
  EXPECT_EQ(job["spec"]["suspend"], true);
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["completions"], 5);
  EXPECT_EQ(job["spec"]["activeDeadlineSeconds"], 600);
  EXPECT_EQ(job["spec"]["ttlSecondsAfterFinished"], 0);
  EXPECT_EQ(job["metadata"]["labels"], json::object({{"team", "vision"}}));
}

TEST(K8sJobDefaultTest, RefusalsNameTheField) {
  auto tspec = [](json& j) -> json& { return j["spec"]["template"]["spec"]; };
  const std::vector<Refusal> cases = {
      {"not an object", [](json& j) { j = "job"; }, "", "Invalid value"},
      {"wrong kind", [](json& j) { j["kind"] = "Pod"; }, "kind", "Invalid value"},
      {"wrong apiVersion", [](json& j) { j["apiVersion"] = "v1"; }, "apiVersion", "Invalid value"},
      {"no name", [](json& j) { j["metadata"].erase("name"); }, "metadata.name", "Required value"},
      {"bad name", [](json& j) { j["metadata"]["name"] = "Train"; }, "metadata.name",
       "Invalid value"},
      {"no spec", [](json& j) { j.erase("spec"); }, "spec", "Required value"},
      {"negative parallelism", [](json& j) { j["spec"]["parallelism"] = -1; }, "spec.parallelism",
       "Invalid value"},
      {"text parallelism", [](json& j) { j["spec"]["parallelism"] = "2"; }, "spec.parallelism",
       "Invalid value"},
      {"negative completions", [](json& j) { j["spec"]["completions"] = -2; }, "spec.completions",
       "Invalid value"},
      {"negative backoffLimit", [](json& j) { j["spec"]["backoffLimit"] = -1; },
       "spec.backoffLimit", "Invalid value"},
      {"activeDeadlineSeconds 0", [](json& j) { j["spec"]["activeDeadlineSeconds"] = 0; },
       "spec.activeDeadlineSeconds", "Invalid value"},
      {"negative ttl", [](json& j) { j["spec"]["ttlSecondsAfterFinished"] = -1; },
       "spec.ttlSecondsAfterFinished", "Invalid value"},
      {"Indexed without completions", [](json& j) { j["spec"]["completionMode"] = "Indexed"; },
       "spec.completions", "Required value"},
      {"Indexed, too many completions",
       [](json& j) {
         j["spec"]["completionMode"] = "Indexed";
         j["spec"]["completions"] = 100001;
       },
       "spec.completions", "Invalid value"},
      {"bad completionMode", [](json& j) { j["spec"]["completionMode"] = "Sometimes"; },
       "spec.completionMode", "Unsupported value"},
      {"non-string completionMode", [](json& j) { j["spec"]["completionMode"] = 1; },
       "spec.completionMode", "Unsupported value"},
      {"podFailurePolicy without restartPolicy Never",
       [&](json& j) {
         tspec(j)["restartPolicy"] = "OnFailure";
         j["spec"]["podFailurePolicy"] = {{"rules", json::array()}};
       },
       "spec.template.spec.restartPolicy", "Invalid value"},
      {"successPolicy of a NonIndexed Job",
       [](json& j) {
         j["spec"]["successPolicy"] = {{"rules", json::array()}};
       },
       "spec.successPolicy", "Invalid value"},
      {"non-boolean suspend", [](json& j) { j["spec"]["suspend"] = "yes"; }, "spec.suspend",
       "Invalid value"},
      {"no template", [](json& j) { j["spec"].erase("template"); }, "spec.template",
       "Required value"},
      {"restartPolicy Always", [&](json& j) { tspec(j)["restartPolicy"] = "Always"; },
       "spec.template.spec.restartPolicy", "Unsupported value"},
      {"no restartPolicy", [&](json& j) { tspec(j).erase("restartPolicy"); },
       "spec.template.spec.restartPolicy", "Required value"},
      {"template without image", [&](json& j) { tspec(j)["containers"][0].erase("image"); },
       "spec.template.spec.containers[0].image", "Required value"},
      {"template without containers", [&](json& j) { tspec(j).erase("containers"); },
       "spec.template.spec.containers", "Required value"},
      {"template gpu request without limit",
       [&](json& j) {
         tspec(j)["containers"][0]["resources"] = {{"requests", {{"nvidia.com/gpu", 1}}}};
       },
       "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]", "Required value"},
      {"template label not a string",
       [](json& j) { j["spec"]["template"]["metadata"]["labels"]["n"] = 1; },
       "spec.template.metadata.labels[n]", "Invalid value"},
  };
  for (const Refusal& r : cases) {
    json m = JobManifest();
    r.change(m);
    json out = "untouched";
    std::optional<FieldProblem> p;
    try {
      p = DefaultJob(m, "ml", kUid, kNow, &out);
    } catch (const std::exception& e) {
      ADD_FAILURE() << r.what << ": threw " << e.what();
      continue;
    }
    if (!p.has_value()) {
      ADD_FAILURE() << r.what << ": accepted";
      continue;
    }
    EXPECT_EQ(p->field, r.field) << r.what;
    EXPECT_EQ(p->type, r.type) << r.what << " (" << p->field << ")";
    EXPECT_EQ(out, "untouched") << r.what;
  }
}

TEST(K8sJobPodTest, PodFromTemplate) {
  json job = MustDefault(JobManifest());
  json pod = PodFromTemplate(job, -1, "train-x7k2q");
  EXPECT_EQ(pod["apiVersion"], "v1");
  EXPECT_EQ(pod["kind"], "Pod");
  const json& md = pod["metadata"];
  EXPECT_EQ(md["name"], "train-x7k2q");
  EXPECT_EQ(md["generateName"], "train-");
  EXPECT_EQ(md["labels"]["job-name"], "train");
  EXPECT_EQ(md["labels"]["batch.kubernetes.io/controller-uid"], kUid);
  EXPECT_EQ(md["labels"]["app"], "llm");
  EXPECT_FALSE(md["labels"].contains("batch.kubernetes.io/job-completion-index"));
  EXPECT_FALSE(md["annotations"].contains("batch.kubernetes.io/job-completion-index"));
  ASSERT_EQ(md["ownerReferences"].size(), 1u);
  EXPECT_EQ(md["ownerReferences"][0], json({{"apiVersion", "batch/v1"},
                                            {"kind", "Job"},
                                            {"name", "train"},
                                            {"uid", kUid},
                                            {"controller", true},
                                            {"blockOwnerDeletion", true}}));
  EXPECT_EQ(pod["spec"], job["spec"]["template"]["spec"]);
  // It maps: the Job's pods are ordinary pods.
  PodMapping m = MustMap(pod);
  EXPECT_EQ(m.name, "train-x7k2q");
  EXPECT_EQ(m.meta["ownerReferences"][0]["uid"], kUid);
  EXPECT_EQ(m.meta["spec"]["restartPolicy"], "Never");
  EXPECT_EQ(m.request["argv"][2], "--shard=$(JOB_COMPLETION_INDEX)");  // not defined: kept
}

TEST(K8sJobPodTest, IndexedPodsKnowTheirIndex) {
  json m = JobManifest();
  m["spec"]["completionMode"] = "Indexed";
  m["spec"]["completions"] = 4;
  json job = MustDefault(m);
  json pod = PodFromTemplate(job, 3, "train-3-x7k2q");
  EXPECT_EQ(pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"], "3");
  EXPECT_EQ(pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"], "3");
  const json& env = pod["spec"]["containers"][0]["env"];
  ASSERT_EQ(env.size(), 2u);
  EXPECT_EQ(env[0]["name"], "A");
  EXPECT_EQ(env[1], json({{"name", "JOB_COMPLETION_INDEX"}, {"value", "3"}}));  // appended
  // A container that sets the variable itself keeps its own.
  json own = job;
  own["spec"]["template"]["spec"]["containers"][0]["env"] =
      json::array({{{"name", "JOB_COMPLETION_INDEX"}, {"value", "mine"}}});
  const json own_pod = PodFromTemplate(own, 3, "train-3-y");
  const json& own_env = own_pod["spec"]["containers"][0]["env"];
  ASSERT_EQ(own_env.size(), 1u);
  EXPECT_EQ(own_env[0]["value"], "mine");
  PodMapping mapped = MustMap(pod);
  EXPECT_EQ(mapped.request["environment"]["JOB_COMPLETION_INDEX"], "3");
  EXPECT_EQ(mapped.request["argv"][2], "--shard=3");
  // The job itself is not changed.
  EXPECT_EQ(job["spec"]["template"]["spec"]["containers"][0]["env"].size(), 1u);
  // Every container and init container gets it.
  json several = m;
  json& tspec = several["spec"]["template"]["spec"];
  tspec["containers"].push_back(
      json{{"name", "logger"}, {"image", "busybox"}, {"command", json::array({"log"})}});
  tspec["initContainers"] = json::array(
      {json{{"name", "fetch"}, {"image", "busybox"}, {"command", json::array({"fetch"})}}});
  json pod2 = PodFromTemplate(MustDefault(several), 2, "train-2-x7k2q");
  EXPECT_EQ(pod2["spec"]["containers"][1]["env"],
            json::array({json{{"name", "JOB_COMPLETION_INDEX"}, {"value", "2"}}}));
  EXPECT_EQ(pod2["spec"]["initContainers"][0]["env"][0]["value"], "2");
  // A container without env gets one.
  job["spec"]["template"]["spec"]["containers"][0].erase("env");
  EXPECT_EQ(PodFromTemplate(job, 0, "p")["spec"]["containers"][0]["env"],
            json::array({json{{"name", "JOB_COMPLETION_INDEX"}, {"value", "0"}}}));
}

TEST(K8sJobTableTest, Columns) {
  std::vector<std::string> names;
  for (const json& c : JobTableColumns()) names.push_back(c["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"Name", "Status", "Completions", "Duration", "Age",
                                             "Containers", "Images", "Selector"}));
}

TEST(K8sJobTableTest, Cells) {
  json job = MustDefault(JobManifest());
  const std::string selector = std::string("batch.kubernetes.io/controller-uid=") + kUid;
  EXPECT_EQ(JobTableCells(job, kNow + 30),
            json({"train", "Running", "0/1", "", "30s", "main", "pytorch:2.3", selector}));
  job["status"] = {{"startTime", Rfc3339(kNow + 5)}, {"active", 1}};
  EXPECT_EQ(JobTableCells(job, kNow + 30)[3], "25s");  // still going: up to now
  job["status"]["succeeded"] = 1;
  job["status"]["completionTime"] = Rfc3339(kNow + 15);
  job["status"]["conditions"] =
      json::array({json{{"type", "SuccessCriteriaMet"}, {"status", "True"}},
                   json{{"type", "Complete"}, {"status", "True"}}});
  json cells = JobTableCells(job, kNow + 200);
  EXPECT_EQ(cells[1], "Complete");
  EXPECT_EQ(cells[2], "1/1");
  EXPECT_EQ(cells[3], "10s");
  EXPECT_EQ(cells[4], "3m20s");
  job["status"]["conditions"] = json::array({json{{"type", "Failed"}, {"status", "True"}},
                                             json{{"type", "Complete"}, {"status", "False"}}});
  EXPECT_EQ(JobTableCells(job, kNow)[1], "Failed");
  job["status"] = json::object();
  job["spec"]["suspend"] = true;
  EXPECT_EQ(JobTableCells(job, kNow)[1], "Suspended");
  job["spec"]["completions"] = 8;
  job["status"]["succeeded"] = 3;
  EXPECT_EQ(JobTableCells(job, kNow)[2], "3/8");
}

TEST(K8sJobTableTest, FieldSelectors) {
  json job = MustDefault(JobManifest());
  EXPECT_EQ(JobField(job, "metadata.name"), "train");
  EXPECT_EQ(JobField(job, "metadata.namespace"), "ml");
  EXPECT_EQ(JobField(job, "status.successful"), "0");
  job["status"]["succeeded"] = 2;
  EXPECT_EQ(JobField(job, "status.successful"), "2");
  EXPECT_EQ(JobField(job, "spec.completions"), std::nullopt);
  EXPECT_EQ(JobField(job, "status.phase"), std::nullopt);
}

// A Job as a client wrote it (no status yet) still has cells and fields.
TEST(K8sJobTableTest, JobWithoutStatus) {
  json job = JobManifest();
  std::optional<std::string> succeeded;
  ASSERT_NO_THROW(succeeded = JobField(job, "status.successful"));
  EXPECT_EQ(succeeded, "0");
  json cells;
  ASSERT_NO_THROW(cells = JobTableCells(job, kNow));
  EXPECT_EQ(cells[2], "0/1");
}

// ---- Events ---------------------------------------------------------------------------------

TEST(K8sEventTest, MakeEventShape) {
  json pod = EncodePod(PodJob().Facts("PENDING"));
  json e = MakeEvent(pod, "Warning", "FailedScheduling", "berth: Resources", kNow - 40, 3,
                     "berth-scheduler");
  EXPECT_EQ(e["apiVersion"], "v1");
  EXPECT_EQ(e["kind"], "Event");
  EXPECT_EQ(e["metadata"]["namespace"], "ml");
  EXPECT_EQ(e["metadata"]["name"].get<std::string>().rfind("train.", 0), 0u);
  EXPECT_EQ(e["metadata"]["creationTimestamp"], Rfc3339(kNow - 40));
  EXPECT_EQ(e["involvedObject"], json({{"apiVersion", "v1"},
                                       {"kind", "Pod"},
                                       {"namespace", "ml"},
                                       {"name", "train"},
                                       {"uid", pod["metadata"]["uid"]}}));
  EXPECT_EQ(e["type"], "Warning");
  EXPECT_EQ(e["reason"], "FailedScheduling");
  EXPECT_EQ(e["message"], "berth: Resources");
  EXPECT_EQ(e["source"], json::object({{"component", "berth-scheduler"}}));
  EXPECT_EQ(e["count"], 3);
  EXPECT_EQ(e["firstTimestamp"], Rfc3339(kNow - 40));
  EXPECT_EQ(e["lastTimestamp"], Rfc3339(kNow - 40));
  // The same happening on the same object is the same event (its count goes up).
  json again =
      MakeEvent(pod, "Warning", "FailedScheduling", "berth: Resources", kNow, 4, "berth-scheduler");
  EXPECT_EQ(again["metadata"]["name"], e["metadata"]["name"]);
  EXPECT_EQ(again["metadata"]["uid"], e["metadata"]["uid"]);
  EXPECT_NE(MakeEvent(pod, "Normal", "Scheduled", "on gpu07", kNow, 1, "b")["metadata"]["name"],
            e["metadata"]["name"]);
}

TEST(K8sEventTest, EventsAboutNodesLiveInDefault) {
  json node = {
      {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "gpu07"}, {"uid", "n-uid"}}}};
  json e = MakeEvent(node, "Normal", "NodeNotReady", "agent lost", kNow, 1, "berth-controller");
  EXPECT_EQ(e["metadata"]["namespace"], "default");
  EXPECT_EQ(e["involvedObject"]["namespace"], "");
  EXPECT_EQ(e["involvedObject"]["kind"], "Node");
}

TEST(K8sEventTest, TableAndFields) {
  std::vector<std::string> names;
  for (const json& c : EventTableColumns()) names.push_back(c["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"Last Seen", "Type", "Reason", "Object", "Message"}));
  json job = MustDefault(JobManifest());
  json e = MakeEvent(job, "Normal", "SuccessfulCreate", "Created pod: train-x7k2q", kNow - 125, 1,
                     "job-controller");
  EXPECT_EQ(EventTableCells(e, kNow),
            json({"2m5s", "Normal", "SuccessfulCreate", "job/train", "Created pod: train-x7k2q"}));
  EXPECT_EQ(EventField(e, "involvedObject.name"), "train");
  EXPECT_EQ(EventField(e, "involvedObject.namespace"), "ml");
  EXPECT_EQ(EventField(e, "involvedObject.kind"), "Job");
  EXPECT_EQ(EventField(e, "involvedObject.uid"), kUid);
  EXPECT_EQ(EventField(e, "involvedObject.apiVersion"), "batch/v1");
  EXPECT_EQ(EventField(e, "involvedObject.fieldPath"), "");
  EXPECT_EQ(EventField(e, "metadata.namespace"), "ml");
  EXPECT_EQ(EventField(e, "metadata.name"), e["metadata"]["name"].get<std::string>());
  EXPECT_EQ(EventField(e, "reason"), "SuccessfulCreate");
  EXPECT_EQ(EventField(e, "type"), "Normal");
  EXPECT_EQ(EventField(e, "source"), "job-controller");
  EXPECT_EQ(EventField(e, "involvedObject.labels"), std::nullopt);
  EXPECT_EQ(EventField(e, "message"), std::nullopt);
}

// ---- Times ----------------------------------------------------------------------------------

// ParseRfc3339 reads back the creationTimestamps the Age columns count from.
TEST(K8sPodTimeTest, ParseRfc3339) {
  for (int64_t t : {int64_t{0}, int64_t{951782400} /* 2000-02-29 */, kNow, int64_t{4102444799}}) {
    EXPECT_EQ(ParseRfc3339(Rfc3339(t)), t) << Rfc3339(t);
  }
  EXPECT_EQ(ParseRfc3339("2026-12-03T04:01:58Z"), kNow);
  EXPECT_EQ(ParseRfc3339("2026-12-03T04:01:58.123456Z"), kNow);  // fractions are dropped
  EXPECT_EQ(ParseRfc3339("2026-12-03T04:01:58.999999999Z"), kNow);
  EXPECT_EQ(ParseRfc3339("2026-12-03T04:01:58z"), kNow);
  for (const char* bad :
       {"", "yesterday", "2026-12-03", "2026-12-03T04:01:58", "2026-12-03T04:01:58ZZ",
        "2026-12-03 04:01:58Z", "2026-12-03T04:01:58Zjunk", "2026-12-03T04:01Z", "Z",
        // Short fields, a leading space, fields out of range, an empty fraction.
        "2026-1-3T4:5:6Z", " 2026-12-03T04:01:58Z", "2026-13-03T04:01:58Z", "2026-12-03T04:01:99Z",
        "2026-12-03T24:00:00Z", "2026-12-03T04:01:58.Z"}) {
    EXPECT_EQ(ParseRfc3339(bad), std::nullopt) << bad;
  }
}

json PodWithResources(const json& resources) {
  PodFacts f;
  f.job_id = 7;
  f.state = "RUNNING";
  f.start_time = kNow;
  json meta = {{"namespace", "default"},
               {"name", "q"},
               {"created", kNow},
               {"spec",
                {{"containers",
                  json::array({{{"name", "main"}, {"image", "i"}, {"resources", resources}}})}}}};
  f.meta = &meta;
  return EncodePod(f);
}

TEST(K8sPodEncodeTest, QosClassFollowsRequestsAndLimits) {
  EXPECT_EQ(PodWithResources(json::object())["status"]["qosClass"], "BestEffort");
  EXPECT_EQ(PodWithResources({{"requests", {{"cpu", "1"}}}})["status"]["qosClass"], "Burstable");
  EXPECT_EQ(PodWithResources({{"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}})["status"]["qosClass"],
            "Guaranteed");
  EXPECT_EQ(PodWithResources({{"requests", {{"cpu", "1000m"}, {"memory", "1024Mi"}}},
                              {"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}})["status"]["qosClass"],
            "Guaranteed");  // equal quantities written differently
  EXPECT_EQ(PodWithResources({{"requests", {{"cpu", "500m"}, {"memory", "1Gi"}}},
                              {"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}})["status"]["qosClass"],
            "Burstable");
}

TEST(K8sPodMapTest, HugeQuantitiesAreRefused) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, json>>{
           {"cpu", "1e12"}, {"memory", "1e30"}, {"nvidia.com/gpu", 1e20}, {"memory", "9Ei"}}) {
    json pod = GpuPod();
    pod["spec"]["containers"][0]["resources"] = {{"limits", {{key, value}}}};
    PodMapping m;
    std::optional<FieldProblem> p = MapPod(pod, Ctx(), &m);
    ASSERT_TRUE(p.has_value()) << key << "=" << value.dump();
    EXPECT_EQ(p->field, "spec.containers[0].resources.limits[" + key + "]");
    EXPECT_EQ(p->detail, "is too large");
  }
}

TEST(K8sJobDefaultTest, PolicyShapesAreChecked) {
  auto problem = [](const json& spec_changes) {
    json m = JobManifest();
    m["spec"]["completionMode"] = "Indexed";
    m["spec"]["completions"] = 3;
    for (const auto& [k, v] : spec_changes.items()) m["spec"][k] = v;
    json out;
    std::optional<FieldProblem> p = DefaultJob(m, "default", "uid-1", kNow, &out);
    return p ? p->field : std::string();
  };
  EXPECT_EQ(problem({{"successPolicy", {{"rules", json::array()}}}}), "spec.successPolicy.rules");
  EXPECT_EQ(problem({{"successPolicy", {{"rules", json::array({json::object()})}}}}),
            "spec.successPolicy.rules[0]");
  EXPECT_EQ(problem({{"successPolicy", {{"rules", json::array({{{"succeededCount", "x"}}})}}}}),
            "spec.successPolicy.rules[0].succeededCount");
  EXPECT_EQ(problem({{"successPolicy", {{"rules", json::array({{{"succeededIndexes", "0-1"}}})}}}}),
            "");
  json never = JobManifest()["spec"]["template"];
  never["spec"]["restartPolicy"] = "Never";
  EXPECT_EQ(problem({{"template", never},
                     {"podFailurePolicy", {{"rules", json::array({{{"action", "Explode"}}})}}}}),
            "spec.podFailurePolicy.rules[0].action");
  EXPECT_EQ(problem({{"template", never},
                     {"podFailurePolicy", {{"rules", json::array({{{"action", "FailJob"}}})}}}}),
            "spec.podFailurePolicy.rules[0]");
  EXPECT_EQ(
      problem({{"template", never},
               {"podFailurePolicy",
                {{"rules",
                  json::array({{{"action", "FailJob"},
                                {"onExitCodes", {{"operator", "In"}, {"values", {"1"}}}}}})}}}}),
      "spec.podFailurePolicy.rules[0].onExitCodes.values");
  EXPECT_EQ(
      problem({{"template", never},
               {"podFailurePolicy",
                {{"rules", json::array({{{"action", "Ignore"},
                                         {"onPodConditions",
                                          json::array({{{"type", "DisruptionTarget"}}})}}})}}}}),
      "");
}

// Whatever a client sends, the mapping answers with a problem or a result, and what it accepts
// encodes and shows without an exception (the controller's state thread relies on it).
TEST(K8sPodPropertyTest, RandomManifestsNeverThrow) {
  std::mt19937_64 rng(20261203);
  auto random_value = [&](int depth, auto& self) -> json {
    switch (rng() % (depth > 2 ? 6 : 8)) {
      case 0:
        return nullptr;
      case 1:
        return static_cast<int64_t>(rng() % 2001) - 1000;
      case 2:
        return (rng() % 2) == 0;
      case 3:
        return std::string(1 + rng() % 3, "a-1.Z$("[rng() % 7]);
      case 4:
        return 1.5;
      case 5:
        return "500m";
      case 6: {
        json a = json::array();
        for (int i = 0, n = static_cast<int>(rng() % 3); i < n; ++i)
          a.push_back(self(depth + 1, self));
        return a;
      }
      default: {
        json o = json::object();
        for (const char* k : {"name", "value", "rules", "action", "cpu", "image"}) {
          if (rng() % 3 == 0) o[k] = self(depth + 1, self);
        }
        return o;
      }
    }
  };
  // Every path of a manifest (objects and arrays), to replace one at a time.
  auto paths = [](const json& j) {
    std::vector<json::json_pointer> out;
    std::function<void(const json&, const json::json_pointer&)> walk =
        [&](const json& v, const json::json_pointer& at) {
          out.push_back(at);
          if (v.is_object()) {
            for (const auto& [k, x] : v.items()) walk(x, at / k);
          } else if (v.is_array()) {
            for (size_t i = 0; i < v.size(); ++i) walk(v[i], at / i);
          }
        };
    walk(j, json::json_pointer());
    return out;
  };
  json job_manifest = JobManifest();
  job_manifest["spec"]["podFailurePolicy"] = {
      {"rules", json::array({{{"action", "Ignore"},
                              {"onExitCodes", {{"operator", "In"}, {"values", {3}}}}}})}};
  job_manifest["spec"]["template"]["spec"]["restartPolicy"] = "Never";
  const json bases[] = {GpuPod(), job_manifest};
  for (int round = 0; round < 3000; ++round) {
    const json& base = bases[round % 2];
    json m = base;
    std::vector<json::json_pointer> all = paths(base);
    for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
      const json::json_pointer& at = all[rng() % all.size()];
      if (at.empty() || !m.contains(at)) continue;
      m[at] = random_value(0, random_value);
    }
    ASSERT_NO_THROW({
      PodMapping pm;
      if (!MapPod(m, Ctx(), &pm)) {
        PodFacts f;
        f.job_id = 9;
        f.state = "RUNNING";
        f.start_time = kNow;
        f.meta = &pm.meta;
        json pod = EncodePod(f);
        (void)PodTableCells(pod, kNow);
        for (const char* field : {"spec.nodeName", "status.phase"}) (void)PodField(pod, field);
      }
      json job;
      if (!DefaultJob(m, "default", "uid", kNow, &job)) {
        (void)JobTableCells(job, kNow);
        json pod = PodFromTemplate(job, 1, "x-1-abcde");
        PodMapping jm;
        (void)MapPod(pod, Ctx(), &jm);
      }
    }) << m.dump();
  }
}

}  // namespace
}  // namespace berth::k8s
