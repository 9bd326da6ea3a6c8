// The text rules of text.h. Layer: core (depends on nothing).
#include "core/text.h"

#include <cstdio>

namespace attnscope::core {

std::size_t utf8_sequence_at(std::string_view s, std::size_t i, char32_t* cp, std::size_t* valid_prefix) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  *valid_prefix = 1;
  if (b0 < 0x80) { *cp = b0; return 1; }
  std::size_t need;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  char32_t value;
  if (b0 >= 0xC2 && b0 <= 0xDF) { need = 1; value = b0 & 0x1Fu; }
  else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2; value = b0 & 0x0Fu;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3; value = b0 & 0x07u;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  for (std::size_t k = 1; k <= need; ++k) {
    if (i + k >= s.size()) return 0;
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
    value = (value << 6) | (b & 0x3Fu);
    *valid_prefix = k + 1;
  }
  *cp = value;
  return need + 1;
}

bool is_valid_utf8(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size();) {
    char32_t cp;
    std::size_t prefix;
    const std::size_t len = utf8_sequence_at(bytes, i, &cp, &prefix);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string replace_invalid_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    char32_t cp;
    std::size_t prefix;
    const std::size_t len = utf8_sequence_at(bytes, i, &cp, &prefix);
    if (len == 0) {
      append_utf8(out, 0xFFFD);
      i += prefix;
    } else {
      out.append(bytes.substr(i, len));
      i += len;
    }
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string quote(std::string_view text, char mark, std::size_t max_code_points) {
  const std::string repaired = replace_invalid_utf8(text);
  std::string out(1, mark);
  std::size_t count = 0;
  for (const char ch : repaired) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c & 0xC0) != 0x80 && ++count > max_code_points && max_code_points != 0) {
      out += "...";
      break;
    }
    if (ch == mark || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + mark;
}

}  // namespace attnscope::core
