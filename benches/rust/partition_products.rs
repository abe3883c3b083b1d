//! criterion benches of the partition kernel's products at N = 10⁶, m = 100 (random labels,
//! 1,000 clusters per partition), single thread and two threads, next to one parallel read of
//! the labels (the bandwidth yardstick).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use mondrian_learn::parallel::pool;
use mondrian_learn::partition::kernel::PartitionKernel;
use mondrian_learn::rng::{tree_rng, uniform};
use std::hint::black_box;

const N: usize = 1_000_000;
const M: usize = 100;
const CLUSTERS: f64 = 1000.0;

fn kernel() -> PartitionKernel {
    let mut rng = tree_rng(7, 0);
    let labels: Vec<u32> = (0..N * M)
        .map(|_| (uniform(&mut rng) * CLUSTERS) as u32)
        .collect();
    PartitionKernel::from_labels(labels, M).expect("valid labels")
}

fn bench_products(c: &mut Criterion) {
    let kernel = kernel();
    let mut group = c.benchmark_group("partition_kernel_1e6x100");
    group.sample_size(10);
    for threads in [1usize, 2] {
        let p = pool(threads).expect("pool");
        group.bench_function(BenchmarkId::new("stream_labels", threads), |b| {
            b.iter(|| black_box(kernel.stream_labels(&p)))
        });
        for k in [1usize, 8] {
            let v = vec![1.0; N * k];
            let mut out = vec![0.0; N * k];
            group.bench_function(BenchmarkId::new(format!("matmul_k{k}"), threads), |b| {
                b.iter(|| kernel.matmul(&v, k, &mut out, &p).expect("shapes"))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_products);
criterion_main!(benches);
