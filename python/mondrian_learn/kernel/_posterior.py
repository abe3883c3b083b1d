"""The Gaussian predictive of the ridges on Mondrian features (Balog et al., UAI 2016,
supplement B): ``predict(return_std=, return_cov=)`` and ``sample_y``, with the meaning of
scikit-learn's ``GaussianProcessRegressor``.

With Φ the N × C training features, v the row weights (1 without ``sample_weight``) and α the
ridge penalty, the Bayesian view ``w ~ N(0, σ²/α I)``, ``y_i − ȳ ~ N(φ_iᵀw, σ²/v_i)`` has the
posterior ``w | y ~ N(A⁻¹ΦᵀV(y − ȳ), σ² A⁻¹)``, ``A = ΦᵀVΦ + αI``, so a new target at x has mean
ȳ + φ(x)ᵀw and the new targets at X* the joint covariance ``σ̂² (I + Φ* A⁻¹ Φ*ᵀ)`` (σ² at its
maximum-likelihood value σ̂², ȳ treated as known): with L the Cholesky factor of A and
B = L⁻¹Φ*ᵀ, ``σ̂² (I + BᵀB)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse

from mondrian_learn._memory import check_memory


def to_csr(parts: tuple[np.ndarray, np.ndarray, np.ndarray, int]) -> scipy.sparse.csr_matrix:
    """The core's (data, indices, indptr, n_columns) as a scipy CSR matrix (no copy)."""
    data, indices, indptr, n_columns = parts
    return scipy.sparse.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, n_columns))


def whitened(rows: Any, weights: np.ndarray | None, alpha: float, new: Any) -> np.ndarray:
    """B = L⁻¹Φ*ᵀ (C × n) for training features ``rows`` (N × C, sparse), their ``weights``,
    penalty ``alpha`` and new features ``new`` (n × C): BᵀB = Φ* A⁻¹ Φ*ᵀ."""
    rows = scipy.sparse.csr_matrix(rows)
    n_columns = rows.shape[1]
    check_memory("X", n_columns, 16.0 * n_columns**2, "the predictive covariance factors A")
    weighted = rows if weights is None else scipy.sparse.diags(weights) @ rows
    gram = np.asarray((rows.T @ weighted).todense())
    gram[np.diag_indices(n_columns)] += alpha
    factor = scipy.linalg.cholesky(gram, lower=True)
    dense_new = scipy.sparse.csr_matrix(new).toarray().T
    return scipy.linalg.solve_triangular(factor, dense_new, lower=True)


def predictive(mean: np.ndarray, noise: float, factor_rows: np.ndarray, full: bool) -> Any:
    """``(mean, std)`` or ``(mean, cov)`` from B = ``factor_rows`` (module docs)."""
    if full:
        n = len(mean)
        check_memory("X", n, 8.0 * n * n, "return_cov holds n_samples² values")
        cov = noise * (factor_rows.T @ factor_rows)
        cov[np.diag_indices(n)] += noise
        return mean, 0.5 * (cov + cov.T)
    return mean, np.sqrt(noise * (1.0 + np.einsum("ij,ij->j", factor_rows, factor_rows)))


def check_return(return_std: bool, return_cov: bool) -> None:
    """scikit-learn's rule: at most one of the two."""
    if return_std and return_cov:
        raise ValueError("at most one of return_std and return_cov can be requested")


def features(transform: Any, X: Any, n_jobs: int) -> scipy.sparse.csr_matrix:
    """A core ``transform(X, n_jobs)`` as a CSR matrix."""
    return to_csr(transform(X, n_jobs))


def refit_predictive(
    transform: Any,
    rows: Any,
    y: np.ndarray,
    weights: np.ndarray | None,
    alpha: float,
    X: Any,
    mean: np.ndarray,
    n_jobs: int,
    full: bool,
) -> Any:
    """:func:`predictive` at ``X`` (predictions ``mean``) of a ridge with penalty ``alpha``
    refitted on the training ``rows`` (points as the core reads them), their targets ``y``
    and ``weights`` (None: all 1), whose features a core ``transform(X, n_jobs)`` gives:
    σ̂² = (‖y − ȳ‖²_V − ‖z‖²)/N, z = L⁻¹ΦᵀV(y − ȳ) (module docs)."""
    train = features(transform, rows, n_jobs)
    centred = y - (y.mean() if weights is None else np.average(y, weights=weights))
    weighted = centred if weights is None else weights * centred
    # One more column: z = L⁻¹ΦᵀV(y − ȳ), for σ̂².
    new = scipy.sparse.vstack(
        [
            features(transform, X, n_jobs),
            scipy.sparse.csr_matrix(np.asarray(train.T @ weighted)[None, :]),
        ]
    )
    factor_rows = whitened(train, weights, alpha, new)
    z = factor_rows[:, -1]
    noise = max(float(centred @ weighted - z @ z), 0.0) / len(y)
    return predictive(mean, noise, factor_rows[:, :-1], full=full)
