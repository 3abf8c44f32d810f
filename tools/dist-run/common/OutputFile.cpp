//===- OutputFile.cpp - write a file, every failure an error --------------===//

#include "OutputFile.h"

#include "llvm/ADT/Twine.h"

namespace dist::run {

llvm::Error writeOutputFile(
    llvm::StringRef path,
    llvm::function_ref<llvm::Error(llvm::raw_pwrite_stream &)> fill) {
  auto cannotWrite = [&](std::error_code ec) {
    return llvm::createStringError(ec, "cannot write '" + path +
                                           "': " + ec.message());
  };
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return cannotWrite(ec);
  if (llvm::Error error = fill(os))
    return error;
  os.close();
  if (os.has_error()) {
    std::error_code closeError = os.error();
    // The stream would otherwise abort at destruction over an error nobody
    // looked at; it has been looked at and is returned.
    os.clear_error();
    return cannotWrite(closeError);
  }
  return llvm::Error::success();
}

} // namespace dist::run
