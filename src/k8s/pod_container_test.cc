// Containers mode (k8s/pod_container.h, k8s/pods.cc): a Pod's one container as the job's
// image::ContainerSpec: command and args, $(VAR) expansion, env with envFrom and valueFrom,
// the pull policy, runAsUser, volumes and mounts, imagePullSecrets, and what is refused (with the
// field a 422 names).
#include "k8s/pod_container.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "image/container_spec.h"
#include "k8s/config_objects.h"
#include "k8s/jobs.h"
#include "k8s/pod_test_fixtures.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace podtest;

constexpr uint32_t kAliceUid = 1000;

// The Secrets and ConfigMaps of namespace "ml" the tests read.
std::map<std::string, ConfigData> Secrets() {
  return {{"regcred",
           {"kubernetes.io/dockerconfigjson",
            {{".dockerconfigjson", R"({"auths":{"reg.example:5000":{"auth":"YWxpY2U6cHc="}}})"}}}},
          {"other-reg",
           {"kubernetes.io/dockerconfigjson",
            {{".dockerconfigjson",
              R"({"auths":{"reg.example:5000":{"auth":"b3RoZXI="},"ghcr.io":{"auth":"Z2g="}}})"}}}},
          {"opaque", {"Opaque", {{"password", "s3cret"}, {"user", "alice"}}}}};
}
std::map<std::string, ConfigData> ConfigMaps() {
  return {{"settings", {"", {{"mode", "fast"}, {"app.conf", "x=1\n"}, {"bad key", "v"}}}}};
}

PodContext ContainerCtx(bool admin = false) {
  PodContext ctx = Ctx();
  ctx.containers = true;
  ctx.uid = admin ? 0 : kAliceUid;
  ctx.admin = admin;
  ctx.find_config = [](ConfigKind kind, const std::string& name) -> std::optional<ConfigData> {
    const auto all = kind == ConfigKind::kSecret ? Secrets() : ConfigMaps();
    auto it = all.find(name);
    if (it == all.end()) return std::nullopt;
    return it->second;
  };
  return ctx;
}

json Pod(json container, json spec_extra = json::object()) {
  json c = {{"name", "main"}, {"image", "reg.example:5000/team/app:1.2"}};
  c.update(container);
  json spec = {{"containers", json::array({c})}, {"restartPolicy", "Never"}};
  spec.update(spec_extra);
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}}}, {"spec", spec}};
}

// Maps `pod` in containers mode and decodes its container spec (a failure fails the test).
image::ContainerSpec SpecOf(const json& pod, const PodContext& ctx = ContainerCtx(),
                            PodMapping* mapping_out = nullptr) {
  PodMapping m;
  std::optional<FieldProblem> p = MapPod(pod, ctx, &m);
  EXPECT_FALSE(p) << (p ? p->field + ": " + p->type + ": " + p->detail : "");
  if (p) return {};
  EXPECT_FALSE(m.request.contains("argv"));
  EXPECT_FALSE(m.request.contains("script"));
  Result<image::ContainerSpec> spec = image::DecodeContainerSpec(m.request["container"]);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  if (mapping_out) *mapping_out = m;
  return spec.ok() ? *spec : image::ContainerSpec{};
}

FieldProblem Refused(const json& pod, const PodContext& ctx = ContainerCtx()) {
  PodMapping m;
  std::optional<FieldProblem> p = MapPod(pod, ctx, &m);
  EXPECT_TRUE(p.has_value()) << m.request.dump();
  return p.value_or(FieldProblem{});
}

