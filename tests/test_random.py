"""absjit.random: determinism, independence, distributions, bad keys."""
import numpy as np
import pytest

import absjit
from absjit import random


def test_same_key_same_numbers_and_split_independence():
    key = random.PRNGKey(0)
    a = np.asarray(random.normal(key, (1000,)))
    b = np.asarray(random.normal(key, (1000,)))
    np.testing.assert_array_equal(a, b)
    k1, k2 = random.split(key)
    x, y = np.asarray(random.normal(k1, (2000,))), np.asarray(random.normal(k2, (2000,)))
    assert not np.array_equal(x, y)
    assert abs(np.corrcoef(x, y)[0, 1]) < 0.1
    assert random.split(key, 5).shape == (5, 2)


@pytest.mark.parametrize("seed", [0, 1, 1234, 2**40 + 7])
def test_distribution_moments(seed):
    key = random.PRNGKey(seed)
    u = np.asarray(random.uniform(key, (20000,)))
    assert u.dtype == np.float32 and u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.02 and abs(u.var() - 1 / 12) < 0.01
    n = np.asarray(random.normal(key, (20000,)))
    assert abs(n.mean()) < 0.03 and abs(n.std() - 1) < 0.03
    r = np.asarray(random.randint(key, (5000,), 3, 9))
    assert r.dtype == np.int32 and r.min() == 3 and r.max() == 8
    b = np.asarray(random.bernoulli(key, 0.25, (20000,)))
    assert abs(b.mean() - 0.25) < 0.02


def test_uniform_bounds_and_dtypes():
    key = random.PRNGKey(3)
    u = np.asarray(random.uniform(key, (4, 5), minval=-2.0, maxval=3.0))
    assert u.shape == (4, 5) and u.min() >= -2.0 and u.max() < 3.0
    assert random.uniform(key, (2,), dtype=np.float16).dtype == np.float16
    absjit.config.update("enable_x64", True)
    assert random.uniform(key, (2,), dtype=np.float64).dtype == np.float64


def test_fold_in_changes_key():
    key = random.PRNGKey(0)
    assert not np.array_equal(np.asarray(random.fold_in(key, 1)),
                              np.asarray(random.fold_in(key, 2)))
    np.testing.assert_array_equal(np.asarray(random.fold_in(key, 1)),
                                  np.asarray(random.fold_in(key, 1)))


def test_bad_input():
    with pytest.raises(TypeError, match="uint32\\[2\\]"):
        random.normal(np.zeros(3, np.float32), (2,))
    with pytest.raises(ValueError, match="maxval > minval"):
        random.randint(random.PRNGKey(0), (2,), 5, 5)
    with pytest.raises(TypeError, match="floating"):
        random.uniform(random.PRNGKey(0), (2,), dtype=np.int32)


def test_traces_with_a_key_argument():
    text = str(absjit.make_jaxpr(lambda k: random.uniform(k, (3,)))(random.PRNGKey(0)))
    assert "shift_right_logical" in text and "; c:u32[2]. let" in text
