// The Kubernetes patch flavours: RFC 7386 and RFC 6902 against their appendices, strategic merge
// patch against the Kubernetes docs and the shapes kubectl sends, server-side apply, and the
// Content-Type dispatch.
#include "k8s/patch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace berth::k8s {
namespace {

using nlohmann::json;

json J(const char* text) {
  return json::parse(text);
}

// Does any object key in `v` start with '$'?
bool HasDirective(const json& v) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key().starts_with('$') || HasDirective(*it)) return true;
    }
  }
  if (v.is_array()) {
    for (const json& e : v) {
      if (HasDirective(e)) return true;
    }
  }
  return false;
}

// A patch nested `depth` levels deep: {"a":{"a":...}}.
json Nested(int depth) {
  json v = 1;
  for (int i = 0; i < depth; ++i) v = json{{"a", std::move(v)}};
  return v;
}

struct Case {
  const char* name;
  const char* target;
  const char* patch;
  const char* want;  // nullptr: the patch must fail
};

// ---------------------------------------------------------------------------------------------
// RFC 7386.

TEST(K8sMergePatchTest, Rfc7386AppendixA) {
  const Case cases[] = {
      {"replace member", R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {"add member", R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {"null removes", R"({"a":"b"})", R"({"a":null})", R"({})"},
      {"null removes one", R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
      {"scalar over array", R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
      {"array over scalar", R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
      {"nested", R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})", R"({"a":{"b":"d"}})"},
      {"arrays replace", R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {"array over array", R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
      {"array over object", R"({"a":"b"})", R"(["c"])", R"(["c"])"},
      {"null patch", R"({"a":"foo"})", "null", "null"},
      {"string patch", R"({"a":"foo"})", R"("bar")", R"("bar")"},
      {"target nulls stay", R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})"},
      {"object over array", R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})"},
      {"nested nulls dropped", R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})"},
  };
  for (const Case& c : cases) {
    Result<json> got = ApplyMergePatch(J(c.target), J(c.patch));
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status().ToString();
    EXPECT_EQ(*got, J(c.want)) << c.name;
  }
}

TEST(K8sMergePatchTest, Rfc7386Section3Example) {
  json target = J(R"({"title":"Goodbye!","author":{"givenName":"John","familyName":"Doe"},
                      "tags":["example","sample"],"content":"This will be unchanged"})");
  json patch = J(R"({"title":"Hello!","phoneNumber":"+01-123-456-7890",
                     "author":{"familyName":null},"tags":["example"]})");
  Result<json> got = ApplyMergePatch(target, patch);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, J(R"({"title":"Hello!","author":{"givenName":"John"},"tags":["example"],
                        "content":"This will be unchanged","phoneNumber":"+01-123-456-7890"})"));
}

TEST(K8sMergePatchTest, ReplacesContainerListsWholesale) {
  // kubectl patch --type merge: the docs' "patch-demo-ctr-3" example drops the other container.
  json pod = J(R"({"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"}]}})");
  Result<json> got = ApplyMergePatch(pod, J(R"({"spec":{"containers":[{"name":"c"}]}})"));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["spec"]["containers"], J(R"([{"name":"c"}])"));
}

TEST(K8sMergePatchTest, RefusesPatchesNestedTooDeep) {
  EXPECT_TRUE(ApplyMergePatch(json::object(), Nested(kMaxPatchDepth - 1)).ok());
  Result<json> got = ApplyMergePatch(json::object(), Nested(kMaxPatchDepth + 10));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("deeper than 256"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// RFC 6902.

TEST(K8sJsonPatchTest, Rfc6902AppendixA) {
  const Case cases[] = {
      {"A.1 add member", R"({"foo":"bar"})", R"([{"op":"add","path":"/baz","value":"qux"}])",
       R"({"baz":"qux","foo":"bar"})"},
      {"A.2 add element", R"({"foo":["bar","baz"]})",
       R"([{"op":"add","path":"/foo/1","value":"qux"}])", R"({"foo":["bar","qux","baz"]})"},
      {"A.3 remove member", R"({"baz":"qux","foo":"bar"})", R"([{"op":"remove","path":"/baz"}])",
       R"({"foo":"bar"})"},
      {"A.4 remove element", R"({"foo":["bar","qux","baz"]})",
       R"([{"op":"remove","path":"/foo/1"}])", R"({"foo":["bar","baz"]})"},
      {"A.5 replace", R"({"baz":"qux","foo":"bar"})",
       R"([{"op":"replace","path":"/baz","value":"boo"}])", R"({"baz":"boo","foo":"bar"})"},
      {"A.6 move member", R"({"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}})",
       R"([{"op":"move","from":"/foo/waldo","path":"/qux/thud"}])",
       R"({"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}})"},
      {"A.7 move element", R"({"foo":["all","grass","cows","eat"]})",
       R"([{"op":"move","from":"/foo/1","path":"/foo/3"}])",
       R"({"foo":["all","cows","eat","grass"]})"},
      {"A.8 test", R"({"baz":"qux","foo":["a",2,"c"]})",
       R"([{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}])",
       R"({"baz":"qux","foo":["a",2,"c"]})"},
      {"A.9 test fails", R"({"baz":"qux"})", R"([{"op":"test","path":"/baz","value":"bar"}])",
       nullptr},
      {"A.10 add nested", R"({"foo":"bar"})",
       R"([{"op":"add","path":"/child","value":{"grandchild":{}}}])",
       R"({"foo":"bar","child":{"grandchild":{}}})"},
      {"A.11 unknown members", R"({"foo":"bar"})",
       R"([{"op":"add","path":"/baz","value":"qux","xyz":123}])", R"({"foo":"bar","baz":"qux"})"},
      {"A.12 missing parent", R"({"foo":"bar"})",
       R"([{"op":"add","path":"/baz/bat","value":"qux"}])", nullptr},
      {"A.14 escapes", R"({"/":9,"~1":10})", R"([{"op":"test","path":"/~01","value":10}])",
       R"({"/":9,"~1":10})"},
      {"A.15 string is not number", R"({"/":9,"~1":10})",
       R"([{"op":"test","path":"/~01","value":"10"}])", nullptr},
      {"A.16 add array", R"({"foo":["bar"]})",
       R"([{"op":"add","path":"/foo/-","value":["abc","def"]}])",
       R"({"foo":["bar",["abc","def"]]})"},
  };
  for (const Case& c : cases) {
    Result<json> got = ApplyJsonPatch(J(c.target), J(c.patch));
    if (c.want == nullptr) {
      ASSERT_FALSE(got.ok()) << c.name;
      EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << c.name;
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status().ToString();
    EXPECT_EQ(*got, J(c.want)) << c.name;
  }
}

