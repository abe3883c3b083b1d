use super::*;
use crate::parallel::pool;
use ndarray::ArrayView2;

/// Row-major values as a matrix of two-feature points.
fn rows(values: &[f64]) -> ArrayView2<'_, f64> {
    ArrayView2::from_shape((values.len() / 2, 2), values).expect("two features")
}

fn forest(lifetime: f64, points: &[f64]) -> DensityForest {
    let p = pool(2).expect("pool");
    let mut f = DensityForest::sample(
        vec![0.0, 0.0],
        vec![1.0, 2.0],
        (lifetime, 0.5),
        4,
        3,
        100_000,
        &p,
        &Interrupt::default(),
    )
    .expect("sampled");
    f.add_points(&rows(points), None, &p).expect("inside");
    f
}

#[test]
fn masses_sum_to_one_and_the_density_is_mass_over_volume() {
    let points: Vec<f64> = (0..200)
        .flat_map(|i| [(i % 10) as f64 / 10.0, (i % 7) as f64 / 4.0])
        .collect();
    let f = forest(3.0, &points);
    let p = pool(1).expect("pool");
    for t in 0..4 {
        let (masses, volumes) = f.leaf_masses(t).expect("tree");
        assert!((masses.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((volumes.iter().sum::<f64>() - 2.0).abs() < 1e-12);
        assert!(f.trees[t].counts[0] == 200.0);
    }
    let probe = [0.33, 1.21];
    let one = DensityForest {
        trees: vec![f.trees[0].clone()],
        ..f.clone()
    };
    let (masses, volumes) = one.leaf_masses(0).expect("tree");
    let densities: Vec<f64> = masses.iter().zip(&volumes).map(|(m, v)| m / v).collect();
    let got = one.log_density(&rows(&probe), &p).expect("finite")[0].exp();
    assert!(densities.iter().any(|d| (d - got).abs() < 1e-12 * got));
    assert_eq!(
        f.log_density(&rows(&[1.5, 0.5]), &p).expect("finite")[0],
        f64::NEG_INFINITY
    );
    assert!(f.is_consistent());
}

#[test]
fn the_strongest_prior_gives_the_uniform_density() {
    // γ = 1e308 overflows the strength γ (depth + 1)² below the root: the limit γ → ∞,
    // the uniform density on the box (volume 2), not ∞/∞ = NaN.
    let p = pool(1).expect("pool");
    let mut f = DensityForest::sample(
        vec![0.0, 0.0],
        vec![1.0, 2.0],
        (3.0, 1e308),
        2,
        3,
        100_000,
        &p,
        &Interrupt::default(),
    )
    .expect("sampled");
    let points: Vec<f64> = (0..50).flat_map(|i| [i as f64 / 50.0, 0.1]).collect();
    f.add_points(&rows(&points), None, &p).expect("inside");
    for value in f
        .log_density(&rows(&[0.3, 0.2, 0.9, 1.9]), &p)
        .expect("finite")
    {
        assert!((value + 2f64.ln()).abs() < 1e-9, "{value}");
    }
}

#[test]
fn budget_and_bad_input_are_errors() {
    let p = pool(1).expect("pool");
    let stop = Interrupt::default();
    let big = DensityForest::sample(
        vec![0.0; 3],
        vec![1.0; 3],
        (50.0, 1.0),
        2,
        0,
        1000,
        &p,
        &stop,
    );
    assert!(big.is_err());
    let bad = DensityForest::sample(vec![0.0], vec![0.0], (1.0, 1.0), 2, 0, 1000, &p, &stop);
    assert!(bad.is_err());
    let mut f = forest(1.0, &[0.5, 0.5]);
    let before = f.trees[0].counts.clone();
    assert!(f.add_points(&rows(&[0.5, 3.0]), None, &p).is_err());
    assert_eq!(f.trees[0].counts, before);
}

#[test]
fn a_path_without_lifetimes_is_an_error_not_a_panic() {
    let p = pool(1).expect("pool");
    let f = forest(2.0, &[0.5, 0.5, 0.2, 1.0]);
    let x = rows(&[0.5, 0.5]);
    for lifetimes in [&[][..], &[1.0, 0.5][..], &[3.0][..]] {
        let Err(Error::InvalidInput(message)) = f.lifetime_path(&x, None, lifetimes, false, &p)
        else {
            panic!("lifetimes {lifetimes:?} are refused");
        };
        assert!(message.contains("one or more lifetimes"), "{message}");
    }
    let (means, outside) = f
        .lifetime_path(&x, None, &[0.0, 2.0], false, &p)
        .expect("path");
    assert_eq!((means.len(), outside), (2, 0.0));
}
