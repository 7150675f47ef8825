"""numpy references of the operators several test files check against."""

import numpy as np


def conv2d_numpy(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """NCHW conv2d of x with OIHW weights w, stride 1, 'same' zero padding (odd kernels)."""
    n, _, h, wd = x.shape
    k = w.shape[2]
    padded = np.pad(x, ((0, 0), (0, 0), (k // 2, k // 2), (k // 2, k // 2)))
    out = np.zeros((n, w.shape[0], h, wd), "float32")
    for dy in range(k):
        for dx in range(k):
            window = padded[:, :, dy : dy + h, dx : dx + wd]
            out += np.einsum("nchw,fc->nfhw", window, w[:, :, dy, dx])
    return out


def conv2d_inputs(c: int, hw: int, f: int, k: int = 3, seed: int = 0):
    """Random NCHW input (1 x c x hw x hw) and OIHW weights (f x c x k x k) in [-1, 1), and a
    zeroed output, all float32: the arguments of a conv2d kernel checked by `conv2d_numpy`."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (1, c, hw, hw)).astype("float32")
    w = rng.uniform(-1, 1, (f, c, k, k)).astype("float32")
    return x, w, np.zeros((1, f, hw, hw), "float32")