TEST(K8sJsonPatchTest, MoreOperations) {
  const Case cases[] = {
      {"pointer escapes", R"({"a/b":{"m~n":1}})",
       R"([{"op":"replace","path":"/a~1b/m~0n","value":2}])", R"({"a/b":{"m~n":2}})"},
      {"add at the end index", R"({"a":[1]})", R"([{"op":"add","path":"/a/1","value":2}])",
       R"({"a":[1,2]})"},
      {"add replaces member", R"({"a":1})", R"([{"op":"add","path":"/a","value":2}])",
       R"({"a":2})"},
      {"add null value", R"({})", R"([{"op":"add","path":"/a","value":null}])", R"({"a":null})"},
      {"replace root", R"({"a":1})", R"([{"op":"replace","path":"","value":[1]}])", "[1]"},
      {"add root", R"({"a":1})", R"([{"op":"add","path":"","value":{"b":2}}])", R"({"b":2})"},
      {"test root", R"({"a":1})", R"([{"op":"test","path":"","value":{"a":1}}])", R"({"a":1})"},
      {"test numbers by value", R"({"a":1})", R"([{"op":"test","path":"/a","value":1.0}])",
       R"({"a":1})"},
      {"copy", R"({"a":{"b":1}})", R"([{"op":"copy","from":"/a","path":"/c"}])",
       R"({"a":{"b":1},"c":{"b":1}})"},
      {"move onto itself", R"({"a":1})", R"([{"op":"move","from":"/a","path":"/a"}])",
       R"({"a":1})"},
      {"empty key", R"({"":1})", R"([{"op":"remove","path":"/"}])", R"({})"},
      {"sequence sees earlier ops", R"({})",
       R"([{"op":"add","path":"/a","value":[]},{"op":"add","path":"/a/-","value":1},
           {"op":"add","path":"/a/0","value":0},{"op":"test","path":"/a","value":[0,1]}])",
       R"({"a":[0,1]})"},
      {"index past end", R"({"a":[1]})", R"([{"op":"add","path":"/a/2","value":2}])", nullptr},
      {"leading zero", R"({"a":[1,2]})", R"([{"op":"remove","path":"/a/01"}])", nullptr},
      {"dash outside add", R"({"a":[1]})", R"([{"op":"remove","path":"/a/-"}])", nullptr},
      {"not an index", R"({"a":[1]})", R"([{"op":"add","path":"/a/x","value":2}])", nullptr},
      {"into a scalar", R"({"a":1})", R"([{"op":"add","path":"/a/b","value":2}])", nullptr},
      {"replace missing", R"({})", R"([{"op":"replace","path":"/a","value":2}])", nullptr},
      {"remove root", R"({})", R"([{"op":"remove","path":""}])", nullptr},
      {"move into child", R"({"a":{"b":1}})", R"([{"op":"move","from":"/a","path":"/a/c"}])",
       nullptr},
      {"copy missing", R"({})", R"([{"op":"copy","from":"/a","path":"/b"}])", nullptr},
      {"bad escape", R"({"a":1})", R"([{"op":"remove","path":"/~2"}])", nullptr},
      {"no leading slash", R"({"a":1})", R"([{"op":"remove","path":"a"}])", nullptr},
  };
  for (const Case& c : cases) {
    Result<json> got = ApplyJsonPatch(J(c.target), J(c.patch));
    if (c.want == nullptr) {
      ASSERT_FALSE(got.ok()) << c.name;
      EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << c.name;
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status().ToString();
    EXPECT_EQ(*got, J(c.want)) << c.name;
  }
}

