//===- BoundedJSON.cpp - JSON reading with a nesting limit ----------------===//

#include "dist/Planner/BoundedJSON.h"

using namespace dist::planner;

llvm::Expected<llvm::json::Value>
dist::planner::parseBoundedJSON(llvm::StringRef text) {
  // Brackets inside strings do not nest; everything else is left to the
  // parser, which reports malformed text itself.
  unsigned depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJSONDepth)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "JSON nested more than " + llvm::Twine(kMaxJSONDepth) +
                " levels deep (at byte " + llvm::Twine(i) + ")");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return llvm::json::parse(text);
}
