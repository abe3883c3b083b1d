//! A Mondrian tree's arena as a dict of numpy arrays (node ids as int64, −1 for none).

use crate::mondrian::arena::Node;
use crate::mondrian::{MondrianTree, NONE};
use numpy::ndarray::Array2;
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

fn ids(v: impl Iterator<Item = u32>) -> Vec<i64> {
    v.map(|i| if i == NONE { -1 } else { i64::from(i) })
        .collect()
}

/// `parent`, `left`, `right`, `split_dim`, `threshold`, `tau`, `lower`, `upper` (n_nodes ×
/// D), `n_samples` and `root` of `tree`.
pub fn tree_arrays<'py>(py: Python<'py>, tree: &MondrianTree) -> PyResult<Bound<'py, PyDict>> {
    let (n, d) = (tree.n_nodes(), tree.n_features);
    let boxes = |corner: fn(&MondrianTree, u32) -> &[f64]| {
        let values: Vec<f64> = (0..n as u32)
            .flat_map(|j| corner(tree, j).to_vec())
            .collect();
        Array2::from_shape_vec((n, d), values).map(|a| a.into_pyarray(py))
    };
    let field = |f: fn(&Node) -> u32| ids(tree.nodes.iter().map(f)).into_pyarray(py);
    let out = PyDict::new(py);
    out.set_item("root", ids(std::iter::once(tree.root))[0])?;
    out.set_item("parent", ids(tree.parent.iter().copied()).into_pyarray(py))?;
    out.set_item("left", field(|c| c.left))?;
    out.set_item("right", field(|c| c.right))?;
    out.set_item("split_dim", field(|c| c.dim))?;
    let floats = |f: fn(&Node) -> f64| tree.nodes.iter().map(f).collect::<Vec<f64>>();
    out.set_item("threshold", floats(|c| c.threshold).into_pyarray(py))?;
    out.set_item("tau", floats(|c| c.tau).into_pyarray(py))?;
    let shape_error =
        |e: numpy::ndarray::ShapeError| pyo3::exceptions::PyValueError::new_err(e.to_string());
    out.set_item("lower", boxes(MondrianTree::lower).map_err(shape_error)?)?;
    out.set_item("upper", boxes(MondrianTree::upper).map_err(shape_error)?)?;
    let counts: Vec<u32> = tree.nodes.iter().map(|c| c.n_samples).collect();
    out.set_item("n_samples", counts.into_pyarray(py))?;
    Ok(out)
}
