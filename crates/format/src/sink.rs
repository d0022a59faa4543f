//! Where events go, one at a time: the one trait through which a producer of events
//! (spoor-synth's workloads, a test, a converter) hands them on, whatever keeps them: a
//! vector, a trace writer, a counter or a closure.

use crate::TraceWriter;
use spoor_model::Event;
use std::io::{self, Write};

/// Takes the events a producer makes, in the order it makes them; an error stops it.
pub trait EventSink {
    /// Takes one event.
    fn event(&mut self, ev: Event) -> io::Result<()>;
}

impl EventSink for Vec<Event> {
    fn event(&mut self, ev: Event) -> io::Result<()> {
        self.push(ev);
        Ok(())
    }
}

impl<S: EventSink + ?Sized> EventSink for &mut S {
    fn event(&mut self, ev: Event) -> io::Result<()> {
        (**self).event(ev)
    }
}

impl<W: Write> EventSink for TraceWriter<W> {
    fn event(&mut self, ev: Event) -> io::Result<()> {
        self.write(&ev)
    }
}

/// A sink that calls a closure for every event.
pub struct FnSink<F>(pub F);

impl<F: FnMut(Event) -> io::Result<()>> EventSink for FnSink<F> {
    fn event(&mut self, ev: Event) -> io::Result<()> {
        (self.0)(ev)
    }
}

/// A sink that only counts events (for benchmarks of a producer itself).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count(pub u64);

impl EventSink for Count {
    fn event(&mut self, _: Event) -> io::Result<()> {
        self.0 += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ReadOptions, TraceReader};

    fn late_sender() -> (spoor_model::Definitions, Vec<Event>) {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/late-sender.txt");
        TraceReader::open(path, ReadOptions::default()).unwrap().read_all().unwrap()
    }

    #[test]
    fn every_sink_takes_what_it_is_given_in_order() {
        let (defs, events) = late_sender();
        let (mut v, mut c, mut seen) = (Vec::new(), Count::default(), Vec::new());
        let mut f = FnSink(|e: Event| {
            seen.push(e.wall);
            Ok(())
        });
        let mut w = TraceWriter::new(Vec::new(), &defs, Default::default()).unwrap();
        for e in &events {
            <&mut Vec<Event> as EventSink>::event(&mut &mut v, e.clone()).unwrap();
            c.event(e.clone()).unwrap();
            f.event(e.clone()).unwrap();
            w.event(e.clone()).unwrap();
        }
        assert_eq!(v, events);
        assert_eq!(c, Count(events.len() as u64));
        assert_eq!(seen, events.iter().map(|e| e.wall).collect::<Vec<_>>());
        let bytes = w.finish().unwrap();
        let (_, mut back) =
            TraceReader::from_bytes("sink", bytes, ReadOptions::default()).unwrap().read_all().unwrap();
        // The writer keeps each location's events in their order, in blocks per location.
        let mut want = events.clone();
        want.sort_by_key(|e| e.loc);
        back.sort_by_key(|e| e.loc);
        assert_eq!(back, want);
    }
}
