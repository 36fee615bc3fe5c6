// `--compile` names: the reference's names pick the executor benchmark_litgpt.py would run,
// thunder's composite names pick its executors and front end, the name given is kept for the
// JSON `compiler`, and what cannot run is refused in one line that says why.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "run/compiler_choice.hpp"

namespace tokbench::run {
namespace {

using Names = std::vector<std::string>;

void expect_refused(const std::string& name, const std::vector<std::string>& fragments) {
  try {
    choose_compiler(name);
    ADD_FAILURE() << "'" << name << "' was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const auto& f : fragments) EXPECT_NE(message.find(f), std::string::npos) << f << " not in: " << message;
  }
}

TEST(CompilerChoice, TokbenchNamesAreTheirOwnExecutors) {
  for (const Executor e : {Executor::eager, Executor::fused, Executor::python_eager, Executor::python_inductor,
                           Executor::python_thunder}) {
    const CompilerChoice c = choose_compiler(to_string(e));
    EXPECT_EQ(c.executor, e);
    EXPECT_EQ(c.compiler, to_string(e));
    EXPECT_TRUE(c.thunder_executors.empty());
  }
  // `eager` stays tokbench's own step, not PyTorch's eager litgpt.
  EXPECT_FALSE(is_python(choose_compiler("eager").executor));
}

// The executor table: each executor one entry, found by its id and by its name, with the
// reference's word list and a --compile help line naming every name and alias.
TEST(CompilerChoice, EveryExecutorIsOneEntry) {
  for (const ExecutorEntry& e : executor_entries()) {
    EXPECT_EQ(&executor_entry(e.id), &e);
    EXPECT_EQ(choose_compiler(e.name).executor, e.id);
    EXPECT_EQ(is_python(e.id), e.python);
    for (const std::string& alias : e.aliases) EXPECT_EQ(choose_compiler(alias).executor, e.id);
    EXPECT_NE(executor_help().find(e.name), std::string::npos) << e.name;
    EXPECT_EQ(e.family_word == nullptr, e.choose_family == nullptr) << e.name;
  }
  // The list the refusal gives, as the reference's names were listed before the table.
  EXPECT_EQ(valid_compiler_names(),
            "eager, fused, python-eager, python-inductor, python-thunder, inductor, or thunder joined by '_' with "
            "inductor, inductor_cat, transformerengine, cudnn, jit or dynamo (e.g. thunder_inductor)");
  EXPECT_NE(executor_help().find("inductor"), std::string::npos);
}

TEST(CompilerChoice, TheReferenceNamesMapAndKeepTheirSpelling) {
  const CompilerChoice inductor = choose_compiler("inductor");
  EXPECT_EQ(inductor.executor, Executor::python_inductor);
  EXPECT_EQ(inductor.compiler, "inductor");
  const CompilerChoice thunder = choose_compiler("thunder");
  EXPECT_EQ(thunder.executor, Executor::python_thunder);
  EXPECT_EQ(thunder.compiler, "thunder");
  EXPECT_EQ(thunder.thunder_front_end, ThunderFrontEnd::jit);
  EXPECT_TRUE(thunder.thunder_executors.empty());
}

TEST(CompilerChoice, ThunderCompositeNamesPickExecutorsAndFrontEnd) {
  struct Case {
    std::string name;
    Names executors;
    ThunderFrontEnd front_end;
  };
  for (const Case& c : std::vector<Case>{
           {"thunder_inductor", {"torch_compile"}, ThunderFrontEnd::jit},
           {"thunder_inductor_cat", {"torch_compile_cat"}, ThunderFrontEnd::jit},
           {"thunder_cudnn", {"cudnn"}, ThunderFrontEnd::jit},
           {"thunder_transformerengine", {"transformer_engine"}, ThunderFrontEnd::jit},
           {"thunder_jit", {}, ThunderFrontEnd::jit},
           {"thunder_dynamo", {}, ThunderFrontEnd::dynamo},
           {"thunder_inductor_cat_cudnn", {"cudnn", "torch_compile_cat"}, ThunderFrontEnd::jit},
           {"thunder_cudnn_transformerengine_dynamo", {"transformer_engine", "cudnn"}, ThunderFrontEnd::dynamo},
       }) {
    const CompilerChoice choice = choose_compiler(c.name);
    EXPECT_EQ(choice.executor, Executor::python_thunder) << c.name;
    EXPECT_EQ(choice.compiler, c.name);
    EXPECT_EQ(choice.thunder_executors, c.executors) << c.name;
    EXPECT_EQ(choice.thunder_front_end, c.front_end) << c.name;
  }
  EXPECT_EQ(choose_compiler("thunder_cudnn_inductor").cuda_only_executors(), Names{"cudnn"});
  EXPECT_TRUE(choose_compiler("thunder_inductor").cuda_only_executors().empty());
}

TEST(CompilerChoice, UnknownAndContradictoryNamesAreRefused) {
  expect_refused("torchscript", {"'torchscript'", "valid:", "inductor", "thunder_inductor"});
  expect_refused("Inductor", {"'Inductor'", "valid:"});
  expect_refused("thunder_inducter", {"'inducter'", "valid:"});
  expect_refused("thunder_jit_dynamo", {"jit and dynamo"});
  expect_refused("thunder_inductor_inductor_cat", {"inductor_cat"});
  expect_refused("thunder_inductor_transformerengine", {"only one of inductor and transformerengine"});
  expect_refused("thunder_thunder", {"'thunder' appears twice"});
  expect_refused("thunder_cat", {"'cat'"});
  expect_refused("", {"''", "valid:"});
}

}  // namespace
}  // namespace tokbench::run
