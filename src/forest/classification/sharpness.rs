//! The forest's class probabilities sharpened by τ: `p_k ∝ p̄_k^τ`, p̄ the average of the trees'
//! distributions (temperature scaling of the average; τ = 1 leaves it as it is). The average
//! is under-confident where the trees disagree (they are draws from the Mondrian prior, not
//! its posterior); τ is chosen on held-out rows by the Python layer.

/// Raises every row of `values` (rows of `k` probabilities, row-major) to the power `tau` and
/// normalises it, in log space (a zero stays zero). Rows are left as they are when τ = 1.
pub fn sharpen_rows(values: &mut [f64], k: usize, tau: f64) {
    if tau == 1.0 || k == 0 {
        return;
    }
    for row in values.chunks_exact_mut(k) {
        let mut top = f64::NEG_INFINITY;
        for v in row.iter_mut() {
            *v = tau * v.ln();
            top = top.max(*v);
        }
        let mut total = 0.0;
        for v in row.iter_mut() {
            *v = (*v - top).exp();
            total += *v;
        }
        row.iter_mut().for_each(|v| *v /= total);
    }
}

/// Whether `tau` is a valid sharpness (finite, > 0).
pub fn is_valid(tau: f64) -> bool {
    tau.is_finite() && tau > 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_their_normalised_power() {
        let mut rows = vec![0.2, 0.3, 0.5, 0.0, 0.25, 0.75];
        sharpen_rows(&mut rows, 3, 2.0);
        let direct = [
            0.04 / 0.38,
            0.09 / 0.38,
            0.25 / 0.38,
            0.0,
            0.0625 / 0.625,
            0.5625 / 0.625,
        ];
        for (a, b) in rows.iter().zip(direct) {
            assert!((a - b).abs() < 1e-15, "{a} vs {b}");
        }
        let mut same = vec![0.2, 0.8];
        sharpen_rows(&mut same, 2, 1.0);
        assert_eq!(same, vec![0.2, 0.8]);
        assert!(!is_valid(0.0) && !is_valid(f64::INFINITY) && is_valid(0.5));
    }
}
