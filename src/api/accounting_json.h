// The JSON of accounts, users' associations and QoS: the records the controller keeps in its
// store (one per entity, meta keys "acct/NAME", "qos/NAME", "assoc/USER/ACCOUNT") and what
// GET /v1/associations returns (docs/api.md). Limits are objects of the TRES they bound
// ({"cpu": 8, "mem_mib": 1024, "gpus": 2, "nodes": 1}), absent when none; "max_wall" is seconds,
// absent when unlimited.
//
// Thread safety: all functions are pure.
#ifndef BERTH_API_ACCOUNTING_JSON_H_
#define BERTH_API_ACCOUNTING_JSON_H_

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "core/model/account.h"

namespace berth::api {

nlohmann::json QosToJson(const core::QosSpec& q);
nlohmann::json AccountToJson(const core::AccountSpec& a);
nlohmann::json UserToJson(const core::UserSpec& u);

// The reverse; kInvalidArgument naming the key when a value has the wrong type.
Result<core::QosSpec> QosFromJson(const nlohmann::json& j);
Result<core::AccountSpec> AccountFromJson(const nlohmann::json& j);
Result<core::UserSpec> UserFromJson(const nlohmann::json& j);

}  // namespace berth::api

#endif  // BERTH_API_ACCOUNTING_JSON_H_
