//===- FaultSpec.cpp - dist-run's --inject-fault=KIND:RANK ----------------===//

#include "FaultSpec.h"

#include "llvm/ADT/StringSwitch.h"

namespace dist::run {

llvm::Expected<FaultSpec> FaultSpec::parse(llvm::StringRef text) {
  FaultSpec parsed;
  if (text.empty())
    return parsed;
  auto [kind, rank] = text.split(':');
  parsed.kind = llvm::StringSwitch<Kind>(kind)
                    .Case("count", Count)
                    .Case("axis", Axis)
                    .Case("exit", Exit)
                    .Case("kill", Kill)
                    .Case("hang", Hang)
                    .Default(None);
  if (parsed.kind == None || rank.getAsInteger(10, parsed.rank) ||
      parsed.rank < 0)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "--inject-fault expects KIND:RANK with KIND one of count, axis, "
        "exit, kill, hang");
  return parsed;
}

} // namespace dist::run