TEST(K8sJsonPatchTest, ErrorsNameTheOperationAndPath) {
  json job = J(R"({"spec":{"parallelism":1,"template":{"spec":{"containers":[{"name":"t"}]}}}})");
  const std::pair<const char*, const char*> cases[] = {
      {R"([{"op":"test","path":"/spec/parallelism","value":1},
           {"op":"replace","path":"/spec/parallelism","value":2},
           {"op":"remove","path":"/spec/x"}])",
       "operation 2 (remove): path /spec/x does not exist"},
      {R"([{"op":"add","path":"/spec/a/b","value":1}])",
       "operation 0 (add): the parent of path /spec/a/b does not exist"},
      {R"([{"op":"test","path":"/spec/parallelism","value":3}])",
       "operation 0 (test): test failed: path /spec/parallelism holds 1, not 3"},
      {R"([{"op":"move","from":"/spec/nope","path":"/spec/x"}])",
       "operation 0 (move): from /spec/nope does not exist"},
      {R"([{"op":"add","path":"/spec/template/spec/containers/5","value":{}}])",
       "operation 0 (add): path /spec/template/spec/containers/5: index 5 is past the end of an "
       "array of 1"},
      {R"([{"op":"add","path":"/x"}])", "operation 0 (add): \"value\" is missing"},
      {R"([{"op":"copy","path":"/x"}])", "operation 0 (copy): \"from\" is missing"},
      {R"([{"op":"remove","path":7}])", "operation 0 (remove): \"path\" is a number, not a string"},
      {R"([{"op":"frob","path":"/x"}])",
       "operation 0 (frob): unknown operation (the operations are add, remove, replace, move, "
       "copy and test)"},
      {R"([{"path":"/x"}])", "operation 0: \"op\" is missing or not a string"},
      {R"([1])", "operation 0: is a number, not an object"},
      {R"({"op":"add"})", "a JSON patch is an array of operations, not an object"},
  };
  for (const auto& [patch, message] : cases) {
    Result<json> got = ApplyJsonPatch(job, J(patch));
    ASSERT_FALSE(got.ok()) << patch;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(got.status().message(), message);
  }
}

TEST(K8sJsonPatchTest, KubectlPositionalImageChange) {
  // kubectl patch pod p --type=json -p='[{"op":"replace","path":"/spec/containers/0/image",...}]'
  json pod = J(R"({"spec":{"containers":[{"name":"c","image":"old","command":["run"]}]}})");
  Result<json> got = ApplyJsonPatch(
      pod, J(R"([{"op":"replace","path":"/spec/containers/0/image","value":"new"}])"));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["spec"]["containers"][0], J(R"({"name":"c","image":"new","command":["run"]})"));
}

TEST(K8sJsonPatchTest, LimitsOperationsAndCopies) {
  json many = json::array();
  for (size_t i = 0; i <= kMaxJsonPatchOperations; ++i) {
    many.push_back({{"op", "test"}, {"path", ""}, {"value", json::object()}});
  }
  Result<json> got = ApplyJsonPatch(json::object(), many);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("10001 operations"), std::string::npos);

  // Each copy doubles the document: 40 of them would need 2^40 values.
  json bomb = J(R"([{"op":"add","path":"/a","value":[1,2,3,4,5,6,7,8]}])");
  for (int i = 0; i < 40; ++i) {
    bomb.push_back({{"op", "copy"}, {"from", "/a"}, {"path", "/a/-"}});
  }
  got = ApplyJsonPatch(json::object(), bomb);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("the copies add up to more than"), std::string::npos)
      << got.status().message();
}

// ---------------------------------------------------------------------------------------------
// Strategic merge patch.

json TrainingJob() {
  return J(R"({
    "apiVersion":"batch/v1","kind":"Job",
    "metadata":{"name":"train","labels":{"team":"ml"},"finalizers":["batch.kubernetes.io/job-tracking"]},
    "spec":{"parallelism":2,"template":{"spec":{
      "restartPolicy":"Never",
      "containers":[{"name":"trainer","image":"x:2.3","command":["python","train.py"],
                     "env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],
                     "volumeMounts":[{"name":"data","mountPath":"/data"}]}],
      "volumes":[{"name":"data","emptyDir":{}}],
      "tolerations":[{"key":"gpu","operator":"Exists"}]}}}})");
}

json Smp(const json& target, const char* patch) {
  Result<json> got = ApplyStrategicMergePatch(target, J(patch));
  EXPECT_TRUE(got.ok()) << patch << ": " << got.status().ToString();
  if (!got.ok()) return nullptr;
  EXPECT_FALSE(HasDirective(*got)) << got->dump();
  return *got;
}

TEST(K8sStrategicMergePatchTest, KubectlClientSideApplyKeepsOtherContainerFields) {
  // What kubectl 1.33 `apply` sends once the last-applied annotation exists.
  json got = Smp(TrainingJob(), R"({
    "metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"..."},
                "labels":{"team":"ml2"}},
    "spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"trainer"}],
                                "containers":[{"image":"x:2.4.0","name":"trainer"}]}}}})");
  json want = TrainingJob();
  want["metadata"]["labels"]["team"] = "ml2";
  want["metadata"]["annotations"] = {{"kubectl.kubernetes.io/last-applied-configuration", "..."}};
  want["spec"]["template"]["spec"]["containers"][0]["image"] = "x:2.4.0";
  EXPECT_EQ(got, want);
}

TEST(K8sStrategicMergePatchTest, MapsMergeAndNullDeletes) {
  json got = Smp(TrainingJob(), R"({"metadata":{"labels":{"team":null,"tier":"gold"}},
                                    "spec":{"parallelism":null,"completions":4}})");
  EXPECT_EQ(got["metadata"]["labels"], J(R"({"tier":"gold"})"));
  EXPECT_FALSE(got["spec"].contains("parallelism"));
  EXPECT_EQ(got["spec"]["completions"], 4);
  EXPECT_EQ(got["spec"]["template"], TrainingJob()["spec"]["template"]);
}

