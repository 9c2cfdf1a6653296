// scontrol's reservation commands (create, update, delete, show reservation), for
// slurm_scontrol.cc's dispatcher.
#ifndef BERTH_CLI_SLURM_RESV_H_
#define BERTH_CLI_SLURM_RESV_H_

#include <string>
#include <vector>

#include "cli/client.h"

namespace berth::cli {

// `scontrol create reservation WORDS...` (`words` after "reservation"; a first word
// "res=NAME"-style key is accepted as Slurm does). Prints "Reservation created: NAME".
int ScontrolCreateReservation(const std::vector<std::string>& words, bool quiet);
// `scontrol update ReservationName=NAME WORDS...`. Prints "Reservation updated.".
int ScontrolUpdateReservation(const std::vector<std::string>& words, bool quiet);
// `scontrol delete ReservationName=NAME` (or `delete reservation NAME`).
int ScontrolDeleteReservation(const std::vector<std::string>& words, bool quiet);
// `scontrol show reservation [NAME]`.
int ScontrolShowReservation(Client& c, const std::vector<std::string>& args, bool one_liner,
                            bool quiet);

}  // namespace berth::cli

#endif  // BERTH_CLI_SLURM_RESV_H_
