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
