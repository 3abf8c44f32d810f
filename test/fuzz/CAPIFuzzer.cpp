//===- CAPIFuzzer.cpp - The planner's C API (dist-c/Planner.h) ------------===//
//
// Input: a request, as any C caller may pass it. Every answer must be JSON:
// an object with a string "error", or a plan whose cost is at least its
// lower bound and whose steps are an array.

#include "FuzzSupport.h"
#include "Search/Search.h"

#include "dist-c/Planner.h"
#include "dist/Planner/BoundedJSON.h"
#include "dist/Planner/Mesh.h"

#include <string>

using namespace dist::planner;
using namespace dist::fuzz;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // The harness runs every input on this thread.
  static detail::ScopedSearchOptions scope([] {
    detail::OptimalSearchOptions options;
    options.maxSeconds = kFuzzSearchSeconds;
    return options;
  }());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string request(reinterpret_cast<const char *>(data), size);
  llvm::Expected<llvm::json::Value> parsed = parseBoundedJSON(request);
  if (parsed) {
    if (const llvm::json::Object *object = parsed->getAsObject())
      for (llvm::StringRef key : {"mesh", "to_mesh"})
        if (std::optional<llvm::StringRef> text = object->getString(key)) {
          llvm::Expected<Mesh> mesh = Mesh::parse(*text);
          if (mesh && mesh->getNumDevices() > kMaxFuzzedDevices)
            return 0;
          if (!mesh)
            llvm::consumeError(mesh.takeError());
        }
  } else {
    llvm::consumeError(parsed.takeError());
  }
  // Bytes past a NUL are not part of a C string.
  char *answer = distPlanJSON(request.c_str());
  fuzzCheck(answer != nullptr, "an answer (NULL only when out of memory)");
  llvm::Expected<llvm::json::Value> json = parseBoundedJSON(answer);
  fuzzCheck(bool(json), "the answer is JSON");
  const llvm::json::Object *object = json->getAsObject();
  fuzzCheck(object != nullptr, "the answer is an object");
  if (const llvm::json::Value *error = object->get("error")) {
    fuzzCheck(error->getAsString().has_value(), "an error is a string");
  } else {
    std::optional<double> cost = object->getNumber("cost");
    std::optional<double> bound = object->getNumber("lower_bound");
    fuzzCheck(cost && bound, "a plan has a cost and a lower bound");
    fuzzCheck(*bound <= *cost * (1 + 1e-9) + 1e-15,
              "a plan costs at least its lower bound");
    fuzzCheck(object->getArray("steps") != nullptr, "a plan has steps");
  }
  distFreeString(answer);
  return 0;
}
