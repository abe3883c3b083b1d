use super::*;
use ndarray::Array2;

/// A 4 × 3 matrix with a column of zeros, a column without zeros and a mixed one.
fn example() -> (Array2<f64>, Vec<i64>, Vec<i32>, Vec<f64>) {
    let dense = ndarray::arr2(&[
        [0.0, 2.0, -1.0],
        [0.0, 3.0, 0.0],
        [0.0, 5.0, 4.0],
        [0.0, 1.5, 0.0],
    ]);
    let indptr = vec![0, 2, 3, 5, 6];
    let indices = vec![1, 2, 1, 1, 2, 1];
    let data = vec![2.0, -1.0, 3.0, 5.0, 4.0, 1.5];
    (dense, indptr, indices, data)
}

#[test]
fn sparse_reads_as_dense() {
    let (dense, indptr, indices, data) = example();
    let csr = CsrPoints::new(3, &indptr, &indices, &data).expect("valid");
    let view = dense.view();
    assert_eq!(csr.ranges(), view.ranges());
    assert_eq!(csr.ranges().expect("finite")[0], (0.0, 0.0));
    assert_eq!(csr.ranges().expect("finite")[1], (1.5, 5.0));
    let map = InputMap {
        offset: vec![-1.0, 1.5, -1.0],
        scale: vec![2.0, 3.5, 5.0],
    };
    for m in [None, Some(&map)] {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for rows in [0..4, 1..3, 2..2] {
            let sparse = csr.block(rows.clone(), m, &mut a).to_vec();
            assert_eq!(sparse, view.block(rows, m, &mut b));
        }
    }
    // Read through its own map, the sparse matrix is the dense one mapped beforehand.
    let mapped = csr.clone().with_map(map.clone()).expect("consistent");
    let (mut a, mut b) = (Vec::new(), Vec::new());
    assert_eq!(
        mapped.block(0..4, None, &mut a).to_vec(),
        view.block(0..4, Some(&map), &mut b)
    );
    let ranges = mapped.ranges().expect("finite");
    for (k, &(lo, hi)) in view.ranges().expect("finite").iter().enumerate() {
        assert_eq!(ranges[k], (map.map_value(k, lo), map.map_value(k, hi)));
    }
    assert!(csr
        .with_map(InputMap {
            offset: vec![0.0; 2],
            scale: vec![1.0; 2]
        })
        .is_err());
}

/// `(x − offset) / scale` value by value: the matrix mapped beforehand (what an estimator's
/// numpy consumers compute).
fn mapped_beforehand(map: &InputMap, values: &[f64]) -> Vec<f64> {
    let d = map.offset.len();
    (values.iter().enumerate())
        .map(|(i, v)| (v - map.offset[i % d]) / map.scale[i % d])
        .collect()
}

#[test]
fn mapped_points_read_as_the_matrix_mapped_beforehand() {
    let (dense, indptr, indices, data) = example();
    let map = InputMap {
        offset: vec![-1.0, 1.5, -1.0],
        scale: vec![2.0, 3.5, 5.0],
    };
    let before = mapped_beforehand(&map, dense.as_slice().expect("C order"));
    let narrow = dense.mapv(|v| v as f32);
    let csr = CsrPoints::new(3, &indptr, &indices, &data).expect("valid");
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mapped = MappedPoints::new(dense.view(), map.clone()).expect("consistent");
    assert_eq!(mapped.block(0..4, None, &mut a), before.as_slice());
    assert_eq!(mapped.block(1..3, None, &mut a), &before[3..9]);
    let mapped32 = MappedPoints::new(narrow.view(), map.clone()).expect("consistent");
    assert_eq!(mapped32.block(0..4, None, &mut b), before.as_slice());
    let via_csr = MappedPoints::new(&csr, map.clone()).expect("consistent");
    assert_eq!(via_csr.block(0..4, None, &mut b), before.as_slice());
    let ranges = mapped.ranges().expect("finite");
    for (k, &(lo, hi)) in dense.view().ranges().expect("finite").iter().enumerate() {
        assert_eq!(ranges[k], (map.map_value(k, lo), map.map_value(k, hi)));
    }
    // A second map on top reads as both applied in turn.
    let twice = mapped_beforehand(&map, &before);
    assert_eq!(mapped.block(0..4, Some(&map), &mut a), twice.as_slice());
    // A map that does not fit the features, or that overflows a value, is refused.
    let short = InputMap {
        offset: vec![0.0; 2],
        scale: vec![1.0; 2],
    };
    assert!(MappedPoints::new(dense.view(), short).is_err());
    let tiny = InputMap {
        offset: vec![0.0; 3],
        scale: vec![1e-308; 3],
    };
    assert!(MappedPoints::new(dense.view(), tiny.clone()).is_err());
    assert!(csr.with_map(tiny).is_err());
}

#[test]
fn malformed_sparse_is_refused() {
    let (_, indptr, indices, data) = example();
    assert!(CsrPoints::new(2, &indptr, &indices, &data).is_err());
    assert!(CsrPoints::new(3, &indptr[1..], &indices, &data).is_err());
    assert!(CsrPoints::new(3, &indptr, &indices[1..], &data[1..]).is_err());
    let unsorted = vec![2, 1, 1, 1, 2, 1];
    assert!(CsrPoints::new(3, &indptr, &unsorted, &data).is_err());
    let negative = vec![1, -2, 1, 1, 2, 1];
    assert!(CsrPoints::new(3, &indptr, &negative, &data).is_err());
    let decreasing = vec![0, 3, 2, 5, 6];
    assert!(CsrPoints::new(3, &decreasing, &indices, &data).is_err());
    let beyond = vec![0, 7, 6, 6, 6];
    assert!(CsrPoints::new(3, &beyond, &indices, &data).is_err());
    let nan = vec![2.0, f64::NAN, 3.0, 5.0, 4.0, 1.5];
    let csr = CsrPoints::new(3, &indptr, &indices, &nan).expect("well formed");
    assert!(csr.ranges().is_none());
}

#[test]
fn strided_dense_views_read_as_contiguous_ones() {
    let (dense, ..) = example();
    let mut wide = Array2::zeros((4, 6));
    wide.slice_mut(s![.., ..;2]).assign(&dense);
    let strided = wide.slice(s![.., ..;2]);
    assert!(strided.as_slice().is_none());
    let map = InputMap {
        offset: vec![0.0, 1.0, 2.0],
        scale: vec![1.0, 2.0, 4.0],
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    assert_eq!(
        strided.block(1..4, Some(&map), &mut a).to_vec(),
        dense.view().block(1..4, Some(&map), &mut b)
    );
    assert_eq!(strided.ranges(), dense.view().ranges());
}
