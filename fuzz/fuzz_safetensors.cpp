// fuzz_safetensors.cpp: io::parse_safetensors on arbitrary bytes.
// Invariants: no crash/UB; errors are "fuzzSafetensors: safetensors ..." with argument "safetensors"; on
// success dtypes are F32/F16/BF16, shapes non-negative, data.size() == product(shape), names distinct, and
// write_safetensors -> parse_safetensors reproduces names, shapes and every f32 bit pattern (dtype "F32").
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr const char* fn = "fuzzSafetensors";
  auto r = attnscope::io::parse_safetensors(std::span<const std::uint8_t>(data, size), fn);
  if (!r.ok()) {
    fuzz::check_error(r.status(), fn);
    FUZZ_CHECK(r.status().argument == "safetensors", "argument '%s' != 'safetensors'",
               r.status().argument.c_str());
    FUZZ_CHECK(r.status().message.rfind("fuzzSafetensors: safetensors", 0) == 0, "message: %s",
               r.status().message.c_str());
    return 0;
  }
  const auto& tensors = r.value();
  std::set<std::string> names;
  std::size_t total_values = 0;
  for (const auto& t : tensors) {
    FUZZ_CHECK(t.dtype == "F32" || t.dtype == "F16" || t.dtype == "BF16", "dtype '%s'", t.dtype.c_str());
    FUZZ_CHECK(names.insert(t.name).second, "name '%s' returned twice", t.name.c_str());
    std::size_t product = 1;
    for (auto d : t.shape) {
      FUZZ_CHECK(d >= 0, "negative dimension %lld in '%s'", static_cast<long long>(d), t.name.c_str());
      product *= static_cast<std::size_t>(d);
    }
    FUZZ_CHECK(t.data.size() == product, "'%s': %zu values for shape product %zu", t.name.c_str(), t.data.size(),
               product);
    const std::size_t width = t.dtype == "F32" ? 4 : 2;
    total_values += product;
    FUZZ_CHECK(product * width <= size, "'%s': %zu values cannot fit in %zu bytes", t.name.c_str(), product, size);
  }
  FUZZ_CHECK(total_values * 2 <= size, "more values than the buffer can hold");

  const auto bytes = attnscope::io::write_safetensors(tensors);
  auto back = attnscope::io::parse_safetensors(bytes, fn);
  FUZZ_CHECK(back.ok(), "re-parsing written file failed: %s", back.status().message.c_str());
  const auto& b = back.value();
  FUZZ_CHECK(b.size() == tensors.size(), "round trip: %zu tensors, was %zu", b.size(), tensors.size());
  // Order among tensors sharing a begin offset (empty ones) is unspecified: match by name.
  std::size_t prev_index = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    std::size_t j = 0;
    while (j < tensors.size() && tensors[j].name != b[i].name) ++j;
    FUZZ_CHECK(j < tensors.size(), "round trip: unknown name '%s'", b[i].name.c_str());
    if (!tensors[j].data.empty()) {
      FUZZ_CHECK(j >= prev_index, "round trip: non-empty tensor '%s' moved", b[i].name.c_str());
      prev_index = j;
    }
    FUZZ_CHECK(b[i].dtype == "F32", "round trip: dtype %s", b[i].dtype.c_str());
    FUZZ_CHECK(b[i].shape == tensors[j].shape, "round trip: shape of '%s' changed", b[i].name.c_str());
    FUZZ_CHECK(b[i].data.size() == tensors[j].data.size() &&
                   (b[i].data.empty() ||
                    std::memcmp(b[i].data.data(), tensors[j].data.data(), b[i].data.size() * 4) == 0),
               "round trip: data of '%s' changed", b[i].name.c_str());
  }
  return 0;
}
