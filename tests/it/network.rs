//! Network models (formats/network.md) through spoor-gag, spoor-whatif and spoor-cp:
//! links and buses, collectives, ideal networks, and models that cannot be.

use crate::common::*;
use std::path::Path;

/// `file` of testdata/whatif ordered into `dir`.
fn ordered(dir: &Path, file: &str) -> String {
    let o = dir.join(format!("{file}.o")).to_string_lossy().into_owned();
    ok_text("order", &["-q", &testdata(&format!("whatif/{file}")), "-o", &o]);
    o
}

/// `text` written to `dir/name`, its path.
fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// spoor-gag's predicted time, one processor per process, on network `net`.
fn predicted(trace: &str, net: &str) -> String {
    let p = ok_text("gag", &["-q", "--predict", "--place-by", "process", "--net", net, trace]);
    p.split(" on ").next().unwrap().trim_start_matches("predicted time: ").to_owned()
}

#[test]
fn messages_queue_for_a_saturated_link() {
    // Every figure is worked in testdata/whatif/links.txt.
    let dir = tempfile::tempdir().unwrap();
    let o = ordered(dir.path(), "links.txt");
    let base = "latency = \"1us\"\nbandwidth = \"1GB/s\"\n";
    for (extra, expect) in [
        ("", "3.000 us"),
        ("links_out = 1\n", "4.000 us"),
        ("links_in = 1\n", "3.000 us"),
        ("buses = 1\n", "4.000 us"),
        ("links_out = 1\nnode = \"processor\"\n", "3.000 us"),
    ] {
        let m = write(dir.path(), "m.toml", &format!("{base}{extra}"));
        assert_eq!(predicted(&o, &m), expect, "{extra}");
    }
    assert_eq!(predicted(&o, "ideal"), "1.000 us");
    // The same through a scenario file, in nanoseconds.
    write(dir.path(), "one.toml", &format!("{base}links_out = 1\n"));
    let sc = write(
        dir.path(),
        "sweep.toml",
        "[[network]]\nmodel = \"one.toml\"\n[[network]]\nmodel = \"ideal\"\n[[network]]\nname = \"as recorded\"\n",
    );
    let csv = ok_text("whatif", &["-q", "scenarios", &sc, &o]);
    let rows: Vec<(String, String)> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .map(|c| (c[2].to_owned(), c[6].to_owned()))
        .collect();
    let expect = [("one.toml", "4000"), ("ideal", "1000"), ("as recorded", "5000")];
    assert_eq!(rows, expect.map(|(a, b)| (a.to_owned(), b.to_owned())), "{csv}");
    // spoor-cp has no simulation: each message takes its own time, and it says so.
    let out = run("cp", &["--net", &dir.path().join("one.toml").to_string_lossy(), &o], b"", &[]);
    assert_success(&out, "spoor-cp --net");
    assert!(text(&out.stdout).starts_with("critical path: 3.000 us"), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("links and buses are not modelled here"), "{}", text(&out.stderr));
}

#[test]
fn each_pair_connects_at_its_first_message() {
    // Every figure is worked in testdata/whatif/connect.txt.
    let dir = tempfile::tempdir().unwrap();
    let o = ordered(dir.path(), "connect.txt");
    let m = write(dir.path(), "m.toml", "latency = \"1us\"\nconnect = \"10us\"\n");
    assert_eq!(predicted(&o, &m), "23.000 us");
    let plain = write(dir.path(), "plain.toml", "latency = \"1us\"\n");
    assert_eq!(predicted(&o, &plain), "3.000 us");
    // Connections are no contention: spoor-cp weighs them as the simulation does.
    let out = run("cp", &["--net", &m, &o], b"", &[]);
    assert_success(&out, "spoor-cp --net");
    assert!(text(&out.stdout).starts_with("critical path: 23.000 us"), "{}", text(&out.stdout));
    assert!(!text(&out.stderr).contains("not modelled"), "{}", text(&out.stderr));
    // The GAG written on the model (links too, so that the delays are simulated) carries
    // the delays on its arcs: its critical path is the prediction.
    let links = write(dir.path(), "links.toml", "latency = \"1us\"\nconnect = \"10us\"\nlinks_out = 1\n");
    let gag = dir.path().join("c.gag").to_string_lossy().into_owned();
    ok_text("gag", &["-q", "--place-by", "process", "--net", &links, &o, "-o", &gag]);
    assert!(ok_text("cp", &[&gag]).starts_with("critical path: 23.000 us"));
    // The ideal network connects in no time.
    assert_eq!(predicted(&o, "ideal"), "0 ns");
}

