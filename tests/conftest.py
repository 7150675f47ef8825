"""Shared pytest options. Keep additions additive: several test modules rely on this file."""


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.tir from the current printer output")


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU (libcuda.so.1); skipped without")


def pytest_runtest_teardown(item):
    # a test that imported TVM leaves TVM's crash handler, which can deadlock (fault_handlers.py)
    from fault_handlers import reset_after_tvm
    reset_after_tvm()
