#include "examples/run_clm/clm_tokenizer.h"

#include <filesystem>
#include <memory>

#include "hearth/core/errors.h"
#include "hearth/data/tokenizer/bpe_tokenizer.h"
#include "hearth/io/atomic_file.h"

namespace run_clm {

namespace fs = std::filesystem;

ClmTokenizer load_clm_tokenizer(const std::string& dir) {
  HEARTH_CHECK(fs::exists(fs::path(dir) / "tokenizer.json"), hearth::IoError, "[run_clm] ", dir,
               ": no tokenizer.json (run_clm reads a byte-level BPE tokenizer from that file; pass "
               "--tokenizer_name with the folder that holds it)");
  auto tokenizer = std::make_shared<const hearth::data::BpeTokenizer>(hearth::data::BpeTokenizer::from_pretrained(dir));
  ClmTokenizer out;
  out.encode = [tokenizer](const std::string& text) { return tokenizer->encode(text, /*add_special_tokens=*/true); };
  out.vocab_size = tokenizer->vocab_size();
  out.eos_id = tokenizer->eos_token_id().value_or(-1);
  out.pad_id = tokenizer->pad_token_id().value_or(out.eos_id >= 0 ? out.eos_id : 0);
  return out;
}

void copy_tokenizer_files(const std::string& from, const std::string& to) {
  for (const char* name :
       {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.json", "merges.txt"}) {
    const fs::path src = fs::path(from) / name;
    if (fs::exists(src) && fs::path(from) != fs::path(to))
      hearth::io::copy_file_atomic(src.string(), (fs::path(to) / name).string());
  }
}

}  // namespace run_clm
