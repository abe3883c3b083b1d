//! Fast Cluster partitions (Davies & Ghahramani 2014, §4.3.2, Algorithm 2): partition ρ keeps
//! each dimension with probability ½, draws `s ~ U{0, …, h}`, picks `2^s` distinct training
//! points as centres (uniformly, without replacement; all points when `2^s ≥ N`), and puts
//! every point with its nearest centre in squared Euclidean distance on the kept dimensions
//! (the first centre on ties; with no dimension kept, one cluster). New points use the same
//! centres and dimensions. Cost: `N · 2^s · |kept|` per partition.

use super::{AssignRule, PartitionRule, Sampling};
use crate::error::Result;
use crate::mondrian::route::RouteScratch;
use crate::partition::kernel::{renumber, PartitionKernel, FRESH};
use crate::partition::PartitionModel;
use crate::rng::{tree_rng, uniform, TreeRng};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// Centres and kept dimensions of every partition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FastClusterRule {
    n_features: usize,
    /// Per partition, the kept dimensions.
    kept: Vec<Vec<u32>>,
    /// Per partition, the centres restricted to the kept dimensions (row-major).
    centres: Vec<Vec<f64>>,
    /// Per partition, the cluster id of each centre (`FRESH` if no training point chose it).
    centre_cluster: Vec<Vec<u32>>,
}

/// `count` distinct indices below `n` (Floyd's algorithm), in the order drawn.
fn distinct_indices(rng: &mut TreeRng, n: usize, count: usize) -> Vec<usize> {
    let mut chosen = HashSet::with_capacity(count);
    let mut order = Vec::with_capacity(count);
    for j in n - count..n {
        let t = ((uniform(rng) * (j + 1) as f64) as usize).min(j);
        let pick = if chosen.contains(&t) { j } else { t };
        chosen.insert(pick);
        order.push(pick);
    }
    order
}

/// Index of the nearest centre (first on ties) to `row` on the dimensions `kept`.
#[inline]
fn nearest(row: &[f64], kept: &[u32], centres: &[f64]) -> usize {
    let w = kept.len();
    if w == 0 {
        return 0;
    }
    let mut best = (f64::INFINITY, 0);
    for (c, centre) in centres.chunks_exact(w).enumerate() {
        let dist: f64 = kept
            .iter()
            .zip(centre)
            .map(|(&d, &v)| (row[d as usize] - v) * (row[d as usize] - v))
            .sum();
        if dist < best.0 {
            best = (dist, c);
        }
    }
    best.1
}

/// Samples `n_partitions` Fast Cluster partitions with levels `s ≤ max_level`; `interrupt`
/// stops it between partitions.
pub fn sample(on: &Sampling<'_>, max_level: u32) -> Result<PartitionModel> {
    let n = on.check()?;
    let (x, d) = (on.x, on.n_features);
    let (labels, fitted) = on.draw_partitions(n, |rho, out, _: &mut ()| {
        let mut rng = tree_rng(on.seed, rho as u64);
        let kept: Vec<u32> = (0..d as u32).filter(|_| uniform(&mut rng) < 0.5).collect();
        let level = ((uniform(&mut rng) * f64::from(max_level + 1)) as u32).min(max_level);
        // More centres than points are never drawn (and 2^level may not fit).
        let count = 1usize.checked_shl(level).unwrap_or(usize::MAX).min(n);
        let centres: Vec<f64> = distinct_indices(&mut rng, n, count)
            .into_iter()
            .flat_map(|i| kept.iter().map(move |&k| x[i * d + k as usize]))
            .collect();
        for (o, row) in out.iter_mut().zip(x.chunks_exact(d)) {
            *o = nearest(row, &kept, &centres) as u32;
        }
        // Ids 0..L−1 for the centres that some training point chose, in centre order.
        let cluster = renumber(out, count);
        (kept, centres, cluster)
    })?;
    let mut rule = FastClusterRule {
        n_features: d,
        kept: Vec::with_capacity(on.n_partitions),
        centres: Vec::with_capacity(on.n_partitions),
        centre_cluster: Vec::with_capacity(on.n_partitions),
    };
    for (kept, centres, cluster) in fitted {
        rule.kept.push(kept);
        rule.centres.push(centres);
        rule.centre_cluster.push(cluster);
    }
    Ok(PartitionModel {
        kernel: PartitionKernel::from_labels(labels, on.n_partitions)?,
        rule: PartitionRule::FastCluster(rule),
    })
}

