#include "report/merge.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <type_traits>
#include <variant>

#include "core/error.hpp"
#include "core/temp_files.hpp"
#include "report/hdf5_handles.hpp"
#include "report/layout.hpp"
#include "report/reader.hpp"
#include "report/report_kind.hpp"

namespace embscale::report {
namespace {

// The rows over the union of their columns, so that runs of different kinds merge (a
// parameter-server run's roles, an eviction study's figures beside runs without them). A column
// keeps its place after the column before it in the first row that has it (after the columns
// earlier rows put there). Where a row lacks a
// column, a string column holds "" and a numeric one NaN (an int64 column some row lacks becomes
// float64: NaN is the only "absent" a number has). An int64 column some row holds as a string becomes
// a string column; a name with two other types is an InputError.
constexpr std::size_t kIntegerIndex = 0, kStringIndex = 2;  // in SummaryValue
static_assert(std::is_same_v<std::variant_alternative_t<kIntegerIndex, SummaryValue>, std::int64_t> &&
              std::is_same_v<std::variant_alternative_t<kStringIndex, SummaryValue>, std::string>);

std::vector<SummaryRow> over_all_columns(const std::vector<SummaryRow>& rows, const std::vector<std::string>& origins) {
  std::vector<std::string> names;
  std::map<std::string, std::pair<std::size_t, std::size_t>> type_of;  // name -> (variant index, row that set it)
  std::map<std::string, std::size_t> rows_with;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto in_row = [&](const std::string& name) {
      return std::any_of(rows[r].begin(), rows[r].end(), [&](const SummaryField& f) { return f.name == name; });
    };
    auto at = names.begin();
    for (const auto& field : rows[r]) {
      const auto found = std::find(names.begin(), names.end(), field.name);
      if (found != names.end()) {
        at = found + 1;
      } else {
        while (at != names.end() && !in_row(*at)) ++at;  // after the columns earlier rows put here
        at = names.insert(at, field.name) + 1;
      }
      const auto [type, fresh] = type_of.try_emplace(field.name, field.value.index(), r);
      if (!fresh && type->second.first != field.value.index()) {
        // Integers beside strings become strings (a multi-layer config's embedding_vec_size is
        // one number where its layers agree, else each layer's); other mixes are an error.
        const std::set<std::size_t> both = {type->second.first, field.value.index()};
        if (both != std::set<std::size_t>{kIntegerIndex, kStringIndex})
          throw InputError(origins[r] + ": /summary column " + field.name + " has another type than in " +
                           origins[type->second.second]);
        type->second.first = kStringIndex;
      }
      ++rows_with[field.name];
    }
  }
  std::vector<SummaryRow> out;
  for (const auto& row : rows) {
    SummaryRow unified;
    for (const auto& name : names) {
      const auto field = std::find_if(row.begin(), row.end(), [&](const SummaryField& f) { return f.name == name; });
      const bool everywhere = rows_with[name] == rows.size();
      const auto* integer = field != row.end() ? std::get_if<std::int64_t>(&field->value) : nullptr;
      if (integer && type_of[name].first == kStringIndex) {
        unified.push_back({name, std::to_string(*integer)});
      } else if (field != row.end()) {
        unified.push_back(integer && !everywhere ? SummaryField{name, static_cast<double>(*integer)} : *field);
      } else if (type_of[name].first == kStringIndex) {
        unified.push_back({name, std::string()});
      } else {
        unified.push_back({name, std::numeric_limits<double>::quiet_NaN()});
      }
    }
    out.push_back(std::move(unified));
  }
  return out;
}

// The hint after a duplicate run id. A sweep names its runs p<point>.r<repetition> itself, so
// `run --id` cannot help two sweeps' reports; a single run takes its id from `run --id`
// (default "run0", which is why two plain runs collide).
std::string how_to_name_runs(const std::string& id) {
  static const std::regex sweep_id(R"(p[0-9]+\.r[0-9]+)");
  if (std::regex_match(id, sweep_id))
    return "the reports of two sweeps (whose runs are named p<point>.r<repetition>) cannot be merged into one";
  return "give each run its own id with `embscale run --id NAME`";
}

// The merged report's root attributes: `attributes` with the inputs' one kind (a merge of
// collectives reports is a collectives report, whatever the caller copied its attributes from).
std::map<std::string, SummaryValue> with_kind(std::map<std::string, SummaryValue> attributes,
                                              const std::vector<std::filesystem::path>& inputs,
                                              const std::vector<ReportData>& reports,
                                              const std::filesystem::path& output) {
  std::vector<FileKind> kinds;
  for (std::size_t i = 0; i < inputs.size(); ++i) kinds.push_back({inputs[i].string(), reports[i].kind()});
  const std::string kind = require_one_kind(kinds, "merge");
  const std::string name(kReportKindAttribute);
  if (attributes.count(name) && report_kind(attributes) != kind)
    throw InputError(output.string() + ": the merged report was given report_kind \"" + report_kind(attributes) +
                     "\", but its inputs are " + kind + " reports");
  attributes[name] = kind;
  return attributes;
}

// What the inputs hold, checked before anything is written: run ids unique over all inputs,
// summary rows of one shape.
std::vector<SummaryRow> check_inputs(const std::vector<std::filesystem::path>& inputs,
                                     const std::vector<ReportData>& reports) {
  std::map<std::string, std::size_t> owner;  // run id -> input index
  std::vector<SummaryRow> rows;
  std::vector<std::string> origins;  // per row: its input
  for (std::size_t i = 0; i < reports.size(); ++i) {
    for (const auto& run : reports[i].runs) {
      const auto [at, fresh] = owner.emplace(run.id, i);
      if (!fresh)
        throw InputError(inputs[i].string() + ": run " + run.id + " is also in " + inputs[at->second].string() +
                         "; run ids must be unique across the merged reports: " + how_to_name_runs(run.id));
    }
    for (const auto& row : reports[i].summary) {
      rows.push_back(row);
      origins.push_back(inputs[i].string());
    }
  }
  return over_all_columns(rows, origins);
}

void copy_runs(const std::filesystem::path& input, const ReportData& report, hid_t runs) {
  PropertyList access = property_list(H5P_FILE_ACCESS, "file access properties");
  check(H5Pset_file_locking(access, true, true), "H5Pset_file_locking");
  const File source(H5Fopen(input.c_str(), H5F_ACC_RDONLY, access), "open " + input.string());
  for (const auto& run : report.runs) {
    const std::string from = "runs/" + run.id;
    const std::string where = "/runs/" + run.id;
    check(H5Ocopy(source, from.c_str(), runs, run.id.c_str(), H5P_DEFAULT, H5P_DEFAULT),
          "copy " + where + " from " + input.string());
    if (!run.metadata.empty()) continue;  // a merged input: the run keeps its own provenance
    const Group group(H5Gopen2(runs, run.id.c_str(), H5P_DEFAULT), "open group " + where);
    const Group metadata = create_group(group, "metadata", where + "/metadata");
    for (const auto& [name, value] : report.attributes) write_attribute(metadata, name, value, where + "/metadata");
  }
}

}  // namespace

