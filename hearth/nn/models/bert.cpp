#include "hearth/nn/models/bert.h"

#include <unistd.h>

#include <iomanip>
#include <sstream>

#include "hearth/nn/init.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth::nn::models {
namespace {

size_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page_size) : 0;
}

std::string describe(const Tensor& t) {
  return t.defined() ? t.shape_string() + " " + dtype_name(t.dtype()) : std::string("undefined");
}

// Refuses a model whose parameters alone would not fit in this machine's
// memory before any of them is allocated.
void check_fits_in_memory(const BertConfig& config, const char* model) {
  const double bytes = config.parameter_count() * static_cast<double>(sizeof(float));
  const double available = static_cast<double>(physical_memory_bytes());
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  if (available > 0 && bytes > available) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(0) << "[" << model << "] the model's " << config.parameter_count()
       << " parameters (vocab_size " << config.vocab_size << ", hidden_size " << config.hidden_size
       << ", num_hidden_layers " << config.num_hidden_layers << ", intermediate_size " << config.intermediate_size
       << ", max_position_embeddings " << config.max_position_embeddings << ") would take " << std::setprecision(1)
       << bytes / kGiB << " GiB as float32, more than this machine's " << available / kGiB << " GiB of memory";
    throw OutOfMemoryError(os.str());
  }
}

const BertConfig& validated(const BertConfig& config, const char* model) {
  config.validate(std::string(model) + " config");
  check_fits_in_memory(config, model);
  return config;
}

// mean(max(x, 0) - x * y + log(1 + exp(-|x|))): binary cross entropy of
// sigmoid(x) against y, written so that no exp overflows.
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& targets) {
  Tensor softplus_neg_abs = log(add(exp(neg(abs(logits))), 1.0));
  return mean(add(sub(relu(logits), mul(logits, targets)), softplus_neg_abs));
}

}  // namespace

// ---- BertModel ----

BertModel::BertModel(BertConfig c, bool add_pooling_layer) : Module("BertModel"), config(validated(c, "BertModel")) {
  {
    // The layers' own (PyTorch default) draws would all be replaced below.
    nn::init::SkipInitGuard replaced_by_init_bert_weights;
    embeddings = register_module("embeddings", std::make_shared<BertEmbeddings>(config));
    encoder = register_module("encoder", std::make_shared<BertEncoder>(config));
    if (add_pooling_layer) pooler = register_module("pooler", std::make_shared<BertPooler>(config));
  }
  init_bert_weights(*this, config.initializer_range);
}

BertModelOutput BertModel::forward(const Tensor& input_ids, const Tensor& token_type_ids,
                                   const Tensor& attention_mask) {
  Tensor hidden = embeddings->forward(input_ids, token_type_ids);
  Tensor additive_mask;
  if (attention_mask.defined()) {
    const int64_t batch = input_ids.size(0), seq_len = input_ids.size(1);
    HEARTH_CHECK((attention_mask.dim() == 2 && attention_mask.size(0) == batch && attention_mask.size(1) == seq_len) ||
                     (attention_mask.dim() == 3 && attention_mask.size(0) == batch &&
                      attention_mask.size(1) == seq_len && attention_mask.size(2) == seq_len),
                 ShapeError, "[BertModel] expected attention_mask [", batch, ", ", seq_len,
                 "] (input_ids' shape) of 1 = token, 0 = padding, got ", describe(attention_mask));
    additive_mask = extended_attention_mask(attention_mask.to(hidden.device()), hidden.dtype());
  }
  BertModelOutput out;
  out.last_hidden_state = encoder->forward(hidden, additive_mask);
  if (pooler) out.pooler_output = pooler->forward(out.last_hidden_state);
  return out;
}

// ---- BertForSequenceClassification ----

BertForSequenceClassification::BertForSequenceClassification(BertConfig c)
    : Module("BertForSequenceClassification"), config(validated(c, "BertForSequenceClassification")) {
  bert = register_module("bert", std::make_shared<BertModel>(config, /*add_pooling_layer=*/true));
  dropout = register_module("dropout", std::make_shared<Dropout>(config.classifier_dropout_prob()));
  {
    nn::init::SkipInitGuard replaced_by_init_bert_weights;
    classifier = register_module("classifier", std::make_shared<Linear>(config.hidden_size, config.num_labels));
  }
  init_bert_weights(*classifier, config.initializer_range);
}

Tensor BertForSequenceClassification::forward(const Tensor& input_ids) {
  return forward(input_ids, Tensor(), Tensor());
}

Tensor BertForSequenceClassification::forward(const Tensor& input_ids, const Tensor& token_type_ids,
                                              const Tensor& attention_mask) {
  Tensor pooled = bert->forward(input_ids, token_type_ids, attention_mask).pooler_output;
  return classifier->forward(dropout->forward(pooled));
}

SequenceClassifierOutput BertForSequenceClassification::forward(const Tensor& input_ids, const Tensor& token_type_ids,
                                                                const Tensor& attention_mask, const Tensor& labels) {
  SequenceClassifierOutput out;
  out.logits = forward(input_ids, token_type_ids, attention_mask);
  if (labels.defined()) out.loss = compute_loss(out.logits, labels);
  return out;
}

std::string BertForSequenceClassification::problem_type(const Tensor& labels) const {
  if (!config.problem_type.empty()) return config.problem_type;
  if (config.num_labels == 1) return "regression";
  if (labels.dtype() == DType::int64 || labels.dtype() == DType::int32) return "single_label_classification";
  return "multi_label_classification";
}

Tensor BertForSequenceClassification::compute_loss(const Tensor& logits, const Tensor& labels) const {
  HEARTH_CHECK(logits.defined() && logits.dim() == 2 && logits.size(1) == config.num_labels, ShapeError,
               "[BertForSequenceClassification] expected logits [batch, ", config.num_labels, "], got ",
               describe(logits));
  HEARTH_CHECK(labels.defined(), ValueError, "[BertForSequenceClassification] compute_loss needs labels");
  const int64_t batch = logits.size(0);
  const std::string kind = problem_type(labels);
  const Tensor on_device = labels.to(logits.device());
  if (kind == "regression") {
    HEARTH_CHECK(labels.numel() == logits.numel(), ShapeError,
                 "[BertForSequenceClassification] regression expects one target per logit (", logits.numel(),
                 "), got labels ", describe(labels));
    return mse_loss(reshape(logits, {-1}), reshape(cast(on_device, logits.dtype()), {-1}));
  }
  if (kind == "single_label_classification") {
    HEARTH_CHECK(labels.numel() == batch && (labels.dtype() == DType::int64 || labels.dtype() == DType::int32),
                 ShapeError, "[BertForSequenceClassification] single-label classification expects labels [", batch,
                 "] of class ids (int64), got ", describe(labels));
    return cross_entropy(logits, reshape(cast(on_device, DType::int64), {batch}));
  }
  HEARTH_CHECK(labels.shape() == logits.shape(), ShapeError,
               "[BertForSequenceClassification] multi-label classification expects labels of the logits' shape ",
               logits.shape_string(), " (0/1 per label), got ", describe(labels));
  return binary_cross_entropy_with_logits(logits, cast(on_device, logits.dtype()));
}

}  // namespace hearth::nn::models
