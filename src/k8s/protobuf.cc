#include "k8s/protobuf.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "k8s/config_objects.h"
#include "k8s/protobuf_reader.h"

namespace berth::k8s {
namespace {

using nlohmann::json;

// The fields read here are length-delimited ones (ProtoReader::NextBytes).
using Field = ProtoField;
using Reader = ProtoReader;

// A map<string,string> entry {1 key, 2 value}.
bool ReadMapEntry(std::string_view entry, json* map) {
  Reader r(entry);
  std::string key, value;
  while (std::optional<Field> f = r.NextBytes()) {
    if (f->number == 1) key = f->bytes;
    if (f->number == 2) value = f->bytes;
  }
  if (r.failed()) return false;
  (*map)[key] = value;
  return true;
}

Result<json> ReadObjectMeta(std::string_view bytes) {
  json meta = json::object();
  json labels = json::object(), annotations = json::object();
  Reader r(bytes);
  while (std::optional<Field> f = r.NextBytes()) {
    // gogo-protobuf writes empty strings too: an empty one is one not given.
    if (f->bytes.empty()) continue;
    if (f->number == 1) meta["name"] = std::string(f->bytes);
    if (f->number == 2) meta["generateName"] = std::string(f->bytes);
    if (f->number == 3) meta["namespace"] = std::string(f->bytes);
    if (f->number == 11 && !ReadMapEntry(f->bytes, &labels)) break;
    if (f->number == 12 && !ReadMapEntry(f->bytes, &annotations)) break;
  }
  if (r.failed()) return Status::InvalidArgument("malformed protobuf in the object's metadata");
  if (!labels.empty()) meta["labels"] = labels;
  if (!annotations.empty()) meta["annotations"] = annotations;
  return meta;
}

// The envelope's typeMeta (into `object`: apiVersion, kind) and raw object bytes.
Status ReadEnvelope(std::string_view body, json* object, std::string_view* raw) {
  constexpr std::string_view kMagic("k8s\0", 4);
  if (!body.starts_with(kMagic)) {
    return Status::InvalidArgument("a protobuf body starts with the k8s magic bytes");
  }
  body.remove_prefix(kMagic.size());
  bool bad_type = false;
  Reader envelope(body);
  while (std::optional<Field> f = envelope.NextBytes()) {
    if (f->number == 1) {
      Reader type(f->bytes);
      while (std::optional<Field> t = type.NextBytes()) {
        if (t->number == 1) (*object)["apiVersion"] = std::string(t->bytes);
        if (t->number == 2) (*object)["kind"] = std::string(t->bytes);
      }
      if (type.failed()) {
        bad_type = true;
        break;
      }
    } else if (f->number == 2) {
      *raw = f->bytes;
    }
  }
  if (bad_type || envelope.failed()) return Status::InvalidArgument("malformed protobuf envelope");
  return Status::Ok();
}

}  // namespace

Result<json> DecodeProtobufObjectMeta(std::string_view body) {
  json object = json::object();
  std::string_view raw;
  BERTH_RETURN_IF_ERROR(ReadEnvelope(body, &object, &raw));
  Reader object_reader(raw);
  object["metadata"] = json::object();
  while (std::optional<Field> f = object_reader.NextBytes()) {
    if (f->number != 1) continue;
    BERTH_ASSIGN_OR_RETURN(object["metadata"], ReadObjectMeta(f->bytes));
  }
  if (object_reader.failed()) return Status::InvalidArgument("malformed protobuf object");
  return object;
}

Result<json> DecodeProtobufConfigObject(std::string_view body) {
  json object = json::object();
  std::string_view raw;
  BERTH_RETURN_IF_ERROR(ReadEnvelope(body, &object, &raw));
  const std::string kind = object.value("kind", "");
  if (kind != "Secret" && kind != "ConfigMap") {
    return Status::InvalidArgument("the protobuf body is a " + kind +
                                   ", not a Secret or ConfigMap");
  }
  const bool secret = kind == "Secret";
  object["metadata"] = json::object();
  json data = json::object(), second = json::object();
  Reader r(raw);
  bool bad = false;
  while (std::optional<Field> f = r.NextBytes()) {
    if (f->number == 1) {
      BERTH_ASSIGN_OR_RETURN(object["metadata"], ReadObjectMeta(f->bytes));
    } else if (f->number == 2) {
      bad |= !ReadMapEntry(f->bytes, &data);
    } else if (secret && f->number == 3) {
      if (!f->bytes.empty()) object["type"] = std::string(f->bytes);
    } else if ((secret && f->number == 4) || (!secret && f->number == 3)) {
      bad |= !ReadMapEntry(f->bytes, &second);
    }
  }
  if (bad || r.failed()) return Status::InvalidArgument("malformed protobuf object");
  // Bytes travel as base64 in JSON: a Secret's data, a ConfigMap's binaryData.
  auto encoded = [](const json& m) {
    json out = json::object();
    for (const auto& [k, v] : m.items()) out[k] = Base64Encode(v.get<std::string>());
    return out;
  };
  if (secret) {
    if (!data.empty()) object["data"] = encoded(data);
    if (!second.empty()) object["stringData"] = second;
  } else {
    if (!data.empty()) object["data"] = data;
    if (!second.empty()) object["binaryData"] = encoded(second);
  }
  return object;
}

}  // namespace berth::k8s
