//! criterion benches of batch tree sampling at N ∈ {10⁴, 10⁵, 10⁶} (D = 10, uniform points,
//! λ = ∞, min_samples_split = 10) and of the conditional extension by one chunk.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mondrian_learn::mondrian::extend::{extend_tree, ExtendScratch};
use mondrian_learn::mondrian::policy::PureMondrian;
use mondrian_learn::mondrian::sample::{sample_tree, Growth, SampleScratch};
use mondrian_learn::mondrian::TreeParams;
use mondrian_learn::rng::{tree_rng, uniform};
use std::hint::black_box;

const D: usize = 10;

fn uniform_points(n: usize) -> Vec<f64> {
    let mut rng = tree_rng(12345, 0);
    (0..n * D).map(|_| uniform(&mut rng)).collect()
}

fn bench_sampling(c: &mut Criterion) {
    let params = TreeParams::new(f64::INFINITY, 10);
    let mut group = c.benchmark_group("sample_tree");
    group.sample_size(10);
    for n in [10_000usize, 100_000, 1_000_000] {
        let x = uniform_points(n);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &x, |b, x| {
            let on = Growth {
                x,
                params: &params,
                policy: &PureMondrian,
            };
            let mut scratch = SampleScratch::default();
            b.iter(|| black_box(sample_tree(&on, D, tree_rng(1, 0), &mut scratch)))
        });
    }
    group.finish();
}

fn bench_extension(c: &mut Criterion) {
    let params = TreeParams::new(f64::INFINITY, 10);
    let n = 100_000;
    let x = uniform_points(2 * n);
    let head = &x[..n * D];
    let first = Growth {
        x: &head,
        params: &params,
        policy: &PureMondrian,
    };
    let base = sample_tree(&first, D, tree_rng(1, 0), &mut SampleScratch::default());
    let all = Growth { x: &x, ..first };
    let new_rows: Vec<u32> = (n as u32..2 * n as u32).collect();
    let mut group = c.benchmark_group("extend_tree");
    group.sample_size(10);
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("100k_into_100k", |b| {
        b.iter(|| {
            let mut tree = base.clone();
            let mut changed = Vec::new();
            extend_tree(
                &mut tree,
                &all,
                &new_rows,
                &mut ExtendScratch::default(),
                &mut changed,
            );
            black_box((tree, changed))
        })
    });
    group.finish();
}

criterion_group!(benches, bench_sampling, bench_extension);
criterion_main!(benches);
