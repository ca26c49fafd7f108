"""The statistical model (SPEC §7, after BlackForest): a random forest of log(measured time).

Pure functions over a feature matrix ``X`` (rows x features), targets ``y`` = log(measured ms)
and kernel groups: leave-one-kernel-out (LOKO) predictions, permutation importance, PCA of the
standardised features, partial dependence and, per row, the features its prediction leans on.
Needs scikit-learn (the ``stats`` extra).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SEED = 0
N_TREES = 100


def make_forest(seed: int = SEED):
    """The forest every function here fits: 100 trees, leaves of at least one row (the training
    sets are tens of rows), a third of the features tried per split."""
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(
        n_estimators=N_TREES, max_features=1 / 3, min_samples_leaf=1, random_state=seed, n_jobs=1
    )


def usable_columns(X: np.ndarray) -> np.ndarray:
    """Columns that are finite everywhere and not constant (a constant explains nothing)."""
    finite = np.all(np.isfinite(X), axis=0)
    spread = np.zeros(X.shape[1], dtype=bool)
    spread[finite] = np.ptp(X[:, finite], axis=0) > 0
    return finite & spread


def loko_predictions(X: np.ndarray, y: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Out-of-kernel predictions of y: each kernel's rows predicted by a forest trained on the
    other kernels' rows only (a kernel never helps predict itself)."""
    out = np.empty_like(y, dtype=float)
    for g in np.unique(groups):
        test = groups == g
        if test.all():
            raise ValueError("leave-one-kernel-out needs at least two kernels")
        f = make_forest().fit(X[~test], y[~test])
        out[test] = f.predict(X[test])
    return out


@dataclass(frozen=True)
class ErrorSummary:
    """Errors of predicted vs measured times: mean and median absolute percentage error, and the
    geometric-mean factor exp(mean |log(pred / meas)|) (1.0 = exact)."""

    mape_pct: float
    median_ape_pct: float
    gmean_factor: float


def errors(pred_ms: np.ndarray, meas_ms: np.ndarray) -> ErrorSummary:
    ape = 100.0 * np.abs(pred_ms - meas_ms) / meas_ms
    return ErrorSummary(
        float(np.mean(ape)),
        float(np.median(ape)),
        float(np.exp(np.mean(np.abs(np.log(pred_ms / meas_ms))))),
    )


def permutation_importance(
    forest, X: np.ndarray, y: np.ndarray, names: tuple[str, ...], repeats: int = 5
) -> list[tuple[str, float, float]]:
    """(feature, mean, std) of the increase in squared error of y when the feature's column is
    shuffled, for ``forest`` fitted on (X, y); most important first."""
    from sklearn.inspection import permutation_importance as perm

    r = perm(forest, X, y, n_repeats=repeats, random_state=SEED, scoring="neg_mean_squared_error")
    order = np.argsort(-r.importances_mean, kind="stable")
    return [(names[i], float(r.importances_mean[i]), float(r.importances_std[i])) for i in order]


@dataclass(frozen=True)
class PCAResult:
    """PCA of the standardised features: explained variance ratio per component, loadings
    (components x features), and the rows' scores on the first two components."""

    explained: tuple[float, ...]
    loadings: np.ndarray
    scores: np.ndarray
    names: tuple[str, ...]

    def top_loadings(self, component: int, n: int = 5) -> list[tuple[str, float]]:
        row = self.loadings[component]
        order = np.argsort(-np.abs(row), kind="stable")[:n]
        return [(self.names[i], float(row[i])) for i in order]


def pca(X: np.ndarray, names: tuple[str, ...]) -> PCAResult:
    """PCA of the features standardised to zero mean and unit variance."""
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import StandardScaler

    Z = StandardScaler().fit_transform(X)
    p = PCA(n_components=min(X.shape), random_state=SEED).fit(Z)
    return PCAResult(
        tuple(float(v) for v in p.explained_variance_ratio_),
        p.components_,
        p.transform(Z)[:, :2],
        tuple(names),
    )


def partial_dependence(
    forest, X: np.ndarray, column: int, points: int = 8
) -> tuple[np.ndarray, np.ndarray]:
    """(grid of the feature's values, mean prediction over the rows with the feature set to
    each grid value): ``forest``'s partial dependence on one feature."""
    from sklearn.inspection import partial_dependence as pd

    r = pd(forest, X, [column], grid_resolution=points, kind="average")
    grid = r["grid_values"][0] if "grid_values" in r else r["values"][0]
    return np.asarray(grid, dtype=float), np.asarray(r["average"][0], dtype=float)


def local_reliance(
    forest, X: np.ndarray, row: int, names: tuple[str, ...], n: int = 3
) -> list[tuple[str, float]]:
    """The features the forest's prediction of one row leans on: for each feature, the mean
    |change of the predicted log time| when the row takes, in that feature alone, the value of
    every other row. Largest first."""
    base = forest.predict(X[row : row + 1])[0]
    out = []
    for j, name in enumerate(names):
        trial = np.repeat(X[row : row + 1], len(X), axis=0)
        trial[:, j] = X[:, j]
        out.append((name, float(np.mean(np.abs(forest.predict(trial) - base)))))
    out.sort(key=lambda t: -t[1])
    return out[:n]
