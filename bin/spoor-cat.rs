//! spoor-cat: print a trace as text or JSON lines, count its events, or convert it.

use anyhow::Context;
use clap::Parser;
use spoor_cli::Output;
use spoor_format::{text, ReadOptions, TraceReader, TraceWriter, WriterOptions};
use spoor_model::{Event, Kind};
use std::io::Write;

#[path = "args/cat.rs"]
mod args;
use args::*;

fn main() {
    spoor_cli::run_stage("spoor-cat", false, || {
        let args = Args::parse();
        let mut reader = TraceReader::open(&args.input, ReadOptions { salvage: args.salvage })?;
        let mut out = Output::create(args.output.as_deref())?;
        if args.count {
            let counts = reader.par_fold_blocks(|_| 0u64, |n, _| *n += 1)?;
            writeln!(out, "{}", counts.iter().sum::<u64>())?;
        } else {
            match args.format {
                Format::Text => print_text(&mut reader, &mut out)?,
                Format::Json => print_json(&mut reader, &mut out)?,
                Format::Binary => write_binary(reader.name().to_owned(), &mut reader, &mut out)?,
            }
        }
        if args.salvage {
            let report = reader.salvage_report();
            if report.is_clean() {
                eprintln!("spoor-cat: {}: nothing lost", reader.name());
            } else {
                eprintln!("spoor-cat: {}: salvaged; {report}", reader.name());
            }
        }
        out.commit()
    })
}

fn print_text(reader: &mut TraceReader, out: &mut Output) -> anyhow::Result<()> {
    text::write_header(out)?;
    // Definitions can grow as the input is read (text form, late definitions chunks):
    // write what is new before the events that may use it.
    let mut written = text::Written::default();
    while let Some(block) = reader.next_block()? {
        text::write_new_definitions(out, reader.defs(), &mut written)?;
        for ev in &block.events {
            text::write_event(out, reader.defs(), ev)?;
        }
    }
    text::write_new_definitions(out, reader.defs(), &mut written)?;
    Ok(())
}

fn print_json(reader: &mut TraceReader, out: &mut Output) -> anyhow::Result<()> {
    let mut printed_defs = false;
    while let Some(block) = reader.next_block()? {
        if !printed_defs {
            writeln!(out, "{}", serde_json::json!({ "definitions": reader.defs() }))?;
            printed_defs = true;
        }
        for ev in &block.events {
            writeln!(out, "{}", event_json(reader, ev))?;
        }
    }
    if !printed_defs {
        writeln!(out, "{}", serde_json::json!({ "definitions": reader.defs() }))?;
    }
    Ok(())
}

/// An event as JSON, with the names of procedures and phases resolved beside their ids.
fn event_json(reader: &TraceReader, ev: &Event) -> serde_json::Value {
    let mut v = serde_json::to_value(ev).expect("events serialize");
    let name = match ev.kind {
        Kind::Enter { proc: id } | Kind::Leave { proc: id } => Some(id),
        Kind::PhaseBegin { name } | Kind::PhaseEnd { name } => Some(name),
        _ => None,
    };
    if let (Some(id), Some(obj)) = (name, v.as_object_mut()) {
        obj.insert("name".into(), reader.defs().strings.name(id).into_owned().into());
    }
    v
}

fn write_binary(name: String, reader: &mut TraceReader, out: &mut Output) -> anyhow::Result<()> {
    // The text form's definitions are complete only at its end, so read it whole first.
    let mut blocks = Vec::new();
    while let Some(b) = reader.next_block()? {
        blocks.push(b);
    }
    let flags = reader.header().map_or(0, |h| h.flags);
    let global_order = flags & spoor_format::binary::flags::GLOBAL_ORDER != 0;
    let opts = WriterOptions { flags, global_order, ..Default::default() };
    let mut w = TraceWriter::new(out, reader.defs(), opts).with_context(|| format!("writing {name}"))?;
    for ev in blocks.iter().flat_map(|b| &b.events) {
        w.write(ev)?;
    }
    w.finish()?;
    Ok(())
}
