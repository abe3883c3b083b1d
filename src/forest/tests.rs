use super::*;
use crate::mondrian::policy::PureMondrian;
use crate::parallel::pool;
use crate::testing::{assert_valid, forest_on, uniform_array};
use ndarray::{s, Array2};

fn grown(x: &Array2<f64>, params: TreeParams, rows: usize, pool: &ThreadPool) -> MondrianForest {
    let mut f = MondrianForest::new(params, x.ncols(), 42).expect("valid");
    f.add_points(&x.slice(s![..rows, ..])).expect("finite");
    f.grow_trees(5, &PureMondrian, pool, &Interrupt::default())
        .expect("not interrupted");
    f
}

#[test]
fn batch_and_extended_trees_keep_invariants() {
    let x = uniform_array(3000, 3, 1);
    for (lifetime, mss) in [(f64::INFINITY, 2), (f64::INFINITY, 10), (4.0, 5), (0.5, 2)] {
        let params = TreeParams::new(lifetime, mss);
        let p = pool(2).expect("pool");
        let mut f = grown(&x, params, 500, &p);
        // The same forest with its points on disk from the start of its extension.
        let mut on_disk = grown(&x, params, 500, &p);
        on_disk
            .move_points_to_disk(&std::env::temp_dir())
            .expect("temp dir");
        for chunk in [500..501, 501..1200, 1200..1201, 1201..3000] {
            let rows = f
                .add_points(&x.slice(s![chunk.clone(), ..]))
                .expect("finite");
            let changed = f.extend(rows, &PureMondrian, &p).expect("in memory");
            for (tree, leaves) in f.trees.iter().zip(&changed) {
                assert_valid(tree, f.points().expect("in memory"), f.n_rows(), &params);
                assert!(!leaves.is_empty());
            }
            let rows = on_disk.add_points(&x.slice(s![chunk, ..])).expect("finite");
            let changed_on_disk = on_disk.extend(rows, &PureMondrian, &p).expect("read");
            assert_eq!(changed_on_disk, changed);
            assert!(on_disk.points().is_err() && on_disk.points_directory().is_some());
            let bytes = |f: &MondrianForest| crate::serialize::to_bytes(f).expect("bytes");
            assert_eq!(bytes(&on_disk), bytes(&f));
        }
    }
}

#[test]
fn serialization_round_trip() {
    let x = uniform_array(300, 2, 4);
    let f = forest_on(&x, TreeParams::new(3.0, 2), 3, 1);
    let bytes = crate::serialize::to_bytes(&f).expect("serialize");
    let g: MondrianForest = crate::serialize::from_bytes(&bytes).expect("deserialize");
    assert!(g.is_consistent());
    let p = pool(1).expect("pool");
    assert_eq!(f.apply(&x.view(), &p), g.apply(&x.view(), &p));
    assert!(crate::serialize::from_bytes::<MondrianForest>(&bytes[..bytes.len() / 2]).is_err());
    assert!(crate::serialize::from_bytes::<MondrianForest>(b"garbage!").is_err());
}

#[test]
fn same_seed_same_trees_for_any_pool_size() {
    let x = uniform_array(500, 3, 8);
    let leaves: Vec<_> = [1usize, 2, 7]
        .iter()
        .map(|&n| {
            let p = pool(n).expect("pool");
            let mut f = grown(&x, TreeParams::new(f64::INFINITY, 3), 250, &p);
            let rows = f.add_points(&x.slice(s![250.., ..])).expect("finite");
            f.extend(rows, &PureMondrian, &p).expect("in memory");
            f.apply(&x.view(), &p).expect("fitted")
        })
        .collect();
    assert_eq!(leaves[0], leaves[1]);
    assert_eq!(leaves[0], leaves[2]);
}

#[test]
fn offset_trees_equal_the_whole_forests_trees() {
    let x = uniform_array(400, 3, 5);
    let params = TreeParams::new(f64::INFINITY, 2);
    let p = pool(2).expect("pool");
    let whole = grown(&x, params, 300, &p);
    let mut tail = MondrianForest::new(params, x.ncols(), 42).expect("valid");
    tail.offset_trees(3).expect("treeless");
    tail.add_points(&x.slice(s![..300, ..])).expect("finite");
    tail.grow_trees(2, &PureMondrian, &p, &Interrupt::default())
        .expect("not interrupted");
    let all = whole.apply(&x.view(), &p).expect("fitted");
    let part = tail.apply(&x.view(), &p).expect("fitted");
    assert_eq!(all.slice(s![.., 3..]), part);
    assert!(tail.offset_trees(0).is_err(), "only before growing");
}

#[test]
fn an_interrupted_fit_adds_no_tree() {
    let x = uniform_array(200, 2, 3);
    let mut f = forest_on(&x, TreeParams::new(f64::INFINITY, 2), 2, 0);
    let stop = Interrupt::default();
    stop.request();
    let p = pool(2).expect("pool");
    assert!(f.grow_trees(4, &PureMondrian, &p, &stop).is_err());
    assert_eq!(f.trees.len(), 2);
}

#[test]
fn bad_input_is_an_error() {
    let params = TreeParams::new(1.0, 2);
    assert!(MondrianForest::new(params, 0, 0).is_err());
    let mut f = MondrianForest::new(params, 2, 0).expect("valid");
    let bad = Array2::from_shape_vec((1, 2), vec![0.0, f64::NAN]).expect("shape");
    assert!(f.add_points(&bad.view()).is_err());
    let wide = Array2::<f64>::zeros((1, 3));
    assert!(f.add_points(&wide.view()).is_err());
    let p = pool(1).expect("pool");
    assert!(f.apply(&Array2::<f64>::zeros((1, 2)).view(), &p).is_err());
}