void merge_reports(const std::vector<std::filesystem::path>& inputs, const std::filesystem::path& output,
                   const std::map<std::string, SummaryValue>& given_attributes) {
  silence_hdf5_errors();
  check_file_can_be_created(output, "report");  // before reading inputs: say it at once
  std::vector<ReportData> reports;
  for (const auto& input : inputs) {
    std::error_code ec;
    if (std::filesystem::equivalent(input, output, ec))
      throw InputError(output.string() + ": the merged report cannot also be an input");
    reports.push_back(read_report(input));
  }
  const auto attributes = with_kind(given_attributes, inputs, reports, output);
  const std::vector<SummaryRow> rows = check_inputs(inputs, reports);
  const SummaryTable table(rows);
  if (!table.problem().empty()) throw InputError(output.string() + ": summary: " + table.problem());
  remove_stale_temp_files(output);
  const auto temp = temporary_path_for(output);
  register_temp_file(temp);
  try {
    {
      PropertyList access = property_list(H5P_FILE_ACCESS, "file access properties");
      check(H5Pset_libver_bounds(access, H5F_LIBVER_V18, H5F_LIBVER_V18), "H5Pset_libver_bounds");
      File file(H5Fcreate(temp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access), "create " + temp.string());
      for (const auto& [name, value] : attributes) write_attribute(file, name, value, "/");
      Group runs = create_group(file, "runs", "/runs");
      for (std::size_t i = 0; i < inputs.size(); ++i) copy_runs(inputs[i], reports[i], runs);
      if (!rows.empty()) table.write(file, "summary", true, H5P_DEFAULT);
      runs.close_checked("close /runs");
      file.close_checked("close " + temp.string());
    }
    commit_temp_file(temp, output);
  } catch (const Error& e) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    unregister_temp_file(temp);
    throw Error(output.string() + ": " + e.what());  // an I/O failure, not bad input
  }
}

}  // namespace embscale::report
