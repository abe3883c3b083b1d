//! The hierarchical normalized stable process prior over a tree's class distributions
//! (Lakshminarayanan, Roy & Teh, NIPS 2014, §4 and supplement): `G_root ~ NSP(d_root,
//! uniform)`, `G_j | G_parent ~ NSP(d_j, G_parent)` with discount `d_j = exp(−γ Δ_j)`, Δ_j the
//! time node j lived (τ_j − τ_parent; λ − τ_parent for a leaf). Its posterior mean is computed by
//! interpolated Kneser–Ney smoothing, as the authors' code does: a leaf's "customers" are its
//! class counts (Σ of the row weights per class: [`crate::forest::weights`]), an internal
//! node's are the tables its two children send up, at most one per class
//! (`c_j = min(n_left, 1) + min(n_right, 1)`), and top-down
//! `p_j = (c_j − d_j t_j + d_j T_j p_parent) / C_j`, `t_j = min(c_j, 1)`, `T_j = Σ t_j`,
//! `C_j = Σ c_j`.

use crate::mondrian::MondrianTree;

/// Writes node j's smoothing counts c_j into `out` (`k` values) from the raw counts.
pub fn ikn_counts(tree: &MondrianTree, counts: &[f64], k: usize, j: u32, out: &mut [f64]) {
    let cut = &tree.nodes[j as usize];
    if tree.is_leaf(j) {
        out.copy_from_slice(&counts[j as usize * k..(j as usize + 1) * k]);
    } else {
        let (l, r) = (cut.left as usize, cut.right as usize);
        let (left, right) = (&counts[l * k..(l + 1) * k], &counts[r * k..(r + 1) * k]);
        for (o, (&a, &b)) in out.iter_mut().zip(left.iter().zip(right)) {
            *o = a.min(1.0) + b.min(1.0);
        }
    }
}

/// The posterior mean `(c − d t + d T base) / C` of a normalized stable process with discount
/// `discount` and base measure `base`, from smoothing counts `c` (C = Σ c > 0), into `out`,
/// with Kneser–Ney's one table per class (`t = min(c, 1)`).
pub fn posterior_mean(c: &[f64], discount: f64, base: &[f64], out: &mut [f64]) {
    mean_with_tables(c, |ck| ck.min(1.0), discount, base, out);
}

/// The same posterior mean with the expected number of tables of `c` customers in a
/// restaurant with discount `d` and concentration 0, `E[t | c] = Γ(c + d) / (Γ(1 + d) Γ(c))`
/// (Pitman 2006, eq. 3.13 at θ = 0): 1 at d = 0 (Kneser–Ney's count) and c at d = 1, where the
/// process is its base and so is the mean. Used for blocks born where a test point branches
/// off, whose expected discount tends to 1 far from the data: with Kneser–Ney's count their
/// mean would keep `(c − t) / C` of the counts there, however far the point.
pub fn branch_off_mean(c: &[f64], discount: f64, base: &[f64], out: &mut [f64]) {
    mean_with_tables(c, |ck| expected_tables(ck, discount), discount, base, out);
}

/// `E[t | c] = Γ(c + d) / (Γ(1 + d) Γ(c))` for a whole number of customers c ≥ 0: the product
/// `Π_{i<c} (1 + d/i)` while it is short, log-gamma beyond.
fn expected_tables(c: f64, d: f64) -> f64 {
    if c <= 1.0 {
        return c.max(0.0);
    }
    if c <= 32.0 {
        let mut t = 1.0;
        let mut i = 1.0;
        while i < c {
            t *= 1.0 + d / i;
            i += 1.0;
        }
        return t;
    }
    let t = (libm::lgamma(c + d) - libm::lgamma(1.0 + d) - libm::lgamma(c)).exp();
    t.clamp(1.0, c)
}

/// `(c − d t + d T base) / C` with `t_k = tables(c_k)`.
fn mean_with_tables(
    c: &[f64],
    tables: impl Fn(f64) -> f64,
    discount: f64,
    base: &[f64],
    out: &mut [f64],
) {
    let (mut customers, mut total) = (0.0, 0.0);
    for (o, &ck) in out.iter_mut().zip(c) {
        *o = tables(ck);
        customers += ck;
        total += *o;
    }
    for ((o, &ck), &bk) in out.iter_mut().zip(c).zip(base) {
        *o = (ck - discount * *o + discount * total * bk) / customers;
    }
}

