"""The partition kernel on Dask (``mondrian_learn.dask``, issue 18 item 2), on a
``LocalCluster`` of two worker processes: the distributed products against the in-memory
ones, the GP and kernel PCA against the in-memory estimators, the subsample option and clean
shutdown."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from dask_fixtures import process_cluster, sine_data  # noqa: E402
from numpydoc import validate as numpydoc_validate  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.utils import check_random_state  # noqa: E402

from mondrian_learn import _core  # noqa: E402
from mondrian_learn._validation import draw_seed  # noqa: E402
from mondrian_learn.dask import PartitionGPRegressor, PartitionKernelPCA  # noqa: E402
from mondrian_learn.dask._partition import DistributedPartitionKernel  # noqa: E402
from mondrian_learn.partition import (  # noqa: E402
    FastClusterPartitions,
    MondrianPartitions,
    RandomPartitionKernel,
)
from mondrian_learn.partition import PartitionGPRegressor as InMemoryGP  # noqa: E402
from mondrian_learn.partition import PartitionKernelPCA as InMemoryPCA  # noqa: E402
from mondrian_learn.partition._marginal_likelihood import ClusterSpaceLikelihood  # noqa: E402
from mondrian_learn.partition._operator import RHO_FLOOR, RHO_MIN  # noqa: E402


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X, y = sine_data(np.random.default_rng(0), 600)
    # New points: training rows, inside every leaf's box, where the in-memory Mondrian kernel
    # places points by the cuts as the Dask one does everywhere.
    return X, y, X[::20]


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with process_cluster() as client:
        yield client


def rows(X: np.ndarray) -> da.Array:
    return da.from_array(X, chunks=(200, -1))


def test_distributed_products_equal_the_in_memory_ones(client, data) -> None:  # type: ignore[no-untyped-def]
    """``K̂V`` by per-block cluster sums, a tree reduction and per-block gathers equals the
    in-memory product to 1e-12, for the kernel of every row and for a subsample's rules
    extended to every row (against a kernel built from the same labels); so does ``GᵀGU/m``
    against the dense one-hot matrix."""
    X, _, _ = data
    V = np.random.default_rng(1).normal(size=(600, 3))
    full = RandomPartitionKernel(MondrianPartitions(3.0), n_partitions=20, random_state=0).fit(X)
    dk = DistributedPartitionKernel(full, rows(X), 1, 0)
    got = dk.matmul(rows(V)).compute()
    np.testing.assert_allclose(got, full.matmul(V), rtol=1e-12, atol=1e-12)
    sub = RandomPartitionKernel(FastClusterPartitions(5), n_partitions=20, random_state=0).fit(
        X[::4]
    )
    dk = DistributedPartitionKernel(sub, rows(X), 1, 0)
    labels, _ = sub.assign(X)
    same = _core.PartitionKernel.from_labels(np.ascontiguousarray(labels))
    np.testing.assert_allclose(
        dk.matmul(rows(V)).compute(), same.matmul(V, 1), rtol=1e-12, atol=1e-12
    )
    offsets = sub.model_.cluster_offsets().astype(np.int64)
    G = np.zeros((600, dk.n_clusters))
    for rho in range(20):
        G[np.arange(600), offsets[rho] + labels[rho]] = 1.0
    U = np.random.default_rng(2).normal(size=(dk.n_clusters, 2))
    np.testing.assert_allclose(dk.gram(U), G.T @ G @ U / 20, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(dk.sizes, G.sum(axis=0))


def test_gp_equals_the_in_memory_gp(client, data) -> None:  # type: ignore[no-untyped-def]
    """Every row sampled (``subsample=None``), fixed variances: the posterior means (CG in
    the clusters' space vs the training points') and the exact-route variances (CG on the
    distributed ``M`` vs the in-memory dense factor) equal the in-memory estimator's within
    the solvers' tolerance; the Lanczos route's bounds bracket
    them; Dask arrays in give the same values; a pickled model predicts the same."""
    X, y, X_new = data
    kw = dict(noise_variance=0.2, signal_variance=0.8, tol=1e-6, max_iter=3000, random_state=0)
    X_new = X_new[:12]  # one block of the exact route's CG
    memory = InMemoryGP(MondrianPartitions(3.0), n_partitions=20, variance="exact", **kw).fit(X, y)
    gp = PartitionGPRegressor(
        MondrianPartitions(3.0), n_partitions=20, subsample=None, variance="exact", **kw
    ).fit(rows(X), da.from_array(y, chunks=200))
    want_mean, want_std = memory.predict(X_new, return_std=True)
    mean, std = gp.predict(X_new, return_std=True)
    # CG to a relative residual of 1e-6 (the in-memory exact variances are dense here).
    np.testing.assert_allclose(mean, want_mean, atol=1e-5)
    np.testing.assert_allclose(std, want_std, rtol=1e-5)
    lower, upper = gp.set_params(variance="lanczos", variance_rank=32).predict_std_bounds(X_new)
    assert np.all(lower <= want_std * (1 + 1e-9)) and np.all(want_std <= upper * (1 + 1e-9))
    dask_mean, dask_std = gp.predict(da.from_array(X_new, chunks=10), return_std=True)
    np.testing.assert_allclose(dask_mean.compute(), mean, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(dask_std.compute(), upper)
    loaded = pickle.loads(pickle.dumps(gp))
    np.testing.assert_array_equal(loaded.predict(X_new), gp.predict(X_new))
    with pytest.raises(ValueError, match="pickle"):
        loaded.set_params(variance_rank=33).predict(X_new, return_std=True)


def test_gp_noise_by_marginal_likelihood(client, data) -> None:  # type: ignore[no-untyped-def]
    """Variances left as None are chosen by the clusters'-space criterion (its formulas are
    checked against dense ones in ``tests/partition``): the distributed fit chooses what the
    same criterion computed in one process chooses (same probes). Not to the last digit: the
    quadrature's Lanczos runs without reorthogonalisation, which turns the different rounding
    of sums over three blocks into relative differences of about 1e-4 after 30 steps."""
    X, y, _ = data
    gp = PartitionGPRegressor(
        MondrianPartitions(3.0),
        n_partitions=20,
        subsample=None,
        n_probes=4,
        lanczos_steps=30,
        random_state=0,
    ).fit(rows(X), y)
    rng = check_random_state(0)
    kernel = RandomPartitionKernel(
        MondrianPartitions(3.0),
        n_partitions=20,
        random_state=int(rng.randint(0, 2**32 - 1, dtype=np.int64)),
    ).fit(X)
    model = kernel.model_
    centred = (y - y.mean())[:, None]
    likelihood = ClusterSpaceLikelihood(
        lambda starts, steps: _core.operator_lanczos(
            lambda U: model.cluster_sums(model.gather_sums(U, 1), 1), starts, steps, 1
        ),
        model.cluster_sums(centred, 1)[:, 0] / 20,
        float(np.sum(centred**2)),
        600,
        20,
        4,
        30,
        draw_seed(rng),
    )
    s, noise = likelihood.maximise(None, None, RHO_FLOOR)
    np.testing.assert_allclose([gp.signal_variance_, gp.noise_variance_], [s, noise], rtol=2e-3)
    assert 0.003 < noise < 0.03  # the targets' noise variance is 0.01
    assert np.isfinite(gp.log_marginal_likelihood_value_) and gp.log_marginal_likelihood_std_ > 0


def test_kernel_pca_equals_the_in_memory_one(client, data) -> None:  # type: ignore[no-untyped-def]
    """Block Lanczos on the clusters' centred Gram matrix: the in-memory eigenvalues, and
    the training and new points' scores up to each component's sign."""
    X, _, X_new = data
    memory = InMemoryPCA(3, sampler=MondrianPartitions(3.0), n_partitions=20, random_state=0)
    want = memory.fit_transform(X)
    pca = PartitionKernelPCA(
        3, sampler=MondrianPartitions(3.0), n_partitions=20, subsample=None, random_state=0
    )
    scores = pca.fit_transform(rows(X)).compute()
    np.testing.assert_allclose(pca.eigenvalues_, memory.eigenvalues_, rtol=1e-9)
    signs = np.sign(np.sum(scores * want, axis=0))
    np.testing.assert_allclose(scores * signs, want, atol=1e-7)
    np.testing.assert_allclose(pca.transform(X_new) * signs, memory.transform(X_new), atol=1e-7)
    np.testing.assert_allclose(
        pca.explained_variance_ratio_, memory.explained_variance_ratio_, rtol=1e-9
    )


def test_tables_derive_from_the_in_memory_ones() -> None:
    """Each Dask twin's parameters are its in-memory estimator's, the same objects in the
    same order, with ``subsample`` after ``n_partitions`` (the GP without
    ``preconditioner``: its clusters' system is solved with Jacobi)."""
    for twin, memory, dropped in [
        (PartitionGPRegressor, InMemoryGP, {"preconditioner"}),
        (PartitionKernelPCA, InMemoryPCA, set()),
    ]:
        want = [name for name in memory._parameters if name not in dropped]
        at = want.index("n_partitions") + 1
        assert list(twin._parameters) == want[:at] + ["subsample"] + want[at:]
        for name in want:
            assert twin._parameters[name] is memory._parameters[name], name


def _never_sampled(X: np.ndarray, y: np.ndarray | None, rng: np.random.Generator) -> None:
    raise AssertionError("the partitions were sampled")


def test_a_fixed_ratio_below_the_least_is_refused_before_sampling() -> None:
    """Both GPs refuse fixed variances whose ratio σ²/s is below RHO_MIN, with the same
    message, before the sampler runs; at RHO_MIN itself (the parameters as given: integers
    too) the check passes and the sampler is reached."""
    X, y = np.zeros((4, 2)), np.zeros(4)
    for gp in (PartitionGPRegressor, InMemoryGP):
        for signal in (1.0, 1):
            low = gp(_never_sampled, signal_variance=signal, noise_variance=RHO_MIN / 2)
            with pytest.raises(ValueError, match="noise_variance / signal_variance must be"):
                low.fit(X, y)
        at = gp(_never_sampled, signal_variance=1, noise_variance=RHO_MIN)
        with pytest.raises(AssertionError, match="the partitions were sampled"):
            at.fit(X, y)


def test_convergence_warnings_are_the_in_memory_ones(client, data) -> None:  # type: ignore[no-untyped-def]
    """The twins run the in-memory estimators' policy: CG stopped at ``max_iter`` gives the
    same warning text and ``n_iter_`` in both GPs, block Lanczos out of restarts the same
    text in both kernel PCAs, and the exact route's unconverged variances say what to
    raise."""
    X, y, X_new = data
    kw: dict = dict(n_partitions=20, noise_variance=0.01, signal_variance=1.0, random_state=0)
    kw.update(tol=1e-12, max_iter=1)
    stopped = r"conjugate gradients stopped after 1 iterations with relative residual \S+ > "
    stopped += r"tol=1e-12; raise max_iter"
    gp = PartitionGPRegressor(MondrianPartitions(3.0), subsample=None, **kw)
    for estimator, points in [(InMemoryGP(MondrianPartitions(3.0), **kw), X), (gp, rows(X))]:
        with pytest.warns(ConvergenceWarning, match=stopped):
            estimator.fit(points, y)
        assert estimator.n_iter_ == 1
    with pytest.warns(ConvergenceWarning, match="some predictive variances; raise max_iter"):
        gp.predict(X_new[:4], return_std=True)
    messages = []
    for estimator, points in [
        (InMemoryPCA(3, n_partitions=20, tol=1e-15, max_restarts=0, random_state=0), X),
        (PartitionKernelPCA(3, n_partitions=20, subsample=None, tol=1e-15, max_restarts=0), X),
    ]:
        with pytest.warns(ConvergenceWarning) as record:
            estimator.fit(points)
        messages += [str(w.message) for w in record if w.category is ConvergenceWarning]
    assert len(messages) == 2, messages
    for message in messages:
        assert message.startswith("block Lanczos stopped after 0 restarts with residuals ")
        assert message.endswith(" > tol · λ₁; raise max_restarts")


def test_subsample_and_bad_input(client, data) -> None:  # type: ignore[no-untyped-def]
    """``subsample`` rows fit the sampler and every row is placed by its cuts; bad input
    is refused by name."""
    X, y, X_new = data
    gp = PartitionGPRegressor(
        MondrianPartitions(3.0),
        n_partitions=10,
        subsample=150,
        noise_variance=0.05,
        signal_variance=0.8,
    ).fit(rows(X), y)
    assert gp.n_subsample_ == 150 and gp.kernel_.n_points_ == 150
    assert np.all(np.isfinite(gp.predict(X_new)))
    with pytest.raises(ValueError, match="y must have shape"):
        PartitionGPRegressor(subsample=None).fit(rows(X), y[:10])
    with pytest.raises(ValueError, match="NaN"):
        PartitionGPRegressor(subsample=None).fit(rows(np.where(X > 0.99, np.nan, X)), y)
    with pytest.raises(ValueError, match="subsample"):
        PartitionKernelPCA(subsample=0).fit(rows(X))


@pytest.mark.parametrize(
    "name",
    [
        f"mondrian_learn.dask._partition_models.{cls}.{method}"
        for cls, methods in {
            "PartitionGPRegressor": ["", "fit", "predict", "predict_std_bounds"],
            "PartitionKernelPCA": ["", "fit", "transform", "fit_transform"],
        }.items()
        for method in methods
    ],
)
def test_documented(name: str) -> None:
    errors = numpydoc_validate.validate(name.rstrip("."))["errors"]
    assert not [e for e in errors if e[0] in {"PR01", "PR02", "PR07", "RT01", "RT03"}], errors
