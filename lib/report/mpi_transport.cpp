#include "report/mpi_transport.hpp"

#include <mpi.h>

#include <set>
#include <string>
#include <vector>

namespace embscale::report {
namespace {

// The string value of control variable `name`, or nothing when the library has none.
bool read_string_cvar(const std::string& wanted, std::string& value) {
  int count = 0;
  if (MPI_T_cvar_get_num(&count) != MPI_SUCCESS) return false;
  for (int i = 0; i < count; ++i) {
    char name[256], description[16];
    int name_length = sizeof name, description_length = sizeof description, verbosity = 0, bind = 0, scope = 0;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    if (MPI_T_cvar_get_info(i, name, &name_length, &verbosity, &type, &enumtype, description, &description_length,
                            &bind, &scope) != MPI_SUCCESS ||
        wanted != name || type != MPI_CHAR)
      continue;
    MPI_T_cvar_handle handle;
    int elements = 0;
    if (MPI_T_cvar_handle_alloc(i, nullptr, &handle, &elements) != MPI_SUCCESS) return false;
    std::vector<char> text(static_cast<std::size_t>(elements) + 1, '\0');
    const bool read = MPI_T_cvar_read(handle, text.data()) == MPI_SUCCESS;
    MPI_T_cvar_handle_free(&handle);
    if (read) value = text.data();
    return read;
  }
  return false;
}

// The PML components that registered performance variables ("pml_<component>_...").
std::set<std::string> pmls_with_variables() {
  std::set<std::string> found;
  int count = 0;
  if (MPI_T_pvar_get_num(&count) != MPI_SUCCESS) return found;
  for (int i = 0; i < count; ++i) {
    char name[256], description[16];
    int name_length = sizeof name, description_length = sizeof description, verbosity = 0, variable_class = 0, bind = 0,
        readonly = 0, continuous = 0, atomic = 0;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    if (MPI_T_pvar_get_info(i, name, &name_length, &verbosity, &variable_class, &type, &enumtype, description,
                            &description_length, &bind, &readonly, &continuous, &atomic) != MPI_SUCCESS)
      continue;
    const std::string text = name;
    if (text.rfind("pml_", 0) != 0) continue;
    const auto end = text.find('_', 4);
    if (end != std::string::npos) found.insert(text.substr(4, end - 4));
  }
  return found;
}

bool plain_name(const std::string& request) {
  return !request.empty() && request.find_first_of("^, ") == std::string::npos;
}

}  // namespace

std::string mpi_transport_description() {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return "not reported (no MPI tool interface)";
  std::string pml, btl, mtl;
  const bool has_pml = read_string_cvar("pml", pml);
  const bool has_btl = read_string_cvar("btl", btl);
  const bool has_mtl = read_string_cvar("mtl", mtl);
  std::string selected;
  if (has_pml && plain_name(pml)) {
    selected = pml;
  } else if (const auto registered = pmls_with_variables(); registered.size() == 1) {
    selected = *registered.begin();
  }
  MPI_T_finalize();
  std::string requested;
  const auto add = [&](bool has, const char* what, const std::string& value) {
    if (has) requested += (requested.empty() ? "" : ", ") + std::string(what) + " \"" + value + "\"";
  };
  add(has_pml, "pml", pml);
  add(has_btl, "btl", btl);
  add(has_mtl, "mtl", mtl);
  return "pml " + (selected.empty() ? std::string("not reported") : selected) +
         (requested.empty() ? std::string() : "; requested: " + requested);
}

}  // namespace embscale::report
