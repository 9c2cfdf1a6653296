#include "k8s/attach_request.h"

#include <gtest/gtest.h>

namespace berth::k8s {
namespace {

using nlohmann::json;

json PodWith(const json& fields) {
  json c = {{"name", "main"}, {"image", "busybox"}};
  c.update(fields);
  return {{"spec", {{"containers", json::array({c})}}}};
}

TEST(AttachRequestTest, FollowsThePodsContainer) {
  const struct {
    const char* name;
    json container;
    AttachQuery query;
    json want;  // stdin, stdout, stderr, tty
  } cases[] = {
      {"output only", json::object(), {false, true, true, false}, {false, true, true, false}},
      {"stdin asked, the container has none: not read",
       json::object(),
       {true, true, true, false},
       {false, true, true, false}},
      {"stdin given", {{"stdin", true}}, {true, true, true, false}, {true, true, true, false}},
      {"a terminal: one output",
       {{"stdin", true}, {"tty", true}},
       {true, true, false, true},
       {true, true, false, true}},
      {"the container's terminal even when not asked",
       {{"stdin", true}, {"tty", true}},
       {false, true, true, false},
       {false, true, false, true}},
      {"-t to a container without one: none",
       {{"stdin", true}},
       {true, true, false, true},
       {true, true, false, false}},
  };
  for (const auto& c : cases) {
    Result<json> r = AttachRequest(PodWith(c.container), c.query);
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.status().message();
    EXPECT_EQ((*r)["kind"], "attach") << c.name;
    json got = {(*r)["stdin"], (*r)["stdout"], (*r)["stderr"], (*r)["tty"]};
    EXPECT_EQ(got, c.want) << c.name;
  }
}

TEST(AttachRequestTest, RefusesWhatCannotBeServed) {
  Result<json> none = AttachRequest(PodWith(json::object()), {});
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(none.status().message(), "you must specify at least 1 of stdin, stdout, stderr");
  // A pod object without containers is served as one without stdin.
  EXPECT_TRUE(AttachRequest(json::object(), {false, true, false, false}).ok());
}

}  // namespace
}  // namespace berth::k8s
