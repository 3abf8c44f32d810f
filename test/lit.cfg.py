# lit configuration for dist's FileCheck tests. Unit tests (GoogleTest) live in
# the Unit sub-suite, which has its own configuration.
import os
import lit.formats
from lit.llvm import llvm_config

config.name = "dist"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Unit", "fuzz"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dist_obj_root, "test")

llvm_config.with_system_environment(["HOME", "TMPDIR", "PATH"])
llvm_config.use_default_substitutions()

# Our tools first, then FileCheck & co. from Debian's LLVM.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.dist_tools_dir, append_path=True)
config.substitutions.append(("%dist_src_root", config.dist_src_root))

if config.dist_enable_mlir:
    config.available_features.add("mlir")
if config.dist_have_nccl:
    config.available_features.add("nccl")
if config.dist_have_mpi:
    config.available_features.add("mpi")
# target=gpu compiles its kernels to an embedded binary with the CUDA
# toolkit's ptxas and fatbinary (no GPU needed).
if config.dist_cuda_toolkit:
    config.available_features.add("cuda-toolkit")
# The C++ layout check (test/format.test): utils/setup.sh installs it.
import shutil
if shutil.which("clang-format-22"):
    config.available_features.add("clang-format")
config.substitutions.append(("%dist_obj_root", config.dist_obj_root))
# The dialect and pass plugin for upstream's mlir-opt (semantics §7).
config.substitutions.append(
    ("%dist_plugin", os.path.join(config.dist_obj_root, "lib", "DistPlugin.so")))
# Reproducers of inputs that used to exhaust memory or hang:
# `%bounded SECONDS MEBIBYTES COMMAND...` (test/bounded.sh).
config.substitutions.append(
    ("%bounded", os.path.join(config.dist_src_root, "test", "bounded.sh")))
import runpy
runpy.run_path(os.path.join(config.dist_src_root, "test", "sanitize.py"))[
    "configure"](config)
