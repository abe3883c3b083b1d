import os
import pathlib
from typing import Any, Callable, TypeAlias, final

import numpy as np
from typing_extensions import Self

__all__ = [
    "FORMAT_VERSION",
    "Density",
    "ForestClassifier",
    "ForestRegressor",
    "GridRidge",
    "GridSearch",
    "KernelFeatures",
    "KernelRidge",
    "OPTIONS",
    "PartitionKernel",
    "ScaledMixtures",
    "lanczos",
    "operator_lanczos",
    "operator_solve",
    "operator_top_eigen",
    "operator_variance_factors",
    "precondition",
    "predictive_variance",
    "sharpen",
    "solve",
    "top_eigen",
    "unit_box",
    "variance_factors",
]

FORMAT_VERSION: int
#: The names of the core's string options, by parameter: each list lives once, in the core.
OPTIONS: dict[str, tuple[str, ...]]

#: _Points: a float64 (or float32) C-ordered array, a canonical CSR matrix's parts
#: ``(data, indices, indptr, n_features, (offset, scale) | None)``, or an array with the map
#: to the unit box its rows are read through, ``(x, (offset, scale))``.
_Points: TypeAlias = (
    np.ndarray
    | tuple[np.ndarray, np.ndarray, np.ndarray, int, Any]
    | tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]
)

@final
class Density:
    def __new__(
        cls,
        lower: list[float],
        upper: list[float],
        lifetime: float,
        gamma: float,
        n_trees: int,
        seed: int,
        max_nodes: int,
        n_jobs: int,
    ) -> Self: ...
    def add_points(self, x: _Points, n_jobs: int, weights: np.ndarray | None = None) -> None: ...
    def log_density(self, x: _Points, n_jobs: int) -> np.ndarray: ...
    def lifetime_path(
        self,
        x: _Points,
        lifetimes: list[float],
        leave_one_out: bool,
        n_jobs: int,
        weights: np.ndarray | None = None,
    ) -> tuple[np.ndarray, float]: ...
    def draw(self, n: int, seed: int) -> np.ndarray: ...
    def leaf_masses(self, index: int) -> tuple[np.ndarray, np.ndarray]: ...
    def nodes(self, index: int) -> dict[str, np.ndarray]: ...
    def n_leaves(self) -> list[int]: ...
    @property
    def n_trees(self) -> int: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(bytes: bytes) -> Density: ...
    def __reduce__(self) -> tuple[object, tuple[bytes]]: ...

