"""The forest, PCA and error summaries on synthetic data whose structure is known."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from cgpredict.stats import forest as fr  # noqa: E402

NAMES = tuple(f"f{i}" for i in range(6))


def test_driving_feature_ranked_first():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, size=(60, 6))
    y = 4.0 * X[:, 3] + 0.05 * rng.normal(size=60)  # only f3 drives the target
    f = fr.make_forest().fit(X, y)
    ranked = fr.permutation_importance(f, X, y, NAMES)
    assert ranked[0][0] == "f3"
    assert ranked[0][1] > 10 * max(m for _, m, _ in ranked[1:])


def test_two_latent_factors_two_components():
    rng = np.random.default_rng(2)
    latent = rng.normal(size=(80, 2))
    mixing = rng.normal(size=(2, 10))
    X = latent @ mixing + 0.05 * rng.normal(size=(80, 10))
    p = fr.pca(X, tuple(f"x{i}" for i in range(10)))
    assert sum(p.explained[:2]) > 0.9
    # five independent factors cannot be summarised by two components
    Y = rng.normal(size=(80, 5)) @ rng.normal(size=(5, 10)) + 0.05 * rng.normal(size=(80, 10))
    assert sum(fr.pca(Y, tuple(f"x{i}" for i in range(10))).explained[:2]) < 0.9


def test_loko_never_sees_the_kernel_it_predicts():
    # identical features, the target is the kernel's own label: a forest that saw the held-out
    # kernel would predict its label; trained on the others it predicts their mean
    X = np.ones((9, 2))
    X[:, 1] = np.arange(9) % 2  # some spread so a tree can split
    groups = np.repeat(np.array(["a", "b", "c"]), 3)
    y = np.repeat(np.array([0.0, 3.0, 6.0]), 3)
    out = fr.loko_predictions(X, y, groups)
    assert out[groups == "a"] == pytest.approx(4.5, abs=1.0)
    assert out[groups == "c"] == pytest.approx(1.5, abs=1.0)
    with pytest.raises(ValueError):
        fr.loko_predictions(X, y, np.array(["a"] * 9))


def test_partial_dependence_follows_the_driver():
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, size=(60, 3))
    y = 2.0 * X[:, 0]
    f = fr.make_forest().fit(X, y)
    grid, avg = fr.partial_dependence(f, X, 0)
    rise = avg[-1] - avg[0]
    assert rise > 0.8 and np.all(np.diff(avg) > -0.1)  # rises with the driver
    grid1, avg1 = fr.partial_dependence(f, X, 1)
    assert abs(avg1[-1] - avg1[0]) < rise / 4  # nearly flat in a feature that does not drive


def test_local_reliance_names_the_driver():
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 1, size=(40, 6))
    y = 3.0 * X[:, 5]
    f = fr.make_forest().fit(X, y)
    assert fr.local_reliance(f, X, 0, NAMES)[0][0] == "f5"


def test_errors_hand_computed():
    e = fr.errors(np.array([2.0, 1.0]), np.array([1.0, 2.0]))
    assert e.mape_pct == pytest.approx(75.0)  # 100% and 50%
    assert e.median_ape_pct == pytest.approx(75.0)
    assert e.gmean_factor == pytest.approx(2.0)


def test_usable_columns():
    X = np.array([[1.0, 2.0, np.nan, 5.0], [1.0, 3.0, 1.0, 6.0]])
    assert fr.usable_columns(X).tolist() == [False, True, False, True]
