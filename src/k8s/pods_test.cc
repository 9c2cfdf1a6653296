// Pod manifests as berth reads them: quantities, names, a Pod manifest's mapping to a berth
// request and its refusals (with the field path a 422 names), the RFC 3339 times the Age columns
// read back, and random manifests that must never throw.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "k8s/codec.h"
#include "k8s/jobs.h"
#include "k8s/manifest_meta.h"
#include "k8s/pod_test_fixtures.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace podtest;

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
                                    {"EMPTY", ""}}));
  EXPECT_EQ(r["hostname"], "train");  // $HOSTNAME on the node, as kubelet names the Pod's host
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

// GPU shares and MIG instances (docs/kubernetes.md): gpu.shared units are replicas of one
// device (4 each), gpu-milli an explicit share, mig-PROFILE typed whole devices.
TEST(K8sPodMapTest, SharedAndMigGpus) {
  auto with = [](json limits) {
    json pod = GpuPod();
    pod["spec"]["containers"][0]["resources"] = {{"limits", std::move(limits)}};
    return pod;
  };
  PodMapping m = MustMap(with({{"nvidia.com/gpu.shared", 1}}));
  EXPECT_EQ(m.request["gpu_milli"], 250);
  EXPECT_FALSE(m.request.contains("gpus"));
  EXPECT_EQ(MustMap(with({{"nvidia.com/gpu.shared", "4"}})).request["gpu_milli"], 1000);
  EXPECT_EQ(MustMap(with({{"berth.io/gpu-milli", "300"}})).request["gpu_milli"], 300);
  m = MustMap(with({{"nvidia.com/mig-1g.10gb", 2}}));
  EXPECT_EQ(m.request["gpus_per_node"], 2);
  EXPECT_EQ(m.request["gpu_type"], "1g.10gb");
  PodContext ctx = Ctx();
  ctx.gpu_shared_replicas = 2;
  PodMapping two;
  ASSERT_FALSE(MapPod(with({{"nvidia.com/gpu.shared", 1}}), ctx, &two).has_value());
  EXPECT_EQ(two.request["gpu_milli"], 500);
  // Refused: more units than a device offers, a share over one device, two kinds at once.
  for (const json& bad : {json{{"nvidia.com/gpu.shared", 5}}, json{{"berth.io/gpu-milli", 1001}},
                          json{{"nvidia.com/gpu", 1}, {"nvidia.com/gpu.shared", 1}},
                          json{{"nvidia.com/gpu.shared", "500m"}}}) {
    PodMapping out;
    EXPECT_TRUE(MapPod(with(bad), Ctx(), &out).has_value()) << bad.dump();
  }
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
  // Nothing pod-wide in the job's own environment: the host name is the job's.
  EXPECT_EQ(r["environment"], json::object());
  EXPECT_EQ(r["hostname"], "train");
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

// The Pod's host name as kubelet sets it: spec.hostname, else its name cut to 63 characters;
// with hostNetwork the node's (none in the request).
TEST(K8sPodMapTest, HostNameAsKubeletGivesIt) {
  json pod = GpuPod();
  pod["spec"]["hostname"] = "worker-0";
  EXPECT_EQ(MustMap(pod).request["hostname"], "worker-0");
  pod["spec"]["hostname"] = "";
  pod["metadata"]["name"] = std::string(62, 'a') + "-b" + std::string(10, 'c');
  EXPECT_EQ(MustMap(pod).request["hostname"], std::string(62, 'a'));  // 63: the '-' goes too
  pod["spec"]["hostNetwork"] = true;
  EXPECT_FALSE(MustMap(pod).request.contains("hostname"));
  for (json bad : {json("Worker"), json("-w"), json(std::string(64, 'w')), json("a.b"), json(7)}) {
    json p = GpuPod();
    p["spec"]["hostname"] = bad;
    PodMapping m;
    std::optional<FieldProblem> problem = MapPod(p, Ctx(), &m);
    ASSERT_TRUE(problem.has_value()) << bad;
    EXPECT_EQ(problem->field, "spec.hostname") << bad;
  }
}

TEST(K8sPodMapTest, GenerateNameTakesTheSuffix) {
  json pod = GpuPod();
  pod["metadata"].erase("name");
  pod["metadata"]["generateName"] = "train-";
  PodMapping m = MustMap(pod);
  EXPECT_EQ(m.name, "train-x7k2q");
  EXPECT_EQ(m.meta["name"], "train-x7k2q");
  EXPECT_EQ(m.meta["generateName"], "train-");
  EXPECT_EQ(m.request["hostname"], "train-x7k2q");
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

TEST(K8sManifestMetaTest, LabelsAndAnnotationsAreMapsOfStrings) {
  EXPECT_EQ(fields::CheckMetadataMaps(json::object()), std::nullopt);
  EXPECT_EQ(fields::CheckMetadataMaps({{"labels", {{"a", "b"}}}, {"annotations", nullptr}}),
            std::nullopt);
  std::optional<FieldProblem> p = fields::CheckMetadataMaps({{"labels", json::array()}});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(Show(*p), "metadata.labels | Invalid value | [] | must be a map");
  p = fields::CheckMetadataMaps({{"labels", {{"a", "b"}}}, {"annotations", {{"n", 1}}}});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(Show(*p), "metadata.annotations[n] | Invalid value | 1 | must be a string");
}

}  // namespace
}  // namespace berth::k8s

namespace berth::k8s {
namespace {

// stdin, stdinOnce and tty: kept in the spec, passed to the job's request, tty needs stdin.
TEST(K8sPodMapTest, StdinAndTtyReachTheRequest) {
  json pod = GpuPod();
  pod["spec"]["containers"][0]["stdin"] = true;
  pod["spec"]["containers"][0]["stdinOnce"] = true;
  pod["spec"]["containers"][0]["tty"] = true;
  PodMapping m = MustMap(pod);
  EXPECT_EQ(m.request["open_stdin"], true);
  EXPECT_EQ(m.request["stdin_once"], true);
  EXPECT_EQ(m.request["tty"], true);
  EXPECT_EQ(m.meta["spec"]["containers"][0]["tty"], true);
  PodMapping plain = MustMap(GpuPod());
  EXPECT_FALSE(plain.request.contains("open_stdin"));
  EXPECT_FALSE(plain.request.contains("tty"));

  auto problem = [](std::function<void(json&)> change) {
    json p = GpuPod();
    change(p);
    PodMapping out;
    std::optional<FieldProblem> fp = MapPod(p, Ctx(), &out);
    return fp ? Show(*fp) : std::string("<mapped>");
  };
  EXPECT_EQ(problem([](json& p) { p["spec"]["containers"][0]["tty"] = true; }),
            "spec.containers[0].tty | Invalid value | true | -t/--tty requires -i/--stdin: set "
            "stdin: true");
  EXPECT_EQ(problem([](json& p) { p["spec"]["containers"][0]["stdin"] = "yes"; }),
            "spec.containers[0].stdin | Invalid value | yes | must be a boolean");
  EXPECT_EQ(problem([](json& p) {
              json second = p["spec"]["containers"][0];
              second["name"] = "side";
              second["stdin"] = true;
              p["spec"]["containers"].push_back(second);
            }),
            "spec.containers[1].stdin | Forbidden |  | berth gives stdin and a terminal only to a "
            "pod of one container (its process is the pod's main process)");
}

}  // namespace
}  // namespace berth::k8s
