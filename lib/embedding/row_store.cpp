#include "embedding/row_store.hpp"

namespace embscale::embedding {

void require_host_context(const ExecutionContext& context, std::string_view who) {
  if (context.on_host()) return;
  throw Error(std::string(who) + " runs on the host, but its execution context is " +
              std::string(memory_space_name(context.memory)) + " memory (device " + std::to_string(context.device) +
              "): a device run needs a device store and the device step");
}

}  // namespace embscale::embedding
