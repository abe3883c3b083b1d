//! The element types the forests read points in: float64, and float32 read as float64 row
//! block by row block, so a float32 matrix is never copied whole to float64 (the trees'
//! own store of training points is float64).

/// A point coordinate: f64 or f32.
pub trait Coordinate: Copy + Into<f64> + Send + Sync + 'static {
    /// `rows` as float64 without a copy, when they already are.
    fn as_f64(rows: &[Self]) -> Option<&[f64]>;
}

impl Coordinate for f64 {
    #[inline]
    fn as_f64(rows: &[f64]) -> Option<&[f64]> {
        Some(rows)
    }
}

impl Coordinate for f32 {
    #[inline]
    fn as_f64(_: &[f32]) -> Option<&[f64]> {
        None
    }
}
