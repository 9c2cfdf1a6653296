// batch/v1 Jobs and CronJobs in kubectl's protobuf bodies (protobuf.h): `kubectl create cronjob`
// and `kubectl create job` (also --from=cronjob/NAME) send them through the typed clientset.
// A table of the fields berth reads (k8s.io/api's generated.proto numbers) drives one decoder;
// fields not in it are skipped.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "k8s/protobuf.h"
#include "k8s/protobuf_reader.h"

namespace berth::k8s {
namespace {

using nlohmann::json;

enum class T : uint8_t { kString, kInt, kBool, kMsg, kStringMap, kQuantityMap, kQuantity };

struct Msg;
struct F {
  uint32_t number;
  const char* name;
  T type;
  bool repeated = false;
  const Msg* (*msg)() = nullptr;
  bool inline_fields = false;  // a message whose fields JSON puts in the parent (VolumeSource)
};
struct Msg {
  std::vector<F> fields;
};

using Wire = ProtoField;
using Reader = ProtoReader;

// The schema: the messages of a CronJob and a Job down to their containers.
const Msg* LocalRef() {
  static const Msg m{{{1, "name", T::kString}}};
  return &m;
}
const Msg* KeySelector() {  // ConfigMapKeySelector, SecretKeySelector
  static const Msg m{{{1, "", T::kMsg, false, &LocalRef, true},
                      {2, "key", T::kString},
                      {3, "optional", T::kBool}}};
  return &m;
}
const Msg* FieldSelector() {
  static const Msg m{{{1, "apiVersion", T::kString}, {2, "fieldPath", T::kString}}};
  return &m;
}
const Msg* EnvVarSource() {
  static const Msg m{{{1, "fieldRef", T::kMsg, false, &FieldSelector},
                      {3, "configMapKeyRef", T::kMsg, false, &KeySelector},
                      {4, "secretKeyRef", T::kMsg, false, &KeySelector}}};
  return &m;
}
const Msg* EnvVar() {
  static const Msg m{{{1, "name", T::kString},
                      {2, "value", T::kString},
                      {3, "valueFrom", T::kMsg, false, &EnvVarSource}}};
  return &m;
}
const Msg* EnvSourceRef() {  // ConfigMapEnvSource, SecretEnvSource
  static const Msg m{{{1, "", T::kMsg, false, &LocalRef, true}, {2, "optional", T::kBool}}};
  return &m;
}
const Msg* EnvFromSource() {
  static const Msg m{{{1, "prefix", T::kString},
                      {2, "configMapRef", T::kMsg, false, &EnvSourceRef},
                      {3, "secretRef", T::kMsg, false, &EnvSourceRef}}};
  return &m;
}
const Msg* Resources() {
  static const Msg m{{{1, "limits", T::kQuantityMap}, {2, "requests", T::kQuantityMap}}};
  return &m;
}
const Msg* VolumeMount() {
  static const Msg m{{{1, "name", T::kString},
                      {2, "readOnly", T::kBool},
                      {3, "mountPath", T::kString},
                      {4, "subPath", T::kString},
                      {6, "subPathExpr", T::kString}}};
  return &m;
}
const Msg* ContainerSecurity() {
  static const Msg m{{{2, "privileged", T::kBool},
                      {4, "runAsUser", T::kInt},
                      {5, "runAsNonRoot", T::kBool},
                      {6, "readOnlyRootFilesystem", T::kBool},
                      {8, "runAsGroup", T::kInt}}};
  return &m;
}
const Msg* Container() {
  static const Msg m{{{1, "name", T::kString},
                      {2, "image", T::kString},
                      {3, "command", T::kString, true},
                      {4, "args", T::kString, true},
                      {5, "workingDir", T::kString},
                      {7, "env", T::kMsg, true, &EnvVar},
                      {8, "resources", T::kMsg, false, &Resources},
                      {9, "volumeMounts", T::kMsg, true, &VolumeMount},
                      {13, "terminationMessagePath", T::kString},
                      {14, "imagePullPolicy", T::kString},
                      {15, "securityContext", T::kMsg, false, &ContainerSecurity},
                      {16, "stdin", T::kBool},
                      {17, "stdinOnce", T::kBool},
                      {18, "tty", T::kBool},
                      {19, "envFrom", T::kMsg, true, &EnvFromSource},
                      {20, "terminationMessagePolicy", T::kString}}};
  return &m;
}
const Msg* KeyToPath() {
  static const Msg m{{{1, "key", T::kString}, {2, "path", T::kString}, {3, "mode", T::kInt}}};
  return &m;
}
const Msg* HostPath() {
  static const Msg m{{{1, "path", T::kString}, {2, "type", T::kString}}};
  return &m;
}
const Msg* EmptyDir() {
  static const Msg m{{{1, "medium", T::kString}, {2, "sizeLimit", T::kQuantity}}};
  return &m;
}
const Msg* SecretVolume() {
  static const Msg m{{{1, "secretName", T::kString},
                      {2, "items", T::kMsg, true, &KeyToPath},
                      {3, "defaultMode", T::kInt},
                      {4, "optional", T::kBool}}};
  return &m;
}
const Msg* ConfigMapVolume() {
  static const Msg m{{{1, "", T::kMsg, false, &LocalRef, true},
                      {2, "items", T::kMsg, true, &KeyToPath},
                      {3, "defaultMode", T::kInt},
                      {4, "optional", T::kBool}}};
  return &m;
}
const Msg* VolumeSource() {
  static const Msg m{{{1, "hostPath", T::kMsg, false, &HostPath},
                      {2, "emptyDir", T::kMsg, false, &EmptyDir},
                      {6, "secret", T::kMsg, false, &SecretVolume},
                      {19, "configMap", T::kMsg, false, &ConfigMapVolume}}};
  return &m;
}
const Msg* Volume() {
  static const Msg m{{{1, "name", T::kString}, {2, "", T::kMsg, false, &VolumeSource, true}}};
  return &m;
}
const Msg* PodSecurity() {
  static const Msg m{{{2, "runAsUser", T::kInt},
                      {3, "runAsNonRoot", T::kBool},
                      {5, "fsGroup", T::kInt},
                      {6, "runAsGroup", T::kInt}}};
  return &m;
}
const Msg* PodSpec() {
  static const Msg m{{{1, "volumes", T::kMsg, true, &Volume},
                      {2, "containers", T::kMsg, true, &Container},
                      {3, "restartPolicy", T::kString},
                      {4, "terminationGracePeriodSeconds", T::kInt},
                      {5, "activeDeadlineSeconds", T::kInt},
                      {6, "dnsPolicy", T::kString},
                      {7, "nodeSelector", T::kStringMap},
                      {8, "serviceAccountName", T::kString},
                      {10, "nodeName", T::kString},
                      {11, "hostNetwork", T::kBool},
                      {14, "securityContext", T::kMsg, false, &PodSecurity},
                      {15, "imagePullSecrets", T::kMsg, true, &LocalRef},
                      {16, "hostname", T::kString},
                      {17, "subdomain", T::kString},
                      {19, "schedulerName", T::kString},
                      {20, "initContainers", T::kMsg, true, &Container},
                      {24, "priorityClassName", T::kString}}};
  return &m;
}
const Msg* OwnerReference() {
  static const Msg m{{{1, "kind", T::kString},
                      {3, "name", T::kString},
                      {4, "uid", T::kString},
                      {5, "apiVersion", T::kString},
                      {6, "controller", T::kBool},
                      {7, "blockOwnerDeletion", T::kBool}}};
  return &m;
}
const Msg* ObjectMeta() {
  static const Msg m{{{1, "name", T::kString},
                      {2, "generateName", T::kString},
                      {3, "namespace", T::kString},
                      {6, "resourceVersion", T::kString},
                      {11, "labels", T::kStringMap},
                      {12, "annotations", T::kStringMap},
                      {13, "ownerReferences", T::kMsg, true, &OwnerReference}}};
  return &m;
}
const Msg* PodTemplate() {
  static const Msg m{
      {{1, "metadata", T::kMsg, false, &ObjectMeta}, {2, "spec", T::kMsg, false, &PodSpec}}};
  return &m;
}
const Msg* LabelSelector() {
  static const Msg m{{{1, "matchLabels", T::kStringMap}}};
  return &m;
}
const Msg* JobSpec() {
  static const Msg m{{{1, "parallelism", T::kInt},
                      {2, "completions", T::kInt},
                      {3, "activeDeadlineSeconds", T::kInt},
                      {4, "selector", T::kMsg, false, &LabelSelector},
                      {5, "manualSelector", T::kBool},
                      {6, "template", T::kMsg, false, &PodTemplate},
                      {7, "backoffLimit", T::kInt},
                      {8, "ttlSecondsAfterFinished", T::kInt},
                      {9, "completionMode", T::kString},
                      {10, "suspend", T::kBool}}};
  return &m;
}
const Msg* Job() {
  static const Msg m{
      {{1, "metadata", T::kMsg, false, &ObjectMeta}, {2, "spec", T::kMsg, false, &JobSpec}}};
  return &m;
}
const Msg* JobTemplate() {
  static const Msg m{
      {{1, "metadata", T::kMsg, false, &ObjectMeta}, {2, "spec", T::kMsg, false, &JobSpec}}};
  return &m;
}
const Msg* CronJobSpec() {
  static const Msg m{{{1, "schedule", T::kString},
                      {2, "startingDeadlineSeconds", T::kInt},
                      {3, "concurrencyPolicy", T::kString},
                      {4, "suspend", T::kBool},
                      {5, "jobTemplate", T::kMsg, false, &JobTemplate},
                      {6, "successfulJobsHistoryLimit", T::kInt},
                      {7, "failedJobsHistoryLimit", T::kInt},
                      {8, "timeZone", T::kString}}};
  return &m;
}
const Msg* CronJob() {
  static const Msg m{
      {{1, "metadata", T::kMsg, false, &ObjectMeta}, {2, "spec", T::kMsg, false, &CronJobSpec}}};
  return &m;
}

const F* FieldOf(const Msg& m, uint32_t number) {
  for (const F& f : m.fields) {
    if (f.number == number) return &f;
  }
  return nullptr;
}

// A map entry {1 key, 2 value}; a Quantity value is {1 string}.
bool ReadEntry(std::string_view entry, bool quantity, json* map) {
  Reader r(entry);
  std::string key;
  std::string value;
  while (std::optional<Wire> w = r.Next()) {
    if (w->type != 2) continue;
    if (w->number == 1) key = w->bytes;
    if (w->number == 2) {
      if (!quantity) {
        value = w->bytes;
        continue;
      }
      Reader q(w->bytes);
      while (std::optional<Wire> s = q.Next()) {
        if (s->number == 1 && s->type == 2) value = s->bytes;
      }
      if (q.failed()) return false;
    }
  }
  if (r.failed()) return false;
  (*map)[key] = value;
  return true;
}

bool Decode(std::string_view bytes, const Msg& m, json* out, int depth) {
  if (depth > 16) return false;
  if (!out->is_object()) *out = json::object();
  Reader r(bytes);
  while (std::optional<Wire> w = r.Next()) {
    const F* f = FieldOf(m, w->number);
    if (!f) continue;
    json value;
    switch (f->type) {
      case T::kString:
        if (w->type != 2) return false;
        // gogo-protobuf writes empty strings too: an empty one is one not given (but in a list).
        if (w->bytes.empty() && !f->repeated) continue;
        value = std::string(w->bytes);
        break;
      case T::kInt:
        if (w->type != 0) return false;
        value = static_cast<int64_t>(w->varint);
        break;
      case T::kBool:
        if (w->type != 0) return false;
        value = w->varint != 0;
        break;
      case T::kQuantity: {
        if (w->type != 2) return false;
        Reader q(w->bytes);
        while (std::optional<Wire> s = q.Next()) {
          if (s->number == 1 && s->type == 2) value = std::string(s->bytes);
        }
        if (q.failed()) return false;
        break;
      }
      case T::kStringMap:
      case T::kQuantityMap: {
        if (w->type != 2) return false;
        json& map = (*out)[f->name];
        if (!map.is_object()) map = json::object();
        if (!ReadEntry(w->bytes, f->type == T::kQuantityMap, &map)) return false;
        continue;
      }
      case T::kMsg:
        if (w->type != 2) return false;
        if (f->inline_fields) {
          if (!Decode(w->bytes, *f->msg(), out, depth + 1)) return false;
          continue;
        }
        if (!Decode(w->bytes, *f->msg(), &value, depth + 1)) return false;
        break;
    }
    if (f->repeated) {
      json& list = (*out)[f->name];
      if (!list.is_array()) list = json::array();
      list.push_back(std::move(value));
    } else {
      (*out)[f->name] = std::move(value);
    }
  }
  return !r.failed();
}

}  // namespace

Result<json> DecodeProtobufWorkload(std::string_view body) {
  constexpr std::string_view kMagic("k8s\0", 4);
  if (!body.starts_with(kMagic)) {
    return Status::InvalidArgument("a protobuf body starts with the k8s magic bytes");
  }
  json object = json::object();
  std::string_view raw;
  Reader envelope(body.substr(kMagic.size()));
  while (std::optional<Wire> w = envelope.Next()) {
    if (w->type != 2) continue;
    if (w->number == 1) {
      Reader type(w->bytes);
      while (std::optional<Wire> t = type.Next()) {
        if (t->type != 2) continue;
        if (t->number == 1) object["apiVersion"] = std::string(t->bytes);
        if (t->number == 2) object["kind"] = std::string(t->bytes);
      }
      if (type.failed()) return Status::InvalidArgument("malformed protobuf envelope");
    } else if (w->number == 2) {
      raw = w->bytes;
    }
  }
  if (envelope.failed()) return Status::InvalidArgument("malformed protobuf envelope");
  const std::string kind = object.value("kind", "");
  const Msg* schema = kind == "Job" ? Job() : kind == "CronJob" ? CronJob() : nullptr;
  if (!schema) {
    return Status::InvalidArgument("the protobuf body is a " + kind + ", not a Job or CronJob");
  }
  if (!Decode(raw, *schema, &object, 0)) {
    return Status::InvalidArgument("malformed protobuf " + kind);
  }
  if (!object.contains("metadata")) object["metadata"] = json::object();
  return object;
}

}  // namespace berth::k8s
