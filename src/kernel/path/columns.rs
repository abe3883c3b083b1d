//! The feature columns active on the lifetime path, in the solver's order: each column's
//! feature id (tree node), its entry of ΦᵀVy and the total weight of its rows (their number
//! without row weights).

use crate::kernel::features::NO_COLUMN;

/// What removing the split column left behind.
pub struct Removed {
    pub r: f64,
    pub mass: f64,
}

/// The active feature columns in solver order, and per column ΦᵀVy and Σ v_i over its rows.
#[derive(Debug, Default, Clone)]
pub struct Columns {
    pub fid_at: Vec<u32>,
    pub pos_of: Vec<u32>,
    pub r: Vec<f64>,
    pub mass: Vec<f64>,
}

impl Columns {
    fn take(&mut self, p: usize) -> Removed {
        self.pos_of[self.fid_at[p] as usize] = NO_COLUMN;
        Removed {
            r: self.r[p],
            mass: self.mass[p],
        }
    }

    /// Removes position `p`, shifting the later ones down.
    pub fn remove_keep_order(&mut self, p: usize) -> Removed {
        let removed = self.take(p);
        self.fid_at.remove(p);
        self.r.remove(p);
        self.mass.remove(p);
        for (k, &fid) in self.fid_at.iter().enumerate().skip(p) {
            self.pos_of[fid as usize] = k as u32;
        }
        removed
    }

    /// Removes position `p`, moving the last column into it.
    pub fn remove_swap(&mut self, p: usize) -> Removed {
        let removed = self.take(p);
        self.fid_at.swap_remove(p);
        self.r.swap_remove(p);
        self.mass.swap_remove(p);
        if let Some(&fid) = self.fid_at.get(p) {
            self.pos_of[fid as usize] = p as u32;
        }
        removed
    }

    /// Appends a column.
    pub fn push(&mut self, fid: u32, r: f64, mass: f64) {
        self.pos_of[fid as usize] = self.fid_at.len() as u32;
        self.fid_at.push(fid);
        self.r.push(r);
        self.mass.push(mass);
    }
}
