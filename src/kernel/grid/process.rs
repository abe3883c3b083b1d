//! The Mondrian grid's random cuts on a set of points (Balog's report ch. 5). Per dimension d the
//! sorted distinct coordinates of the points are the *knots*; per grid m and dimension d an
//! independent 1-D Poisson process of cuts in (location, birth time), rate 1 per unit length
//! and unit time, on [first knot, last knot]. Only the first cut born in each gap between
//! neighbouring knots matters to the points (a later one separates no pair of them): gap g of
//! width ℓ_g gets it at τ_g ~ Exp(ℓ_g), uniformly placed in the gap, and the grid at lifetime
//! λ_d cuts gap g iff τ_g ≤ λ_d. Where exactly the cut lies only matters to later points that
//! fall inside the gap (`model.rs`).
//!
//! Cuts are drawn lazily in time order: stream (m, d) (seeded by `(seed, m·D + d)`) draws the
//! process's points one after another, at rate range_d with uniform locations, and a point in
//! an uncut gap is that gap's first cut. Once half of the range is cut, the rest are drawn
//! directly — the next first cut comes after Exp(uncut length), in a gap picked in proportion
//! to its width (memorylessness) — so that no stream ever rejects without end. The first cuts
//! of dimension d over all grids are merged in birth order ([`Process::event`]): moving λ_d
//! past the k-th event adds exactly one cut to one grid.

use crate::error::{Error, Result};
use crate::rng::{exponential, tree_rng, uniform, TreeRng};

/// The first cut of one gap in one grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cut {
    pub tau: f64,
    pub grid: u32,
    /// Gap g lies between knots g and g + 1.
    pub gap: u32,
    pub location: f64,
}

/// The knots of every dimension and where every point sits among them.
#[derive(Debug, Clone)]
pub struct Knots {
    pub d: usize,
    /// Per dimension, the sorted distinct coordinates.
    pub values: Vec<Vec<f64>>,
    /// The knot of every point in every dimension (row-major, n_points × D).
    pub of_point: Vec<u32>,
    /// Per dimension, the points in knot order, and where each knot's points start there
    /// (one entry per knot plus the end).
    pub by_knot: Vec<Vec<u32>>,
    pub start: Vec<Vec<u32>>,
}

impl Knots {
    /// The knots of the rows of `x` (row-major, `d` wide, finite).
    pub fn new(x: &[f64], d: usize) -> Result<Self> {
        let n = x.len().checked_div(d).unwrap_or(0);
        if n == 0 || n >= u32::MAX as usize {
            return Err(Error::InvalidInput(format!(
                "the Mondrian grid needs between 1 and {} points with at least one feature",
                u32::MAX - 1
            )));
        }
        if x.iter().any(|v| !v.is_finite()) {
            return Err(Error::InvalidInput("X holds NaN or infinite values".into()));
        }
        let mut knots = Self {
            d,
            values: Vec::with_capacity(d),
            of_point: vec![0; n * d],
            by_knot: Vec::with_capacity(d),
            start: Vec::with_capacity(d),
        };
        for k in 0..d {
            let mut values: Vec<f64> = x.iter().skip(k).step_by(d).copied().collect();
            values.sort_by(f64::total_cmp);
            values.dedup();
            let mut count = vec![0u32; values.len() + 1];
            for (i, row) in x.chunks_exact(d).enumerate() {
                let at = values.partition_point(|&v| v < row[k]);
                knots.of_point[i * d + k] = at as u32;
                count[at + 1] += 1;
            }
            for j in 1..count.len() {
                count[j] += count[j - 1];
            }
            let mut fill = count.clone();
            let mut by_knot = vec![0u32; n];
            for i in 0..n {
                let at = knots.of_point[i * d + k] as usize;
                by_knot[fill[at] as usize] = i as u32;
                fill[at] += 1;
            }
            knots.values.push(values);
            knots.by_knot.push(by_knot);
            knots.start.push(count);
        }
        Ok(knots)
    }

    /// Number of points.
    pub fn n_points(&self) -> usize {
        self.of_point.len() / self.d.max(1)
    }

    /// The knot of point `p` in dimension `k`.
    #[inline]
    pub fn of(&self, p: usize, k: usize) -> u32 {
        self.of_point[p * self.d + k]
    }

    /// The points of knots `from..to` of dimension `k`, in knot order.
    pub fn points(&self, k: usize, from: u32, to: u32) -> &[u32] {
        let start = &self.start[k];
        &self.by_knot[k][start[from as usize] as usize..start[to as usize] as usize]
    }
}

/// Widths of the uncut gaps, summed in a Fenwick tree (the direct draw of a stream).
#[derive(Debug, Clone)]
struct UncutWidths {
    tree: Vec<f64>,
    total: f64,
}

