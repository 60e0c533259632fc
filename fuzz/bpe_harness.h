// The byte-level BPE tokenizer's reader of tokenizer.json (GPT-2, Llama 3 and
// byte-fallback files), then encode and decode: the first byte picks the text
// to encode, the rest is the file. Besides the rule every target checks (bad
// input ends in a hearth::Error naming the file), an accepted tokenizer must
// give ids below its vocabulary size.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz/fuzz_support.h"
#include "hearth/data/tokenizer/bpe_tokenizer.h"

namespace hearth::fuzz {

inline std::string fuzz_bpe_tokenizer(const uint8_t* bytes, size_t size) {
  if (size == 0) return "";
  static const char* const kTexts[] = {
      "Hello world<|endoftext|> it's 2024!\n\n  ok",
      "<|begin_of_text|>I'M caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\xA6\x99 12345<|eot_id|>",
      "hi <s> \xC3\xBC\t\xE2\x82 </s>",  // a cut-short character: repaired before encoding
      "",
  };
  const std::string text = kTexts[bytes[0] % 4];
  const std::string path = write_input("tokenizer.json", bytes + 1, size - 1);
  return check_clean_failure(path, [&] {
    const data::BpeTokenizer tok = data::BpeTokenizer::from_tokenizer_json(path);
    const std::vector<int64_t> ids = tok.encode(text);
    for (int64_t id : ids)
      if (id < 0 || id >= tok.vocab_size())
        throw std::logic_error("encode gave id " + std::to_string(id) + " outside the vocabulary of " +
                               std::to_string(tok.vocab_size()));
    (void)tok.decode(ids);
    (void)tok.decode(ids, /*skip_special_tokens=*/true);
  });
}

}  // namespace hearth::fuzz
