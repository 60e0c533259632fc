// metric_for_best_model checked against what evaluation reports, before training.
#include <string>

#include <gtest/gtest.h>

#include "apps/common/metric_names.h"
#include "hearth/core/errors.h"

namespace hearth::cli {
namespace {

std::string refusal(const std::string& metric) {
  train::TrainingArguments args;
  args.metric_for_best_model = metric;
  try {
    check_metric_for_best_model(args, {"accuracy", "f1"});
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

TEST(MetricNames, ReportedNamesWithOrWithoutThePrefixAreTaken) {
  for (const char* ok : {"loss", "eval_loss", "accuracy", "eval_f1", "runtime"}) EXPECT_EQ(refusal(ok), "") << ok;
  EXPECT_NO_THROW(check_metric_for_best_model(train::TrainingArguments(), {}));  // unset
}

TEST(MetricNames, AMisspelledNameIsRefusedWithTheNameMeant) {
  const std::string e = refusal("acuracy");
  EXPECT_NE(e.find("metric_for_best_model 'acuracy'"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'accuracy'"), std::string::npos) << e;
  EXPECT_NE(e.find("loss, accuracy, f1"), std::string::npos) << e;
  EXPECT_NE(refusal("eval_matthews_correlation"), "");
}

}  // namespace
}  // namespace hearth::cli
