"""Calls into the core from Python: exceptions keep their type, Ctrl-C stops a long fit, models
are shared safely between threads, and online updates retain no per-batch bookkeeping."""

from __future__ import annotations

import _thread
import signal
import threading
import time
from typing import Any, Callable

import numpy as np
import pytest

import mondrian_learn._progress as progress
from mondrian_learn import MondrianForestRegressor, MondrianKernelRidge, MondrianKernelRidgeCV
from mondrian_learn.partition import PartitionGPRegressor


class Stop(Exception):
    """Raised by a progress callback."""


def counting_progress(monkeypatch: pytest.MonkeyPatch, on_first: Callable[[], None]) -> list[int]:
    """Replace the progress bars by a recorder of updates that calls ``on_first()`` at the
    first one; returns the list of updates."""
    seen: list[int] = []

    def fake(total: int, desc: str, verbose: int) -> tuple[Any, Any]:
        def update(done: int) -> None:
            seen.append(done)
            if len(seen) == 1:
                on_first()

        return update, (lambda: None)

    monkeypatch.setattr(progress, "progress_callback", fake)
    return seen


def data(n: int, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    return X, np.sin(6 * X[:, 0]) + X[:, 1] + 0.1 * rng.normal(size=n)


def raise_stop() -> None:
    raise Stop("from the progress callback")


@pytest.fixture
def python_handles_ctrl_c() -> Any:
    """Python's own Ctrl-C handler for the test: a process started in the background by a
    non-interactive shell inherits SIGINT ignored, and then ``interrupt_main`` does nothing."""
    former = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, former)


def press_ctrl_c() -> None:
    # The report lasts long enough (0.2 s) for the signal to be seen (it is polled every 20 ms).
    _thread.interrupt_main()
    time.sleep(0.2)


#: Fits whose first progress report raises (short ones) or presses Ctrl-C (long ones: 400
#: trees come in 50 slices of 8; the path reports after every cut).
RAISING = [
    MondrianForestRegressor(n_estimators=40, verbose=1, random_state=0),
    MondrianKernelRidge(n_estimators=40, lifetime=2.0, verbose=1, random_state=0),
    MondrianKernelRidgeCV(10, max_lifetime=3.0, lifetimes=None, verbose=1, random_state=0),
]
INTERRUPTED = [
    MondrianForestRegressor(n_estimators=400, verbose=1, n_jobs=2, random_state=0),
    MondrianKernelRidgeCV(8, max_lifetime=30.0, lifetimes=None, verbose=1, random_state=0),
]