TEST(K8sStrategicMergePatchTest, NewContainerGoesFirstAsOnTheApiServer) {
  // The "patch-demo-ctr-2" example of "Update API Objects in Place Using kubectl patch": the
  // container list merges and the patch's new container comes before the existing one, while
  // tolerations (no patch strategy) are replaced.
  json deployment = J(R"({"spec":{"template":{"spec":{
      "containers":[{"name":"patch-demo-ctr","image":"nginx"}],
      "tolerations":[{"effect":"NoSchedule","key":"dedicated","value":"test-team"}]}}}})");
  json got = Smp(deployment, R"({"spec":{"template":{"spec":{
      "containers":[{"name":"patch-demo-ctr-2","image":"redis"}],
      "tolerations":[{"effect":"NoSchedule","key":"disktype","value":"ssd"}]}}}})");
  EXPECT_EQ(got["spec"]["template"]["spec"]["containers"],
            J(R"([{"name":"patch-demo-ctr-2","image":"redis"},
                  {"name":"patch-demo-ctr","image":"nginx"}])"));
  EXPECT_EQ(got["spec"]["template"]["spec"]["tolerations"],
            J(R"([{"effect":"NoSchedule","key":"disktype","value":"ssd"}])"));
}

TEST(K8sStrategicMergePatchTest, ListsMergeByTheirFieldsKey) {
  struct KeyCase {
    const char* field;
    const char* live;   // two entries
    const char* patch;  // changes the second, adds nothing
    const char* want;
  };
  const KeyCase cases[] = {
      {"containers", R"([{"name":"a","image":"1"},{"name":"b","image":"2"}])",
       R"([{"name":"b","image":"3"}])", R"([{"name":"a","image":"1"},{"name":"b","image":"3"}])"},
      {"initContainers", R"([{"name":"a","image":"1"},{"name":"b","image":"2"}])",
       R"([{"name":"b","image":"3"}])", R"([{"name":"a","image":"1"},{"name":"b","image":"3"}])"},
      {"ephemeralContainers", R"([{"name":"a","tty":true},{"name":"b"}])",
       R"([{"name":"b","tty":true}])", R"([{"name":"a","tty":true},{"name":"b","tty":true}])"},
      {"env", R"([{"name":"A","value":"1"},{"name":"B","value":"2"}])",
       R"([{"name":"B","value":"3"}])", R"([{"name":"A","value":"1"},{"name":"B","value":"3"}])"},
      {"volumeMounts", R"([{"name":"x","mountPath":"/a"},{"name":"y","mountPath":"/b"}])",
       R"([{"mountPath":"/b","readOnly":true}])",
       R"([{"name":"x","mountPath":"/a"},{"name":"y","mountPath":"/b","readOnly":true}])"},
      {"ports", R"([{"containerPort":80},{"containerPort":443}])",
       R"([{"containerPort":443,"name":"https"}])",
       R"([{"containerPort":80},{"containerPort":443,"name":"https"}])"},
      {"conditions", R"([{"type":"Ready","status":"False"},{"type":"Complete","status":"False"}])",
       R"([{"type":"Complete","status":"True"}])",
       R"([{"type":"Ready","status":"False"},{"type":"Complete","status":"True"}])"},
      {"ownerReferences", R"([{"uid":"1","name":"a"},{"uid":"2","name":"b"}])",
       R"([{"uid":"2","controller":true}])",
       R"([{"uid":"1","name":"a"},{"uid":"2","name":"b","controller":true}])"},
      {"hostAliases", R"([{"ip":"10.0.0.1","hostnames":["a"]},{"ip":"10.0.0.2"}])",
       R"([{"ip":"10.0.0.2","hostnames":["b"]}])",
       R"([{"ip":"10.0.0.1","hostnames":["a"]},{"ip":"10.0.0.2","hostnames":["b"]}])"},
      {"topologySpreadConstraints",
       R"([{"topologyKey":"zone","maxSkew":1},{"topologyKey":"host"}])",
       R"([{"topologyKey":"host","maxSkew":2}])",
       R"([{"topologyKey":"zone","maxSkew":1},{"topologyKey":"host","maxSkew":2}])"},
      {"imagePullSecrets", R"([{"name":"a"},{"name":"b"}])", R"([{"name":"b"}])",
       R"([{"name":"a"},{"name":"b"}])"},
      {"resourceClaims", R"([{"name":"gpu","resourceClaimName":"x"},{"name":"nic"}])",
       R"([{"name":"nic","resourceClaimName":"y"}])",
       R"([{"name":"gpu","resourceClaimName":"x"},{"name":"nic","resourceClaimName":"y"}])"},
      {"volumes", R"([{"name":"a","emptyDir":{}},{"name":"b","emptyDir":{}}])",
       R"([{"name":"b","emptyDir":{"medium":"Memory"}}])",
       R"([{"name":"a","emptyDir":{}},{"name":"b","emptyDir":{"medium":"Memory"}}])"},
      // No merge key: replaced.
      {"envFrom", R"([{"configMapRef":{"name":"a"}},{"secretRef":{"name":"b"}}])",
       R"([{"secretRef":{"name":"c"}}])", R"([{"secretRef":{"name":"c"}}])"},
      {"args", R"(["a","b"])", R"(["c"])", R"(["c"])"},
      {"tolerations", R"([{"key":"a"},{"key":"b"}])", R"([{"key":"b","effect":"NoSchedule"}])",
       R"([{"key":"b","effect":"NoSchedule"}])"},
  };
  for (const KeyCase& c : cases) {
    json target = {{c.field, J(c.live)}};
    json patch = {{c.field, J(c.patch)}};
    Result<json> got = ApplyStrategicMergePatch(target, patch);
    ASSERT_TRUE(got.ok()) << c.field << ": " << got.status().ToString();
    EXPECT_EQ((*got)[c.field], J(c.want)) << c.field;
  }
}

