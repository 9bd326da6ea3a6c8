// NFC / NFKC (nfc.h): full decomposition, canonical ordering, canonical composition (UAX #15 section 3.11 and
// the Hangul algorithm of The Unicode Standard 3.12). Layer: tokenizers (depends on core/ only).
#include "tokenizers/nfc.h"

#include <algorithm>

namespace attnscope::tokenizers {
namespace {

struct DecompEntry {
  std::uint32_t cp, start;
  std::uint8_t count, compat;
};
struct CccEntry {
  std::uint32_t cp;
  std::uint8_t ccc;
};
struct ComposeEntry {
  std::uint32_t a, b, composite;
};
#include "tokenizers/nfc_tables.inc"

constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

std::uint8_t ccc_of(char32_t cp) {
  const auto* end = kCcc + sizeof(kCcc) / sizeof(kCcc[0]);
  const auto* it = std::lower_bound(kCcc, end, cp, [](const CccEntry& e, char32_t c) { return e.cp < c; });
  return it != end && it->cp == cp ? it->ccc : 0;
}

void decompose(char32_t cp, bool compat, std::u32string& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const char32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    return;
  }
  const auto* end = kDecomp + sizeof(kDecomp) / sizeof(kDecomp[0]);
  const auto* it = std::lower_bound(kDecomp, end, cp, [](const DecompEntry& e, char32_t c) { return e.cp < c; });
  if (it == end || it->cp != cp || (it->compat && !compat)) {
    out.push_back(cp);
    return;
  }
  for (std::uint32_t i = 0; i < it->count; ++i) decompose(kDecompData[it->start + i], compat, out);
}

char32_t compose_pair(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount) {
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  }
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount) {
    return a + (b - kTBase);
  }
  const auto* end = kCompose + sizeof(kCompose) / sizeof(kCompose[0]);
  const auto* it = std::lower_bound(kCompose, end, std::make_pair(a, b), [](const ComposeEntry& e, std::pair<char32_t, char32_t> k) {
    return e.a != k.first ? e.a < k.first : e.b < k.second;
  });
  return it != end && it->a == a && it->b == b ? it->composite : 0;
}

}  // namespace

void normalize_nfc(std::u32string& cps, Alignment& from, bool compat) {
  // 1. full decomposition
  std::u32string d;
  Alignment df;
  std::u32string one;
  for (std::size_t i = 0; i < cps.size(); ++i) {
    one.clear();
    decompose(cps[i], compat, one);
    d += one;
    df.insert(df.end(), one.size(), from[i]);
  }
  // 2. canonical ordering: a stable sort of each run of non-starters by combining class
  std::vector<std::uint8_t> cc(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) cc[i] = ccc_of(d[i]);
  for (std::size_t i = 0; i < d.size();) {
    if (cc[i] == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < d.size() && cc[j] != 0) ++j;
    std::vector<std::size_t> idx(j - i);
    for (std::size_t k = 0; k < idx.size(); ++k) idx[k] = i + k;
    std::stable_sort(idx.begin(), idx.end(), [&cc](std::size_t a, std::size_t b) { return cc[a] < cc[b]; });
    std::u32string c2;
    Alignment f2;
    std::vector<std::uint8_t> k2;
    for (std::size_t k : idx) {
      c2.push_back(d[k]);
      f2.push_back(df[k]);
      k2.push_back(cc[k]);
    }
    std::copy(c2.begin(), c2.end(), d.begin() + static_cast<std::ptrdiff_t>(i));
    std::copy(f2.begin(), f2.end(), df.begin() + static_cast<std::ptrdiff_t>(i));
    std::copy(k2.begin(), k2.end(), cc.begin() + static_cast<std::ptrdiff_t>(i));
    i = j;
  }
  // 3. canonical composition
  std::u32string out;
  Alignment of;
  std::vector<std::uint8_t> oc;
  std::size_t starter = SIZE_MAX;  // index in out of the last starter
  for (std::size_t i = 0; i < d.size(); ++i) {
    const char32_t c = d[i];
    const std::uint8_t k = cc[i];
    if (starter != SIZE_MAX) {
      // blocked when a character between the starter and c has ccc 0 or >= c's
      const std::uint8_t last = oc.size() - 1 > starter ? oc.back() : 0;
      const bool adjacent = oc.size() - 1 == starter;
      if (adjacent || (last != 0 && last < k)) {
        if (const char32_t comp = compose_pair(out[starter], c); comp != 0) {
          out[starter] = comp;
          of[starter].first = std::min(of[starter].first, df[i].first);
          of[starter].second = std::max(of[starter].second, df[i].second);
          continue;
        }
      }
    }
    out.push_back(c);
    of.push_back(df[i]);
    oc.push_back(k);
    if (k == 0) starter = out.size() - 1;
  }
  cps = std::move(out);
  from = std::move(of);
}

}  // namespace attnscope::tokenizers
