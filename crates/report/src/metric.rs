//! The levels of the program tree and the metrics a table can show at each.

use crate::table::Unit;

/// A level of IPS-2's program tree (logical per application, physical per machine).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    Application,
    Machine,
    Process,
    Thread,
    Procedure,
}

impl Level {
    pub const ALL: [Level; 5] =
        [Level::Application, Level::Machine, Level::Process, Level::Thread, Level::Procedure];

    pub fn name(self) -> &'static str {
        match self {
            Level::Application => "application",
            Level::Machine => "machine",
            Level::Process => "process",
            Level::Thread => "thread",
            Level::Procedure => "procedure",
        }
    }

    /// Accepts the names above and the short forms `app`, `proc` is not one (it is ambiguous).
    pub fn parse(s: &str) -> Result<Level, String> {
        let l = match s {
            "application" | "app" => Level::Application,
            "machine" => Level::Machine,
            "process" => Level::Process,
            "thread" | "location" => Level::Thread,
            "procedure" | "function" => Level::Procedure,
            _ => {
                let names: Vec<&str> = Level::ALL.iter().map(|l| l.name()).collect();
                return Err(format!("unknown level `{s}`; the levels are: {}", names.join(", ")));
            }
        };
        Ok(l)
    }

    /// The metrics a table at this level has, in column order.
    pub fn metrics(self) -> &'static [Metric] {
        use Metric::*;
        match self {
            Level::Procedure => &[
                Calls, Elapsed, SelfTime, Cpu, CpuSelf, Busy, Wait, WaitRecv, WaitColl, WaitLock, MsgsSent,
                BytesSent, MsgsRecv, BytesRecv, Colls, Npt,
            ],
            _ => &[
                Elapsed, Cpu, Busy, Wait, WaitRecv, WaitColl, WaitLock, MsgsSent, BytesSent, MsgsRecv,
                BytesRecv, Colls, Calls, Npt,
            ],
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    Elapsed,
    SelfTime,
    Cpu,
    CpuSelf,
    Busy,
    Wait,
    WaitRecv,
    WaitColl,
    WaitLock,
    MsgsSent,
    BytesSent,
    MsgsRecv,
    BytesRecv,
    Colls,
    Calls,
    Npt,
}

impl Metric {
    pub const ALL: [Metric; 16] = [
        Metric::Elapsed,
        Metric::SelfTime,
        Metric::Cpu,
        Metric::CpuSelf,
        Metric::Busy,
        Metric::Wait,
        Metric::WaitRecv,
        Metric::WaitColl,
        Metric::WaitLock,
        Metric::MsgsSent,
        Metric::BytesSent,
        Metric::MsgsRecv,
        Metric::BytesRecv,
        Metric::Colls,
        Metric::Calls,
        Metric::Npt,
    ];

    /// Metrics a time histogram can show.
    pub const HISTOGRAM: [Metric; 13] = [
        Metric::Busy,
        Metric::Wait,
        Metric::WaitRecv,
        Metric::WaitColl,
        Metric::WaitLock,
        Metric::Cpu,
        Metric::Npt,
        Metric::MsgsSent,
        Metric::BytesSent,
        Metric::MsgsRecv,
        Metric::BytesRecv,
        Metric::Colls,
        Metric::Calls,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Elapsed => "elapsed",
            Metric::SelfTime => "self",
            Metric::Cpu => "cpu",
            Metric::CpuSelf => "cpu_self",
            Metric::Busy => "busy",
            Metric::Wait => "wait",
            Metric::WaitRecv => "wait_recv",
            Metric::WaitColl => "wait_coll",
            Metric::WaitLock => "wait_lock",
            Metric::MsgsSent => "msgs_sent",
            Metric::BytesSent => "bytes_sent",
            Metric::MsgsRecv => "msgs_recv",
            Metric::BytesRecv => "bytes_recv",
            Metric::Colls => "colls",
            Metric::Calls => "calls",
            Metric::Npt => "npt",
        }
    }

    pub fn unit(self) -> Unit {
        match self {
            Metric::MsgsSent | Metric::MsgsRecv | Metric::Colls | Metric::Calls => Unit::Count,
            Metric::BytesSent | Metric::BytesRecv => Unit::Bytes,
            _ => Unit::Ns,
        }
    }

    /// A metric of `level`, or an error listing the metrics that level has.
    pub fn parse(s: &str, level: Level) -> Result<Metric, String> {
        match level.metrics().iter().find(|m| m.name() == s) {
            Some(m) => Ok(*m),
            None => {
                let names: Vec<&str> = level.metrics().iter().map(|m| m.name()).collect();
                Err(format!(
                    "unknown metric `{s}` at the {} level; its metrics are: {}",
                    level.name(),
                    names.join(", ")
                ))
            }
        }
    }

    /// A metric a time histogram can show, or an error listing them.
    pub fn parse_histogram(s: &str) -> Result<Metric, String> {
        match Metric::HISTOGRAM.iter().find(|m| m.name() == s) {
            Some(m) => Ok(*m),
            None => {
                let names: Vec<&str> = Metric::HISTOGRAM.iter().map(|m| m.name()).collect();
                Err(format!(
                    "unknown histogram metric `{s}`; the metrics over time are: {}",
                    names.join(", ")
                ))
            }
        }
    }
}
