#include "examples/run_glue/predict.h"

#include <cstdio>
#include <sstream>

#include "hearth/autograd/grad_mode.h"
#include "hearth/data/dataloader.h"
#include "hearth/io/atomic_file.h"

namespace run_glue {
namespace {

// A borrowed dataset for the DataLoader, which takes shared ownership.
std::shared_ptr<const hearth::data::Dataset> borrow(const hearth::data::Dataset& d) {
  return std::shared_ptr<const hearth::data::Dataset>(&d, [](const hearth::data::Dataset*) {});
}

}  // namespace

void write_predictions(hearth::nn::models::BertForSequenceClassification& model, hearth::Device device,
                       const hearth::data::TokenizedTextDataset& dataset, const hearth::data::CollateFn& collate,
                       int64_t batch_size, const hearth::data::LabelSpace& labels, const std::string& path) {
  namespace field = hearth::data::field;
  const bool was_training = model.is_training();
  model.eval();
  std::ostringstream out;
  out << "index\tprediction\n";
  {
    hearth::NoGradGuard no_grad;
    hearth::data::DataLoaderOptions lo;
    lo.batch_size = batch_size;
    lo.collate = collate;
    hearth::data::DataLoader loader(borrow(dataset), lo);
    int64_t index = 0;
    while (std::optional<hearth::data::Batch> b = loader.next()) {
      hearth::Tensor logits = model.forward(b->at(field::kInputIds).to(device), b->at(field::kTokenTypeIds).to(device),
                                            b->at(field::kAttentionMask).to(device));
      const int64_t n = logits.size(0), c = logits.size(1);
      const std::vector<double> v = logits.to(hearth::DType::float64).cpu().contiguous().to_vector<double>();
      for (int64_t i = 0; i < n; ++i, ++index) {
        out << index << "\t";
        if (labels.is_regression) {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%3.3f", v[static_cast<size_t>(i)]);
          out << buf << "\n";
          continue;
        }
        int64_t best = 0;
        for (int64_t k = 1; k < c; ++k)
          if (v[static_cast<size_t>(i * c + k)] > v[static_cast<size_t>(i * c + best)]) best = k;
        out << labels.label_list.at(static_cast<size_t>(best)) << "\n";
      }
    }
  }
  model.train(was_training);
  hearth::io::write_file_atomic(path, out.str());
}

}  // namespace run_glue