/// Every node's posterior mean (n_nodes × K, row-major), top-down from the uniform base at the
/// root; discounts `exp(−γ Δ_j)` floored at `min_discount` (`(γ, min_discount)` = `rates`).
pub fn node_means(tree: &MondrianTree, counts: &[f64], k: usize, rates: (f64, f64)) -> Vec<f64> {
    let (rate, floor) = rates;
    let mut means = vec![0.0; tree.n_nodes() * k];
    let uniform = vec![1.0 / k as f64; k];
    let mut c = vec![0.0; k];
    let mut base = vec![0.0; k];
    for j in tree.preorder() {
        ikn_counts(tree, counts, k, j, &mut c);
        let parent = tree.parent[j as usize];
        if parent == crate::mondrian::NONE {
            base.copy_from_slice(&uniform);
        } else {
            base.copy_from_slice(&means[parent as usize * k..(parent as usize + 1) * k]);
        }
        let d = discount(rate, tree.max_split_cost(j)).max(floor);
        posterior_mean(
            &c,
            d,
            &base,
            &mut means[j as usize * k..(j as usize + 1) * k],
        );
    }
    means
}

/// The posterior means of the nodes of `path` (a root-to-node path), in its order, written to
/// `out` (len(path) × K): the operations of [`node_means`] for those nodes alone, O(depth · K).
/// `uniform` is the root's base (K values 1/K); `c` a buffer of K values.
#[allow(clippy::too_many_arguments)]
pub fn path_means(
    tree: &MondrianTree,
    counts: &[f64],
    k: usize,
    rates: (f64, f64),
    path: &[u32],
    uniform: &[f64],
    c: &mut [f64],
    out: &mut Vec<f64>,
) {
    let (rate, floor) = rates;
    out.clear();
    out.resize(path.len() * k, 0.0);
    for (i, &j) in path.iter().enumerate() {
        ikn_counts(tree, counts, k, j, c);
        let (done, rest) = out.split_at_mut(i * k);
        let base = if i == 0 {
            uniform
        } else {
            &done[(i - 1) * k..]
        };
        let d = discount(rate, tree.max_split_cost(j)).max(floor);
        posterior_mean(c, d, base, &mut rest[..k]);
    }
}

/// d = exp(−γ Δ) for a node that lived Δ (0 when Δ = ∞: the node's counts speak alone).
#[inline]
pub fn discount(rate: f64, lived: f64) -> f64 {
    (-rate * lived).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand computation: counts (3, 1, 0), discount 0.5, base (0.2, 0.3, 0.5):
    /// t = (1, 1, 0), T = 2, C = 4 → p = ((3 − 0.5 + 0.2), (1 − 0.5 + 0.3), (0 + 0.5)) / 4.
    #[test]
    fn posterior_mean_matches_the_formula() {
        let mut p = [0.0; 3];
        posterior_mean(&[3.0, 1.0, 0.0], 0.5, &[0.2, 0.3, 0.5], &mut p);
        let want = [2.7 / 4.0, 0.8 / 4.0, 0.5 / 4.0];
        for (a, b) in p.iter().zip(&want) {
            assert!((a - b).abs() < 1e-15);
        }
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        // No discount: the empirical distribution; full discount on one table: the base.
        posterior_mean(&[3.0, 1.0, 0.0], 0.0, &[0.2, 0.3, 0.5], &mut p);
        assert_eq!(p, [0.75, 0.25, 0.0]);
        posterior_mean(&[0.0, 1.0, 0.0], 1.0, &[0.2, 0.3, 0.5], &mut p);
        assert_eq!(p, [0.2, 0.3, 0.5]);
        assert_eq!(discount(3.0, f64::INFINITY), 0.0);
    }

    /// Expected tables: Γ(2 + d) / (Γ(1 + d) Γ(2)) = 1 + d for two customers, and
    /// Γ(3 + d) / (Γ(1 + d) Γ(3)) = (2 + d)(1 + d) / 2 for three; at d → 1 the mean is the base.
    #[test]
    fn branch_off_mean_uses_the_expected_tables() {
        let (c, d, base) = ([2.0, 3.0, 1.0, 0.0], 0.4, [0.1, 0.2, 0.3, 0.4]);
        let t = [1.0 + d, (2.0 + d) * (1.0 + d) / 2.0, 1.0, 0.0];
        let total: f64 = t.iter().sum();
        let mut p = [0.0; 4];
        branch_off_mean(&c, d, &base, &mut p);
        for k in 0..4 {
            let want = (c[k] - d * t[k] + d * total * base[k]) / 6.0;
            assert!((p[k] - want).abs() < 1e-14, "{k}: {} vs {want}", p[k]);
        }
        branch_off_mean(&c, 1.0 - 1e-12, &base, &mut p);
        for (a, b) in p.iter().zip(&base) {
            assert!((a - b).abs() < 1e-9);
        }
        // At d = 0 both rules are the empirical distribution.
        let mut q = [0.0; 4];
        branch_off_mean(&c, 0.0, &base, &mut p);
        posterior_mean(&c, 0.0, &base, &mut q);
        assert_eq!(p, q);
    }
}
