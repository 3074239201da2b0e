//! Criterion benchmarks: every kind and size of nonce, one call at a time and in
//! batches, beside the OS random source and the uuid crate in the same run.
//! `cargo bench -p nonceforge` (the cross-kind table is `nonceforge bench`).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nonceforge::{Layout, MachineId, NonceGenerator};
use std::hint::black_box;

fn single(c: &mut Criterion) {
    let g = NonceGenerator::builder(MachineId::new(1).unwrap())
        .key(&[7; 32])
        .build()
        .unwrap();
    let mut local = g.local();
    let mut grp = c.benchmark_group("single");
    grp.throughput(Throughput::Elements(1));
    grp.bench_function("os_random/128", |b| {
        b.iter(|| {
            let mut x = [0u8; 16];
            getrandom::fill(&mut x).unwrap();
            black_box(x)
        })
    });
    grp.bench_function("uuid_v4", |b| b.iter(|| black_box(uuid::Uuid::new_v4())));
    grp.bench_function("uuid_v7", |b| b.iter(|| black_box(uuid::Uuid::now_v7())));
    grp.bench_function("counter/96 local", |b| {
        b.iter(|| black_box(local.counter_96().unwrap()))
    });
    grp.bench_function("counter/128 local", |b| {
        b.iter(|| black_box(local.counter_128().unwrap()))
    });
    grp.bench_function("counter/128 shared", |b| {
        b.iter(|| black_box(g.counter_128().unwrap()))
    });
    grp.bench_function("sortable/96", |b| {
        b.iter(|| black_box(g.sortable_96().unwrap()))
    });
    grp.bench_function("sortable/128", |b| {
        b.iter(|| black_box(g.sortable_128().unwrap()))
    });
    grp.bench_function("encrypted/96 speck", |b| {
        b.iter(|| black_box(local.encrypted_96().unwrap()))
    });
    grp.bench_function("encrypted/128 aes", |b| {
        b.iter(|| black_box(local.encrypted_128().unwrap()))
    });
    grp.finish();
}

fn batch(c: &mut Criterion) {
    let g = NonceGenerator::builder(MachineId::new(1).unwrap())
        .key(&[7; 32])
        .build()
        .unwrap();
    let mut grp = c.benchmark_group("batch");
    let mut b16 = vec![[0u8; 16]; 65536]; // 1 MiB
    let mut b12 = vec![[0u8; 12]; 87381];
    grp.throughput(Throughput::Elements(b16.len() as u64));
    grp.bench_function("counter_batch/128", |b| {
        b.iter(|| g.fill_counter_128(black_box(&mut b16)).unwrap())
    });
    grp.bench_function("encrypted_batch/128", |b| {
        b.iter(|| g.fill_encrypted_128(black_box(&mut b16)).unwrap())
    });
    grp.throughput(Throughput::Elements(b12.len() as u64));
    grp.bench_function("counter_batch/96", |b| {
        b.iter(|| g.fill_counter_96(black_box(&mut b12)).unwrap())
    });
    grp.finish();
}

/// The two layouts side by side (issue 49: the wide one costs nothing per
/// value): the same calls on a generator of each, machine id 1.
fn layouts(c: &mut Criterion) {
    let mut grp = c.benchmark_group("layout");
    grp.throughput(Throughput::Elements(1));
    for layout in Layout::ALL {
        let g = NonceGenerator::builder(MachineId::new(1).unwrap())
            .layout(layout)
            .build()
            .unwrap();
        let mut local = g.local();
        let mut b12 = vec![[0u8; 12]; 4096];
        grp.bench_function(format!("{layout}/counter/96 local"), |b| {
            b.iter(|| black_box(local.counter_96().unwrap()))
        });
        grp.bench_function(format!("{layout}/counter/128 local"), |b| {
            b.iter(|| black_box(local.counter_128().unwrap()))
        });
        grp.bench_function(format!("{layout}/counter/96 shared"), |b| {
            b.iter(|| black_box(g.counter_96().unwrap()))
        });
        grp.bench_function(format!("{layout}/sortable/96"), |b| {
            b.iter(|| black_box(g.sortable_96().unwrap()))
        });
        grp.bench_function(format!("{layout}/sortable/128 local"), |b| {
            b.iter(|| black_box(local.sortable_128().unwrap()))
        });
        grp.bench_function(format!("{layout}/counter_batch/96 x4096"), |b| {
            b.iter(|| g.fill_counter_96(black_box(&mut b12)).unwrap())
        });
    }
    grp.finish();
}

criterion_group!(benches, single, batch, layouts);
criterion_main!(benches);