TEST(K8sContainerPodTest, NoCommandRunsTheImagesEntrypoint) {
  PodMapping m;
  image::ContainerSpec s = SpecOf(Pod(json::object()), ContainerCtx(), &m);
  EXPECT_EQ(s.image, "reg.example:5000/team/app:1.2");
  EXPECT_EQ(s.entry, image::EntryMode::kKubernetes);
  EXPECT_EQ(s.command, std::nullopt);
  EXPECT_EQ(s.args, std::nullopt);
  EXPECT_EQ(s.pull_policy, image::PullPolicy::kDefault);
  EXPECT_FALSE(s.run_as_root);
  EXPECT_TRUE(s.mounts.empty());
  EXPECT_FALSE(s.mount_home);  // a Pod sees only its volumes
  EXPECT_TRUE(s.writable);
  EXPECT_FALSE(SpecOf(Pod({{"securityContext", {{"readOnlyRootFilesystem", true}}}})).writable);
  EXPECT_EQ(s.auth_config, "");
  EXPECT_EQ(m.request["work_dir"], "/home/alice");
  EXPECT_FALSE(m.request.contains("environment"));
  EXPECT_EQ(m.request["hostname"], "p");
  EXPECT_EQ(m.request["stdout"], "/var/log/berth/pods/ml_p_%j.log");
  // The kept spec shows the policy the API server defaults from the tag.
  EXPECT_EQ(m.meta["spec"]["containers"][0]["imagePullPolicy"], "IfNotPresent");
}

TEST(K8sContainerPodTest, CommandAndArgsAsGiven) {
  image::ContainerSpec s = SpecOf(Pod({{"command", {"perl"}}}));
  EXPECT_EQ(s.command, std::vector<std::string>{"perl"});
  EXPECT_EQ(s.args, std::nullopt);
  s = SpecOf(Pod({{"args", {"-c", "echo"}}}));
  EXPECT_EQ(s.command, std::nullopt);
  EXPECT_EQ(s.args, (std::vector<std::string>{"-c", "echo"}));
  s = SpecOf(Pod({{"command", json::array()}, {"args", {"x"}}}));
  EXPECT_EQ(s.command, std::vector<std::string>{});  // given, empty: still given
  EXPECT_EQ(s.args, std::vector<std::string>{"x"});
}

TEST(K8sContainerPodTest, ExpandsVariablesAsKubernetes) {
  image::ContainerSpec s = SpecOf(Pod(
      {{"command", {"sh", "-c", "echo $(A) $$(A) $(NOPE) $$$$ $(A"}},
       {"args", {"$(B)", "$(POD)"}},
       {"env",
        {{{"name", "A"}, {"value", "alpha"}},
         {{"name", "B"}, {"value", "$(A)-beta"}},
         {{"name", "POD"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}}}}}));
  ASSERT_TRUE(s.command);
  EXPECT_EQ((*s.command)[2], "echo alpha $(A) $(NOPE) $$ $(A");
  EXPECT_EQ(s.args, (std::vector<std::string>{"alpha-beta", "p"}));
  EXPECT_EQ(s.env, (std::vector<std::pair<std::string, std::string>>{
                       {"A", "alpha"}, {"B", "alpha-beta"}, {"POD", "p"}}));
}

TEST(K8sContainerPodTest, EnvFromAndValueFrom) {
  image::ContainerSpec s = SpecOf(
      Pod({{"envFrom",
            {{{"configMapRef", {{"name", "settings"}}}, {"prefix", "CFG_"}},
             {{"secretRef", {{"name", "opaque"}}}},
             {{"configMapRef", {{"name", "absent"}, {"optional", true}}}}}},
           {"env",
            {{{"name", "user"}, {"value", "bob"}},  // replaces envFrom's
             {{"name", "PW"},
              {"valueFrom", {{"secretKeyRef", {{"name", "opaque"}, {"key", "password"}}}}}},
             {{"name", "MODE"},
              {"valueFrom", {{"configMapKeyRef", {{"name", "settings"}, {"key", "mode"}}}}}},
             {{"name", "GONE"},
              {"valueFrom",
               {{"configMapKeyRef", {{"name", "settings"}, {"key", "nope"}, {"optional", true}}}}}},
             {{"name", "NODE"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}},
             {{"name", "IP"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}},
             {{"name", "CMD"}, {"value", "$(MODE)/$(NODE)"}}}}}));
  const std::vector<std::pair<std::string, std::string>> want = {
      {"CFG_app.conf", "x=1\n"}, {"CFG_bad key", "v"}, {"CFG_mode", "fast"},
      {"password", "s3cret"},    {"user", "bob"},      {"PW", "s3cret"},
      {"MODE", "fast"},          {"IP", "127.0.0.1"},  {"CMD", "fast/$(NODE)"}};
  EXPECT_EQ(s.env, want);
  EXPECT_EQ(s.node_name_env, std::vector<std::string>{"NODE"});
}

