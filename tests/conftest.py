"""Shared pytest options. Keep additions additive: several test modules rely on this file."""


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.tir from the current printer output")


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU (libcuda.so.1); skipped without")