TEST(K8sStrategicMergePatchTest, PatchDeleteRemovesEntriesAndMaps) {
  json got = Smp(TrainingJob(), R"({"spec":{"template":{"spec":{"containers":[
      {"name":"trainer","env":[{"name":"A","$patch":"delete"},{"name":"C","value":"3"}]}],
      "volumes":[{"name":"data","$patch":"delete"}]}}}})");
  const json& spec = got["spec"]["template"]["spec"];
  // A was deleted; the new C goes before the untouched B, as new entries do.
  EXPECT_EQ(spec["containers"][0]["env"],
            J(R"([{"name":"C","value":"3"},{"name":"B","value":"2"}])"));
  EXPECT_EQ(spec["volumes"], json::array());

  got = Smp(TrainingJob(), R"({"spec":{"template":{"spec":{"restartPolicy":"OnFailure",
      "containers":[{"name":"trainer","volumeMounts":{"$patch":"delete"}}]}}}})");
  EXPECT_FALSE(got["spec"]["template"]["spec"]["containers"][0].contains("volumeMounts"));
  got = Smp(TrainingJob(), R"({"spec":{"template":{"$patch":"delete"}}})");
  EXPECT_FALSE(got["spec"].contains("template"));
  EXPECT_EQ(got["spec"]["parallelism"], 2);
}

TEST(K8sStrategicMergePatchTest, PatchReplaceTakesTheListOrMapAsGiven) {
  json got = Smp(TrainingJob(), R"({"spec":{"template":{"spec":{"containers":[
      {"name":"other","image":"y"},{"$patch":"replace"}]}}}})");
  EXPECT_EQ(got["spec"]["template"]["spec"]["containers"], J(R"([{"name":"other","image":"y"}])"));

  got = Smp(TrainingJob(), R"({"metadata":{"labels":{"$patch":"replace","owner":"ana"}}})");
  EXPECT_EQ(got["metadata"]["labels"], J(R"({"owner":"ana"})"));

  // Inside a map (a container's resources), "$patch": "replace" drops the live fields the patch
  // leaves out.
  got = Smp(TrainingJob(), R"({"spec":{"template":{"spec":{"containers":[
      {"name":"trainer","resources":{"$patch":"replace","limits":{"cpu":"1"}}}]}}}})");
  EXPECT_EQ(got["spec"]["template"]["spec"]["containers"][0]["resources"],
            J(R"({"limits":{"cpu":"1"}})"));

  // "$patch": "merge" is the default: accepted, dropped.
  got = Smp(TrainingJob(), R"({"metadata":{"$patch":"merge","labels":{"x":"y"}}})");
  EXPECT_EQ(got["metadata"]["labels"], J(R"({"team":"ml","x":"y"})"));
}

TEST(K8sStrategicMergePatchTest, SetElementOrderReorders) {
  json pod = J(R"({"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}})");
  // Reorder only: the list is not otherwise in the patch.
  json got = Smp(pod, R"({"spec":{"$setElementOrder/containers":
                                  [{"name":"c"},{"name":"a"},{"name":"b"}]}})");
  EXPECT_EQ(got["spec"]["containers"], J(R"([{"name":"c"},{"name":"a"},{"name":"b"}])"));
  // With a new entry placed last by the order.
  got = Smp(pod, R"({"spec":{"$setElementOrder/containers":
                     [{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"}],
                     "containers":[{"name":"d","image":"new"}]}})");
  EXPECT_EQ(got["spec"]["containers"],
            J(R"([{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d","image":"new"}])"));
  // Names missing from the live list are ignored.
  got = Smp(pod, R"({"spec":{"$setElementOrder/containers":[{"name":"z"},{"name":"b"}]}})");
  EXPECT_EQ(got["spec"]["containers"], J(R"([{"name":"a"},{"name":"b"},{"name":"c"}])"));
}

TEST(K8sStrategicMergePatchTest, SetElementOrderSlotsServerOnlyEntriesByLiveOrder) {
  // The env example of the "preserve order" design: the server added ENV4 and ENV5; the user's
  // kubectl apply deletes ENV3, adds ENV6 and orders ENV1, ENV2, ENV6. The API server (not the
  // design's idealized listing) slots each server-only entry before the first ordered entry
  // that follows it in the live list.
  json live = J(R"({"env":[{"name":"ENV2","value":"bar"},{"name":"ENV5","value":"s2"},
                           {"name":"ENV1","value":"foo"},{"name":"ENV3","value":"baz"},
                           {"name":"ENV4","value":"s1"}]})");
  json got = Smp(live, R"({"$setElementOrder/env":[{"name":"ENV1"},{"name":"ENV2"},{"name":"ENV6"}],
                           "env":[{"name":"ENV3","$patch":"delete"},{"name":"ENV6","value":"new"}]})");
  EXPECT_EQ(got["env"], J(R"([{"name":"ENV5","value":"s2"},{"name":"ENV1","value":"foo"},
                              {"name":"ENV2","value":"bar"},{"name":"ENV6","value":"new"},
                              {"name":"ENV4","value":"s1"}])"));
}

