# Shared by test/lit.cfg.py and test/Unit/lit.cfg.py: the environment the
# tests of an ASan+UBSan build (utils/check.sh --sanitize) run in.
import os


def configure(config):
    if not getattr(config, "dist_sanitize", False):
        return
    config.available_features.add("sanitize")
    # test/bounded.sh and run_bounded (python/tests/conftest.py) leave the
    # address-space limit to ASan's hard_rss_limit_mb in this build.
    config.environment["DIST_SANITIZE_BUILD"] = "1"
    supp = os.path.join(config.dist_src_root, "utils", "sanitize")
    config.environment["ASAN_OPTIONS"] = ":".join([
        # LLVM's BumpPtrAllocator poisons its slabs in code compiled with
        # ASan (ours) and allocates from them unpoisoned in Debian's
        # uninstrumented libMLIR.so: a false use-after-poison unless manual
        # poisoning is off.
        "allow_user_poisoning=0",
        # (LeakSanitizer is on by default; a test program that must opt
        # out, as one that initialises MPI, can then do so itself through
        # __asan_default_options, which an option set here would override.)
        "hard_rss_limit_mb=6144", "abort_on_error=0",
        "detect_stack_use_after_return=0", "check_initialization_order=1",
        "strict_init_order=0", "detect_odr_violation=0"])
    config.environment["LSAN_OPTIONS"] = ":".join([
        "suppressions=" + os.path.join(supp, "lsan.supp"),
        "print_suppressions=0"])
    config.environment["UBSAN_OPTIONS"] = ":".join([
        "print_stacktrace=1", "halt_on_error=1",
        "suppressions=" + os.path.join(supp, "ubsan.supp")])


def without_leak_checks(config):
    """For suites whose processes run MPI: Open MPI's plugins leak at
    MPI_Finalize and are unloaded by then, so LeakSanitizer cannot tell
    their allocations from ours (it reports them as "<unknown module>").
    ASan and UBSan stay on; the unit tests keep the leak checks."""
    options = config.environment.get("ASAN_OPTIONS")
    if options:
        config.environment["ASAN_OPTIONS"] = options + ":detect_leaks=0"
