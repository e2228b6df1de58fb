#include <iostream>

#include "bench/cli/commands.hpp"
#include "core/error.hpp"
#include "report/compare.hpp"
#include "report/gbench_json.hpp"
#include "report/reader.hpp"

namespace embscale::cli {

int compare_command(const CompareOptions& command_options) {
  CompareOptions options = command_options;
  options.settings.gate = report::parse_gate_selection(options.gate_names);
  const auto base = report::read_comparable(options.base_path);
  const auto next = report::read_comparable(options.new_path);
  const auto comparison = [&] {
    try {
      return report::compare_reports(base, next, options.settings);
    } catch (const InputError& e) {
      throw InputError(options.base_path + " vs " + options.new_path + ": " + e.what());
    }
  }();
  if (options.json)
    std::cout << report::comparison_to_json(comparison, options.settings).dump(2) << '\n';
  else
    std::cout << "base: " << options.base_path << "\nnew:  " << options.new_path << "\n\n"
              << report::format_comparison(comparison, options.settings);
  return comparison.any_regression ? 1 : 0;
}

}  // namespace embscale::cli
