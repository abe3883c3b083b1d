"""The scikit-learn ecosystem's habits (issue 16): transformers name their outputs, so
``ColumnTransformer`` and pipelines can use them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer

import mondrian_learn as ml
from mondrian_learn import partition
from mondrian_learn.kernel import baselines

FRAME = pd.DataFrame(np.random.default_rng(0).uniform(size=(50, 3)), columns=["a", "b", "c"])


@pytest.mark.parametrize(
    "transformer, prefix",
    [
        (ml.MondrianKernelFeatures(4, lifetime=2.0, random_state=0), "mondriankernelfeatures"),
        (baselines.LaplaceFourierFeatures(6, random_state=0), "laplacefourierfeatures"),
        (baselines.RandomBinningFeatures(4, random_state=0), "randombinningfeatures"),
        (
            partition.PartitionKernelPCA(
                2, sampler=partition.MondrianPartitions(lifetime=2.0), n_partitions=10
            ),
            "partitionkernelpca",
        ),
    ],
)
def test_transformers_name_their_outputs(transformer: Any, prefix: str) -> None:
    columns = ColumnTransformer([("t", transformer, ["a", "b"])], remainder="passthrough")
    Z = columns.fit_transform(FRAME)
    names = columns.get_feature_names_out()
    width = Z.shape[1] - 1
    assert list(names[:width]) == [f"t__{prefix}{i}" for i in range(width)]
    assert names[-1] == "remainder__c"


def test_forest_quantiles_through_predict_and_a_pipeline() -> None:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = FRAME.to_numpy()
    y = np.sin(4 * X[:, 0])
    pipe = make_pipeline(StandardScaler(), ml.MondrianForestRegressor(5, random_state=0))
    pipe.fit(X, y)
    levels = [0.1, 0.5, 0.9]
    through = pipe.predict(X[:7], quantiles=levels)
    forest = pipe[-1]
    direct = forest.predict_quantiles(pipe[0].transform(X[:7]), levels)
    np.testing.assert_array_equal(through, direct)
    assert np.all(np.diff(through, axis=1) > 0)
    with pytest.raises(ValueError, match="not both"):
        forest.predict(X[:2], return_std=True, quantiles=levels)


def test_columns_are_checked_by_name_against_the_estimator_itself() -> None:
    """A kernel PCA fitted on a DataFrame accepted reordered columns at ``transform`` (up to
    0.96 off), warning about its inner kernel instead."""
    import warnings

    kpca = partition.PartitionKernelPCA(
        2, sampler=partition.MondrianPartitions(lifetime=2.0), n_partitions=10
    )
    kpca.fit(FRAME)
    with pytest.raises(ValueError, match="feature names"):
        kpca.transform(FRAME[["c", "b", "a"]])
    with pytest.raises(ValueError, match="feature names"):
        kpca.transform(FRAME.rename(columns={"a": "z"}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(kpca.transform(FRAME), kpca.transform(FRAME.copy()))
    with pytest.warns(UserWarning, match="PartitionKernelPCA was fitted with feature names"):
        kpca.transform(FRAME.to_numpy())


def unaligned(X: np.ndarray) -> np.ndarray:
    """A copy of ``X`` whose float64s start one byte into their buffer (as a Dask worker can
    hand them over)."""
    raw = bytearray(X.nbytes + 1)
    out = np.frombuffer(raw, dtype=np.float64, offset=1, count=X.size).reshape(X.shape)
    out[:] = X
    assert not out.flags["ALIGNED"]
    return out


@pytest.mark.parametrize(
    "model",
    [
        partition.PartitionKernelPCA(
            2, sampler=partition.MondrianPartitions(lifetime=2.0), n_partitions=10
        ),
        partition.PartitionGPRegressor(partition.MondrianPartitions(lifetime=2.0), n_partitions=10),
        partition.PartitionSVC(partition.MondrianPartitions(lifetime=2.0), n_partitions=10),
        ml.MondrianForestRegressor(3),
        ml.MondrianForestClassifier(3),
        ml.MondrianKernelRidge(3, lifetime=2.0),
        ml.MondrianKernelFeatures(3, lifetime=2.0),
    ],
)
def test_arrays_from_anywhere(model: Any) -> None:
    """Unaligned arrays were refused by the partition kernel's binding ("must be
    C-contiguous"); results equal those on an aligned copy."""
    X = FRAME.to_numpy()
    y = (X[:, 0] > 0.5).astype(int)
    a = clone(model.set_params(random_state=0))
    b = clone(a)
    a.fit(X, y)
    b.fit(unaligned(X), y)
    method = "transform" if hasattr(a, "transform") else "predict"

    def dense(Z: Any) -> np.ndarray:
        return Z.toarray() if hasattr(Z, "toarray") else np.asarray(Z)

    np.testing.assert_array_equal(
        dense(getattr(a, method)(X)), dense(getattr(b, method)(unaligned(X)))
    )
