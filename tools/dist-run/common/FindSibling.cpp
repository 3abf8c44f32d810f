//===- FindSibling.cpp - a tool next to this one --------------------------===//

#include "FindSibling.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

std::optional<std::string> dist::run::findSibling(llvm::StringRef self,
                                                  llvm::StringRef name) {
  llvm::SmallString<256> sibling(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(sibling, name);
  if (llvm::sys::fs::can_execute(sibling))
    return std::string(sibling);
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName(name))
    return *onPath;
  return std::nullopt;
}
