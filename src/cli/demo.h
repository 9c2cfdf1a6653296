// `berth up --demo`: a small mixed workload submitted to the running cluster, and the queue
// shown draining live.
#ifndef BERTH_CLI_DEMO_H_
#define BERTH_CLI_DEMO_H_

#include <atomic>
#include <string>

namespace berth::cli {

// Submits the demo jobs through the API at `address`, shows the queue until every one has
// ended (or `stop`, or 5 minutes), then a summary. Returns 0 when every job ended as expected.
int RunDemo(const std::string& address, const std::string& home, const std::atomic<bool>& stop);

}  // namespace berth::cli

#endif  // BERTH_CLI_DEMO_H_