class _Forest:
    """What both forest classes have (not a class of the extension)."""

    def lifetime_path(
        self,
        x_val: _Points | None,
        y_val: np.ndarray | None,
        n_checkpoints: int | None,
        lifetimes: list[float] | None,
        n_jobs: int,
        progress: Callable[[int, int], None] | None = None,
        w_val: np.ndarray | None = None,
    ) -> dict[str, Any]: ...
    def fit(
        self,
        x: _Points,
        y: np.ndarray,
        n_trees: int,
        n_jobs: int,
        slice: int,
        progress: Callable[[int], None] | None = None,
        weights: np.ndarray | None = None,
    ) -> None: ...
    def partial_fit(
        self, x: _Points, y: np.ndarray, n_jobs: int, weights: np.ndarray | None = None
    ) -> None: ...
    def training_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]: ...
    def apply(self, x: _Points, n_jobs: int) -> np.ndarray: ...
    def offset_trees(self, first: int) -> None: ...
    def input_map(self) -> tuple[np.ndarray, np.ndarray] | None: ...
    @property
    def n_trees(self) -> int: ...
    @property
    def lifetime(self) -> float: ...
    @property
    def n_features(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def n_rows(self) -> int: ...
    def move_points_to_disk(self, directory: str | os.PathLike[str]) -> None: ...
    @property
    def points_directory(self) -> pathlib.Path | None: ...
    def n_leaves(self) -> np.ndarray: ...
    def tree_arrays(self, index: int) -> dict[str, np.ndarray]: ...
    def to_bytes(self) -> bytes: ...
    def __reduce__(self) -> tuple[object, tuple[bytes]]: ...

@final
class ForestRegressor(_Forest):
    def __new__(
        cls,
        n_features: int,
        lifetime: float,
        min_samples_split: int,
        seed: int,
        *,
        prior_mean: float | None = None,
        gamma1: float | None = None,
        gamma2: float | None = None,
        noise_variance: float | str | None = None,
        posterior: str = "exact",
        scale_features: bool = True,
        tries: int = 1,
        locations: int = 1,
    ) -> Self: ...
    @staticmethod
    def from_bytes(bytes: bytes) -> ForestRegressor: ...
    @property
    def posterior_is_fresh(self) -> bool: ...
    def predict(self, x: _Points, n_jobs: int) -> tuple[np.ndarray, np.ndarray]: ...
    def quantiles(self, x: _Points, levels: list[float], n_jobs: int) -> np.ndarray: ...
    def log_density(self, x: _Points, y: np.ndarray, n_jobs: int) -> np.ndarray: ...
    def scaled_mixtures(
        self, x: _Points, y: np.ndarray, weights: np.ndarray, n_jobs: int
    ) -> ScaledMixtures: ...
    def prior(self, n_jobs: int) -> dict[str, float]: ...
    def node_posterior(self, index: int, n_jobs: int) -> tuple[np.ndarray, np.ndarray]: ...
    def impurity_decrease(self, index: int) -> np.ndarray: ...
    def prior_score(
        self,
        criterion: str,
        mean: float,
        gamma1: float,
        gamma2: float,
        noise_variance: float,
        n_trees: int,
        n_jobs: int,
    ) -> float: ...
    def fix_prior(
        self,
        mean: float,
        gamma1: float,
        gamma2: float,
        noise_variance: float,
        n_jobs: int,
        cavities: bool = True,
    ) -> None: ...
    def reset_prior(
        self,
        n_jobs: int,
        prior_mean: float | None = None,
        gamma1: float | None = None,
        gamma2: float | None = None,
        noise_variance: float | str | None = None,
    ) -> dict[str, float] | None: ...
    def target_moments(self) -> tuple[float, float]: ...
    @property
    def spread(self) -> float: ...
    def set_spread(self, spread: float) -> None: ...
    @property
    def rows_at_prior_choice(self) -> int: ...
    @property
    def prior_is_due(self) -> bool: ...
    def fold_moments(self, x: _Points, sums: np.ndarray, n_jobs: int) -> np.ndarray: ...

@final
class ForestClassifier(_Forest):
    def __new__(
        cls,
        n_features: int,
        lifetime: float,
        min_samples_split: int,
        seed: int,
        *,
        n_classes: int,
        discount_rate: float,
        min_discount: float = 0.0,
        scale_features: bool = True,
        tries: int = 1,
        locations: int = 1,
    ) -> Self: ...
    @staticmethod
    def from_bytes(bytes: bytes) -> ForestClassifier: ...
    def predict_proba(self, x: _Points, n_jobs: int) -> np.ndarray: ...
    def node_counts(self, index: int) -> np.ndarray: ...
    @property
    def discounts(self) -> tuple[float, float]: ...
    def set_discounts(self, rate: float, floor: float) -> None: ...
    @property
    def sharpness(self) -> float: ...
    def set_sharpness(self, sharpness: float) -> None: ...
    def fold_proba(self, x: _Points, sums: np.ndarray, n_jobs: int) -> np.ndarray: ...

@final
class GridSearch:
    def __new__(
        cls,
        x: _Points,
        y: np.ndarray,
        x_val: _Points,
        y_val: np.ndarray,
        n_grids: int,
        seed: int,
        alpha: float,
        solver: str,
        max_dense_features: int,
        gradient_tol: float,
        gradient_max_iter: int,
        n_jobs: int,
        weights: np.ndarray | None = None,
        val_weights: np.ndarray | None = None,
    ) -> Self: ...
    @property
    def active(self) -> list[int]: ...
    def lifetimes(self) -> np.ndarray: ...
    def lifetime_after(self, dim: int, count: int) -> float | None: ...
    def try_moves(self, dim: int, counts: list[int], n_jobs: int) -> dict[str, Any]: ...
    def move_to(self, dim: int, count: int, n_jobs: int) -> dict[str, Any]: ...
    def evaluate(self, n_jobs: int) -> dict[str, Any]: ...
    def row_weights(self) -> np.ndarray: ...
    def validation_predictions(self) -> np.ndarray: ...
    def transform(
        self, lifetimes: list[float], n_rows: int, n_jobs: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]: ...
    def refit(
        self,
        y: np.ndarray,
        lifetimes: list[float],
        alpha: float,
        n_jobs: int,
        weights: np.ndarray | None = None,
    ) -> GridRidge: ...

@final
class GridRidge:
    def predict(self, x: _Points, n_jobs: int) -> np.ndarray: ...
    def transform(
        self, x: _Points, n_jobs: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]: ...
    @property
    def weights(self) -> np.ndarray: ...
    @property
    def lifetimes(self) -> np.ndarray: ...
    @property
    def intercept(self) -> float: ...
    @property
    def alpha(self) -> float: ...
    @property
    def n_columns(self) -> int: ...
    @property
    def n_grids(self) -> int: ...
    @property
    def cg_iterations(self) -> int: ...
    def cuts(self, index: int) -> list[np.ndarray]: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(bytes: bytes) -> GridRidge: ...
    def __reduce__(self) -> tuple[object, tuple[bytes]]: ...

@final
class KernelFeatures:
    def __new__(
        cls,
        x: _Points,
        n_trees: int,
        lifetime: float,
        seed: int,
        n_jobs: int,
        slice: int,
        progress: Callable[[int], None] | None = None,
    ) -> Self: ...
    def transform(
        self, x: _Points, n_jobs: int, lifetime: float | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]: ...
    def n_columns(self, lifetime: float | None = None) -> int: ...
    @property
    def n_trees(self) -> int: ...
    def path(
        self,
        y: np.ndarray,
        x_val: _Points | None,
        y_val: np.ndarray | None,
        max_lifetime: float,
        alpha: float,
        n_checkpoints: int | None,
        lifetimes: list[float] | None,
        solver: str,
        max_dense_features: int,
        gradient_tol: float,
        gradient_max_iter: int,
        record_weights: bool,
        n_jobs: int,
        progress: Callable[[int, int], None] | None = None,
        weights: np.ndarray | None = None,
        val_weights: np.ndarray | None = None,
    ) -> dict[str, Any]: ...
    def refit(
        self,
        y: np.ndarray,
        lifetime: float,
        alpha: float,
        n_jobs: int,
        x_held_out: _Points | None = None,
        weights: np.ndarray | None = None,
    ) -> KernelRidge: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(bytes: bytes) -> KernelFeatures: ...
    def __reduce__(self) -> tuple[object, tuple[bytes]]: ...

@final
class KernelRidge:
    def __new__(
        cls,
        x: _Points,
        y: np.ndarray,
        n_trees: int,
        lifetime: float,
        alpha: float,
        seed: int,
        n_jobs: int,
        slice: int,
        progress: Callable[[int], None] | None = None,
        max_columns: int = ...,
        weights: np.ndarray | None = None,
    ) -> Self: ...
    def partial_fit(
        self, x: _Points, y: np.ndarray, n_jobs: int, weights: np.ndarray | None = None
    ) -> None: ...
    def predict(self, x: _Points, n_jobs: int) -> np.ndarray: ...
    def predict_variance(self, x: _Points, n_jobs: int) -> np.ndarray: ...
    def whitened(self, x: _Points, n_jobs: int) -> np.ndarray: ...
    @property
    def noise_variance(self) -> float: ...
    def transform(
        self, x: _Points, n_jobs: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]: ...
    def weights(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
    @property
    def log_marginal_likelihood(self) -> float: ...
    @property
    def log_det(self) -> float: ...
    @property
    def intercept(self) -> float: ...
    @property
    def lifetime(self) -> float: ...
    @property
    def n_columns(self) -> int: ...
    @property
    def n_trees(self) -> int: ...
    @property
    def n_rows(self) -> int: ...
    @property
    def retained_bytes(self) -> int: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(bytes: bytes) -> KernelRidge: ...
    def __reduce__(self) -> tuple[object, tuple[bytes]]: ...

@final
class ScaledMixtures:
    def score(
        self, log_scale: float, spread: float
    ) -> tuple[float, list[float], list[list[float]]]: ...

@final
class PartitionKernel:
    @staticmethod
    def mondrian(
        x: _Points, n_partitions: int, lifetime: float, seed: int, n_jobs: int
    ) -> PartitionKernel: ...
    @staticmethod
    def random_forest(
        x: _Points,
        trees: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
        seed: int,
        n_jobs: int,
    ) -> PartitionKernel: ...
    @staticmethod
    def fast_cluster(
        x: _Points, n_partitions: int, max_level: int, seed: int, n_jobs: int
    ) -> PartitionKernel: ...
    @staticmethod
    def from_labels(labels: np.ndarray) -> PartitionKernel: ...
    @property
    def n_points(self) -> int: ...
    @property
    def n_partitions(self) -> int: ...
    def n_clusters(self) -> np.ndarray: ...
    def cluster_offsets(self) -> np.ndarray: ...
    def labels(self) -> np.ndarray: ...
    def assign(self, x: _Points, n_jobs: int) -> tuple[np.ndarray, np.ndarray | None]: ...
    def matmul(self, v: np.ndarray, n_jobs: int) -> np.ndarray: ...
    def cross_matmul(
        self, labels: np.ndarray, weights: np.ndarray | None, v: np.ndarray, n_jobs: int
    ) -> np.ndarray: ...
    def cross_columns(
        self, labels: np.ndarray, weights: np.ndarray | None, n_jobs: int
    ) -> np.ndarray: ...
    def cluster_sums(
        self,
        v: np.ndarray,
        n_jobs: int,
        labels: np.ndarray | None = None,
        weights: np.ndarray | None = None,
    ) -> np.ndarray: ...
    def gather_sums(
        self,
        sums: np.ndarray,
        n_jobs: int,
        labels: np.ndarray | None = None,
        weights: np.ndarray | None = None,
    ) -> np.ndarray: ...
    def stream_labels(self, n_jobs: int) -> int: ...
    def tree_nodes(self) -> np.ndarray: ...
    def forest_depths(self) -> np.ndarray: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(bytes: bytes) -> PartitionKernel: ...
    def __reduce__(self) -> tuple[object, tuple[bytes]]: ...

def sharpen(proba: np.ndarray, sharpness: float) -> np.ndarray: ...
def unit_box(x: _Points) -> tuple[np.ndarray, np.ndarray]: ...
def precondition(
    handle: PartitionKernel,
    v: np.ndarray,
    signal_variance: float,
    noise_variance: float,
    n_jobs: int,
    weights: np.ndarray | None = None,
) -> np.ndarray: ...
def solve(
    handle: PartitionKernel,
    b: np.ndarray,
    signal_variance: float,
    noise_variance: float,
    preconditioner: str,
    tol: float,
    max_iter: int,
    n_jobs: int,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
def lanczos(
    handle: PartitionKernel,
    starts: np.ndarray,
    steps: int,
    n_jobs: int,
    weights: np.ndarray | None = None,
) -> list[tuple[np.ndarray, np.ndarray]]: ...
def top_eigen(
    handle: PartitionKernel,
    k: int,
    block: int,
    depth: int,
    tol: float,
    max_restarts: int,
    seed: int,
    centred: bool,
    n_jobs: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool]: ...
def predictive_variance(
    handle: PartitionKernel,
    labels: np.ndarray,
    weights: np.ndarray | None,
    signal_variance: float,
    noise_variance: float,
    preconditioner: str,
    tol: float,
    max_iter: int,
    full: bool,
    n_jobs: int,
    train_weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
def variance_factors(
    handle: PartitionKernel,
    start: np.ndarray,
    dim: int,
    seed: int,
    signal_variance: float,
    noise_variance: float,
    n_jobs: int,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]: ...
def operator_solve(
    apply: Callable[[np.ndarray], np.ndarray],
    b: np.ndarray,
    tol: float,
    max_iter: int,
    n_jobs: int,
    diagonal: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
def operator_lanczos(
    apply: Callable[[np.ndarray], np.ndarray], starts: np.ndarray, steps: int, n_jobs: int
) -> list[tuple[np.ndarray, np.ndarray]]: ...
def operator_top_eigen(
    apply: Callable[[np.ndarray], np.ndarray],
    dim: int,
    k: int,
    block: int,
    depth: int,
    tol: float,
    max_restarts: int,
    seed: int,
    n_jobs: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool]: ...
def operator_variance_factors(
    apply: Callable[[np.ndarray], np.ndarray],
    start: np.ndarray,
    dim: int,
    seed: int,
    signal_variance: float,
    noise_variance: float,
    n_partitions: int,
    n_jobs: int,
) -> tuple[np.ndarray, np.ndarray]: ...
