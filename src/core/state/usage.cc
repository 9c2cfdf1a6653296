#include "core/state/usage.h"

#include <cmath>

namespace berth::core {
namespace {
constexpr double kLn2 = 0.6931471805599453;
}

double DecayedUsage::At(Time now, Duration half_life) const {
  if (half_life <= 0 || now <= as_of) return value;
  return value * std::exp2(-static_cast<double>(now - as_of) / static_cast<double>(half_life));
}

void DecayedUsage::Add(double amount, Time now, Duration half_life) {
  if (now > as_of) {
    value = At(now, half_life);
    as_of = now;
  } else if (now < as_of && half_life > 0) {
    // Usage recorded late counts as decayed to the time already reached.
    amount *= std::exp2(-static_cast<double>(as_of - now) / static_cast<double>(half_life));
  }
  value += amount;
}

double DecayedRunUsage(double billing, Time start, Time end, Duration half_life) {
  if (end <= start || billing <= 0) return 0;
  double secs = static_cast<double>(end - start);
  if (half_life <= 0) return billing * secs;
  double h = static_cast<double>(half_life);
  return billing * h / kLn2 * (1.0 - std::exp2(-secs / h));
}

}  // namespace berth::core
