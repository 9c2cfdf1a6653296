// scontrol create|update|delete|show reservation (Slurm 22.05's src/scontrol/create_res.c and
// scontrol.c): the words are parsed by src/slurm/reservation.h, the controller decides.
#include "cli/slurm_resv.h"

#include <cstdio>
#include <ctime>

#include "common/strings.h"
#include "slurm/reservation.h"

namespace berth::cli {
namespace {

using nlohmann::json;

Time Now() {
  return static_cast<Time>(std::time(nullptr));
}

// The controller's message, as slurm_perror would print the error behind it.
std::string Message(const Status& st) {
  return st.message();
}

}  // namespace

int ScontrolCreateReservation(const std::vector<std::string>& words, bool quiet) {
  Result<slurm::ReservationRequest> r =
      slurm::ParseReservationWords(words, true, Now(), config::HostTimeZone());
  if (!r.ok()) {
    if (!quiet) std::fprintf(stderr, "%s\n", r.status().message().c_str());
    return 1;
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("scontrol", c.status());
  Result<json> created = (*c)->Call("POST", "/v1/reservations", r->body);
  if (!created.ok()) {
    if (!quiet) {
      std::fprintf(stderr, "Error creating the reservation: %s\n",
                   Message(created.status()).c_str());
    }
    return 1;
  }
  std::printf("Reservation created: %s\n", created->value("name", "").c_str());
  return 0;
}

int ScontrolUpdateReservation(const std::vector<std::string>& words, bool quiet) {
  Result<slurm::ReservationRequest> r =
      slurm::ParseReservationWords(words, false, Now(), config::HostTimeZone());
  if (!r.ok()) {
    if (!quiet) std::fprintf(stderr, "%s\n", r.status().message().c_str());
    return 1;
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("scontrol", c.status());
  Status st = (*c)->Call("PATCH", "/v1/reservations/" + r->name, r->body).status();
  if (!st.ok()) {
    if (!quiet) std::fprintf(stderr, "Error updating the reservation: %s\n", Message(st).c_str());
    return 1;
  }
  std::puts("Reservation updated.");
  return 0;
}

int ScontrolDeleteReservation(const std::vector<std::string>& words, bool quiet) {
  // "ReservationName=NAME", or "reservation NAME".
  std::string name, arg;
  if (!words.empty()) {
    arg = words[0];
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(eq + 1);
    } else if (words.size() > 1 && ToLower(arg).rfind("res", 0) == 0) {
      name = words[1];
      arg = "ReservationName=" + name;
    }
  }
  if (name.empty()) {
    std::fputs("scontrol: error: too few arguments for keyword:delete\n", stderr);
    return 1;
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("scontrol", c.status());
  Status st = (*c)->Call("DELETE", "/v1/reservations/" + name).status();
  if (!st.ok()) {
    if (!quiet) {
      std::fprintf(stderr, "delete_reservation %s: %s\n", arg.c_str(), Message(st).c_str());
    }
    return 1;
  }
  return 0;
}

int ScontrolShowReservation(Client& c, const std::vector<std::string>& args, bool one_liner,
                            bool quiet) {
  Result<json> list = c.Call("GET", "/v1/reservations");
  if (!list.ok()) return Fail("slurm_load_reservations error", list.status());
  const json all = list->value("reservations", json::array());
  std::string only = args.empty() ? "" : args[0];
  if (size_t eq = only.find('='); eq != std::string::npos) only = only.substr(eq + 1);
  int shown = 0;
  for (const json& r : all) {
    if (!only.empty() && r.value("name", "") != only) continue;
    std::fputs(slurm::FormatScontrolReservation(r, one_liner).c_str(), stdout);
    ++shown;
  }
  if (shown > 0) return 0;
  if (only.empty()) {
    if (!quiet) std::puts("No reservations in the system");
    return 0;
  }
  if (!quiet) std::printf("Reservation %s not found\n", only.c_str());
  return 1;
}

}  // namespace berth::cli
