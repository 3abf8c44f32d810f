//===- Npy.cpp - NumPy .npy files in and out ------------------------------===//

#include "Npy.h"
#include "OutputFile.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <limits>
#include <optional>
#include <utility>

namespace dist::run {

static_assert(llvm::sys::IsLittleEndianHost,
              "dist-run writes little-endian .npy files by copying memory");

llvm::StringRef npyDescr(ElementKind kind) {
  switch (kind) {
  case ElementKind::F16:
    return "<f2";
  case ElementKind::BF16:
  case ElementKind::F32:
    return "<f4";
  case ElementKind::F64:
    return "<f8";
  case ElementKind::I1:
    return "|b1";
  case ElementKind::I8:
    return "|i1";
  case ElementKind::I16:
    return "<i2";
  case ElementKind::I32:
    return "<i4";
  case ElementKind::I64:
    return "<i8";
  }
  llvm_unreachable("unknown element kind");
}

llvm::Error writeNpy(llvm::StringRef path, llvm::ArrayRef<int64_t> shape,
                     ElementKind element, const void *buffer) {
  // A Python tuple: (), (4,), (2, 3).
  std::string dims;
  for (auto [i, extent] : llvm::enumerate(shape))
    dims += (i ? ", " : "") + std::to_string(extent);
  if (shape.size() == 1)
    dims += ",";
  std::string header = "{'descr': '" + npyDescr(element).str() +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces and a
  // final newline to a multiple of 64 bytes so that the data is aligned.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  if (header.size() > 0xFFFF)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the .npy header of '" + path +
                                       "' is too long for format 1.0");

  return writeOutputFile(path, [&](llvm::raw_pwrite_stream &os) {
    os << "\x93NUMPY" << '\x01' << '\x00';
    uint16_t length = static_cast<uint16_t>(header.size());
    os << static_cast<char>(length & 0xFF) << static_cast<char>(length >> 8);
    os << header;
    int64_t count = 1;
    for (int64_t extent : shape)
      count *= extent;
    if (element == ElementKind::BF16) {
      // bf16 is the upper half of an f32: shifting the bits up is exact.
      const auto *in = static_cast<const uint16_t *>(buffer);
      std::vector<uint32_t> widened(count);
      for (int64_t i = 0; i < count; ++i)
        widened[i] = static_cast<uint32_t>(in[i]) << 16;
      os.write(reinterpret_cast<const char *>(widened.data()), count * 4);
    } else {
      os.write(static_cast<const char *>(buffer),
               count * elementBytes(element));
    }
    return llvm::Error::success();
  });
}

//===----------------------------------------------------------------------===//
// npy:DIR inputs
//===----------------------------------------------------------------------===//

