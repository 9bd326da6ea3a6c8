// The JS-facing handle of a model (bindings/js/model.js wraps it): made by createModel (load), or by the
// checkpoint and bundled-model loaders (adopt). Layer: bindings.
#pragma once

#include <emscripten/val.h>

#include <memory>
#include <string>

#include "core/status.h"
#include "model/transformer.h"

namespace attnscope::bindings {

class ModelHandle {
 public:
  ModelHandle();
  emscripten::val load(emscripten::val config);  // createModel: null or an error descriptor
  void adopt(std::unique_ptr<model::Transformer> m, std::string creator);
  emscripten::val config() const;
  emscripten::val run(emscripten::val input, emscripten::val options) const;
  emscripten::val generate(std::string input, int max_new_tokens, int num_beams) const;
  emscripten::val parameters() const;
  const model::Transformer& model() const { return *model_; }  // bindings/embind/inside.cpp

 private:
  // The core's error with its operation named as the JS call ("create" -> creator_).
  emscripten::val error(const core::Status& s) const;
  std::unique_ptr<model::Transformer> model_;
  std::string creator_ = "createModel";
};

}  // namespace attnscope::bindings
