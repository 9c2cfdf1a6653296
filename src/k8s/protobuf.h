// Reading the few Kubernetes protobuf request bodies that kubectl sends. Typed clientset calls
// (e.g. `kubectl create namespace`) send `application/vnd.kubernetes.protobuf`: the "k8s\0" magic,
// then a runtime.Unknown envelope {1 typeMeta{1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding,
// 4 contentType} whose raw bytes are the object. Only what berth uses is decoded.
#ifndef BERTH_K8S_PROTOBUF_H_
#define BERTH_K8S_PROTOBUF_H_

#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "common/status.h"

namespace berth::k8s {

// An object in the envelope, as JSON: apiVersion, kind, and metadata {name, generateName,
// namespace, labels, annotations}; the rest of the object is not read. INVALID_ARGUMENT for
// anything that is not a well-formed envelope.
Result<nlohmann::json> DecodeProtobufObjectMeta(std::string_view body);

// A Secret ({1 metadata, 2 data map<string,bytes>, 3 type, 4 stringData}) or a ConfigMap ({1
// metadata, 2 data, 3 binaryData map<string,bytes>}) in the envelope, as JSON (bytes as base64):
// what `kubectl create secret` and `kubectl create configmap` send. `immutable` is not read.
// INVALID_ARGUMENT for another kind or a malformed body.
Result<nlohmann::json> DecodeProtobufConfigObject(std::string_view body);

// A batch/v1 Job or CronJob in the envelope, as JSON (protobuf_workloads.cc): what `kubectl
// create job` (also --from=cronjob/NAME) and `kubectl create cronjob` send. Read: metadata
// (name, generateName, namespace, labels, annotations, ownerReferences), the specs down to the
// pod template's containers (command, args, env, envFrom, resources, volumeMounts, image, ...),
// volumes (hostPath, emptyDir, secret, configMap); other fields are skipped. INVALID_ARGUMENT for
// another kind or a malformed body.
Result<nlohmann::json> DecodeProtobufWorkload(std::string_view body);

}  // namespace berth::k8s

#endif  // BERTH_K8S_PROTOBUF_H_
