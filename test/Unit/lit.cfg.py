# Runs every GoogleTest program built into the unit-test folder; each gtest case
# counts as one lit test.
import os
import runpy

import lit.formats

config.name = "dist-unit"
config.suffixes = []
config.test_source_root = config.dist_unittest_dir
config.test_exec_root = config.dist_unittest_dir
config.test_format = lit.formats.GoogleTest(".", "Tests")

# An ASan+UBSan build's options (utils/check.sh --sanitize).
runpy.run_path(os.path.join(config.dist_src_root, "test", "sanitize.py"))[
    "configure"](config)
