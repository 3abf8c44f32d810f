//===- State.cpp - The runtime's process state ----------------------------===//

#include "State.h"

namespace dist::rt {

State &S = *new State;

} // namespace dist::rt