TEST(K8sStrategicMergePatchTest, FinalizersMergeAsAnOrderedSet) {
  json meta = J(R"({"metadata":{"finalizers":["a","b"]}})");
  EXPECT_EQ(Smp(meta, R"({"metadata":{"finalizers":["b","c"]}})")["metadata"]["finalizers"],
            J(R"(["a","b","c"])"));
  EXPECT_EQ(Smp(meta, R"({"metadata":{"finalizers":["z"]}})")["metadata"]["finalizers"],
            J(R"(["z","a","b"])"));
  EXPECT_EQ(
      Smp(meta,
          R"({"metadata":{"finalizers":["z",{"$patch":"replace"}]}})")["metadata"]["finalizers"],
      J(R"(["z"])"));
  // The primitive-list example of the design doc: delete b and c.
  json abc = J(R"({"finalizers":["a","b","c"]})");
  EXPECT_EQ(Smp(abc, R"({"$deleteFromPrimitiveList/finalizers":["b","c"]})")["finalizers"],
            J(R"(["a"])"));
  // Its kubectl apply example: the server added d and e; the user deletes c and adds f.
  json live = J(R"({"finalizers":["b","e","a","c","d"]})");
  json got = Smp(live, R"({"$setElementOrder/finalizers":["a","b","f"],
                           "$deleteFromPrimitiveList/finalizers":["c"],"finalizers":["f"]})");
  EXPECT_EQ(got["finalizers"], J(R"(["e","a","b","f","d"])"));
  // Reorder only.
  EXPECT_EQ(Smp(abc, R"({"$setElementOrder/finalizers":["c","b","a"]})")["finalizers"],
            J(R"(["c","b","a"])"));
}

TEST(K8sStrategicMergePatchTest, RetainKeysClearsTheOtherFields) {
  // A volume switched from emptyDir to hostPath, as kubectl apply sends it (volumes carry the
  // retainKeys strategy).
  json got = Smp(TrainingJob(), R"({"spec":{"template":{"spec":{"volumes":[
      {"name":"data","$retainKeys":["hostPath","name"],"hostPath":{"path":"/mnt"}}]}}}})");
  EXPECT_EQ(got["spec"]["template"]["spec"]["volumes"],
            J(R"([{"name":"data","hostPath":{"path":"/mnt"}}])"));
  // The docs' Deployment strategy example.
  json deployment = J(R"({"spec":{"strategy":{"type":"RollingUpdate",
                                                "rollingUpdate":{"maxSurge":"25%"}}}})");
  got = Smp(deployment, R"({"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}})");
  EXPECT_EQ(got["spec"]["strategy"], J(R"({"type":"Recreate"})"));
}

TEST(K8sStrategicMergePatchTest, DirectivesInNewValuesDoNotSurvive) {
  json got = Smp(json::object(), R"({"spec":{"containers":[
      {"name":"a","$patch":"merge","env":[{"name":"X","value":"1"},{"name":"Y","$patch":"delete"}],
       "resources":{"$patch":"replace","limits":{"cpu":"1"}},"securityContext":{"$patch":"delete"}},
      {"name":"gone","$patch":"delete"}],
      "$setElementOrder/containers":[{"name":"a"}],
      "tolerations":[{"key":"k","$patch":"merge"},{"$patch":"replace"}],
      "$deleteFromPrimitiveList/finalizers":["x"],
      "affinity":{"$retainKeys":["nodeAffinity"],"nodeAffinity":{}}}})");
  EXPECT_EQ(got, J(R"({"spec":{"containers":[{"name":"a","env":[{"name":"X","value":"1"}],
                                              "resources":{"limits":{"cpu":"1"}}}],
                               "tolerations":[{"key":"k"}],
                               "affinity":{"nodeAffinity":{}}}})"));
}

TEST(K8sStrategicMergePatchTest, NodeAndNamespaceObjects) {
  json node = J(R"({"metadata":{"name":"gpu1","labels":{"a":"1"}},"spec":{"unschedulable":true},
                    "status":{"conditions":[{"type":"Ready","status":"True"},
                                            {"type":"MemoryPressure","status":"False"}],
                              "addresses":[{"type":"InternalIP","address":"10.0.0.1"}]}})");
  json got = Smp(node, R"({"metadata":{"labels":{"b":"2"}},"spec":{"unschedulable":null},
                           "status":{"conditions":[{"type":"Ready","status":"False"}]}})");
  EXPECT_EQ(got["metadata"]["labels"], J(R"({"a":"1","b":"2"})"));
  EXPECT_EQ(got["spec"], json::object());
  EXPECT_EQ(got["status"]["conditions"], J(R"([{"type":"Ready","status":"False"},
                                                {"type":"MemoryPressure","status":"False"}])"));
  json ns = J(
      R"({"metadata":{"name":"ml","annotations":{"x":"1"}},"spec":{"finalizers":["kubernetes"]}})");
  got = Smp(ns, R"({"metadata":{"annotations":{"x":null,"y":"2"}}})");
  EXPECT_EQ(got["metadata"]["annotations"], J(R"({"y":"2"})"));
  EXPECT_EQ(got["spec"], ns["spec"]);
}

