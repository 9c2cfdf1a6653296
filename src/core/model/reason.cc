#include "core/model/reason.h"

#include <array>

namespace berth::core {
namespace {

constexpr std::array<std::string_view, kNumPendingReasons> kReasonNames = {
    "None",
    "Priority",
    "Resources",
    "Dependency",
    "DependencyNeverSatisfied",
    "BeginTime",
    "JobHeldUser",
    "JobHeldAdmin",
    "PartitionDown",
    "PartitionInactive",
    "PartitionTimeLimit",
    "PartitionNodeLimit",
    "PartitionConfig",
    "ReqNodeNotAvail",
    "BadConstraints",
    "Licenses",
    "JobArrayTaskLimit",
    "QOSMaxGRESPerUser",
    "QOSMaxCpuPerUserLimit",
    "QOSMaxNodePerUserLimit",
    "QOSMaxJobsPerUserLimit",
    "QOSMaxGRESPerAccount",
    "QOSMaxCpuPerAccountLimit",
    "QOSMaxJobsPerAccountLimit",
    "QOSMaxGRESPerJob",
    "QOSMaxCpuPerJobLimit",
    "QOSMaxWallDurationPerJobLimit",
    "AssocGrpGRES",
    "AssocGrpCpuLimit",
    "AssocGrpNodeLimit",
    "AssocGrpJobsLimit",
    "AssocMaxJobsLimit",
    "AssocMaxGRESPerJob",
    "AssocMaxCpuPerJobLimit",
    "PowerUp",
    "InvalidAccount",
    "InvalidQOS",
    "AccountNotAllowed",
    "QOSNotAllowed",
    "DeadLine",
    "Reservation",
    "ReqNodeNotAvail, Reserved for maintenance",
};

}  // namespace

std::string_view PendingReasonName(PendingReason r) {
  return kReasonNames[static_cast<int>(r)];
}

}  // namespace berth::core
