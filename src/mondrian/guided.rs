//! Label-guided cuts (the label-guided-splits poster; Lakshminarayanan et al.'s Mondrian
//! forests with the cut chosen among candidates): when a block's split time comes, draw T
//! dimensions with probability ∝ extent and Q locations uniform in each drawn dimension's
//! extent, and cut at the candidate with the largest impurity decrease of the block's labels
//! (information gain for classes, variance reduction for real targets). The split *time*
//! stays Exp(linear dimension), so the lifetime keeps its meaning; `T = Q = 1` draws exactly
//! the pure Mondrian's cut (same random numbers, same tree). Online, the conditional Mondrian's
//! cuts outside an old box cannot be guided (no old point lies in the gap); leaf splits are.
//!
//! All Q locations of a dimension are scored in one pass over the block's points: the sorted
//! cuts cut the extent into Q + 1 bins, each point's labels are added to its bin, and prefix
//! sums of the bins give every candidate's left side.

use super::policy::{uniform_in, Block, SplitPolicy};
use crate::rng::{next_u64, weighted_index, TreeRng};

/// How labels are summarised and compared on the two sides of a candidate cut. Statistics
/// are `width()` numbers (a class histogram; n, Σy) that add up over sets of weighted points
/// (a point of weight w counts as w copies: [`crate::forest::weights`]), so the guided cut
/// keeps them in flat buffers it reuses.
pub trait Impurity: Sync {
    /// The number of values in a set's statistics.
    fn width(&self) -> usize;

    /// The label of training point `point` (a class index or a target), as a number.
    fn label(&self, point: u32) -> f64;

    /// The weight of training point `point`.
    fn weight(&self, point: u32) -> f64;

    /// Adds a point with label `label` and weight `weight` to `stats` (`width()` values).
    fn add(&self, stats: &mut [f64], label: f64, weight: f64);

    /// A score that increases with the impurity decrease of splitting the points of `both`
    /// into `left` and the rest (only its order between candidates of one block matters).
    fn score(&self, left: &[f64], both: &[f64]) -> f64;

    /// A bound on the terms whose differences make a score, for the block with the labels
    /// and weights `labels`, `weights` and statistics `both`: scores of one block that differ
    /// by less than [`TIE`] times this are equal up to rounding.
    fn magnitude(&self, labels: &[f64], weights: &[f64], both: &[f64]) -> f64;
}

/// Buffers of a guided cut, kept per thread: every split of a fit would otherwise allocate
/// them anew.
#[derive(Default)]
struct Scratch {
    /// The block's labels and weights in the order of its points, read once from scattered
    /// memory.
    labels: Vec<f64>,
    weights: Vec<f64>,
    both: Vec<f64>,
    left: Vec<f64>,
    bins: Vec<f64>,
    cuts: Vec<f64>,
    order: Vec<usize>,
    sorted: Vec<f64>,
    /// The dimensions not drawn yet (positive extent), for the draws after the first.
    dims: Vec<usize>,
}

/// Copies of the bins filled in turn by consecutive points (see `guided_cut`).
const LANES: usize = 4;

/// Up to this many locations, a point's bin is counted by a scan of the sorted cuts; beyond,
/// found by binary search (the same bin), so a cut over m points with Q candidates costs
/// O(m log Q), not O(m Q), when Q is as large as the points allow.
const SCAN_LOCATIONS: usize = 64;

/// Relative difference (of [`Impurity::magnitude`]) below which two candidates' scores count
/// as tied, the earlier draw winning. Candidates in different dimensions that split a block's
/// points alike have the same score in exact arithmetic, but their sums run over the points in
/// another order and round differently; left to rounding, the choice between them would depend
/// on the order and the multiplicity of the rows (a row of weight 2 against the row repeated),
/// not on the data. Rounding of sums of a few hundred thousand terms stays far below it, real
/// differences between distinct splits far above.
pub const TIE: f64 = 1e-10;

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Candidate counts of the label-guided policy: `tries` dimensions (T), `locations` per
/// dimension (Q).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Guidance {
    pub tries: usize,
    pub locations: usize,
}

impl Guidance {
    /// T = Q = 1: the pure Mondrian.
    pub const NONE: Guidance = Guidance {
        tries: 1,
        locations: 1,
    };

    /// T × Q candidates; both at least 1.
    pub fn new(tries: usize, locations: usize) -> crate::error::Result<Guidance> {
        if tries == 0 || locations == 0 {
            return Err(crate::error::Error::InvalidParameter {
                name: "candidate_dimensions",
                reason: format!(
                    "candidate_dimensions ({tries}) and candidate_locations ({locations}) must be at least 1"
                ),
            });
        }
        Ok(Guidance { tries, locations })
    }