TEST(K8sStrategicMergePatchTest, BadPatchesAreNamedErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {R"([1])", "a strategic merge patch is a JSON object, not an array"},
      {R"({"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}})",
       "spec.template.spec.containers[0]: has no merge key \"name\""},
      {R"({"spec":{"template":{"spec":{"containers":["x"]}}}})",
       "spec.template.spec.containers[0]: is a string, not an object (the list merges by "
       "\"name\")"},
      {R"({"metadata":{"$patch":"explode"}})",
       "metadata: unknown $patch directive \"explode\" (the directives are replace, delete and "
       "merge)"},
      {R"({"metadata":{"$frob":1}})", "metadata: unknown directive \"$frob\""},
      {R"({"spec":{"template":{"spec":{"containers":[{"$patch":"delete"}]}}}})",
       "spec.template.spec.containers[0]: a $patch: delete entry needs the merge key \"name\""},
      {R"({"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"a"}],
                                       "containers":[{"name":"b"}]}}}})",
       "spec.template.spec.containers: $setElementOrder does not name the entry with name \"b\""},
      {R"({"spec":{"template":{"spec":{"$setElementOrder/containers":["a"],
                                       "containers":[{"name":"a"}]}}}})",
       "spec.template.spec.containers: $setElementOrder entry \"a\" has no \"name\""},
      {R"({"metadata":{"$retainKeys":"name"}})", "metadata: $retainKeys is not a list"},
      {R"({"metadata":{"$deleteFromPrimitiveList/finalizers":"a"}})",
       "metadata: $deleteFromPrimitiveList/finalizers is not a list"},
      {R"({"metadata":{"finalizers":[{"a":1}]}})",
       "metadata.finalizers[0]: is an object in a list of scalars"},
  };
  for (const auto& [patch, message] : cases) {
    Result<json> got = ApplyStrategicMergePatch(TrainingJob(), J(patch));
    ASSERT_FALSE(got.ok()) << patch;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(got.status().message(), message);
  }
}

// ---------------------------------------------------------------------------------------------
// Server-side apply.

TEST(K8sServerSideApplyTest, MetadataOnlyApplyKeepsTheSpec) {
  // kubectl apply --server-side sends the full configuration, then a metadata-only apply from a
  // second field manager; the second must not wipe what the first set.
  json applied = TrainingJob();
  applied["spec"]["template"]["spec"]["containers"][0]["image"] = "x:2.4.0";
  Result<json> first = ApplyServerSideApply(TrainingJob(), applied);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, applied);
  Result<json> second = ApplyServerSideApply(*first, J(R"({"apiVersion":"batch/v1","kind":"Job",
                    "metadata":{"name":"train","annotations":{"note":"hi"}}})"));
  ASSERT_TRUE(second.ok());
  json want = applied;
  want["metadata"]["annotations"] = {{"note", "hi"}};
  EXPECT_EQ(*second, want);
}

TEST(K8sServerSideApplyTest, MergesByKeyReplacesOtherListsKeepsNulledFields) {
  json got = ApplyServerSideApply(TrainingJob(), J(R"({
      "metadata":{"labels":null,"finalizers":["example.com/x"]},
      "spec":{"parallelism":null,"template":{"spec":{
        "containers":[{"name":"sidecar","image":"s"},{"name":"trainer","args":["--fast"],
                       "env":[{"name":"B","value":"20"},{"name":"C","value":"3"}]}],
        "tolerations":[{"key":"cpu"}]}}}})"))
                 .value();
  const json& spec = got["spec"]["template"]["spec"];
  EXPECT_EQ(got["metadata"]["labels"], J(R"({"team":"ml"})"));
  EXPECT_EQ(got["metadata"]["finalizers"],
            J(R"(["batch.kubernetes.io/job-tracking","example.com/x"])"));
  EXPECT_EQ(got["spec"]["parallelism"], 2);
  ASSERT_EQ(spec["containers"].size(), 2u);
  EXPECT_EQ(spec["containers"][0]["name"], "trainer");
  EXPECT_EQ(spec["containers"][0]["command"], J(R"(["python","train.py"])"));
  EXPECT_EQ(spec["containers"][0]["args"], J(R"(["--fast"])"));
  EXPECT_EQ(spec["containers"][0]["env"],
            J(R"([{"name":"A","value":"1"},{"name":"B","value":"20"},{"name":"C","value":"3"}])"));
  EXPECT_EQ(spec["containers"][1], J(R"({"name":"sidecar","image":"s"})"));
  EXPECT_EQ(spec["tolerations"], J(R"([{"key":"cpu"}])"));
}

TEST(K8sServerSideApplyTest, BadConfigurationsAreNamedErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {R"("x")", "an apply configuration is a JSON object, not a string"},
      {R"({"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}})",
       "spec.template.spec.containers[0]: has no merge key \"name\""},
      {R"({"metadata":{"$patch":"replace"}})",
       "metadata.$patch: apply configurations take no $ directives"},
  };
  for (const auto& [applied, message] : cases) {
    Result<json> got = ApplyServerSideApply(TrainingJob(), J(applied));
    ASSERT_FALSE(got.ok()) << applied;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(got.status().message(), message);
  }
}

// ---------------------------------------------------------------------------------------------
// Content-Type dispatch.