namespace {

/// The three keys of a .npy header.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses the header's Python dict literal, e.g.
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`: string
/// keys, and for values only what the three keys take (a string, True or
/// False, a tuple of non-negative integers). Anything else is an error.
class NpyHeaderParser {
public:
  explicit NpyHeaderParser(llvm::StringRef text) : text(text) {}

  llvm::Expected<NpyHeader> parse() {
    NpyHeader header;
    bool seenDescr = false, seenOrder = false, seenShape = false;
    skipSpace();
    if (!consume('{'))
      return fail("expected '{'");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::optional<std::string> key = parseString();
      if (!key)
        return fail("expected a quoted key");
      skipSpace();
      if (!consume(':'))
        return fail("expected ':' after '" + *key + "'");
      skipSpace();
      if (*key == "descr") {
        std::optional<std::string> descr = parseString();
        if (!descr)
          return fail("'descr' is not a string (structured dtypes are not "
                      "supported)");
        header.descr = *descr;
        if (std::exchange(seenDescr, true))
          return fail("'descr' appears twice");
      } else if (*key == "fortran_order") {
        if (consumeWord("True"))
          header.fortranOrder = true;
        else if (consumeWord("False"))
          header.fortranOrder = false;
        else
          return fail("'fortran_order' is neither True nor False");
        if (std::exchange(seenOrder, true))
          return fail("'fortran_order' appears twice");
      } else if (*key == "shape") {
        if (llvm::Error error = parseShape(header.shape))
          return error;
        if (std::exchange(seenShape, true))
          return fail("'shape' appears twice");
      } else {
        return fail("unexpected key '" + *key + "'");
      }
      skipSpace();
      if (consume(','))
        continue;
      if (pos < text.size() && text[pos] == '}')
        continue;
      return fail("expected ',' or '}' after the value of '" + *key + "'");
    }
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after the dict");
    if (!seenDescr || !seenOrder || !seenShape)
      return fail(std::string("no '") +
                  (!seenDescr   ? "descr"
                   : !seenOrder ? "fortran_order"
                                : "shape") +
                  "' key");
    return header;
  }

private:
  llvm::StringRef text;
  size_t pos = 0;

  llvm::Error fail(const llvm::Twine &why) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "malformed header (at byte " +
                                       llvm::Twine(pos) +
                                       " of the dict): " + why);
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool consumeWord(llvm::StringRef word) {
    if (!text.substr(pos).starts_with(word))
      return false;
    pos += word.size();
    return true;
  }
  /// A '...' or "..." literal without escapes.
  std::optional<std::string> parseString() {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return std::nullopt;
    char quote = text[pos];
    size_t end = text.find(quote, pos + 1);
    if (end == llvm::StringRef::npos)
      return std::nullopt;
    llvm::StringRef body = text.slice(pos + 1, end);
    if (body.contains('\\'))
      return std::nullopt;
    pos = end + 1;
    return body.str();
  }
  llvm::Error parseShape(std::vector<int64_t> &shape) {
    if (!consume('('))
      return fail("'shape' is not a tuple");
    while (true) {
      skipSpace();
      if (consume(')'))
        return llvm::Error::success();
      if (pos >= text.size() || !llvm::isDigit(text[pos]))
        return fail("'shape' holds something other than non-negative "
                    "integers");
      int64_t extent = 0;
      while (pos < text.size() && llvm::isDigit(text[pos])) {
        int digit = text[pos++] - '0';
        if (extent > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return fail("an extent of 'shape' does not fit in 64 bits");
        extent = extent * 10 + digit;
      }
      consume('L'); // Python 2's long integers
      shape.push_back(extent);
      skipSpace();
      if (consume(','))
        continue;
      if (pos < text.size() && text[pos] == ')')
        continue;
      return fail("expected ',' or ')' in 'shape'");
    }
  }
};

std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text = "(";
  for (auto [i, extent] : llvm::enumerate(shape))
    text += (i ? ", " : "") + std::to_string(extent);
  if (shape.size() == 1)
    text += ",";
  return text + ")";
}

} // namespace

/// Rounds an integer (the 64 bits of `bits`, signed or unsigned) to the
/// nearest value of a float type, ties to even, in one step.
static void storeFloatFromInt(ElementKind kind, uint64_t bits, bool isSigned,
                              void *dst) {
  // Up to 2^53 in magnitude a double holds the integer exactly, so
  // storeFloat rounds once.
  constexpr uint64_t exact = uint64_t(1) << 53;
  if (isSigned) {
    int64_t value = static_cast<int64_t>(bits);
    if (value >= -static_cast<int64_t>(exact) &&
        value <= static_cast<int64_t>(exact)) {
      storeFloat(kind, static_cast<double>(value), dst);
      return;
    }
  } else if (bits <= exact) {
    storeFloat(kind, static_cast<double>(bits), dst);
    return;
  }
  const llvm::fltSemantics &semantics =
      kind == ElementKind::F64   ? llvm::APFloat::IEEEdouble()
      : kind == ElementKind::F32 ? llvm::APFloat::IEEEsingle()
      : kind == ElementKind::F16 ? llvm::APFloat::IEEEhalf()
                                 : llvm::APFloat::BFloat();
  llvm::APFloat f(semantics);
  f.convertFromAPInt(llvm::APInt(64, bits), isSigned,
                     llvm::APFloat::rmNearestTiesToEven);
  uint64_t out = f.bitcastToAPInt().getZExtValue();
  std::memcpy(dst, &out, elementBytes(kind)); // little endian: the low bytes
}

llvm::Expected<NpyInput> NpyInput::open(llvm::StringRef path, size_t argument,
                                        llvm::ArrayRef<int64_t> globalShape,
                                        ElementKind element,
                                        llvm::StringRef typeText) {
  const std::string what =
      "'" + path.str() + "' (argument #" + std::to_string(argument) + ")";
  auto fail = [&](const llvm::Twine &why) -> llvm::Error {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   what + ": " + why);
  };
  // Mapped (or read, for a small file): never more than the file's size.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return llvm::createStringError(file.getError(),
                                   "cannot read " + what + ": " +
                                       file.getError().message());
  llvm::StringRef bytes = (*file)->getBuffer();
  const uint64_t size = bytes.size();

  // Preamble: "\x93NUMPY", major and minor version, header length (2 bytes
  // little endian for 1.x, 4 bytes for 2.x and 3.x).
  if (!bytes.starts_with(llvm::StringRef("\x93NUMPY", 6)))
    return fail("not a .npy file (it does not start with \"\\x93NUMPY\")");
  if (size < 8)
    return fail("truncated: the file ends inside the preamble");
  const unsigned major = static_cast<uint8_t>(bytes[6]);
  const unsigned minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return fail("unsupported .npy format version " + llvm::Twine(major) + "." +
                llvm::Twine(minor) + " (1.0, 2.0 and 3.0 are read)");
  const uint64_t lengthBytes = major == 1 ? 2 : 4;
  const uint64_t preamble = 8 + lengthBytes;
  if (size < preamble)
    return fail("truncated: the file ends inside the preamble");
  uint64_t headerLength = 0;
  for (uint64_t i = 0; i < lengthBytes; ++i)
    headerLength |= uint64_t(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
  if (headerLength > size - preamble)
    return fail("truncated: the header claims " + llvm::Twine(headerLength) +
                " bytes, the file has " + llvm::Twine(size - preamble) +
                " after the preamble");
  const uint64_t dataOffset = preamble + headerLength;

  llvm::Expected<NpyHeader> header =
      NpyHeaderParser(bytes.slice(preamble, dataOffset)).parse();
  if (!header)
    return fail(llvm::toString(header.takeError()));

  // The dtype: byte order, kind letter, item size.
  NpyInput input;
  llvm::StringRef descr = header->descr;
  input.descrText = header->descr;
  Source source = Source::Float;
  int64_t itemBytes = 0;
  bool known = descr.size() == 3 && llvm::StringRef("<>|=").contains(descr[0]);
  if (known) {
    llvm::StringRef type = descr.drop_front();
    if (type == "f2" || type == "f4" || type == "f8")
      source = Source::Float;
    else if (type == "i1" || type == "i2" || type == "i4" || type == "i8")
      source = Source::Signed;
    else if (type == "u1" || type == "u2" || type == "u4" || type == "u8")
      source = Source::Unsigned;
    else if (type == "b1")
      source = Source::Bool;
    else
      known = false;
    itemBytes = type.back() - '0';
  }
  if (!known)
    return fail("unsupported dtype '" + descr +
                "' (dist-run reads '<f2', '<f4', '<f8', '|i1', '<i2', "
                "'<i4', '<i8', '|u1', '<u2', '<u4', '<u8' and '|b1')");
  // '|' (no byte order) is what NumPy writes for one-byte types; '=' is the
  // writer's native order, which cannot be trusted across machines except
  // for one byte.
  if (itemBytes > 1 && descr[0] != '<') {
    if (descr[0] == '>')
      return fail("big-endian dtype '" + descr +
                  "' is not supported; save the array little endian, e.g. "
                  "a.astype('<" +
                  descr.drop_front() + "')");
    return fail("dtype '" + descr +
                "' has no explicit byte order; expected "
                "'<" +
                descr.drop_front() + "'");
  }
  if (header->fortranOrder)
    return fail("fortran_order is True; dist-run reads C-order arrays "
                "(save np.ascontiguousarray(a))");
  if (llvm::ArrayRef<int64_t>(header->shape) != globalShape)
    return fail("shape " + formatShape(header->shape) + ", expected " +
                formatShape(globalShape) + ", the global shape of " + typeText);
  if (source == Source::Float && !isFloat(element))
    return fail("float dtype '" + descr + "' cannot feed an " +
                elementName(element) +
                " argument (dist-run does not convert floats to "
                "integers; save an integer array)");

  // The shape equals the verified global shape, whose element count fits;
  // the byte count is checked all the same.
  int64_t count = 1;
  for (int64_t extent : header->shape)
    count *= extent;
  uint64_t dataBytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count),
                             static_cast<uint64_t>(itemBytes), &dataBytes) ||
      dataBytes > std::numeric_limits<uint64_t>::max() - dataOffset)
    return fail("the data of shape " + formatShape(header->shape) +
                " does not fit in 64 bits");
  const uint64_t needed = dataOffset + dataBytes;
  if (size < needed)
    return fail("truncated: the file has " + llvm::Twine(size) +
                " bytes, but its " + llvm::Twine(dataOffset) +
                "-byte header and " + llvm::Twine(count) + " '" + descr +
                "' elements need " + llvm::Twine(needed));
  if (size > needed)
    return fail("the file has " + llvm::Twine(size) + " bytes, but its " +
                llvm::Twine(dataOffset) + "-byte header and " +
                llvm::Twine(count) + " '" + descr + "' elements need only " +
                llvm::Twine(needed) +
                " (trailing bytes: not a well-formed .npy file)");

  input.data = reinterpret_cast<const uint8_t *>(bytes.data()) + dataOffset;
  input.source = source;
  input.itemBytes = itemBytes;
  input.element = element;
  input.file = std::move(*file);
  return input;
}

void NpyInput::storeElement(int64_t index, void *dst) const {
  const uint8_t *src = data + index * itemBytes;
  switch (source) {
  case Source::Float: {
    double value;
    if (itemBytes == 8) {
      std::memcpy(&value, src, 8);
    } else if (itemBytes == 4) {
      float f;
      std::memcpy(&f, src, 4);
      value = f;
    } else {
      uint16_t bits;
      std::memcpy(&bits, src, 2);
      value = llvm::APFloat(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits))
                  .convertToDouble();
    }
    // Every value of the source type is exact in a double, so storeFloat
    // rounds once.
    storeFloat(element, value, dst);
    return;
  }
  case Source::Bool:
    storeNumber(element, src[0] != 0 ? 1 : 0, dst);
    return;
  case Source::Signed:
  case Source::Unsigned: {
    const bool isSigned = source == Source::Signed;
    uint64_t bits = 0;
    std::memcpy(&bits, src, itemBytes); // little endian: the low bytes
    if (isSigned && itemBytes < 8 && (bits >> (8 * itemBytes - 1)) & 1)
      bits |= ~uint64_t(0) << (8 * itemBytes); // sign-extend
    if (isFloat(element))
      storeFloatFromInt(element, bits, isSigned, dst);
    else
      storeInt(element, static_cast<int64_t>(bits), dst);
    return;
  }
  }
}

} // namespace dist::run
