// Advance reservations as Slurm's commands speak of them: `scontrol create|update reservation`
// words into the controller's request (POST/PATCH /v1/reservations), and the records back as
// `scontrol show reservation` and `sinfo -T` print them (Slurm 22.05's
// slurm_sprint_reservation_info and sinfo's _reservation_report).
#ifndef BERTH_SLURM_RESERVATION_H_
#define BERTH_SLURM_RESERVATION_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "config/slurm_datetime.h"

namespace berth::slurm {

struct ReservationRequest {
  std::string name;     // ReservationName= ("" on create: the controller names it)
  nlohmann::json body;  // the API request's fields
};

// Parses Key=Value words (keys case-insensitive, Slurm's abbreviations allowed):
// ReservationName, StartTime (now, now+1hour, 2026-12-05T10:00, ...), EndTime, Duration
// (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM:SS, UNLIMITED: a year, as Slurm), Nodes, NodeCnt,
// Users, Accounts, Flags, PartitionName. `create` requires a start and an end or duration.
// Errors carry Slurm's message.
Result<ReservationRequest> ParseReservationWords(const std::vector<std::string>& words, bool create,
                                                 Time now, const config::UtcOffset& zone);

// `scontrol show reservation` text of one record (GET /v1/reservations), ending in a blank
// line (one line with `one_liner`).
std::string FormatScontrolReservation(const nlohmann::json& r, bool one_liner);

// `sinfo -T`: RESV_NAME STATE START_TIME END_TIME DURATION NODELIST.
std::string FormatSinfoReservations(const nlohmann::json& list, bool no_header);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_RESERVATION_H_
