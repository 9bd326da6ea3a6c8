// tokenizer.json reading: the SAX handler and the typed checks declared in hf_tokenizer_json.h.
// Layer: tokenizers (depends on core/ only).
#include "tokenizers/hf_tokenizer_json.h"

#include <climits>

#include "tokenizers/unicode.h"

namespace attnscope::tokenizers::hf_json {
namespace {

// SAX handler: builds `root` like nlohmann's DOM parser, except that the object at model.vocab and the array at
// model.merges are read into ParsedFile's flat vectors (a DOM of 50k members cost most of GPT-2's load time).
class FileReader {
 public:
  explicit FileReader(ParsedFile* out) : out_(out) {}

  bool null() { return value(json(nullptr)); }
  bool boolean(bool v) { return value(json(v)); }
  bool number_integer(std::int64_t v) {
    if (mode_ == Mode::kVocab && depth_ == 1) {
      out_->vocab.emplace_back(std::move(key_), v);
      return true;
    }
    return value(json(v));
  }
  bool number_unsigned(std::uint64_t v) {
    if (mode_ == Mode::kVocab && depth_ == 1) {
      if (v > static_cast<std::uint64_t>(INT64_MAX)) {
        if (out_->vocab_bad_key.empty()) out_->vocab_too_large = true;
        mistyped(json::value_t::number_unsigned);
        return true;
      }
      return number_integer(static_cast<std::int64_t>(v));
    }
    return value(json(v));
  }
  bool number_float(double v, const std::string& /*text*/) { return value(json(v)); }
  bool string(std::string& v) {
    if (mode_ == Mode::kMerges && depth_ == 1) {
      out_->merges.push_back(MergeItem{std::move(v), {}, false});
      return true;
    }
    if (mode_ == Mode::kMerges && depth_ == 2) {
      ++pair_size_;
      if (pair_size_ == 1) out_->merges.back().a = std::move(v);
      if (pair_size_ == 2) out_->merges.back().b = std::move(v);
      return true;
    }
    return value(json(std::move(v)));
  }
  bool binary(json::binary_t& /*v*/) { return value(json(json::value_t::binary)); }
  bool key(std::string& k) {
    key_.swap(k);
    return true;
  }
  bool start_object(std::size_t /*n*/) {
    if (mode_ != Mode::kDom) return open_inside(json::value_t::object);
    if (at_model_member("vocab")) {
      if (out_->vocab_seen) out_->repeated = "vocab";
      mode_ = Mode::kVocab;
      depth_ = 1;
      out_->vocab_seen = true;
      return true;
    }
    return open(json(json::value_t::object));
  }
  bool start_array(std::size_t /*n*/) {
    if (mode_ != Mode::kDom) return open_inside(json::value_t::array);
    if (at_model_member("merges")) {
      if (out_->merges_seen) out_->repeated = "merges";
      mode_ = Mode::kMerges;
      depth_ = 1;
      out_->merges_seen = true;
      return true;
    }
    return open(json(json::value_t::array));
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& /*last_token*/, const Exception& ex) {
    out_->reason = detail::json_error_text(position, ex.what());
    return false;
  }

 private:
  enum class Mode { kDom, kVocab, kMerges };

  bool at_model_member(const char* name) const {
    return stack_.size() == 2 && stack_[1]->is_object() && names_[1] == "model" && key_ == name;
  }
  // A value inside model.vocab or model.merges that is not what they hold.
  void mistyped(json::value_t t) {
    if (mode_ == Mode::kVocab && depth_ == 1 && out_->vocab_bad_type[0] == '\0') {
      out_->vocab_bad_key = key_;
      out_->vocab_bad_type = io::json_type_name(t);
    }
    if (mode_ == Mode::kMerges && out_->merge_bad == SIZE_MAX) {
      if (depth_ == 1) {
        out_->merge_bad = out_->merges.size();
        out_->merge_bad_what =
            std::string("must be a string \"a b\" or a pair [\"a\", \"b\"], got ") + io::json_type_name(t);
        out_->merges.emplace_back();
      } else if (depth_ == 2) {
        out_->merge_bad = out_->merges.size() - 1;
        out_->merge_bad_what = std::string("must hold two strings, got ") + io::json_type_name(t);
      }
    }
  }
  bool value(json v) {
    if (mode_ != Mode::kDom) {
      mistyped(v.type());
      if (mode_ == Mode::kMerges && depth_ == 2) ++pair_size_;
      return true;
    }
    if (stack_.empty()) {
      out_->root = std::move(v);
    } else if (stack_.back()->is_array()) {
      stack_.back()->push_back(std::move(v));
    } else {
      (*stack_.back())[key_] = std::move(v);
    }
    return true;
  }
  bool open(json v) {
    json* slot;
    if (stack_.empty()) {
      out_->root = std::move(v);
      slot = &out_->root;
    } else if (stack_.back()->is_array()) {
      stack_.back()->push_back(std::move(v));
      slot = &stack_.back()->back();
    } else {
      slot = &((*stack_.back())[key_] = std::move(v));
    }
    names_.push_back(stack_.empty() || stack_.back()->is_array() ? std::string() : key_);
    stack_.push_back(slot);
    return true;
  }
  bool open_inside(json::value_t t) {
    if (mode_ == Mode::kMerges && depth_ == 1 && t == json::value_t::array) {
      out_->merges.push_back(MergeItem{{}, {}, true});
      pair_size_ = 0;
    } else {
      mistyped(t);
      if (mode_ == Mode::kMerges && depth_ == 2) ++pair_size_;
    }
    ++depth_;
    return true;
  }
  bool close() {
    if (mode_ == Mode::kDom) {
      stack_.pop_back();
      names_.pop_back();
      return true;
    }
    if (mode_ == Mode::kMerges && depth_ == 2 && pair_size_ != 2 && out_->merge_bad == SIZE_MAX) {
      out_->merge_bad = out_->merges.size() - 1;
      out_->merge_bad_what = "must hold two strings, got " + std::to_string(pair_size_);
    }
    if (--depth_ == 0) mode_ = Mode::kDom;
    return true;
  }