    /// Whether candidates are compared at all.
    pub fn is_guided(&self) -> bool {
        self.tries > 1 || self.locations > 1
    }

    /// These counts for a model holding `n_points` training points: more locations than
    /// points are that many (the candidates are drawn, sorted and binned per cut, so
    /// `locations = 2⁶³` for thirty rows allocated without bound), and more dimensions than
    /// `n_features` are that many (the draws stop when the dimensions run out). Counts within
    /// the bounds are kept, so results change only for counts beyond them, and equal those
    /// of the bounds themselves.
    pub fn bounded(self, n_points: usize, n_features: usize) -> Guidance {
        Guidance {
            tries: self.tries.min(n_features.max(1)),
            locations: self.locations.min(n_points.max(1)),
        }
    }
}

/// A split policy that pauses as `base` does and guides its cuts by `impurity`.
pub struct Guided<P, I> {
    pub base: P,
    pub guidance: Guidance,
    pub impurity: I,
}

impl<P: SplitPolicy, I: Impurity> SplitPolicy for Guided<P, I> {
    fn pauses(&self, points: &[u32]) -> bool {
        self.base.pauses(points)
    }

    fn cut(&self, rng: &mut TreeRng, block: &Block<'_>) -> (usize, f64) {
        if !self.guidance.is_guided() {
            return self.base.cut(rng, block);
        }
        SCRATCH.with_borrow_mut(|scratch| self.guided_cut(rng, block, scratch))
    }
}

impl<P: SplitPolicy, I: Impurity> Guided<P, I> {
    fn guided_cut(&self, rng: &mut TreeRng, block: &Block<'_>, s: &mut Scratch) -> (usize, f64) {
        let (d, w, q) = (
            block.lower.len(),
            self.impurity.width(),
            self.guidance.locations,
        );
        let extents = || block.lower.iter().zip(block.upper).map(|(l, u)| u - l);
        s.labels.clear();
        s.labels
            .extend(block.points.iter().map(|&i| self.impurity.label(i)));
        s.weights.clear();
        s.weights
            .extend(block.points.iter().map(|&i| self.impurity.weight(i)));
        s.both.clear();
        s.both.resize(w, 0.0);
        for (&label, &weight) in s.labels.iter().zip(&s.weights) {
            self.impurity.add(&mut s.both, label, weight);
        }
        let tie = TIE * self.impurity.magnitude(&s.labels, &s.weights, &s.both);
        let mut best = (f64::NEG_INFINITY, 0, block.lower[0]);
        s.dims.clear();
        for attempt in 0..self.guidance.tries {
            // The first dimension is the Mondrian's (∝ extent); the others are drawn
            // uniformly without replacement among the rest with positive extent, so that
            // T = D tries every dimension (as a random forest's split search does) and a
            // narrow but decisive dimension is not starved by wide irrelevant ones.
            let dim = if attempt == 0 {
                let first = weighted_index(rng, extents(), block.linear_dimension);
                s.dims.extend(
                    extents()
                        .enumerate()
                        .filter(|&(k, e)| k != first && e > 0.0)
                        .map(|(k, _)| k),
                );
                first
            } else if s.dims.is_empty() {
                break;
            } else {
                let pick = (next_u64(rng) % s.dims.len() as u64) as usize;
                s.dims.swap_remove(pick)
            };
            s.cuts.clear();
            s.cuts
                .extend((0..q).map(|_| uniform_in(rng, block.lower[dim], block.upper[dim])));
            s.order.clear();
            s.order.extend(0..q);
            let cuts = &s.cuts;
            s.order.sort_by(|&a, &b| cuts[a].total_cmp(&cuts[b]));
            s.sorted.clear();
            s.sorted.extend(s.order.iter().map(|&k| cuts[k]));
            // Bin b holds the points right of the first b sorted cuts (x > cut goes right),
            // counted without branches, which a binary search mispredicts. Consecutive
            // points go to LANES copies of the bins in turn: neighbours often share a bin,
            // and one copy would chain every addition on the one before.
            let size = (q + 1) * w;
            s.bins.clear();
            s.bins.resize(LANES * size, 0.0);
            let (labels, rows) = (s.labels.iter().zip(&s.weights), block.rows.chunks_exact(d));
            for (lane, ((&label, &weight), row)) in labels.zip(rows).enumerate() {
                let v = row[dim];
                let bin = if q <= SCAN_LOCATIONS {
                    s.sorted.iter().filter(|&&c| c < v).count()
                } else {
                    s.sorted.partition_point(|&c| c < v)
                };
                let at = (lane % LANES) * size + bin * w;
                self.impurity.add(&mut s.bins[at..at + w], label, weight);
            }
            let (first, others) = s.bins.split_at_mut(size);
            for other in others.chunks_exact(size) {
                first.iter_mut().zip(other).for_each(|(a, b)| *a += b);
            }
            // Every candidate's score; ties (within `tie`) go to the earlier draw, then to the
            // earlier try. A score that is not a number (overflowing targets) ranks lowest,
            // and the first try always yields a cut inside the box.
            s.left.clear();
            s.left.resize(w, 0.0);
            let mut in_try = (f64::NEG_INFINITY, usize::MAX);
            for (&k, bin) in s.order.iter().zip(s.bins[..size].chunks_exact(w)) {
                s.left.iter_mut().zip(bin).for_each(|(a, b)| *a += b);
                let score = self.impurity.score(&s.left, &s.both);
                let score = if score.is_nan() {
                    f64::NEG_INFINITY
                } else {
                    score
                };
                if score > in_try.0 + tie || (score >= in_try.0 - tie && k < in_try.1) {
                    in_try = (score, k);
                }
            }
            if attempt == 0 || in_try.0 > best.0 + tie {
                best = (in_try.0, dim, cuts[in_try.1]);
            }
        }
        (best.1, best.2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mondrian::policy::PureMondrian;
    use crate::rng::tree_rng;

    /// Labels 1 where x₀ > 0.6: information is in dimension 0 only.
    struct Threshold<'a>(&'a [f64]);

    impl Impurity for Threshold<'_> {
        fn width(&self) -> usize {
            3
        }
        fn label(&self, i: u32) -> f64 {
            f64::from(u8::from(self.0[2 * i as usize] > 0.6))
        }
        fn weight(&self, _: u32) -> f64 {
            1.0
        }
        fn add(&self, s: &mut [f64], y: f64, w: f64) {
            s[0] += w;
            s[1] += w * y;
            s[2] += w * y * y;
        }
        fn score(&self, left: &[f64], both: &[f64]) -> f64 {
            let sse = |s: &[f64]| {
                if s[0] > 0.0 {
                    s[2] - s[1] * s[1] / s[0]
                } else {
                    0.0
                }
            };
            let right = [both[0] - left[0], both[1] - left[1], both[2] - left[2]];
            sse(both) - sse(left) - sse(&right)
        }
        fn magnitude(&self, _: &[f64], _: &[f64], both: &[f64]) -> f64 {
            both[2]
        }
    }

