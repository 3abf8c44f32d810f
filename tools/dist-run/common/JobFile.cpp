//===- JobFile.cpp - what the front tells every rank worker ---------------===//

#include "JobFile.h"
#include "OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace dist::run {

namespace {

constexpr llvm::StringLiteral kMagic = "dist-run-job";
constexpr int kVersion = 1;

void writeTensor(llvm::raw_ostream &os, llvm::StringRef kind, size_t index,
                 const TensorJob &tensor) {
  os << kind << " " << index << " " << elementName(tensor.element) << " "
     << tensor.globalShape.size();
  for (int64_t extent : tensor.globalShape)
    os << " " << extent;
  os << " " << tensor.typeText << "\n";
  for (auto [r, placement] : llvm::enumerate(tensor.ranks)) {
    os << "rank " << r << " " << (placement.holds ? 1 : 0) << " ";
    if (placement.identity)
      os << *placement.identity;
    else
      os << "-";
    for (int64_t extent : placement.localShape)
      os << " " << extent;
    for (const std::vector<ShardPlacement::Run> &runs : placement.runs) {
      os << " " << runs.size();
      for (const ShardPlacement::Run &run : runs)
        os << " " << run.local << " " << run.global << " " << run.count;
    }
    os << "\n";
  }
}

/// Reads the job file line by line, naming the line in every error.
class Reader {
public:
  Reader(llvm::StringRef path, llvm::StringRef text) : path(path) {
    text.split(lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  }

  llvm::Expected<JobFile> read() {
    JobFile job;
    if (lines.empty() ||
        lines[0] != (kMagic + " " + llvm::Twine(kVersion)).str())
      return fail(0, "not a dist-run job file of version " +
                         llvm::Twine(kVersion) + " (expected '" + kMagic + " " +
                         llvm::Twine(kVersion) + "' first)");
    bool ended = false;
    for (line = 1; line < lines.size() && !ended; ++line) {
      auto [key, rest] = lines[line].split(' ');
      if (key == "entry")
        job.entry = rest.str();
      else if (key == "symbol")
        job.symbol = rest.str();
      else if (key == "library")
        job.library = rest.str();
      else if (key == "backend")
        job.backend = rest.str();
      else if (key == "target") {
        if (rest != "cpu" && rest != "gpu")
          return fail(line, "'target' must be cpu or gpu");
        job.target = rest.str();
      } else if (key == "ranks") {
        if (rest.getAsInteger(10, job.numRanks) || job.numRanks < 1)
          return fail(line, "'ranks' needs a positive integer");
      } else if (key == "input")
        job.input = rest.str();
      else if (key == "dump")
        job.dump = rest.str();
      else if (key == "fault")
        job.fault = rest.str();
      else if (key == "reps") {
        if (rest.getAsInteger(10, job.reps) || job.reps < 0)
          return fail(line, "'reps' needs a non-negative integer");
      } else if (key == "modelled") {
        if (rest.getAsDouble(job.modelledSeconds) || job.modelledSeconds < 0)
          return fail(line, "'modelled' needs a non-negative number");
      } else if (key == "argument" || key == "result") {
        if (job.numRanks < 1)
          return fail(line, "a tensor before 'ranks'");
        auto &tensors = key == "argument" ? job.arguments : job.results;
        llvm::Expected<TensorJob> tensor =
            readTensor(rest, tensors.size(), job.numRanks);
        if (!tensor)
          return tensor.takeError();
        tensors.push_back(std::move(*tensor));
      } else if (key == "end")
        ended = true;
      else
        return fail(line, "unknown record '" + key + "'");
    }
    if (!ended)
      return fail(lines.size() - 1, "the file ends without 'end' (cut short?)");
    if (job.entry.empty() || job.symbol.empty() || job.library.empty() ||
        job.numRanks < 1)
      return fail(0, "'entry', 'symbol', 'library' and 'ranks' are required");
    if (!llvm::sys::path::is_absolute(job.library)) {
      llvm::SmallString<256> library(llvm::sys::path::parent_path(path));
      llvm::sys::path::append(library, job.library);
      job.library = std::string(library);
    }
    return job;
  }

private:
  llvm::StringRef path;
  llvm::SmallVector<llvm::StringRef> lines;
  size_t line = 0;

  llvm::Error fail(size_t at, const llvm::Twine &why) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "job file '" + path + "', line " +
                                       llvm::Twine(at + 1) + ": " + why);
  }

  /// Takes the next word of `rest` as an integer.
  bool takeInt(llvm::StringRef &rest, int64_t &value) {
    auto [word, tail] = rest.ltrim(' ').split(' ');
    rest = tail;
    return !word.getAsInteger(10, value);
  }

