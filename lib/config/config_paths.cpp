#include "config/config_paths.hpp"

#include <string>

namespace embscale::config {
namespace {

// Symbolic links resolved (a plan written through a link to a directory elsewhere must name its
// files from where it really is), as far as the directory exists.
std::filesystem::path absolute_directory(const std::filesystem::path& directory) {
  return std::filesystem::weakly_canonical(
      std::filesystem::absolute(directory.empty() ? std::filesystem::path(".") : directory));
}

// The path `field` holds (relative to `from`) relative to `to`; unchanged when absolute.
void rebase(nlohmann::json& field, const std::filesystem::path& from, const std::filesystem::path& to) {
  if (!field.is_string()) return;
  const std::filesystem::path path = field.get<std::string>();
  if (path.empty() || path.is_absolute()) return;
  const std::filesystem::path target = (from / path).lexically_normal();
  field = target.lexically_relative(to).generic_string();
}

}  // namespace

nlohmann::json rebase_relative_paths(nlohmann::json config_json, const std::filesystem::path& from_directory,
                                     const std::filesystem::path& to_directory) {
  const auto from = absolute_directory(from_directory), to = absolute_directory(to_directory);
  if (from == to || !config_json.is_object()) return config_json;
  if (auto layers = config_json.find("layers"); layers != config_json.end() && layers->is_array())
    for (auto& layer : *layers)
      if (layer.is_object() && layer.value("type", std::string()) == "Data" && layer.contains("source"))
        rebase(layer["source"], from, to);
  if (auto planner = config_json.find("planner"); planner != config_json.end() && planner->is_object())
    if (planner->contains("hardware")) rebase((*planner)["hardware"], from, to);
  if (auto solver = config_json.find("solver"); solver != config_json.end() && solver->is_object())
    if (auto dump = solver->find("incremental_dump"); dump != solver->end() && dump->is_object())
      if (dump->contains("directory")) rebase((*dump)["directory"], from, to);
  if (auto solver = config_json.find("solver"); solver != config_json.end() && solver->is_object())
    if (auto checkpoint = solver->find("checkpoint"); checkpoint != solver->end() && checkpoint->is_object())
      for (const char* name : {"directory", "resume_from"})
        if (checkpoint->contains(name)) rebase((*checkpoint)[name], from, to);
  if (auto ps = config_json.find("parameter_server"); ps != config_json.end() && ps->is_object())
    for (const char* name : {"save_directory", "load_directory"})
      if (ps->contains(name)) rebase((*ps)[name], from, to);
  return config_json;
}

}  // namespace embscale::config