TEST(K8sApplyPatchTest, DispatchesOnTheContentType) {
  json pod = J(R"({"spec":{"containers":[{"name":"a","image":"1"}]}})");
  const char* add_b = R"({"spec":{"containers":[{"name":"b"}]}})";
  Result<json> smp = ApplyPatch("application/strategic-merge-patch+json", pod, add_b);
  ASSERT_TRUE(smp.ok());
  EXPECT_EQ((*smp)["spec"]["containers"].size(), 2u);
  Result<json> merge = ApplyPatch("Application/Merge-Patch+JSON; charset=utf-8", pod, add_b);
  ASSERT_TRUE(merge.ok());
  EXPECT_EQ((*merge)["spec"]["containers"], J(R"([{"name":"b"}])"));
  Result<json> apply = ApplyPatch(" application/apply-patch+yaml ;charset=utf-8", pod, add_b);
  ASSERT_TRUE(apply.ok());
  EXPECT_EQ((*apply)["spec"]["containers"], J(R"([{"name":"a","image":"1"},{"name":"b"}])"));
  Result<json> jp = ApplyPatch("application/json-patch+json", pod,
                               R"([{"op":"remove","path":"/spec/containers/0/image"}])");
  ASSERT_TRUE(jp.ok());
  EXPECT_EQ((*jp)["spec"]["containers"], J(R"([{"name":"a"}])"));
}

TEST(K8sApplyPatchTest, RefusesUnknownTypesAndNonJsonBodies) {
  Result<json> got = ApplyPatch("application/yaml; charset=utf-8", json::object(), "{}");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), "unsupported patch content type: application/yaml");
  EXPECT_TRUE(IsUnsupportedPatchType(got.status()));
  got = ApplyPatch("", json::object(), "{}");
  EXPECT_TRUE(IsUnsupportedPatchType(got.status()));

  got = ApplyPatch("application/apply-patch+yaml", json::object(), "kind: Job\nmetadata: {}\n");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(got.status().message().starts_with("the body is not JSON (syntax error at byte "))
      << got.status().message();
  EXPECT_NE(got.status().message().find("apply-patch+yaml"), std::string::npos);
  EXPECT_FALSE(IsUnsupportedPatchType(got.status()));
  for (const char* body : {"", "{", "[1,", "nul", "{\"a\":1}}"}) {
    got = ApplyPatch("application/merge-patch+json", json::object(), body);
    ASSERT_FALSE(got.ok()) << body;
    EXPECT_TRUE(got.status().message().starts_with("the body is not JSON")) << body;
  }
  got = ApplyPatch("application/json-patch+json", json::object(), R"({"op":"add"})");
  EXPECT_EQ(got.status().message(), "a JSON patch is an array of operations, not an object");
}

TEST(K8sApplyPatchTest, DeepBodiesAreRefusedNotFollowed) {
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  for (const char* type :
       {"application/json-patch+json", "application/merge-patch+json",
        "application/strategic-merge-patch+json", "application/apply-patch+yaml"}) {
    Result<json> got = ApplyPatch(type, json::object(), deep);
    ASSERT_FALSE(got.ok()) << type;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << type;
  }
  std::string deep_object;
  for (int i = 0; i < 100000; ++i) deep_object += "{\"a\":";
  deep_object += "1" + std::string(100000, '}');
  Result<json> got = ApplyPatch("application/merge-patch+json", json::object(), deep_object);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("deeper than"), std::string::npos);
}

// Random values, shaped like Pod fragments so that they reach the list and directive code.
json RandomValue(std::mt19937_64& rng, int depth) {
  static constexpr const char* kKeys[] = {
      "name",
      "containers",
      "env",
      "$patch",
      "finalizers",
      "$retainKeys",
      "$setElementOrder/env",
      "value",
      "image",
      "$deleteFromPrimitiveList/finalizers",
      "ports",
      "containerPort",
      "op",
      "path",
      "from",
      "spec",
  };
  static constexpr const char* kStrings[] = {"replace", "delete", "merge",  "a",    "/spec",
                                             "/a/-",    "add",    "remove", "move", "copy",
                                             "test",    "~1",     ""};
  int kind = static_cast<int>(rng() % (depth > 4 ? 4 : 6));
  switch (kind) {
    case 0:
      return nullptr;
    case 1:
      return static_cast<int64_t>(rng() % 4);
    case 2:
    case 3:
      return kStrings[rng() % std::size(kStrings)];
    case 4: {
      json a = json::array();
      for (size_t n = rng() % 4; n > 0; --n) a.push_back(RandomValue(rng, depth + 1));
      return a;
    }
    default: {
      json o = json::object();
      for (size_t n = rng() % 5; n > 0; --n) {
        o[kKeys[rng() % std::size(kKeys)]] = RandomValue(rng, depth + 1);
      }
      return o;
    }
  }
}

TEST(K8sApplyPatchTest, RandomPatchesNeverThrowAndNeverLeaveDirectives) {
  const uint64_t seed = 20260806;
  std::mt19937_64 rng(seed);
  int applied = 0;
  for (int i = 0; i < 3000; ++i) {
    json target = i % 2 == 0 ? TrainingJob() : RandomValue(rng, 0);
    json patch = RandomValue(rng, 0);
    if (i % 3 == 0) patch = json::array({patch, RandomValue(rng, 0)});
    for (auto* apply :
         {&ApplyMergePatch, &ApplyJsonPatch, &ApplyStrategicMergePatch, &ApplyServerSideApply}) {
      Result<json> got = json(nullptr);
      ASSERT_NO_THROW(got = apply(target, patch)) << "seed " << seed << " case " << i;
      if (!got.ok()) {
        EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
        EXPECT_FALSE(got.status().message().empty());
      } else if (apply == &ApplyStrategicMergePatch) {
        ++applied;
        EXPECT_FALSE(HasDirective(*got) && !HasDirective(target))
            << "seed " << seed << " case " << i << ": " << patch.dump();
      }
    }
  }
  EXPECT_GT(applied, 100);  // the generator reaches the success paths too
}

}  // namespace
}  // namespace berth::k8s