impl UncutWidths {
    fn new(widths: &[f64]) -> Self {
        let mut tree = vec![0.0; widths.len() + 1];
        for (i, &w) in widths.iter().enumerate() {
            let mut j = i + 1;
            while j < tree.len() {
                tree[j] += w;
                j += j & j.wrapping_neg();
            }
        }
        Self {
            tree,
            total: widths.iter().sum(),
        }
    }

    fn remove(&mut self, i: usize, width: f64) {
        let mut j = i + 1;
        while j < self.tree.len() {
            self.tree[j] -= width;
            j += j & j.wrapping_neg();
        }
        self.total -= width;
    }

    /// The gap whose cumulative width first exceeds `target`, and how far into it `target` lies.
    fn find(&self, mut target: f64) -> (usize, f64) {
        let mut at = 0;
        let mut step = (self.tree.len() - 1).next_power_of_two();
        while step > 0 {
            let next = at + step;
            if next < self.tree.len() && self.tree[next] <= target {
                at = next;
                target -= self.tree[next];
            }
            step /= 2;
        }
        (at, target)
    }
}

/// The cuts of one grid in one dimension, drawn in time order.
#[derive(Debug, Clone)]
struct Stream {
    rng: TreeRng,
    time: f64,
    cut: Vec<bool>,
    cut_length: f64,
    n_cut: usize,
    direct: Option<UncutWidths>,
}

impl Stream {
    /// The next first cut of a gap: (birth time, gap, location); None when every gap is cut.
    fn next(&mut self, knots: &[f64]) -> Option<(f64, u32, f64)> {
        let n_gaps = knots.len().saturating_sub(1);
        if self.n_cut >= n_gaps {
            return None;
        }
        let range = knots[n_gaps] - knots[0];
        let width = |g: usize| knots[g + 1] - knots[g];
        if self.direct.is_none() && 2.0 * self.cut_length > range {
            let widths: Vec<f64> = (0..n_gaps)
                .map(|g| if self.cut[g] { 0.0 } else { width(g) })
                .collect();
            self.direct = Some(UncutWidths::new(&widths));
        }
        loop {
            let (gap, location) = match &self.direct {
                None => {
                    self.time += exponential(&mut self.rng, range);
                    let location = knots[0] + uniform(&mut self.rng) * range;
                    let gap = knots.partition_point(|&v| v <= location).clamp(1, n_gaps) - 1;
                    (gap, location)
                }
                Some(uncut) => {
                    // Rounding in the running sums can leave a cut gap a sliver of width:
                    // such a draw is rejected below and drawn again.
                    self.time += exponential(&mut self.rng, uncut.total.max(f64::MIN_POSITIVE));
                    let (gap, into) = uncut.find(uniform(&mut self.rng) * uncut.total);
                    let gap = gap.min(n_gaps - 1);
                    let location = (knots[gap] + into).clamp(knots[gap], knots[gap + 1]);
                    (gap, location)
                }
            };
            if !self.cut[gap] {
                self.cut[gap] = true;
                self.n_cut += 1;
                self.cut_length += width(gap);
                if let Some(uncut) = &mut self.direct {
                    uncut.remove(gap, width(gap));
                }
                return Some((self.time, gap as u32, location));
            }
        }
    }
}

/// The random cuts of M grids on a set of points (module docs).
#[derive(Debug, Clone)]
pub struct Process {
    pub knots: Knots,
    pub n_grids: usize,
    streams: Vec<Stream>,
    /// The next first cut of each stream (grid-major), None once all its gaps are cut.
    heads: Vec<Option<(f64, u32, f64)>>,
    /// Per dimension, the first cuts of all grids drawn so far, in birth order.
    events: Vec<Vec<Cut>>,
}

impl Process {
    /// M grids' cuts on the points of `knots`, from `seed`.
    pub fn new(knots: Knots, n_grids: usize, seed: u64) -> Result<Self> {
        if n_grids == 0 || n_grids >= u32::MAX as usize {
            return Err(Error::InvalidParameter {
                name: "n_estimators",
                // Grids are numbered in u32 (with u32::MAX for none).
                reason: format!("must lie in [1, {}], got {n_grids}", u32::MAX - 1),
            });
        }
        let d = knots.d;
        let mut streams = Vec::with_capacity(n_grids * d);
        let mut heads = Vec::with_capacity(n_grids * d);
        for m in 0..n_grids {
            for k in 0..d {
                let values = &knots.values[k];
                let mut stream = Stream {
                    rng: tree_rng(seed, (m * d + k) as u64),
                    time: 0.0,
                    cut: vec![false; values.len().saturating_sub(1)],
                    cut_length: 0.0,
                    n_cut: 0,
                    direct: None,
                };
                heads.push(stream.next(values));
                streams.push(stream);
            }
        }
        Ok(Self {
            knots,
            n_grids,
            streams,
            heads,
            events: vec![Vec::new(); d],
        })
    }