    #[test]
    fn one_candidate_is_the_pure_mondrian_and_many_find_the_signal() {
        let rows: Vec<f64> = (0..200)
            .flat_map(|i| [(i % 20) as f64 / 20.0, (i / 20) as f64 * 0.5])
            .collect();
        let points: Vec<u32> = (0..200).collect();
        let block = Block {
            lower: &[0.0, 0.0],
            upper: &[0.95, 4.5],
            linear_dimension: 5.45,
            points: &points,
            rows: &rows,
        };
        let policy = |tries, locations| Guided {
            base: PureMondrian,
            guidance: Guidance { tries, locations },
            impurity: Threshold(&rows),
        };
        for seed in 0..20 {
            let a = policy(1, 1).cut(&mut tree_rng(seed, 0), &block);
            let b = PureMondrian.cut(&mut tree_rng(seed, 0), &block);
            assert_eq!(a, b);
        }
        // Dimension 0 holds 17 % of the extent: the pure Mondrian cuts it near the threshold
        // 0.6 (within [0.5, 0.75)) with probability 0.17 · 0.26 ≈ 0.046; with 8 × 6
        // candidates a draw of dimension 0 happens with probability 1 − 0.83⁸ ≈ 0.78 and its
        // best location is near the threshold. Over 400 blocks the counts' standard
        // deviations are ≤ 10, so the two rates cannot be confused.
        let near = |(dim, cut): (usize, f64)| dim == 0 && (0.5..0.75).contains(&cut);
        let pure = (0..400)
            .filter(|&seed| near(PureMondrian.cut(&mut tree_rng(seed, 1), &block)))
            .count();
        let guided = (0..400)
            .filter(|&seed| near(policy(8, 6).cut(&mut tree_rng(seed, 1), &block)))
            .count();
        assert!(pure < 40 && guided > 200, "pure {pure}, guided {guided}");
        let (dim, cut) = policy(1, 6).cut(&mut tree_rng(3, 0), &block);
        assert!(cut >= block.lower[dim] && cut < block.upper[dim]);
    }
}