  ParsedFile* out_;
  std::vector<json*> stack_;        // open containers of the tree
  std::vector<std::string> names_;  // the key each was opened under ("" in arrays and for the root)
  std::string key_;
  Mode mode_ = Mode::kDom;
  int depth_ = 0;                   // nesting inside model.vocab / model.merges (1 = their members)
  int pair_size_ = 0;               // strings seen in the current ["a", "b"] merge
};

}  // namespace

ParsedFile parse_file(std::string_view text) {
  ParsedFile out;
  FileReader reader(&out);
  out.parsed = json::sax_parse(text.begin(), text.end(), &reader) && out.reason.empty();
  return out;
}


core::Result<std::string> component_type(const Reader& rd, const json& root, const char* name) {
  const auto it = root.find(name);
  if (it == root.end() || it->is_null()) return std::string();
  if (!it->is_object()) return rd.type(name, "an object or null", *it);
  const auto t = it->find("type");
  if (t == it->end() || !t->is_string()) {
    return rd.type(std::string(name) + ".type", "a string", t == it->end() ? json() : *t);
  }
  return t->get<std::string>();
}

core::Result<std::vector<AddedToken>> read_added_tokens(const Reader& rd, const json& root) {
  std::vector<AddedToken> added;
  const auto it = root.find("added_tokens");
  if (it == root.end() || it->is_null()) return added;
  if (!it->is_array()) return rd.type("added_tokens", "an array", *it);
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& item = (*it)[i];
    const std::string path = "added_tokens[" + std::to_string(i) + "]";
    if (!item.is_object()) return rd.type(path, "an object", item);
    AddedToken a;
    const auto id = item.find("id");
    if (id == item.end() || !id->is_number_integer()) {
      return rd.type(path + ".id", "an integer", id == item.end() ? json() : *id);
    }
    if (id->is_number_unsigned() ? id->get<std::uint64_t>() > INT32_MAX : (id->get<std::int64_t>() < 0)) {
      return core::range_error(rd.fn(), rd.arg(), rd.at(path + ".id") + " (" + id->dump() +
                                                      ") must be an id in [0, 2147483647]");
    }
    a.id = static_cast<std::int32_t>(id->get<std::int64_t>());
    const auto content = item.find("content");
    if (content == item.end() || !content->is_string()) {
      return rd.type(path + ".content", "a string", content == item.end() ? json() : *content);
    }
    a.content = content->get<std::string>();
    if (a.content.empty()) return rd.invalid(rd.at(path + ".content") + " must not be empty");
    struct Flag { const char* name; bool* value; };
    auto special = rd.boolean(item, "special", path + ".special", false);
    if (!special.ok()) return special.status();
    a.special = special.value();
    bool normalized = !a.special;
    for (const Flag& f : {Flag{"single_word", &a.single_word}, Flag{"lstrip", &a.lstrip}, Flag{"rstrip", &a.rstrip},
                          Flag{"normalized", &normalized}}) {
      auto v = rd.boolean(item, f.name, path + "." + f.name, *f.value);
      if (!v.ok()) return v.status();
      *f.value = v.value();
    }
    a.normalized = normalized;
    added.push_back(std::move(a));
  }
  return added;
}

core::Status check_vocab(const Reader& rd, const ParsedFile& f, const json& model) {
  if (!f.vocab_seen) {
    const auto it = model.find("vocab");
    if (it == model.end()) return rd.invalid(rd.at("model.vocab") + " is missing");
    return rd.type("model.vocab", "an object mapping each token to its id", *it);
  }
  if (f.vocab_bad_type[0] != '\0') {
    const std::string where = rd.at("model.vocab") + "[" + quote_value(f.vocab_bad_key) + "]";
    if (f.vocab_too_large) return core::range_error(rd.fn(), rd.arg(), where + " must be an id in [0, 2147483647]");
    return core::type_error(rd.fn(), rd.arg(), where + " must be an integer id, got " + f.vocab_bad_type);
  }
  return core::Status::Ok();
}

}  // namespace attnscope::tokenizers::hf_json