    /// The k-th cut (from 0) of dimension `dim` in birth order over all grids, drawn if need
    /// be; None when fewer remain (every gap of every grid cut).
    pub fn event(&mut self, dim: usize, k: usize) -> Option<Cut> {
        let d = self.knots.d;
        while self.events[dim].len() <= k {
            let next = (0..self.n_grids)
                .filter_map(|m| self.heads[m * d + dim].map(|h| (m, h)))
                .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))?;
            let (m, (tau, gap, location)) = next;
            self.events[dim].push(Cut {
                tau,
                grid: m as u32,
                gap,
                location,
            });
            self.heads[m * d + dim] = self.streams[m * d + dim].next(&self.knots.values[dim]);
        }
        Some(self.events[dim][k])
    }

    /// How many cuts of dimension `dim` are born by `lifetime`.
    pub fn count_by(&mut self, dim: usize, lifetime: f64) -> usize {
        let mut k = 0;
        while let Some(cut) = self.event(dim, k) {
            if cut.tau > lifetime {
                break;
            }
            k += 1;
        }
        k
    }

    /// The lifetime at which the first `count` cuts of `dim` are born (0 for none).
    pub fn lifetime_after(&mut self, dim: usize, count: usize) -> Option<f64> {
        if count == 0 {
            return Some(0.0);
        }
        self.event(dim, count - 1).map(|cut| cut.tau)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::uniform_points;

    #[test]
    fn knots_sort_and_index_the_points() {
        let x = [0.5, 1.0, 0.2, 1.0, 0.5, 0.0];
        let knots = Knots::new(&x, 2).expect("knots");
        assert_eq!(knots.values, vec![vec![0.2, 0.5], vec![0.0, 1.0]]);
        assert_eq!(knots.of_point, vec![1, 1, 0, 1, 1, 0]);
        assert_eq!(knots.points(0, 1, 2), &[0, 2]);
        assert_eq!(knots.points(1, 0, 1), &[2]);
        assert!(Knots::new(&[f64::NAN], 1).is_err());
        assert!(Knots::new(&[], 1).is_err());
    }

    /// Grids are numbered in u32: a count past that is refused naming the bound (the message
    /// once said "at least 1" for it), before anything is allocated.
    #[test]
    fn a_grid_count_is_refused_outside_what_u32_numbers() {
        let knots = || Knots::new(&[0.0, 1.0], 1).expect("knots");
        for n_grids in [0, u32::MAX as usize] {
            let Err(Error::InvalidParameter { name, reason }) = Process::new(knots(), n_grids, 0)
            else {
                panic!("{n_grids} grids are refused");
            };
            assert_eq!(name, "n_estimators");
            assert_eq!(
                reason,
                format!("must lie in [1, 4294967294], got {n_grids}")
            );
        }
        assert!(Process::new(knots(), 1, 0).is_ok());
    }

    /// τ_g ~ Exp(ℓ_g): ℓ_g τ_g is Exp(1) whatever the gap, so over G gaps and M grids its mean
    /// is 1 with standard error 1/√(MG), and its fraction below 1 is 1 − e⁻¹ with standard error
    /// √(p(1 − p)/(MG)); each location lies in its gap; the events come in birth order; the
    /// direct draw (after half the range is cut) keeps the law.
    #[test]
    fn first_cuts_are_exponential_in_the_gap_width_and_merged_in_order() {
        let (d, m) = (1, 400);
        let mut x = uniform_points(30, d, 1);
        x.iter_mut().for_each(|v| *v = v.powi(3)); // unequal gaps
        let knots = Knots::new(&x, d).expect("knots");
        let values = knots.values[0].clone();
        let mut process = Process::new(knots, m, 7).expect("process");
        let n_gaps = values.len() - 1;
        let mut scaled = Vec::new();
        let mut k = 0;
        let mut last = 0.0;
        while let Some(cut) = process.event(0, k) {
            let g = cut.gap as usize;
            assert!(cut.tau >= last);
            last = cut.tau;
            assert!(values[g] <= cut.location && cut.location <= values[g + 1]);
            scaled.push((values[g + 1] - values[g]) * cut.tau);
            k += 1;
        }
        assert_eq!(k, m * n_gaps); // every gap of every grid, once
        let n = scaled.len() as f64;
        let mean = scaled.iter().sum::<f64>() / n;
        assert!((mean - 1.0).abs() < 4.5 / n.sqrt(), "{mean}");
        let p = 1.0 - (-1.0f64).exp();
        let below = scaled.iter().filter(|&&s| s < 1.0).count() as f64 / n;
        assert!(
            (below - p).abs() < 4.5 * (p * (1.0 - p) / n).sqrt(),
            "{below}"
        );
        // Same seed, same cuts, whatever order the dimensions are asked for.
        let mut again = Process::new(Knots::new(&x, d).expect("knots"), m, 7).expect("process");
        assert_eq!(again.event(0, 5), process.event(0, 5));
        assert_eq!(again.count_by(0, last), m * n_gaps);
        assert_eq!(again.lifetime_after(0, 0), Some(0.0));
        assert_eq!(again.event(0, k), None);
    }
}
