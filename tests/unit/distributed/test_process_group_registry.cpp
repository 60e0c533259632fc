// Process-group backends registered by name and device kind: the default
// backend of a device is the one registered for its kind.
#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/distributed/init.h"
#include "hearth/distributed/process_group_registry.h"
#include "hearth/distributed/tcp_store.h"
#include "tests/unit/distributed/dist_testing.h"

using namespace hearth;
using namespace std::chrono_literals;

namespace {

// A group that only says who made it: the registry's part ends at the factory.
class NamedGroup final : public distributed::ProcessGroup {
 public:
  NamedGroup(const distributed::ProcessGroupOptions& o, Device device)
      : ProcessGroup(o.rank, o.world_size), device_(device) {}
  std::string backend() const override { return "pg_registry_test"; }
  distributed::WorkPtr all_reduce(const std::vector<Tensor>&, distributed::ReduceOp) override { return nullptr; }
  distributed::WorkPtr broadcast(const std::vector<Tensor>&, int) override { return nullptr; }
  distributed::WorkPtr all_gather(const Tensor&, const Tensor&) override { return nullptr; }
  distributed::WorkPtr reduce_scatter(const Tensor&, const Tensor&, distributed::ReduceOp) override { return nullptr; }
  distributed::WorkPtr barrier() override { return nullptr; }
  Device device() const { return device_; }

 private:
  Device device_;
};

std::shared_ptr<distributed::TcpStore> store_of_one() {
  return std::make_shared<distributed::TcpStore>(distributed::TcpStoreOptions{
      .host = "127.0.0.1", .port = 0, .rank = 0, .world_size = 1, .serve = true, .timeout = 5s, .token = ""});
}

std::string value_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "(no ValueError)";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(ProcessGroupRegistry, TheDefaultBackendIsTheOneRegisteredForTheDevicesKind) {
  const DeviceKind kind = register_device_kind("pgregistrydev");
  distributed::register_process_group_backend(
      "pg_registry_test", {kind}, [](const auto&, const auto& o) { return std::make_shared<NamedGroup>(o, o.device); });
  EXPECT_TRUE(distributed::has_process_group_backend("pg_registry_test"));
  EXPECT_TRUE(has(distributed::process_group_backends(), "pg_registry_test")) << distributed::process_group_backends();
  EXPECT_EQ(distributed::process_group_backend_for(kind), "pg_registry_test");
  EXPECT_EQ(distributed::default_backend(Device(kind, 1)), "pg_registry_test");

  distributed::ProcessGroupOptions o;
  o.device = Device(kind, 1);
  auto store = store_of_one();
  distributed::ProcessGroupPtr group = distributed::new_process_group(distributed::default_backend(o.device), store, o);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->backend(), "pg_registry_test");
  EXPECT_EQ(dynamic_cast<NamedGroup&>(*group).device(), Device(kind, 1));
  EXPECT_EQ(group->store(), store) << "the group keeps the store it was made with";
}

TEST(ProcessGroupRegistry, TheCpuIsServedByGloo) {
  HEARTH_SKIP_WITHOUT_GLOO();
  EXPECT_EQ(distributed::default_backend(Device()), "gloo");
}

TEST(ProcessGroupRegistry, AnAcceleratorIsServedByTheBackendItsFolderRegisters) {
  // The CUDA backend registers NCCL for its kind where NCCL was found; no
  // other layer decides it.
  const Device cuda = Device::parse("cuda");
  if (!distributed::has_process_group_backend("nccl")) {
    EXPECT_TRUE(has(value_error([&] { distributed::default_backend(cuda); }), "no process group backend serves cuda"));
    return;
  }
  EXPECT_EQ(distributed::default_backend(cuda), "nccl");
}

TEST(ProcessGroupRegistry, AKindNoBackendServesIsAnErrorNamingItAndTheRegisteredBackends) {
  const DeviceKind kind = register_device_kind("pgunserveddev");
  const std::string e = value_error([&] { distributed::default_backend(Device(kind, 0)); });
  EXPECT_TRUE(has(e,
                  "[dist] no process group backend serves pgunserveddev devices in this build of hearth "
                  "(registered: "))
      << e;
  if (HEARTH_TEST_GLOO_BUILT) {
    EXPECT_TRUE(has(e, "gloo for cpu")) << e;
  }
}

TEST(ProcessGroupRegistry, UnknownBackendNamesWhatTheBuildHas) {
  auto store = store_of_one();
  try {
    distributed::new_process_group("carrier-pigeon", store, {});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("has no 'carrier-pigeon' process group backend"), std::string::npos);
  }
}
