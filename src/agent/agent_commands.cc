#include "agent/agent_commands.h"

#include <nlohmann/json.hpp>
#include <type_traits>
#include <utility>

namespace berth::agent {
namespace {

using nlohmann::json;

template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;  // for clang, which does not deduce aggregates yet

json Head(const char* kind, const CommandTarget& t) {
  return {{"kind", kind}, {"job_id", t.job_id}, {"attempt", t.attempt}};
}

json SpecJson(const LaunchSpec& spec) {
  return json::parse(EncodeLaunchSpec(spec));
}

// A field of `j` of type T; InvalidArgument naming it when missing, of another type, or (a
// number) out of T's range.
template <typename T>
Status Field(const json& j, const char* name, T* out) {
  auto it = j.find(name);
  const std::string quoted = std::string("\"") + name + "\"";
  if (it == j.end()) return Status::InvalidArgument("no " + quoted);
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return Status::InvalidArgument(quoted + " is not a string");
    *out = it->get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!it->is_boolean()) return Status::InvalidArgument(quoted + " is not a boolean");
    *out = it->get<bool>();
  } else {
    if (!it->is_number_integer()) return Status::InvalidArgument(quoted + " is not an integer");
    const bool fits = it->is_number_unsigned() ? std::in_range<T>(it->get<uint64_t>())
                                               : std::in_range<T>(it->get<int64_t>());
    if (!fits) return Status::InvalidArgument(quoted + " is out of range");
    *out = it->get<T>();
  }
  return Status::Ok();
}

// As Field, but a missing field keeps *out.
template <typename T>
Status OptionalField(const json& j, const char* name, T* out) {
  return j.contains(name) ? Field(j, name, out) : Status::Ok();
}

Result<LaunchSpec> SpecOf(const json& j) {
  auto it = j.find("spec");
  if (it == j.end() || !it->is_object()) return Status::InvalidArgument("no \"spec\" object");
  return DecodeLaunchSpec(it->dump());
}

Result<AgentCommand> DecodeObject(const json& j) {
  std::string kind;
  BERTH_RETURN_IF_ERROR(Field(j, "kind", &kind));
  if (kind == "noop") return AgentCommand(NoopCommand{});
  CommandTarget t;
  BERTH_RETURN_IF_ERROR(Field(j, "job_id", &t.job_id));
  BERTH_RETURN_IF_ERROR(Field(j, "attempt", &t.attempt));
  if (kind == "launch") {
    LaunchCommand c{t, {}, ""};
    BERTH_ASSIGN_OR_RETURN(c.spec, SpecOf(j));
    BERTH_RETURN_IF_ERROR(OptionalField(j, "job_token", &c.job_token));
    return AgentCommand(std::move(c));
  }
  if (kind == "cancel") return AgentCommand(CancelCommand{t});
  if (kind == "signal") {
    SignalCommand c{t, 15, false, false};
    BERTH_RETURN_IF_ERROR(OptionalField(j, "signal", &c.signal));
    BERTH_RETURN_IF_ERROR(OptionalField(j, "batch_only", &c.batch_only));
    BERTH_RETURN_IF_ERROR(OptionalField(j, "full", &c.full));
    BERTH_RETURN_IF_ERROR(OptionalField(j, "step", &c.step));
    if (c.step < -1) return Status::InvalidArgument("'step' must be a step number");
    return AgentCommand(c);
  }
  if (kind == "time_limit") {
    TimeLimitCommand c{t, 0};
    BERTH_RETURN_IF_ERROR(Field(j, "time_limit", &c.time_limit));
    return AgentCommand(c);
  }
  if (kind == "step") {
    StepCommand c{t, 0, {}, ""};
    BERTH_RETURN_IF_ERROR(Field(j, "step_id", &c.step_id));
    BERTH_ASSIGN_OR_RETURN(c.spec, SpecOf(j));
    BERTH_RETURN_IF_ERROR(OptionalField(j, "job_token", &c.job_token));
    return AgentCommand(std::move(c));
  }
  if (kind == "end_steps") return AgentCommand(EndStepsCommand{t});
  if (kind == "step_signal") {
    StepSignalCommand c{t, 0, 15};
    BERTH_RETURN_IF_ERROR(Field(j, "step_id", &c.step_id));
    BERTH_RETURN_IF_ERROR(OptionalField(j, "signal", &c.signal));
    return AgentCommand(c);
  }
  if (kind == "stream") {
    StreamCommand c{t, "", ""};
    BERTH_RETURN_IF_ERROR(Field(j, "stream_id", &c.stream_id));
    auto it = j.find("request");
    if (it == j.end() || !it->is_object()) return Status::InvalidArgument("no \"request\" object");
    c.request = it->dump();
    return AgentCommand(std::move(c));
  }
  return Status::InvalidArgument("unknown kind \"" + kind + "\"");
}

}  // namespace

std::string EncodeAgentCommand(const AgentCommand& command) {
  const json encoded =
      std::visit(Overloaded{
                     [](const LaunchCommand& c) {
                       json j = Head("launch", c.target);
                       j["spec"] = SpecJson(c.spec);
                       if (!c.job_token.empty()) j["job_token"] = c.job_token;
                       return j;
                     },
                     [](const CancelCommand& c) { return Head("cancel", c.target); },
                     [](const SignalCommand& c) {
                       json j = Head("signal", c.target);
                       j["signal"] = c.signal;
                       j["batch_only"] = c.batch_only;
                       if (c.full) j["full"] = true;
                       if (c.step >= 0) j["step"] = c.step;
                       return j;
                     },
                     [](const TimeLimitCommand& c) {
                       json j = Head("time_limit", c.target);
                       j["time_limit"] = c.time_limit;
                       return j;
                     },
                     [](const StepCommand& c) {
                       json j = Head("step", c.target);
                       j["step_id"] = c.step_id;
                       j["spec"] = SpecJson(c.spec);
                       if (!c.job_token.empty()) j["job_token"] = c.job_token;
                       return j;
                     },
                     [](const EndStepsCommand& c) { return Head("end_steps", c.target); },
                     [](const StepSignalCommand& c) {
                       json j = Head("step_signal", c.target);
                       j["step_id"] = c.step_id;
                       j["signal"] = c.signal;
                       return j;
                     },
                     [](const StreamCommand& c) {
                       json j = Head("stream", c.target);
                       j["stream_id"] = c.stream_id;
                       j["request"] = json::parse(c.request, nullptr, false);
                       if (j["request"].is_discarded()) j["request"] = json::object();
                       return j;
                     },
                     [](const NoopCommand&) {
                       return json{{"kind", "noop"}};
                     },
                 },
                 command);
  return encoded.dump();
}

Result<AgentCommand> DecodeAgentCommand(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::InvalidArgument("an agent command must be a JSON object");
  Result<AgentCommand> c = DecodeObject(j);
  if (!c.ok()) {
    return Status::InvalidArgument("bad agent command (" + c.status().message() +
                                   "): " + std::string(text.substr(0, 200)));
  }
  return c;
}

}  // namespace berth::agent
