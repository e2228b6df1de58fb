// Which runs of two reports are compared with each other (embscale compare): runs pair when
// their parameters are equal, except the parameters the user names to ignore (`--ignore ranks`
// compares 2 ranks against 4 on purpose). Runs of one side with the same parameters are
// repetitions of one measurement and stay together.
#pragma once

#include <string>
#include <vector>

#include "report/reader.hpp"

namespace embscale::report {

struct RunPair {
  // "name=value ..." sorted by name; an ignored parameter shows as "name=base->new" when the
  // sides differ in it.
  std::string label;
  std::vector<const ReportData::Run*> base;
  std::vector<const ReportData::Run*> next;
};

struct Pairing {
  std::vector<RunPair> pairs;
  std::size_t unpaired_base = 0;  // runs of either side that found no partner
  std::size_t unpaired_next = 0;
};

// Throws InputError when no run pairs (naming, for the closest runs of the two sides, each
// parameter that differs with both values, and the --ignore that would pair them), when an
// ignored name is a parameter of no run, or when ignoring makes one side's runs with different
// values of an ignored parameter indistinguishable (they would be taken for repetitions).
Pairing pair_runs(const ReportData& base, const ReportData& next, const std::vector<std::string>& ignored);

}  // namespace embscale::report