#[test]
fn collectives_take_the_model_time() {
    // Every figure is worked in testdata/whatif/collectives.txt.
    let dir = tempfile::tempdir().unwrap();
    let o = ordered(dir.path(), "collectives.txt");
    write(dir.path(), "coll.csv", "# by hand\nop,procs,bytes,ns\nallreduce,4,8,3000\n");
    for (model, expect) in [
        ("tree", "10.000 us"),
        ("linear", "13.000 us"),
        ("constant", "7.000 us"),
        ("measured", "12.000 us"),
        ("coll.csv", "9.000 us"),
    ] {
        let m = write(dir.path(), "m.toml", &format!("latency = \"1us\"\ncollectives = \"{model}\"\n"));
        assert_eq!(predicted(&o, &m), expect, "{model}");
        // Links queue messages, not collectives: the same with a link each way.
        let l = write(
            dir.path(),
            "l.toml",
            &format!("latency = \"1us\"\ncollectives = \"{model}\"\nlinks_out = 1\n"),
        );
        assert_eq!(predicted(&o, &l), expect, "{model} with links");
    }
    assert_eq!(predicted(&o, "ideal"), "4.000 us");
    // The table lacks the broadcast: a warning says the tree model stands in.
    let m = dir.path().join("m.toml").to_string_lossy().into_owned();
    let out = run("gag", &["--predict", "--place-by", "process", "--net", &m, &o], b"", &[]);
    assert!(text(&out.stderr).contains("coll.csv: no rows for bcast: they take the tree model"));
    // spoor-cp weighs the same arcs.
    assert!(ok_text("cp", &["-q", "--net", &m, &o]).starts_with("critical path: 9.000 us"));
}

#[test]
fn a_blocking_call_takes_the_overhead_of_the_model() {
    // testdata/cp/spinning.txt on an ideal network: rank1 works 6 ms, its MPI_Recv and
    // MPI_Wait take nothing (rank0's messages, sent at 4 and 5 ms, are there), then it
    // works 1 ms: 7 ms. With 100 us a blocking call, rank1's two calls add 200 us
    // (rank0's MPI_Send puts its isend at 5.1 ms, still earlier): 7.2 ms.
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("s.o").to_string_lossy().into_owned();
    ok_text("order", &["-q", &testdata("cp/spinning.txt"), "-o", &o]);
    assert_eq!(predicted(&o, "ideal"), "7.000 ms");
    let m = write(dir.path(), "m.toml", "overhead = \"100us\"\n");
    assert_eq!(predicted(&o, &m), "7.200 ms");
}

#[test]
fn models_that_cannot_be_are_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let o = ordered(dir.path(), "links.txt");
    for (model, says) in [
        ("latency = \"1us\"\nbandwith = 5\n", "line 2: unknown field `bandwith`"),
        ("bandwidth = -5\n", "line 1: bandwidth: "),
        ("latency = 1\n\nlinks_in = 0\n", "line 3: links_in = 0: expected a whole number of at least 1"),
        ("buses = 0\n", "line 1: buses = 0"),
        ("collectives = \"nope.csv\"\n", "nope.csv"),
        ("table = \"t.csv\"\nlatency = \"1us\"\n", "line 2: a model gives either `table` or `latency`"),
    ] {
        let m = write(dir.path(), "bad.toml", model);
        let out = run("gag", &["--predict", "--place-by", "process", "--net", &m, &o], b"", &[]);
        let e = text(&out.stderr);
        assert!(out.status.code() == Some(1) && e.contains("bad.toml") && e.contains(says), "{model}: {e}");
    }
    let sc = write(dir.path(), "s.toml", "[[network]]\ntable = \"t.csv\"\nmodel = \"ideal\"\n");
    let out = run("whatif", &["scenarios", &sc, &o], b"", &[]);
    let e = text(&out.stderr);
    assert!(out.status.code() == Some(1) && e.contains("a table or a model, not both"), "{e}");
}

/// Dimemas's ideal network on the EPOCH 2-process trace in $SPOOR_DATA: 11,504,370.09
/// us (the data README); spoor's, over the whole run, within 0.5 %.
#[test]
fn an_ideal_network_agrees_with_dimemas_on_a_real_run() {
    let Some(data) = data() else { return };
    let d = tempfile::tempdir().unwrap();
    let t = epoch_ordered(&data, d.path());
    let sc = write(d.path(), "ideal.toml", "[[network]]\nmodel = \"ideal\"\n");
    let csv = ok_text("whatif", &["-q", "--window", "0..100s", "scenarios", &sc, &t]);
    let predicted: f64 = csv.lines().nth(1).unwrap().split(',').nth(6).unwrap().parse().unwrap();
    let dimemas = 11_504_370_090.0;
    let err = (predicted - dimemas) / dimemas;
    assert!(err.abs() < 0.005, "{predicted} ns against Dimemas's {dimemas} ns ({:+.3} %)", err * 100.0);
}
