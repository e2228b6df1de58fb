#include "report/run_pairing.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.hpp"

namespace embscale::report {
namespace {

using Parameters = std::map<std::string, std::string>;  // name -> formatted value

Parameters parameters_of(const ReportData::Run& run) {
  Parameters out;
  for (const auto& p : run.parameters) out[p.name] = format_value(p.value);
  return out;
}

std::string join(const Parameters& parameters) {
  std::string text;
  for (const auto& [name, value] : parameters) text += (text.empty() ? "" : " ") + name + "=" + value;
  return text;
}

// A side's runs grouped by their parameters without the ignored ones; `ignored_values` keeps,
// per group, the ignored parameters' values (the same for every run of the group, or an error).
struct Group {
  Parameters kept;
  Parameters ignored_values;
  std::vector<const ReportData::Run*> runs;
};

std::map<std::string, Group> group_side(const ReportData& data, const std::set<std::string>& ignored,
                                        const char* side) {
  std::map<std::string, Group> groups;
  for (const auto& run : data.runs) {
    Parameters kept, dropped;
    for (auto& [name, value] : parameters_of(run)) (ignored.count(name) ? dropped : kept)[name] = value;
    auto [it, fresh] = groups.try_emplace(join(kept));
    Group& group = it->second;
    if (fresh) {
      group.kept = kept;
      group.ignored_values = dropped;
    } else if (group.ignored_values != dropped) {
      throw InputError(std::string("--ignore: the ") + side +
                       " report holds runs that differ only in ignored parameters (" + join(group.ignored_values) +
                       " against " + join(dropped) + "; run " + run.id +
                       "): ignoring them would take different measurements for repetitions; compare them "
                       "one report at a time");
    }
    group.runs.push_back(&run);
  }
  return groups;
}

// The parameters in which two runs differ, as "name (base X, new Y)".
std::vector<std::string> differences(const Parameters& base, const Parameters& next) {
  std::set<std::string> names;
  for (const auto& [name, value] : base) names.insert(name);
  for (const auto& [name, value] : next) names.insert(name);
  std::vector<std::string> out;
  for (const auto& name : names) {
    const auto b = base.find(name), n = next.find(name);
    const std::string bv = b == base.end() ? "absent" : b->second;
    const std::string nv = n == next.end() ? "absent" : n->second;
    if (bv != nv) out.push_back(name + " (base " + bv + ", new " + nv + ")");
  }
  return out;
}

[[noreturn]] void refuse_unpaired(const std::map<std::string, Group>& base, const std::map<std::string, Group>& next) {
  // For each base group, the new group it differs from in the fewest parameters.
  std::string text = "the reports have no runs with the same parameters";
  std::set<std::string> to_ignore;
  for (const auto& [key, group] : base) {
    std::vector<std::string> closest;
    for (const auto& [other_key, other] : next) {
      auto d = differences(group.kept, other.kept);
      if (closest.empty() || d.size() < closest.size()) closest = std::move(d);
    }
    text += "\n  base " + (key.empty() ? std::string("(no parameters)") : key);
    if (next.empty()) continue;
    text += "\n    differs from the closest new run in:";
    for (const auto& d : closest) {
      text += " " + d + ";";
      to_ignore.insert(d.substr(0, d.find(' ')));
    }
  }
  if (base.empty()) text += "\n  base has no runs";
  if (next.empty()) text += "\n  new has no runs";
  if (!to_ignore.empty()) {
    std::string names;
    for (const auto& name : to_ignore) names += (names.empty() ? "" : ",") + name;
    text += "\n  to compare them anyway, pair runs ignoring those parameters: --ignore " + names;
  }
  throw InputError(text);
}

}  // namespace

Pairing pair_runs(const ReportData& base, const ReportData& next, const std::vector<std::string>& ignored_names) {
  const std::set<std::string> ignored(ignored_names.begin(), ignored_names.end());
  for (const auto& name : ignored) {
    const auto has = [&](const ReportData& d) {
      return std::any_of(d.runs.begin(), d.runs.end(),
                         [&](const auto& run) { return parameters_of(run).count(name) > 0; });
    };
    if (!has(base) && !has(next))
      throw InputError("--ignore " + name + ": no run of either report has a parameter of that name");
  }
  const auto base_groups = group_side(base, ignored, "base");
  const auto next_groups = group_side(next, ignored, "new");

  Pairing out;
  for (const auto& [key, group] : base_groups) {
    const auto match = next_groups.find(key);
    if (match == next_groups.end()) {
      out.unpaired_base += group.runs.size();
      continue;
    }
    Parameters shown = group.kept;
    for (const auto& [name, value] : group.ignored_values) {
      const auto n = match->second.ignored_values.find(name);
      const std::string next_value = n == match->second.ignored_values.end() ? "absent" : n->second;
      shown[name] = value == next_value ? value : value + "->" + next_value;
    }
    for (const auto& [name, value] : match->second.ignored_values)
      if (!group.ignored_values.count(name)) shown[name] = "absent->" + value;
    out.pairs.push_back({join(shown), group.runs, match->second.runs});
  }
  for (const auto& [key, group] : next_groups)
    if (!base_groups.count(key)) out.unpaired_next += group.runs.size();
  if (out.pairs.empty()) refuse_unpaired(base_groups, next_groups);
  return out;
}

}  // namespace embscale::report
