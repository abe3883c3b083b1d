use super::*;
use crate::mondrian::TreeParams;
use crate::parallel::pool;
use crate::parallel::Interrupt;
use crate::testing::{growing, uniform_array};
use ndarray::{s, Array1};

/// Two classes split by x₀ + x₁ > 1, with 5 % of labels flipped.
fn labelled(n: usize, seed: u64) -> (ndarray::Array2<f64>, Array1<u32>) {
    let x = uniform_array(n, 2, seed);
    let y = (x.rows().into_iter().enumerate())
        .map(|(i, r)| u32::from(r[0] + r[1] > 1.0) ^ u32::from(i % 20 == 0))
        .collect();
    (x, y)
}

fn classifier(guidance: Guidance) -> ForestClassifier {
    let forest = MondrianForest::new(TreeParams::new(f64::INFINITY, 2), 2, 7).expect("valid");
    ForestClassifier::new(forest, 2, (20.0, 0.0), guidance)
}

fn fitted(x: &ndarray::Array2<f64>, y: &Array1<u32>, guidance: Guidance) -> ForestClassifier {
    let mut model = classifier(guidance);
    let p = pool(2).expect("pool");
    let go = Interrupt::default();
    let how = growing(4, &p, &go);
    model
        .fit(&x.view(), &y.view(), None, &how, |_| Ok(()))
        .expect("fit");
    model
}

#[test]
fn leaves_are_pure_and_one_candidate_gives_the_label_blind_trees() {
    let (x, y) = labelled(300, 1);
    let model = fitted(&x, &y, Guidance::NONE);
    let mut blind = MondrianForest::new(TreeParams::new(f64::INFINITY, 2), 2, 7).expect("ok");
    blind.add_points(&x.view()).expect("finite");
    let pure = PausePureBlocks {
        labels: y.as_slice().expect("contiguous"),
    };
    let p = pool(1).expect("pool");
    blind
        .grow_trees(4, &pure, &p, &Interrupt::default())
        .expect("grown");
    let bytes = |t| crate::serialize::to_bytes(t).expect("serialisable");
    for (a, b) in model.forest.trees.iter().zip(&blind.trees) {
        assert!(bytes(a) == bytes(b), "trees differ bit for bit");
    }
    for (tree, counts) in model.forest.trees.iter().zip(&model.counts) {
        for j in (0..tree.n_nodes() as u32).filter(|&j| tree.is_leaf(j)) {
            let row = &counts[j as usize * 2..j as usize * 2 + 2];
            // λ = ∞: a leaf is pure, or its points coincide.
            assert!(row.contains(&0.0) || tree.linear_dimension(j) == 0.0);
        }
    }
    let guided = fitted(
        &x,
        &y,
        Guidance {
            tries: 2,
            locations: 6,
        },
    );
    assert!(guided.is_consistent());
    // Guided cuts find the diagonal sooner: fewer leaves for the same (pure) partition.
    let leaves =
        |m: &ForestClassifier| -> usize { m.forest.trees.iter().map(|t| t.n_leaves()).sum() };
    assert!(
        leaves(&guided) < leaves(&model),
        "{} vs {}",
        leaves(&guided),
        leaves(&model)
    );
}

#[test]
fn candidate_counts_beyond_the_data_are_the_data_s_counts() {
    // 30 rows in 2 dimensions: 2⁶³ locations (once a capacity-overflow panic) and 2⁶³
    // dimensions give the trees of 30 locations and 2 dimensions, bit for bit.
    let (x, y) = labelled(30, 4);
    let bytes = |m: &ForestClassifier| -> Vec<Vec<u8>> {
        (m.forest.trees.iter())
            .map(|t| crate::serialize::to_bytes(t).expect("serialisable"))
            .collect()
    };
    let huge = 1usize << 63;
    for (given, bound) in [
        ((2, huge), (2, 30)),
        ((huge, 6), (2, 6)),
        ((huge, huge), (2, 30)),
    ] {
        let at = |(tries, locations)| fitted(&x, &y, Guidance { tries, locations });
        assert!(
            bytes(&at(given)) == bytes(&at(bound)),
            "{given:?} vs {bound:?}"
        );
    }
    // Within the bounds, the counts are kept.
    let kept = Guidance::new(2, 29).expect("valid");
    assert_eq!(kept.bounded(30, 2), kept);
    assert!(bytes(&fitted(&x, &y, kept)) != bytes(&fitted(&x, &y, kept.bounded(20, 2))));
}

#[test]
fn set_discounts_recomputes_the_means_as_a_model_built_with_them() {
    let (x, y) = labelled(300, 3);
    let mut model = fitted(&x, &y, Guidance::NONE);
    let forest = MondrianForest::new(TreeParams::new(f64::INFINITY, 2), 2, 7).expect("ok");
    let mut built = ForestClassifier::new(forest, 2, (5.0, 0.2), Guidance::NONE);
    let p = pool(2).expect("pool");
    let go = Interrupt::default();
    built
        .fit(&x.view(), &y.view(), None, &growing(4, &p, &go), |_| Ok(()))
        .expect("fit");
    let queries = uniform_array(50, 2, 9);
    let before = model.predict_proba(&queries.view(), &p).expect("proba");
    model.set_discounts(5.0, 0.2).expect("valid");
    assert!(!model.means_are_fresh());
    let after = model.predict_proba(&queries.view(), &p).expect("proba");
    assert_eq!(
        after,
        built.predict_proba(&queries.view(), &p).expect("proba")
    );
    assert!(after != before);
    assert!(model.set_discounts(f64::NAN, 0.1).is_err());
    assert!(model.set_discounts(1.0, -0.1).is_err());
    assert_eq!(model.discounts(), (5.0, 0.2));
}

#[test]
fn pure_blocks_pause_and_resume_and_counts_follow_online_updates() {
    let (x, y) = labelled(400, 2);
    let zeros = Array1::<u32>::zeros(50);
    let mut model = fitted(&x.slice(s![..50, ..]).to_owned(), &zeros, Guidance::NONE);
    assert!(model.forest.trees.iter().all(|t| t.n_nodes() == 1));
    let p = pool(2).expect("pool");
    model
        .partial_fit(
            &x.slice(s![50..51, ..]),
            &Array1::from(vec![1u32]).view(),
            None,
            &p,
        )
        .expect("update");
    assert!(model.forest.trees.iter().all(|t| t.n_nodes() > 1));
    for chunk in [51..52, 52..200, 200..400] {
        let (xs, ys) = (x.slice(s![chunk.clone(), ..]), y.slice(s![chunk]));
        model.partial_fit(&xs, &ys, None, &p).expect("update");
    }
    assert!(model.is_consistent());
    for (tree, counts) in model.forest.trees.iter().zip(&model.counts) {
        assert_eq!(
            counts,
            &tree_counts(tree, (&model.labels, &model.weights), 2)
        );
    }
    assert!(model
        .partial_fit(
            &x.slice(s![..1, ..]),
            &Array1::from(vec![2u32]).view(),
            None,
            &p
        )
        .is_err());
}
