# Runs every GoogleTest program built into the unit-test folder; each gtest case
# counts as one lit test.
import lit.formats

config.name = "dist-unit"
config.suffixes = []
config.test_source_root = config.dist_unittest_dir
config.test_exec_root = config.dist_unittest_dir
config.test_format = lit.formats.GoogleTest(".", "Tests")
