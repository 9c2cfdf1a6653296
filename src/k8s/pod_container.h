// Containers mode (docs/kubernetes.md, "Pods in their images"): the parts of a Pod that become
// its job's image::ContainerSpec, beyond what k8s/pods.cc reads for both modes (command, args and
// env): envFrom and env valueFrom of Secrets, ConfigMaps and node fields, the image's pull policy,
// securityContext.runAsUser, volumes with their volumeMounts, and imagePullSecrets. Internal to
// k8s/pods.cc; pure functions of their arguments (Secrets and ConfigMaps are read through the
// context's lookup).
#ifndef BERTH_K8S_POD_CONTAINER_H_
#define BERTH_K8S_POD_CONTAINER_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "image/container_spec.h"
#include "k8s/fields.h"
#include "k8s/pods.h"

namespace berth::k8s::podc {

// What an env entry's valueFrom gives in containers mode.
struct EnvValue {
  std::optional<std::string> value;  // nullopt: not set (an optional reference not found)
  bool node_name = false;            // fieldRef spec.nodeName: the node fills it at launch
};

// An env entry's valueFrom that pods.cc does not read itself: configMapKeyRef, secretKeyRef,
// fieldRef spec.nodeName, status.podIP and status.hostIP ("127.0.0.1"), spec.serviceAccountName
// ("default"); `field` is the entry's ("spec.containers[0].env[2]"). A missing object or key
// without `optional: true` is a problem naming the field.
std::optional<FieldProblem> ValueFrom(const nlohmann::json& from, const std::string& field,
                                      const PodContext& ctx, EnvValue* out);

// The container's envFrom (configMapRef, secretRef, with their prefix), in order, into `env`
// (a later variable of the same name replaces an earlier one). Keys that are not valid variable
// names are skipped, as kubelet does.
std::optional<FieldProblem> EnvFrom(const nlohmann::json& container, const std::string& cf,
                                    const PodContext& ctx,
                                    std::vector<std::pair<std::string, std::string>>* env);

// The rest of the one container's spec: image, imagePullPolicy, workingDir, runAsUser (pod and
// container securityContext), readOnlyRootFilesystem (`writable`), no home mount (`mount_home`
// false: a Pod sees only its volumes), volumes and volumeMounts, imagePullSecrets (their auths
// merged into auth_config; those not found into `missing_pull_secrets`).
std::optional<FieldProblem> FillSpec(const nlohmann::json& pod_spec,
                                     const nlohmann::json& container, const std::string& cf,
                                     const PodContext& ctx, image::ContainerSpec* spec,
                                     std::vector<std::string>* missing_pull_secrets);

// The imagePullPolicy the API server defaults from the image's tag: Always for ":latest" or no
// tag (and no digest), else IfNotPresent.
std::string DefaultPullPolicy(const std::string& image);

}  // namespace berth::k8s::podc

#endif  // BERTH_K8S_POD_CONTAINER_H_