@pytest.mark.parametrize(
    ("estimator", "on_first", "n_points", "expected"),
    [(e, raise_stop, 400, Stop) for e in RAISING]
    + [(e, press_ctrl_c, 3000, KeyboardInterrupt) for e in INTERRUPTED],
)
@pytest.mark.usefixtures("python_handles_ctrl_c")
def test_a_fit_stopped_at_its_first_progress_report(
    estimator: Any,
    on_first: Callable[[], None],
    n_points: int,
    expected: type[BaseException],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An exception raised in a progress callback comes out with its type and message, and
    Ctrl-C pressed there stops the core at its next tree or cut, so the fit ends long before
    its last report; either way the estimator is unchanged."""
    seen = counting_progress(monkeypatch, on_first)
    X, y = data(n_points)
    message = "from the progress callback" if expected is Stop else None
    with pytest.raises(expected, match=message):
        estimator.fit(X, y)
    assert len(seen) == 1
    assert not hasattr(estimator, "model_") and not hasattr(estimator, "n_features_in_")


@pytest.mark.usefixtures("python_handles_ctrl_c")
def test_ctrl_c_stops_conjugate_gradients() -> None:
    # A GP system that needs far more iterations than the interrupt leaves it: the solver
    # checks for a stop at every operator application.
    X, y = data(20_000, d=2)
    gp = PartitionGPRegressor(
        "fast_cluster",
        n_partitions=50,
        noise_variance=1e-9,
        signal_variance=1.0,
        tol=1e-14,
        max_iter=10**7,
    )
    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            gp.fit(X, y)
    finally:
        timer.cancel()
    assert not hasattr(gp, "dual_coef_")


def run_concurrently(reader: Callable[[], None], writer: Callable[[], None]) -> list[BaseException]:
    """Run ``reader`` in a loop on 6 threads while ``writer`` runs once; the errors seen."""
    errors: list[BaseException] = []
    done = threading.Event()

    def read_loop() -> None:
        while not done.is_set():
            try:
                reader()
            except BaseException as e:  # noqa: BLE001 (the test reports every failure)
                errors.append(e)
                return

    threads = [threading.Thread(target=read_loop) for _ in range(6)]
    for t in threads:
        t.start()
    try:
        writer()
    finally:
        done.set()
        for t in threads:
            t.join()
    return errors


@pytest.mark.parametrize(
    "make",
    [
        lambda: MondrianForestRegressor(n_estimators=5, random_state=1),
        lambda: MondrianKernelRidge(n_estimators=10, lifetime=3.0, random_state=1),
    ],
    ids=["forest", "kernel-ridge"],
)
def test_readers_never_see_a_half_updated_model(make: Callable[[], Any]) -> None:
    # Predictions run on six threads while the main thread streams 120 one-row updates; no
    # call fails, and the final model is exactly the one the same updates give alone.
    X, y = data(520, seed=3)
    probe = X[:50] + 0.05
    shared, alone = make().fit(X[:400], y[:400]), make().fit(X[:400], y[:400])

    def stream(model: Any) -> None:
        for i in range(400, 520):
            model.partial_fit(X[i : i + 1], y[i : i + 1])

    errors = run_concurrently(lambda: shared.predict(probe), lambda: stream(shared))
    assert errors == []
    stream(alone)
    np.testing.assert_array_equal(shared.predict(probe), alone.predict(probe))


def test_a_stream_of_batches_retains_no_more_than_one_batch() -> None:
    # 200 one-row updates retain exactly what one 200-row update does: the rows duplicate
    # training points, so no tree changes, and the state grows by the stored rows alone
    # (3 coordinates and one leaf entry per tree each); per-update bookkeeping (the changed
    # leaves an extension reports) is not kept.
    X, y = data(100, seed=5)
    rows = (7 * np.arange(200)) % 100
    streamed = MondrianKernelRidge(n_estimators=20, lifetime=2.0, random_state=4).fit(X, y)
    batched = MondrianKernelRidge(n_estimators=20, lifetime=2.0, random_state=4).fit(X, y)
    before = streamed.model_.retained_bytes
    for i in rows:
        streamed.partial_fit(X[i : i + 1], y[i : i + 1])
    batched.partial_fit(X[rows], y[rows])
    assert streamed.model_.retained_bytes == batched.model_.retained_bytes
    assert streamed.model_.retained_bytes - before == 200 * (3 * 8 + 20 * 4)


def test_readers_are_not_starved_by_a_stream_of_updates() -> None:
    # Four threads predict (300 rows: each prediction first refreshes the posterior's
    # cavities, with exclusive access) while one streams 60 one-row updates back to back.
    # The model's lock admits waiting calls in turn, so each reader completes about one
    # prediction per update; with a lock that let the writer straight back in, a reader
    # that had refreshed the model found it stale again and refreshed it forever: 0 to 5
    # predictions each against the 60 updates. The GIL is handed over often (a small
    # switch interval) so that the count measures the lock, not the interpreter.
    import sys

    X, y = data(360, seed=5)
    model = MondrianForestRegressor(n_estimators=5, random_state=1).fit(X[:300], y[:300])
    probe = np.random.default_rng(6).uniform(size=(300, 3))
    updates, readers = 60, 4
    counts = [0] * readers
    running = threading.Semaphore(0)
    done = threading.Event()

    def read_loop(k: int) -> None:
        while not done.is_set():
            model.predict(probe)
            counts[k] += 1
            if counts[k] == 1:
                running.release()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    threads = [threading.Thread(target=read_loop, args=(k,)) for k in range(readers)]
    try:
        for t in threads:
            t.start()
        for _ in threads:  # every reader in its loop before the stream starts
            running.acquire()
        before = list(counts)
        for i in range(300, 300 + updates):
            model.partial_fit(X[i : i + 1], y[i : i + 1])
        during = [after - b for after, b in zip(counts, before)]
    finally:
        done.set()
        for t in threads:
            t.join()
        sys.setswitchinterval(interval)
    assert min(during) >= updates // 4, during