  llvm::Expected<TensorJob> readTensor(llvm::StringRef rest, size_t index,
                                       int64_t numRanks) {
    TensorJob tensor;
    int64_t k = 0, rank = 0;
    if (!takeInt(rest, k) || k != static_cast<int64_t>(index))
      return fail(line, "tensors must be numbered 0, 1, ... in order");
    auto [elementWord, tail] = rest.split(' ');
    rest = tail;
    std::optional<ElementKind> element = parseElementName(elementWord);
    if (!element)
      return fail(line, "unknown element type '" + elementWord + "'");
    tensor.element = *element;
    if (!takeInt(rest, rank) || rank < 0 || rank > 64)
      return fail(line, "bad tensor rank");
    for (int64_t d = 0; d < rank; ++d) {
      int64_t extent = 0;
      if (!takeInt(rest, extent) || extent < 0)
        return fail(line, "bad global shape");
      tensor.globalShape.push_back(extent);
    }
    tensor.typeText = rest.str();
    for (int64_t r = 0; r < numRanks; ++r) {
      ++line;
      if (line >= lines.size())
        return fail(line - 1, "the placements of rank " + llvm::Twine(r) +
                                  " onwards are missing");
      llvm::Expected<ShardPlacement> placement =
          readPlacement(lines[line], r, rank, tensor.globalShape);
      if (!placement)
        return placement.takeError();
      tensor.ranks.push_back(std::move(*placement));
    }
    return tensor;
  }

  llvm::Expected<ShardPlacement>
  readPlacement(llvm::StringRef text, int64_t expectedRank, int64_t rank,
                const std::vector<int64_t> &globalShape) {
    ShardPlacement placement;
    auto [key, rest] = text.split(' ');
    int64_t r = 0, holds = 0;
    if (key != "rank" || !takeInt(rest, r) || r != expectedRank)
      return fail(line,
                  "expected 'rank " + llvm::Twine(expectedRank) + " ...'");
    if (!takeInt(rest, holds) || (holds != 0 && holds != 1))
      return fail(line, "HOLDS must be 0 or 1");
    placement.holds = holds;
    auto [identity, tail] = rest.split(' ');
    rest = tail;
    if (identity != "-") {
      int64_t value = 0;
      if (identity.getAsInteger(10, value))
        return fail(line, "IDENTITY must be an integer or '-'");
      placement.identity = value;
    }
    for (int64_t d = 0; d < rank; ++d) {
      int64_t extent = 0;
      if (!takeInt(rest, extent) || extent < 0)
        return fail(line, "bad local shape");
      placement.localShape.push_back(extent);
    }
    placement.runs.resize(rank);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t count = 0;
      if (!takeInt(rest, count) || count < 0 || count > placement.localShape[d])
        return fail(line, "bad run count of dim " + llvm::Twine(d));
      for (int64_t i = 0; i < count; ++i) {
        ShardPlacement::Run run;
        if (!takeInt(rest, run.local) || !takeInt(rest, run.global) ||
            !takeInt(rest, run.count))
          return fail(line, "bad run of dim " + llvm::Twine(d));
        // Runs stay inside both the local buffer and the global tensor.
        if (run.local < 0 || run.global < 0 || run.count < 0 ||
            run.count > placement.localShape[d] - run.local ||
            run.count > globalShape[d] - run.global)
          return fail(line, "a run of dim " + llvm::Twine(d) +
                                " leaves the local or the global shape");
        placement.runs[d].push_back(run);
      }
    }
    if (!rest.trim().empty())
      return fail(line, "unexpected words after the runs");
    return placement;
  }
};

} // namespace

llvm::Error writeJobFile(llvm::StringRef path, const JobFile &job) {
  return writeOutputFile(path, [&](llvm::raw_pwrite_stream &os) {
    os << kMagic << " " << kVersion << "\n";
    os << "entry " << job.entry << "\n";
    os << "symbol " << job.symbol << "\n";
    os << "library " << job.library << "\n";
    os << "backend " << job.backend << "\n";
    os << "target " << job.target << "\n";
    os << "ranks " << job.numRanks << "\n";
    os << "input " << job.input << "\n";
    if (!job.dump.empty())
      os << "dump " << job.dump << "\n";
    if (!job.fault.empty())
      os << "fault " << job.fault << "\n";
    if (job.reps > 0) {
      os << "reps " << job.reps << "\n";
      os << "modelled " << llvm::format("%.17g", job.modelledSeconds) << "\n";
    }
    for (auto [k, tensor] : llvm::enumerate(job.arguments))
      writeTensor(os, "argument", k, tensor);
    for (auto [k, tensor] : llvm::enumerate(job.results))
      writeTensor(os, "result", k, tensor);
    os << "end\n";
    return llvm::Error::success();
  });
}

llvm::Expected<JobFile> readJobFile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return llvm::createStringError(file.getError(),
                                   "cannot read the job file '" + path +
                                       "': " + file.getError().message());
  return Reader(path, (*file)->getBuffer()).read();
}

} // namespace dist::run
