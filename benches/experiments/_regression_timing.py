"""The frame of the regressor's timing experiments (``forest_held_out_cost.py``,
``forest_quantile_speed.py``): a 100-tree forest on 2 threads timed on the 80/20 splits of
regression sets, one markdown row per set."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Callable

import numpy as np
from _common import experiment_parser, header, load_regression, markdown_table

#: A row of the table from a set's name, its split (train rows and targets, test rows and
#: targets) and ``--repeats``.
Row = Callable[[str, tuple[np.ndarray, ...], int], Sequence[str]]


def wall_cpu(seconds: tuple[float, float]) -> str:
    """Wall and CPU seconds (as :func:`_common.best_of` gives them) for a table cell."""
    return f"{seconds[0]:.2f} / {seconds[1]:.2f}"


def time_on_regression_sets(
    doc: str | None, repeats: int, columns: Sequence[str], row: Row
) -> None:
    """The command line (``--data``; ``--sets``, cpu_act and house_16h unless named;
    ``--repeats``, default ``repeats``), the header, then the table of ``columns`` with
    ``row`` for each set, printed as each set is done."""
    parser = experiment_parser(doc, data=True, repeats=repeats)
    parser.add_argument("--sets", nargs="+", default=["cpu_act", "house_16h"])
    args = parser.parse_args()
    header("100 trees, n_jobs=2")
    rows = (row(name, load_regression(name, args.data), args.repeats) for name in args.sets)
    markdown_table(columns, rows)
