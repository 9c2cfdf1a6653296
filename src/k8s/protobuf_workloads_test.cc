// CronJobs and Jobs in kubectl's protobuf bodies, built here field by field as gogo-protobuf
// writes them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "k8s/protobuf.h"

namespace berth::k8s {
namespace {

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  return out + static_cast<char>(v);
}
std::string Bytes(uint32_t number, const std::string& value) {
  return Varint(uint64_t{number} << 3 | 2) + Varint(value.size()) + value;
}
std::string Int(uint32_t number, uint64_t value) {
  return Varint(uint64_t{number} << 3) + Varint(value);
}
std::string Envelope(const std::string& kind, const std::string& raw) {
  return std::string("k8s\0", 4) + Bytes(1, Bytes(1, "batch/v1") + Bytes(2, kind)) + Bytes(2, raw);
}

TEST(ProtobufWorkloadTest, ACronJobAsKubectlCreateCronjobSendsIt) {
  const std::string container = Bytes(1, "tick") + Bytes(2, "busybox") + Bytes(3, "sh") +
                                Bytes(3, "-c") + Bytes(3, "echo hi") + Bytes(5, "") +
                                Bytes(8, Bytes(1, Bytes(1, "cpu") + Bytes(2, Bytes(1, "500m")))) +
                                Bytes(7, Bytes(1, "A") + Bytes(2, "b")) + Int(16, 0);
  const std::string pod = Bytes(2, container) + Bytes(3, "OnFailure") + Int(11, 0);
  const std::string job_spec = Bytes(6, Bytes(1, "") + Bytes(2, pod));
  const std::string spec = Bytes(1, "*/1 * * * *") +
                           Bytes(5, Bytes(1, Bytes(1, "tick")) + Bytes(2, job_spec)) + Int(4, 1) +
                           Int(2, 30) + Bytes(8, "Europe/Berlin");
  const std::string meta = Bytes(1, "tick") + Bytes(11, Bytes(1, "app") + Bytes(2, "t"));
  Result<nlohmann::json> got =
      DecodeProtobufWorkload(Envelope("CronJob", Bytes(1, meta) + Bytes(2, spec)));
  ASSERT_TRUE(got.ok()) << got.status().message();
  const nlohmann::json want = nlohmann::json::parse(R"({
    "apiVersion": "batch/v1", "kind": "CronJob",
    "metadata": {"name": "tick", "labels": {"app": "t"}},
    "spec": {"schedule": "*/1 * * * *", "suspend": true, "startingDeadlineSeconds": 30,
      "timeZone": "Europe/Berlin",
      "jobTemplate": {"metadata": {"name": "tick"}, "spec": {"template": {"metadata": {},
        "spec": {"restartPolicy": "OnFailure", "hostNetwork": false, "containers": [{
          "name": "tick", "image": "busybox", "command": ["sh", "-c", "echo hi"],
          "resources": {"limits": {"cpu": "500m"}}, "env": [{"name": "A", "value": "b"}],
          "stdin": false}]}}}}}})");
  EXPECT_EQ(*got, want) << got->dump(1);
}

TEST(ProtobufWorkloadTest, AJobWithItsOwnerAndAVolume) {
  const std::string owner =
      Bytes(1, "CronJob") + Bytes(3, "tick") + Bytes(4, "u-1") + Bytes(5, "batch/v1") + Int(6, 1);
  const std::string meta =
      Bytes(1, "by-hand") + Bytes(13, owner) +
      Bytes(12, Bytes(1, "cronjob.kubernetes.io/instantiate") + Bytes(2, "manual"));
  const std::string volume = Bytes(1, "scratch") + Bytes(2, Bytes(2, Bytes(1, "Memory")));
  const std::string pod = Bytes(1, volume) + Bytes(2, Bytes(1, "c") + Bytes(2, "busybox"));
  Result<nlohmann::json> got = DecodeProtobufWorkload(
      Envelope("Job", Bytes(1, meta) + Bytes(2, Int(7, 2) + Bytes(6, Bytes(2, pod)))));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ((*got)["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ((*got)["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"], "manual");
  EXPECT_EQ((*got)["spec"]["backoffLimit"], 2);
  EXPECT_EQ((*got)["spec"]["template"]["spec"]["volumes"][0],
            nlohmann::json::parse(R"({"name":"scratch","emptyDir":{"medium":"Memory"}})"));
}

TEST(ProtobufWorkloadTest, RefusesOtherKindsAndBrokenBodies) {
  EXPECT_FALSE(DecodeProtobufWorkload(Envelope("Pod", "")).ok());
  EXPECT_FALSE(DecodeProtobufWorkload("{}").ok());
  std::string broken = Envelope("Job", Bytes(1, Bytes(1, "x")));
  broken.back() = '\xff';
  broken += '\xff';
  EXPECT_FALSE(DecodeProtobufWorkload(broken).ok());
  // A string field sent as a number is malformed, not a crash.
  EXPECT_FALSE(DecodeProtobufWorkload(Envelope("CronJob", Bytes(2, Int(1, 5)))).ok());
}

}  // namespace
}  // namespace berth::k8s
