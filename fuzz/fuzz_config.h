// fuzz_config.h: the config.json harnesses' (fuzz_decoder_config, fuzz_seq2seq_config) common first step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz_common.h"
#include "model/hf_checkpoint.h"

namespace fuzz {

// The input as config.json through describe_hf: its description, or nullopt once the error is checked to name
// loadPretrained and its argument "config", its message starting "loadPretrained: config".
inline std::optional<attnscope::model::HfConfig> describe_config(const std::uint8_t* data, std::size_t size) {
  const std::string config(reinterpret_cast<const char*>(data), size);
  auto r = attnscope::model::describe_hf(config, "loadPretrained");
  if (r.ok()) return std::move(r.value());
  const auto& s = r.status();
  check_error(s, "loadPretrained");
  FUZZ_CHECK(s.argument == "config", "argument '%s': %s", s.argument.c_str(), s.message.c_str());
  FUZZ_CHECK(s.message.rfind("loadPretrained: config", 0) == 0, "message '%s'", s.message.c_str());
  return std::nullopt;
}

}  // namespace fuzz
