//! Criterion benchmarks of the binary format: encoding and decoding a 64-process stencil.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use spoor_format::{ReadOptions, TraceReader, TraceWriter, WriterOptions};
use spoor_synth::{definitions, generate, Spec, Workload};

fn stencil(events: u64) -> (spoor_model::Definitions, Vec<spoor_model::Event>) {
    let mut spec = Spec::new(Workload::Stencil);
    spec.procs = 64;
    spec.steps = spec.steps_for_events(events);
    let mut ev = Vec::new();
    generate(&spec, &mut ev).expect("in memory");
    (definitions(&spec), ev)
}

fn encode(defs: &spoor_model::Definitions, events: &[spoor_model::Event]) -> Vec<u8> {
    let mut w = TraceWriter::new(Vec::new(), defs, WriterOptions::default()).expect("in memory");
    for e in events {
        w.write(e).expect("in memory");
    }
    w.finish().expect("in memory")
}

fn bench(c: &mut Criterion) {
    let (defs, events) = stencil(1_000_000);
    let bytes = encode(&defs, &events);
    let mut g = c.benchmark_group("stencil-64");
    g.throughput(Throughput::Elements(events.len() as u64));
    g.sample_size(10);
    g.bench_function("encode", |b| b.iter(|| encode(&defs, &events)));
    g.bench_function("decode-parallel", |b| {
        b.iter(|| {
            let mut r =
                TraceReader::from_bytes("bench", bytes.clone(), ReadOptions::default()).expect("valid");
            r.par_map_blocks(|_, blk| blk.events.len()).expect("valid").iter().sum::<usize>()
        })
    });
    g.bench_function("decode-stream", |b| {
        b.iter(|| {
            let input = Box::new(std::io::Cursor::new(bytes.clone()));
            let r = TraceReader::from_reader("bench", input, ReadOptions::default()).expect("valid");
            r.events().count()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