TEST(K8sContainerPodTest, MissingReferencesAreRefusedNamingTheField) {
  FieldProblem p = Refused(
      Pod({{"env",
            {{{"name", "PW"},
              {"valueFrom", {{"secretKeyRef", {{"name", "nope"}, {"key", "password"}}}}}}}}}));
  EXPECT_EQ(p.field, "spec.containers[0].env[0].valueFrom.secretKeyRef.name");
  EXPECT_NE(p.detail.find("secret \"nope\" not found in namespace \"ml\""), std::string::npos);
  p = Refused(
      Pod({{"env",
            {{{"name", "PW"},
              {"valueFrom", {{"secretKeyRef", {{"name", "opaque"}, {"key", "nokey"}}}}}}}}}));
  EXPECT_EQ(p.field, "spec.containers[0].env[0].valueFrom.secretKeyRef.key");
  EXPECT_EQ(p.detail, "couldn't find key nokey in Secret ml/opaque");
  p = Refused(Pod({{"envFrom", {{{"configMapRef", {{"name", "nope"}}}}}}}));
  EXPECT_EQ(p.field, "spec.containers[0].envFrom[0].configMapRef.name");
  p = Refused(
      Pod({{"env",
            {{{"name", "X"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.uid"}}}}}}}}}));
  EXPECT_EQ(p.field, "spec.containers[0].env[0].valueFrom.fieldRef.fieldPath");
  EXPECT_EQ(p.type, "Unsupported value");
}

TEST(K8sContainerPodTest, ProcessModeKeepsTodaysRefusalOfSecrets) {
  PodContext ctx = ContainerCtx();
  ctx.containers = false;
  FieldProblem p = Refused(
      Pod({{"command", {"true"}},
           {"env",
            {{{"name", "PW"},
              {"valueFrom", {{"secretKeyRef", {{"name", "opaque"}, {"key", "password"}}}}}}}}}),
      ctx);
  EXPECT_EQ(p.field, "spec.containers[0].env[0].valueFrom");
  EXPECT_EQ(p.type, "Unsupported value");
  // And a process-mode request has no container object.
  PodMapping m;
  ASSERT_FALSE(MapPod(Pod({{"command", {"true"}}}), ctx, &m));
  EXPECT_FALSE(m.request.contains("container"));
  EXPECT_EQ(m.request["argv"], json({"true"}));
}

TEST(K8sContainerPodTest, PullPolicy) {
  EXPECT_EQ(SpecOf(Pod({{"imagePullPolicy", "Always"}})).pull_policy, image::PullPolicy::kAlways);
  EXPECT_EQ(SpecOf(Pod({{"imagePullPolicy", "Never"}})).pull_policy, image::PullPolicy::kNever);
  EXPECT_EQ(SpecOf(Pod({{"imagePullPolicy", "IfNotPresent"}})).pull_policy,
            image::PullPolicy::kIfNotPresent);
  EXPECT_EQ(Refused(Pod({{"imagePullPolicy", "Sometimes"}})).field,
            "spec.containers[0].imagePullPolicy");
  EXPECT_EQ(podc::DefaultPullPolicy("busybox"), "Always");
  EXPECT_EQ(podc::DefaultPullPolicy("busybox:latest"), "Always");
  EXPECT_EQ(podc::DefaultPullPolicy("reg:5000/busybox"), "Always");
  EXPECT_EQ(podc::DefaultPullPolicy("reg:5000/busybox:1.36"), "IfNotPresent");
  EXPECT_EQ(podc::DefaultPullPolicy("busybox@sha256:abcd"), "IfNotPresent");
  PodMapping m;
  SpecOf(Pod({{"image", "busybox"}}), ContainerCtx(), &m);
  EXPECT_EQ(m.meta["spec"]["containers"][0]["imagePullPolicy"], "Always");
}

TEST(K8sContainerPodTest, WorkingDirAndHostNetwork) {
  image::ContainerSpec s =
      SpecOf(Pod({{"workingDir", "/work"}}, {{"hostNetwork", true}, {"hostPID", false}}));
  EXPECT_EQ(s.work_dir, "/work");
  EXPECT_EQ(Refused(Pod({{"workingDir", "rel"}})).field, "spec.containers[0].workingDir");
}

TEST(K8sContainerPodTest, RunAsUserOnlyAsTheCallerOrRootForOperators) {
  EXPECT_FALSE(SpecOf(Pod({{"securityContext", {{"runAsUser", kAliceUid}}}})).run_as_root);
  EXPECT_FALSE(
      SpecOf(Pod(json::object(), {{"securityContext", {{"runAsUser", kAliceUid}}}})).run_as_root);
  FieldProblem p = Refused(Pod({{"securityContext", {{"runAsUser", 0}}}}));
  EXPECT_EQ(p.field, "spec.containers[0].securityContext.runAsUser");
  EXPECT_EQ(p.type, "Forbidden");
  EXPECT_NE(p.detail.find("only operators may run containers as root"), std::string::npos);
  p = Refused(Pod(json::object(), {{"securityContext", {{"runAsUser", 1234}}}}));
  EXPECT_EQ(p.field, "spec.securityContext.runAsUser");
  // The container's own wins over the pod's.
  EXPECT_FALSE(SpecOf(Pod({{"securityContext", {{"runAsUser", kAliceUid}}}},
                          {{"securityContext", {{"runAsUser", 1234}}}}))
                   .run_as_root);
  EXPECT_TRUE(
      SpecOf(Pod({{"securityContext", {{"runAsUser", 0}}}}), ContainerCtx(true)).run_as_root);
  EXPECT_EQ(Refused(Pod({{"securityContext", {{"runAsUser", 1234}}}}), ContainerCtx(true)).type,
            "Forbidden");
  EXPECT_EQ(Refused(Pod({{"securityContext", {{"runAsUser", "root"}}}})).type, "Invalid value");
}

TEST(K8sContainerPodTest, Volumes) {
  json volumes = json::array(
      {{{"name", "scratch"}, {"emptyDir", json::object()}},
       {{"name", "shm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "1Gi"}}}},
       {{"name", "data"}, {"hostPath", {{"path", "/data/sets"}, {"type", "Directory"}}}},
       {{"name", "conf"}, {"configMap", {{"name", "settings"}, {"defaultMode", 0644}}}},
       {{"name", "some"},
        {"configMap", {{"name", "settings"}, {"items", {{{"key", "mode"}, {"path", "m/mode"}}}}}}},
       {{"name", "creds"}, {"secret", {{"secretName", "opaque"}}}},
       {{"name", "maybe"}, {"secret", {{"secretName", "absent"}, {"optional", true}}}},
       {{"name", "unused"}, {"hostPath", {{"path", "/nowhere"}}}},
       {{"name", "defaulted"}}});
  json mounts = json::array({{{"name", "scratch"}, {"mountPath", "/scratch"}},
                             {{"name", "shm"}, {"mountPath", "/dev/shm"}},
                             {{"name", "data"}, {"mountPath", "/data"}, {"readOnly", true}},
                             {{"name", "data"}, {"mountPath", "/one"}, {"subPath", "one/set"}},
                             {{"name", "conf"}, {"mountPath", "/etc/app"}},
                             {{"name", "some"}, {"mountPath", "/etc/some"}},
                             {{"name", "creds"}, {"mountPath", "/run/creds"}},
                             {{"name", "maybe"}, {"mountPath", "/run/maybe"}},
                             {{"name", "defaulted"}, {"mountPath", "/d"}}});
  image::ContainerSpec s = SpecOf(Pod({{"volumeMounts", mounts}}, {{"volumes", volumes}}));
  using K = image::Mount::Kind;
  ASSERT_EQ(s.mounts.size(), 9u);
  EXPECT_EQ(s.mounts[0], (image::Mount{K::kEmpty, "", "/scratch", false, 0, {}, false}));
  EXPECT_EQ(s.mounts[1], (image::Mount{K::kTmpfs, "", "/dev/shm", false, 1073741824, {}, false}));
  EXPECT_EQ(s.mounts[2], (image::Mount{K::kBind, "/data/sets", "/data", true, 0, {}, false}));
  EXPECT_EQ(s.mounts[3],
            (image::Mount{K::kBind, "/data/sets/one/set", "/one", false, 0, {}, false}));
  EXPECT_EQ(s.mounts[4], (image::Mount{K::kFiles,
                                       "",
                                       "/etc/app",
                                       true,
                                       0,
                                       {{"app.conf", "x=1\n"}, {"bad key", "v"}, {"mode", "fast"}},
                                       false}));
  EXPECT_EQ(s.mounts[5],
            (image::Mount{K::kFiles, "", "/etc/some", true, 0, {{"m/mode", "fast"}}, false}));
  EXPECT_EQ(s.mounts[6], (image::Mount{K::kFiles,
                                       "",
                                       "/run/creds",
                                       true,
                                       0,
                                       {{"password", "s3cret"}, {"user", "alice"}},
                                       true}));
  EXPECT_EQ(s.mounts[7], (image::Mount{K::kFiles, "", "/run/maybe", true, 0, {}, true}));
  EXPECT_EQ(s.mounts[8].kind, K::kEmpty);
}

TEST(K8sContainerPodTest, VolumeRefusals) {
  auto refused = [](json volumes, json mounts) {
    return Refused(Pod({{"volumeMounts", mounts}}, {{"volumes", volumes}}));
  };
  json none = json::array();
  FieldProblem p = refused(
      json::array({{{"name", "v"}, {"persistentVolumeClaim", {{"claimName", "c"}}}}}), none);
  EXPECT_EQ(p.field, "spec.volumes[0]");
  EXPECT_EQ(p.value, "persistentVolumeClaim");
  EXPECT_EQ(p.type, "Unsupported value");
  p = refused(none, json::array({{{"name", "nope"}, {"mountPath", "/x"}}}));
  EXPECT_EQ(p.field, "spec.containers[0].volumeMounts[0].name");
  EXPECT_EQ(p.type, "Not found");
  EXPECT_EQ(p.value, "nope");
  json v = json::array({{{"name", "v"}, {"emptyDir", json::object()}}});
  EXPECT_EQ(refused(v, json::array({{{"name", "v"}}})).field,
            "spec.containers[0].volumeMounts[0].mountPath");
  EXPECT_EQ(refused(v, json::array({{{"name", "v"}, {"mountPath", "x"}}})).field,
            "spec.containers[0].volumeMounts[0].mountPath");
  EXPECT_EQ(
      refused(v, json::array({{{"name", "v"}, {"mountPath", "/x"}, {"subPath", "../up"}}})).field,
      "spec.containers[0].volumeMounts[0].subPath");
  EXPECT_EQ(refused(json::array({{{"name", "v"}, {"emptyDir", json::object()}},
                                 {{"name", "v"}, {"emptyDir", json::object()}}}),
                    none)
                .type,
            "Duplicate value");
  EXPECT_EQ(
      refused(json::array(
                  {{{"name", "v"}, {"emptyDir", json::object()}, {"hostPath", {{"path", "/x"}}}}}),
              none)
          .detail,
      "may not specify more than 1 volume type");
  EXPECT_EQ(refused(json::array({{{"name", "v"}, {"hostPath", {{"path", "rel"}}}}}), none).field,
            "spec.volumes[0].hostPath.path");
  EXPECT_EQ(
      refused(json::array({{{"name", "v"}, {"emptyDir", {{"medium", "HugePages"}}}}}), none).field,
      "spec.volumes[0].emptyDir.medium");
  EXPECT_EQ(refused(json::array({{{"name", "v"}, {"configMap", {{"name", "nope"}}}}}), none).field,
            "spec.volumes[0].configMap.name");
  EXPECT_EQ(
      refused(json::array(
                  {{{"name", "v"},
                    {"secret",
                     {{"secretName", "opaque"}, {"items", {{{"key", "nokey"}, {"path", "k"}}}}}}}}),
              none)
          .field,
      "spec.volumes[0].secret.items[0].key");
  json cm = json::array({{{"name", "c"}, {"configMap", {{"name", "settings"}}}}});
  EXPECT_EQ(
      refused(cm, json::array({{{"name", "c"}, {"mountPath", "/a"}, {"subPath", "mode"}}})).field,
      "spec.containers[0].volumeMounts[0].subPath");
  EXPECT_EQ(refused(v, json::array({{{"name", "v"}, {"mountPath", "/a"}},
                                    {{"name", "v"}, {"mountPath", "/b"}}}))
                .field,
            "spec.containers[0].volumeMounts[1].name");
  EXPECT_EQ(refused(v, json::array({{{"name", "v"}, {"mountPath", "/a"}},
                                    {{"name", "v"}, {"mountPath", "/a"}}}))
                .field,
            "spec.containers[0].volumeMounts[1].mountPath");
}

TEST(K8sContainerPodTest, ImagePullSecretsMergeAndMissingOnesAreNoted) {
  PodMapping m;
  image::ContainerSpec s = SpecOf(Pod(json::object(), {{"imagePullSecrets",
                                                        {{{"name", "regcred"}},
                                                         {{"name", "nope"}},
                                                         {{"name", "other-reg"}},
                                                         {{"name", "opaque"}}}}}),
                                  ContainerCtx(), &m);
  json auth = json::parse(s.auth_config);
  EXPECT_EQ(auth, json::parse(R"({"auths":{"reg.example:5000":{"auth":"YWxpY2U6cHc="},
                                            "ghcr.io":{"auth":"Z2g="}}})"));
  EXPECT_EQ(m.missing_pull_secrets, (std::vector<std::string>{"nope", "opaque"}));
}

TEST(K8sContainerPodTest, OneContainerPerPod) {
  json pod = Pod(json::object());
  pod["spec"]["containers"].push_back({{"name", "sidecar"}, {"image", "busybox"}});
  FieldProblem p = Refused(pod);
  EXPECT_EQ(p.field, "spec.containers");
  EXPECT_EQ(p.type, "Forbidden");
  EXPECT_NE(p.detail.find("one container per Pod"), std::string::npos);
  pod = Pod(json::object());
  pod["spec"]["initContainers"] = {{{"name", "init"}, {"image", "busybox"}}};
  EXPECT_EQ(Refused(pod).field, "spec.initContainers");
}

// The container's stdin and terminal are the supervisor's, as a process pod's (ADR 0006).
TEST(K8sContainerPodTest, StdinAndTtyReachTheRequest) {
  PodMapping m;
  SpecOf(Pod({{"stdin", true}, {"stdinOnce", true}, {"tty", true}}), ContainerCtx(), &m);
  EXPECT_EQ(m.request["open_stdin"], true);
  EXPECT_EQ(m.request["stdin_once"], true);
  EXPECT_EQ(m.request["tty"], true);
  PodMapping plain;
  SpecOf(Pod(json::object()), ContainerCtx(), &plain);
  EXPECT_FALSE(plain.request.contains("open_stdin"));
  EXPECT_FALSE(plain.request.contains("tty"));
  FieldProblem p = Refused(Pod({{"tty", true}}));
  EXPECT_EQ(p.field, "spec.containers[0].tty");
}

TEST(K8sContainerPodTest, JobTemplatesGoThroughTheSameMapping) {
  json job = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", "pi"}}},
      {"spec",
       {{"template",
         {{"spec",
           {{"restartPolicy", "Never"},
            {"containers",
             {{{"name", "a"}, {"image", "perl:5.34.0"}}, {{"name", "b"}, {"image", "x"}}}}}}}}}}};
  PodContext ctx = ContainerCtx();
  ctx.resolve_refs = false;
  json out;
  std::optional<FieldProblem> p = DefaultJob(job, "ml", "uid-1", kNow, &out, &ctx);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->field, "spec.template.spec.containers");
  // One container, referring to a Secret that does not exist yet: fine until its pods are made.
  job["spec"]["template"]["spec"]["containers"].erase(1);
  job["spec"]["template"]["spec"]["containers"][0]["env"] = {
      {{"name", "PW"}, {"valueFrom", {{"secretKeyRef", {{"name", "later"}, {"key", "k"}}}}}}};
  EXPECT_FALSE(DefaultJob(job, "ml", "uid-1", kNow, &out, &ctx));
  // Without a context (process mode) the same Job is refused for the secret reference.
  EXPECT_TRUE(DefaultJob(job, "ml", "uid-1", kNow, &out));
}

}  // namespace
}  // namespace berth::k8s
