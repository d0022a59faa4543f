//! A client/server over TCP on loopback, recorded with spoor-record's Rust API.
//!
//! `tcp_client_server -o DIR [--clients N] [--requests R]` starts a server (this process,
//! rank 0) and N client processes (this program again, ranks 1..N). Each client says
//! hello, then sends R requests of 64 * rank bytes and waits for each reply (16 bytes);
//! the server answers them in turn, inside the procedure `serve`, holding a lock on its
//! statistics while it counts. Every process writes its own trace into DIR;
//! `spoor-merge DIR/*` puts them together.

use spoor_record::{Config, Recorder};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;

const TAG_HELLO: u32 = 0;
const TAG_REQUEST: u32 = 1;
const TAG_REPLY: u32 = 2;
const APP: &str = "tcpdemo";

struct Args {
    dir: String,
    clients: u32,
    requests: u32,
    client: Option<(u32, u16)>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args { dir: String::new(), clients: 3, requests: 5, client: None };
    let mut it = std::env::args().skip(1);
    let mut port = None;
    let mut rank = None;
    while let Some(k) = it.next() {
        let mut v = || it.next().ok_or(format!("{k} needs a value"));
        match k.as_str() {
            "-o" => a.dir = v()?,
            "--clients" => a.clients = v()?.parse().map_err(|e| format!("--clients: {e}"))?,
            "--requests" => a.requests = v()?.parse().map_err(|e| format!("--requests: {e}"))?,
            "--client" => rank = Some(v()?.parse().map_err(|e| format!("--client: {e}"))?),
            "--port" => port = Some(v()?.parse().map_err(|e| format!("--port: {e}"))?),
            _ => return Err(format!("unknown argument {k}")),
        }
    }
    if a.dir.is_empty() {
        return Err("usage: tcp_client_server -o DIR [--clients N] [--requests R]".into());
    }
    if let (Some(r), Some(p)) = (rank, port) {
        a.client = Some((r, p));
    }
    Ok(a)
}

/// Defines every process of the run in this process's trace: the server, then the clients.
fn world(rec: &Recorder, clients: u32) -> (Vec<u32>, u32) {
    let mut locs = vec![rec.peer("server", 0)];
    locs.extend((1..=clients).map(|k| rec.peer("client", k)));
    let comm = rec.comm("tcp", &locs);
    (locs, comm)
}

fn server(a: &Args) -> std::io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    let rec = Recorder::start(Config::new(&a.dir, APP, "server", 0))?;
    let (locs, comm) = world(&rec, a.clients);
    let me = std::env::current_exe()?;
    let mut children = Vec::new();
    for k in 1..=a.clients {
        children.push(
            Command::new(&me)
                .args([
                    "-o",
                    &a.dir,
                    "--clients",
                    &a.clients.to_string(),
                    "--requests",
                    &a.requests.to_string(),
                ])
                .args(["--client", &k.to_string(), "--port", &port.to_string()])
                .spawn()?,
        );
    }
    let serve = rec.procedure("serve");
    let accept = rec.procedure("accept");
    let phase = rec.intern("serving");
    let queue = rec.metric_def("requests served", "requests");
    // Connections in client order (each says hello with its rank first).
    let mut conns: Vec<Option<TcpStream>> = (0..=a.clients).map(|_| None).collect();
    {
        let _g = rec.scope(accept);
        for _ in 0..a.clients {
            let (mut s, _) = listener.accept()?;
            rec.recv_begin(None, comm, Some(TAG_HELLO));
            let mut hello = [0u8; 4];
            s.read_exact(&mut hello)?;
            let k = u32::from_le_bytes(hello);
            rec.recv_end(locs[k as usize], comm, TAG_HELLO, 4);
            conns[k as usize] = Some(s);
        }
    }
    let stats = std::sync::Mutex::new(vec![0u32; a.clients as usize + 1]);
    rec.phase_begin(phase);
    let mut served = 0u64;
    for _ in 0..a.requests {
        for k in 1..=a.clients as usize {
            let s = conns[k].as_mut().expect("every client connected");
            rec.recv_begin(Some(locs[k]), comm, Some(TAG_REQUEST));
            let mut len = [0u8; 4];
            s.read_exact(&mut len)?;
            let mut body = vec![0u8; u32::from_le_bytes(len) as usize];
            s.read_exact(&mut body)?;
            rec.recv_end(locs[k], comm, TAG_REQUEST, 4 + body.len() as u64);
            let reply = {
                let _g = rec.scope(serve);
                let sum: u64 = body.iter().map(|&b| b as u64).sum();
                rec.lock_request(1);
                let mut st = stats.lock().expect("stats");
                rec.lock_acquire(1);
                st[k] += 1;
                drop(st);
                rec.lock_release(1);
                let mut r = [0u8; 16];
                r[..8].copy_from_slice(&sum.to_le_bytes());
                r[8..].copy_from_slice(&(k as u64).to_le_bytes());
                r
            };
            rec.send(locs[k], comm, TAG_REPLY, 16);
            s.write_all(&reply)?;
            served += 1;
            rec.metric(queue, served as f64);
        }
    }
    rec.phase_end(phase);
    let mut failed = 0;
    for mut c in children {
        if !c.wait()?.success() {
            failed += 1;
        }
    }
    let st = stats.lock().expect("stats");
    for k in 1..=a.clients as usize {
        println!("server: client {k} sent {} requests", st[k]);
    }
    rec.finish()?;
    if failed > 0 {
        return Err(std::io::Error::other(format!("{failed} clients failed")));
    }
    Ok(())
}

fn client(a: &Args, rank: u32, port: u16) -> std::io::Result<()> {
    let rec = Recorder::start(Config::new(&a.dir, APP, "client", rank))?;
    let (locs, comm) = world(&rec, a.clients);
    let server = locs[0];
    let work = rec.procedure("client_work");
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    rec.send(server, comm, TAG_HELLO, 4);
    s.write_all(&rank.to_le_bytes())?;
    let mut total = 0u64;
    for i in 0..a.requests {
        let body: Vec<u8> = {
            let _g = rec.scope(work);
            (0..64 * rank).map(|j| ((i + j) % 251) as u8).collect()
        };
        let mut msg = (body.len() as u32).to_le_bytes().to_vec();
        msg.extend_from_slice(&body);
        rec.send(server, comm, TAG_REQUEST, msg.len() as u64);
        s.write_all(&msg)?;
        rec.recv_begin(Some(server), comm, Some(TAG_REPLY));
        let mut reply = [0u8; 16];
        s.read_exact(&mut reply)?;
        rec.recv_end(server, comm, TAG_REPLY, 16);
        total += u64::from_le_bytes(reply[..8].try_into().expect("8 bytes"));
    }
    println!("client {rank}: total {total}");
    rec.finish()?;
    Ok(())
}

fn main() {
    let a = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("tcp_client_server: {e}");
            std::process::exit(2);
        }
    };
    let r = match a.client {
        Some((rank, port)) => client(&a, rank, port),
        None => server(&a),
    };
    if let Err(e) = r {
        eprintln!("tcp_client_server: {e}");
        std::process::exit(1);
    }
}