impl AssignRule for FastClusterRule {
    fn n_features(&self) -> usize {
        self.n_features
    }

    fn n_partitions(&self) -> usize {
        self.kept.len()
    }

    /// The cluster of the nearest centre on the kept dimensions.
    fn place(&self, rho: usize, row: &[f64], _scratch: &mut RouteScratch) -> (u32, f64) {
        let (kept, centres) = (&self.kept[rho], &self.centres[rho]);
        (self.centre_cluster[rho][nearest(row, kept, centres)], 1.0)
    }

    /// Every partition's centres match its kept dimensions, every cluster id exists.
    fn is_consistent(&self, kernel: &PartitionKernel) -> bool {
        let m = kernel.n_partitions();
        self.kept.len() == m
            && self.centres.len() == m
            && self.centre_cluster.len() == m
            && (0..m).all(|rho| {
                let w = self.kept[rho].len();
                let count = self.centre_cluster[rho].len();
                self.kept[rho]
                    .iter()
                    .all(|&d| (d as usize) < self.n_features)
                    && count > 0
                    && self.centres[rho].len() == count * w
                    && self.centre_cluster[rho]
                        .iter()
                        .all(|&c| c < kernel.n_clusters()[rho] || c == FRESH)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::{pool, Interrupt};

    #[test]
    fn clusters_are_nearest_centres_on_kept_dimensions() {
        let (n, d) = (300, 4);
        let mut rng = tree_rng(2, 0);
        let x: Vec<f64> = (0..n * d).map(|_| uniform(&mut rng)).collect();
        let p = pool(2).expect("pool");
        let stop = Interrupt::default();
        let on = |pool| Sampling {
            x: &x,
            n_features: d,
            n_partitions: 12,
            seed: 3,
            pool,
            interrupt: &stop,
        };
        let model = sample(&on(&p), 5).expect("sample");
        assert!(model.is_consistent());
        let (kernel, PartitionRule::FastCluster(rule)) = (&model.kernel, &model.rule) else {
            panic!("a fast cluster rule");
        };
        for rho in 0..12 {
            let (kept, centres) = (&rule.kept[rho], &rule.centres[rho]);
            let w = kept.len();
            for i in 0..n {
                let row = &x[i * d..(i + 1) * d];
                let label = kernel.labels()[rho * n + i];
                // Brute force: no centre strictly closer than the chosen one.
                let dist = |c: usize| -> f64 {
                    kept.iter()
                        .enumerate()
                        .map(|(j, &k)| (row[k as usize] - centres[c * w + j]).powi(2))
                        .sum()
                };
                let chosen = rule.centre_cluster[rho]
                    .iter()
                    .position(|&c| c == label)
                    .expect("label of a centre");
                let count = rule.centre_cluster[rho].len();
                assert!((0..count).all(|c| dist(c) >= dist(chosen)));
            }
            assert!(kernel.n_clusters()[rho] as usize <= 32);
        }
        assert_eq!(
            model
                .assign(
                    &ndarray::ArrayView2::from_shape((n, d), &x[..]).expect("rows"),
                    &p
                )
                .expect("assign")
                .labels,
            kernel.labels()
        );
        let p1 = pool(1).expect("pool");
        let again = sample(&on(&p1), 5).expect("sample");
        assert_eq!(again.kernel.labels(), kernel.labels());
    }

    #[test]
    fn floyd_draws_distinct_indices() {
        let mut rng = tree_rng(1, 1);
        let picks = distinct_indices(&mut rng, 10, 10);
        let mut sorted = picks.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
        assert_eq!(distinct_indices(&mut rng, 1000, 3).len(), 3);
    }
}
