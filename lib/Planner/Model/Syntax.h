//===- Syntax.h - a cursor for the textual forms of §1-2 -------*- C++ -*-===//
//
// The mesh and layout syntaxes of semantics §1-§2 are small enough that a
// hand-written cursor is clearer than a grammar tool. Every failure becomes an
// llvm::Error that quotes the input and the column, so a user who mistypes
// `--from` on the command line sees exactly where.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_PLANNER_MODEL_SYNTAX_H
#define DIST_LIB_PLANNER_MODEL_SYNTAX_H

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace dist::planner::detail {

class Cursor {
public:
  Cursor(llvm::StringRef text, llvm::StringRef what) : text(text), what(what) {}

  void skipSpace() {
    while (pos < text.size() && llvm::isSpace(text[pos]))
      ++pos;
  }
  bool atEnd() {
    skipSpace();
    return pos >= text.size();
  }
  /// Consumes `c` (after whitespace) when it is next.
  bool tryConsume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  /// Consumes the keyword `kw` when it is next and not followed by an
  /// identifier character.
  bool tryKeyword(llvm::StringRef kw) {
    skipSpace();
    if (!text.substr(pos).starts_with(kw))
      return false;
    size_t end = pos + kw.size();
    if (end < text.size() && (llvm::isAlnum(text[end]) || text[end] == '_'))
      return false;
    pos = end;
    return true;
  }
  llvm::Error expect(char c) {
    if (tryConsume(c))
      return llvm::Error::success();
    return error(std::string("expected '") + c + "'");
  }
  /// A double-quoted string; `\"` and `\\` are the only escapes.
  llvm::Error parseString(std::string &out) {
    skipSpace();
    if (pos >= text.size() || text[pos] != '"')
      return error("expected a quoted axis name");
    size_t start = pos++;
    out.clear();
    while (pos < text.size() && text[pos] != '"') {
      if (text[pos] == '\\' && pos + 1 < text.size())
        ++pos;
      out.push_back(text[pos++]);
    }
    if (pos >= text.size()) {
      pos = start;
      return error("unterminated string");
    }
    ++pos;
    return llvm::Error::success();
  }
  /// A decimal integer with an optional leading '-'; rejects overflow.
  llvm::Error parseInt(int64_t &out) {
    skipSpace();
    size_t start = pos;
    bool negative = pos < text.size() && text[pos] == '-';
    if (negative)
      ++pos;
    if (pos >= text.size() || !llvm::isDigit(text[pos])) {
      pos = start;
      return error("expected an integer");
    }
    uint64_t value = 0;
    while (pos < text.size() && llvm::isDigit(text[pos])) {
      unsigned digit = text[pos] - '0';
      if (value > (uint64_t(INT64_MAX) - digit) / 10) {
        pos = start;
        return error("integer is too large");
      }
      value = value * 10 + digit;
      ++pos;
    }
    out = negative ? -int64_t(value) : int64_t(value);
    return llvm::Error::success();
  }
  /// An identifier made of letters, digits and '_'.
  llvm::Error parseIdent(std::string &out) {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() && (llvm::isAlnum(text[pos]) || text[pos] == '_'))
      ++pos;
    if (start == pos)
      return error("expected a keyword");
    out = text.substr(start, pos - start).str();
    return llvm::Error::success();
  }
  llvm::Error expectEnd() {
    if (atEnd())
      return llvm::Error::success();
    return error("unexpected trailing text");
  }
  llvm::Error error(const llvm::Twine &msg) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "invalid " + what + " '" + text +
                                       "': " + msg + " at column " +
                                       llvm::Twine(pos + 1));
  }
  size_t position() const { return pos; }

private:
  llvm::StringRef text;
  llvm::StringRef what;
  size_t pos = 0;
};

/// Quotes an axis name the way semantics §2 prints it: "x".
std::string quoteName(llvm::StringRef name);

} // namespace dist::planner::detail

#endif // DIST_LIB_PLANNER_MODEL_SYNTAX_H
