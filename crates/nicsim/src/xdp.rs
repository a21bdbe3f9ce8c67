//! XDP: an eBPF program run on every received frame before a stack sees it,
//! in the host's driver or on a programmable adapter's processor (offloaded),
//! whose verdict drops the frame, passes it up, sends it back out of the
//! adapter it came in by, or (in the driver) redirects it out of another. Programs
//! are real eBPF bytecode, assembled from text by rbpf's assembler and run by
//! its interpreter over the frame's own bytes, which the program may rewrite.
//!
//! The context (`xdp_md`) holds the frame's first byte's address at offset 0
//! and the address after its last at 8, 64 bits each (where Linux's verifier
//! rewrites a program's `ctx->data` loads into pointer loads, a program here
//! loads them with `ldxdw`), and the receive queue the frame came in by at
//! 16, 32 bits, where Linux's `rx_queue_index` is. `bpf_redirect(ifindex,
//! flags)` (helper 23) names the host's adapter by its index among the host's
//! adapters. `bpf_redirect_map(map, key, flags)` (helper 51) takes map 0, the
//! adapter's AF_XDP sockets by receive queue (Linux's `xsks_map`), handing the
//! frame to the socket of queue `key`, an application's ring in user space;
//! or map 1, the host's processors (Linux's `cpumap`), handing the frame to
//! processor `key`, whose stack takes it from there. Where the map has no
//! such entry it returns the low two bits of `flags`, as Linux's does.

use std::cell::Cell;

use schemars::JsonSchema;
use serde::Deserialize;

/// An XDP program's verdicts (`enum xdp_action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The program failed (a bad return value, an access outside the frame):
    /// the frame is dropped, as the kernel drops it.
    Aborted,
    Drop,
    Pass,
    /// Back out of the adapter it came in by.
    Tx,
    /// Out of the host's adapter with this index.
    Redirect(u32),
    /// To the AF_XDP socket of this receive queue.
    User(u32),
    /// To this host processor, whose stack takes the frame (a CPU map).
    Cpu(u32),
}

/// Where a frame came in, and what the maps hold: the program's view of
/// its host.
#[derive(Clone, Copy, Debug)]
pub struct RxCtx {
    /// The receive queue the frame came in by (`rx_queue_index`).
    pub queue: u32,
    /// The adapter's receive queues, one AF_XDP socket each.
    pub queues: u32,
    /// The host's processors, each an entry of the CPU map.
    pub cpus: u32,
}

impl RxCtx {
    /// A frame on an adapter with one queue, on a host with one processor.
    pub const ONE: RxCtx = RxCtx { queue: 0, queues: 1, cpus: 1 };
}

/// The programs nicsim ships, by name.
const SHIPPED: [(&str, &str); 5] = [
    ("drop", include_str!("xdp/drop.s")),
    ("mac-swap", include_str!("xdp/mac-swap.s")),
    ("port-filter", include_str!("xdp/port-filter.s")),
    ("to-socket", include_str!("xdp/to-socket.s")),
    ("to-cpu", include_str!("xdp/to-cpu.s")),
];

/// `bpf_redirect`'s and `bpf_redirect_map`'s helper numbers in Linux's `enum bpf_func_id`.
const BPF_REDIRECT: u32 = 23;
const BPF_REDIRECT_MAP: u32 = 51;
const XDP_REDIRECT: u64 = 4;
/// The maps a program may name: the adapter's AF_XDP sockets by queue, and
/// the host's processors.
const XSKS_MAP: u64 = 0;
const CPU_MAP: u64 = 1;
/// Where `rx_queue_index` is in the context, as in Linux's `struct xdp_md`.
const RX_QUEUE_INDEX: usize = 16;

thread_local! {
    /// Where the running program's redirect helper sent the frame.
    static REDIRECT_TO: Cell<Option<Verdict>> = const { Cell::new(None) };
    /// The running program's host, for its maps' entries.
    static HOST: Cell<RxCtx> = const { Cell::new(RxCtx::ONE) };
}

fn bpf_redirect(ifindex: u64, _flags: u64, _: u64, _: u64, _: u64) -> u64 {
    REDIRECT_TO.set(Some(Verdict::Redirect(ifindex as u32)));
    XDP_REDIRECT
}

fn bpf_redirect_map(map: u64, key: u64, flags: u64, _: u64, _: u64) -> u64 {
    let host = HOST.get();
    let to = match map {
        XSKS_MAP if key < u64::from(host.queues) => Verdict::User(key as u32),
        CPU_MAP if key < u64::from(host.cpus) => Verdict::Cpu(key as u32),
        _ => return flags & 3,
    };
    REDIRECT_TO.set(Some(to));
    XDP_REDIRECT
}

/// An XDP program the driver runs on each received frame before its stack:
/// a shipped one by name, or one of your own in eBPF assembly; and its cost.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct XdpKeys {
    /// A shipped program: "drop" (drops every frame), "mac-swap" (sends each
    /// frame back out of its adapter with its Ethernet addresses swapped),
    /// "port-filter" (drops IPv4 TCP and UDP to `port`, passes the rest),
    /// "to-socket" (hands every frame to its queue's AF_XDP socket) or
    /// "to-cpu" (hands every frame to host processor `cpu`, whose stack
    /// takes it: a CPU map).
    pub program: Option<String>,
    /// A program of your own in eBPF assembly (rbpf's syntax), instead of
    /// `program`: one instruction a line, `name:` lines as labels that jumps
    /// may name (`ja done`, `jeq r5, 17, udp`), comments after `;`. It must
    /// not jump backwards (so it cannot loop) and must end in `exit`.
    pub source: Option<String>,
    /// For "port-filter": the destination port dropped (the word `PORT` in
    /// the program's text).
    pub port: Option<u16>,
    /// For "to-cpu": the host processor every frame goes to (the word `CPU`
    /// in the program's text).
    pub cpu: Option<u32>,
    /// Host processor cycles the program costs a frame, whatever its verdict:
    /// 13.3 ns at 3.6 GHz, an XDP program that only counts and passes
    /// (Høiland-Jørgensen et al., CoNEXT 2018).
    #[serde(default = "program_cycles")]
    pub cycles: u64,
    /// Host processor cycles the application behind an AF_XDP socket spends
    /// on each frame it takes from its ring (on the processor that ran the
    /// program): assumed as the counting program's.
    #[serde(default = "program_cycles")]
    pub socket_cycles: u64,
}

fn program_cycles() -> u64 {
    48
}

/// A loaded XDP program and its cost.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "XdpKeys")]
pub struct Xdp {
    /// What the scenario called it: a shipped program's name, or "source".
    pub name: String,
    code: Vec<u8>,
    pub cycles: u64,
    pub socket_cycles: u64,
}

impl TryFrom<XdpKeys> for Xdp {
    type Error = String;

    fn try_from(k: XdpKeys) -> Result<Self, String> {
        let (name, text) = match (k.program, k.source) {
            (Some(_), Some(_)) => return Err("give `program` or `source`, not both".into()),
            (None, None) => return Err("give `program` (a shipped program) or `source` (eBPF assembly)".into()),
            (Some(p), None) => match SHIPPED.iter().find(|(n, _)| *n == p) {
                Some((_, text)) => (p, text.to_string()),
                None => {
                    let names: Vec<&str> = SHIPPED.iter().map(|(n, _)| *n).collect();
                    return Err(format!("program: no shipped program {p:?} (one of {})", names.join(", ")));
                }
            },
            (None, Some(text)) => ("source".to_string(), text),
        };
        let text = placed(&name, text, "PORT", "port", "the destination port it drops", k.port.map(u32::from))?;
        let text = placed(&name, text, "CPU", "cpu", "the processor it hands frames to", k.cpu)?;
        let code = assemble(&text).map_err(|e| format!("{name}: {e}"))?;
        Ok(Xdp { name, code, cycles: k.cycles, socket_cycles: k.socket_cycles })
    }
}

/// `text` with its word `word` replaced by the value of key `key`; an error
/// when the program has the word and the key no value, or the other way round.
/// Only instructions count, not comments (after `;`).
fn placed(name: &str, text: String, word: &str, key: &str, meaning: &str, value: Option<u32>) -> Result<String, String> {
    let code = |line: &str| line.split(';').next().unwrap_or("").contains(word);
    match (text.lines().any(code), value) {
        (true, Some(v)) => Ok(text
            .lines()
            .map(|line| match line.split_once(';') {
                Some((c, comment)) => format!("{};{comment}\n", c.replace(word, &v.to_string())),
                None => format!("{}\n", line.replace(word, &v.to_string())),
            })
            .collect()),
        (true, None) => Err(format!("{name}: give `{key}`, {meaning}")),
        (false, Some(_)) => Err(format!("{key}: {name} takes no {key}")),
        (false, None) => Ok(text),
    }
}

impl Xdp {
    /// Run the program over `frame`, which it may rewrite, as it came in by
    /// `rx`'s queue.
    pub fn run(&self, frame: &mut [u8], rx: RxCtx) -> Verdict {
        let Ok(mut vm) = rbpf::EbpfVmMbuff::new(None) else { return Verdict::Aborted };
        // Checked once, when the program was loaded.
        let loaded = vm.set_verifier(|_| Ok(())).and_then(|_| vm.set_program(&self.code));
        let helper = loaded
            .and_then(|_| vm.register_helper(BPF_REDIRECT, bpf_redirect))
            .and_then(|_| vm.register_helper(BPF_REDIRECT_MAP, bpf_redirect_map));
        if helper.is_err() {
            return Verdict::Aborted;
        }
        let mut md = [0u8; RX_QUEUE_INDEX + 8];
        let start = frame.as_mut_ptr() as u64;
        md[..8].copy_from_slice(&start.to_le_bytes());
        md[8..16].copy_from_slice(&(start + frame.len() as u64).to_le_bytes());
        md[RX_QUEUE_INDEX..RX_QUEUE_INDEX + 4].copy_from_slice(&rx.queue.to_le_bytes());
        REDIRECT_TO.set(None);
        HOST.set(rx);
        // rbpf writes where the program stores, through the frame's address.
        match vm.execute_program(frame, &md) {
            Ok(1) => Verdict::Drop,
            Ok(2) => Verdict::Pass,
            Ok(3) => Verdict::Tx,
            Ok(XDP_REDIRECT) => REDIRECT_TO.take().unwrap_or(Verdict::Aborted),
            _ => Verdict::Aborted,
        }
    }
}

/// Assemble eBPF assembly with labels and comments into bytecode that rbpf's
/// verifier takes and that never jumps backwards.
fn assemble(text: &str) -> Result<Vec<u8>, String> {
    let mut labels = std::collections::HashMap::new();
    let mut lines = Vec::new();
    // The slot each instruction starts at: `lddw` takes two.
    let mut slot = 0i64;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split(';').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(label) = line.strip_suffix(':') {
            if labels.insert(label.trim().to_string(), slot).is_some() {
                return Err(format!("line {}: label {label:?} twice", n + 1));
            }
            continue;
        }
        lines.push((n + 1, slot, line));
        slot += if line.starts_with("lddw") { 2 } else { 1 };
    }
    let mut resolved = String::new();
    for (n, at, line) in lines {
        let (op, args) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let mut args: Vec<String> = args.split(',').map(|a| a.trim().to_string()).filter(|a| !a.is_empty()).collect();
        if op.starts_with('j') {
            let target = args.last_mut().ok_or(format!("line {n}: {op} without a target"))?;
            let offset = match labels.get(target.as_str()) {
                Some(to) => to - at - 1,
                None => target.trim_start_matches('+').parse::<i64>().map_err(|_| format!("line {n}: no label {target:?}"))?,
            };
            if offset < 0 {
                return Err(format!("line {n}: jumps backwards (a program may not loop)"));
            }
            *target = format!("+{offset}");
        }
        resolved.push_str(&format!("{op} {}\n", args.join(", ")));
    }
    let code = rbpf::assembler::assemble(&resolved)?;
    rbpf::EbpfVmFixedMbuff::new(Some(&code), 0, 8).map_err(|e| e.to_string())?;
    Ok(code)
}

/// How many frames got each verdict.
#[derive(Debug, Default)]
pub struct Verdicts {
    pub pass: u64,
    pub drop: u64,
    pub tx: u64,
    pub redirect: u64,
    pub aborted: u64,
    /// Of the redirected, those handed to another processor's stack (whose
    /// way goes on there).
    pub to_cpu: u64,
}

impl Verdicts {
    pub fn count(&mut self, v: Verdict) {
        self.to_cpu += u64::from(matches!(v, Verdict::Cpu(_)));
        *match v {
            Verdict::Pass => &mut self.pass,
            Verdict::Drop => &mut self.drop,
            Verdict::Tx => &mut self.tx,
            Verdict::Redirect(_) | Verdict::User(_) | Verdict::Cpu(_) => &mut self.redirect,
            Verdict::Aborted => &mut self.aborted,
        } += 1;
    }

    /// The counts, each named `{prefix}pass` and so on.
    pub fn report(&self, r: &mut crate::observe::Report, prefix: &str) {
        for (name, n) in [("pass", self.pass), ("drop", self.drop), ("tx", self.tx), ("redirect", self.redirect), ("aborted", self.aborted)]
        {
            r.count(&format!("{prefix}{name}"), n);
        }
    }

    /// The rates, each named `{prefix}pass_per_s` and so on, over `seconds`.
    pub fn report_rates(&self, r: &mut crate::observe::Report, prefix: &str, seconds: f64) {
        for (name, n) in [("pass", self.pass), ("drop", self.drop), ("tx", self.tx), ("redirect", self.redirect), ("aborted", self.aborted)]
        {
            r.real(&format!("{prefix}{name}_per_s"), if seconds > 0.0 { n as f64 / seconds } else { 0.0 });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped(name: &str, port: Option<u16>) -> Xdp {
        Xdp::try_from(XdpKeys { program: Some(name.into()), port, ..XdpKeys::default() }).unwrap()
    }

    fn source(text: &str) -> Result<Xdp, String> {
        Xdp::try_from(XdpKeys { source: Some(text.into()), ..XdpKeys::default() })
    }

    fn udp(port: u16) -> Vec<u8> {
        let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .udp(4000, port);
        let mut out = Vec::new();
        b.write(&mut out, &[7; 18]).unwrap();
        out
    }

    #[test]
    fn each_shipped_program_gives_its_verdict_on_real_frames() {
        let mut f = udp(9);
        assert_eq!(shipped("drop", None).run(&mut f, RxCtx::ONE), Verdict::Drop);
        let filter = shipped("port-filter", Some(9));
        assert_eq!(filter.run(&mut f, RxCtx::ONE), Verdict::Drop, "UDP to port 9");
        assert_eq!(filter.run(&mut udp(53), RxCtx::ONE), Verdict::Pass, "UDP elsewhere");
        let mut arp = udp(9);
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(filter.run(&mut arp, RxCtx::ONE), Verdict::Pass, "not IPv4");
        assert_eq!(filter.run(&mut f[..20].to_vec(), RxCtx::ONE), Verdict::Pass, "too short to hold the ports");
    }

    #[test]
    fn mac_swap_sends_the_frame_back_with_its_addresses_swapped() {
        let mut f = udp(9);
        let before = f.clone();
        assert_eq!(shipped("mac-swap", None).run(&mut f, RxCtx::ONE), Verdict::Tx);
        assert_eq!((&f[..6], &f[6..12]), (&before[6..12], &before[..6]));
        assert_eq!(f[12..], before[12..], "the rest untouched");
        assert_eq!(shipped("mac-swap", None).run(&mut [0u8; 10], RxCtx::ONE), Verdict::Pass, "shorter than an Ethernet header");
    }

    #[test]
    fn a_program_of_ones_own_redirects_and_a_bad_one_aborts() {
        let redirect = source("mov64 r1, 1\nmov64 r2, 0\ncall 23 ; bpf_redirect(1, 0)\nexit").unwrap();
        assert_eq!(redirect.run(&mut udp(9), RxCtx::ONE), Verdict::Redirect(1));
        let out_of_frame = source("ldxdw r2, [r1+0]\nldxb r0, [r2+4000]\nexit").unwrap();
        assert_eq!(out_of_frame.run(&mut udp(9), RxCtx::ONE), Verdict::Aborted, "a read past the frame");
        assert_eq!(source("mov64 r0, 9\nexit").unwrap().run(&mut udp(9), RxCtx::ONE), Verdict::Aborted, "no such verdict");
    }

    #[test]
    fn a_redirect_to_a_socket_names_its_queue_and_a_missing_one_falls_back_on_the_flags() {
        assert_eq!(shipped("to-socket", None).run(&mut udp(9), RxCtx::ONE), Verdict::User(0));
        let to = |map: u64, key: u64, flags: u64| {
            source(&format!("mov64 r1, {map}\nmov64 r2, {key}\nmov64 r3, {flags}\ncall 51\nexit")).unwrap().run(&mut udp(9), RxCtx::ONE)
        };
        assert_eq!(to(0, 0, 0), Verdict::User(0));
        assert_eq!(to(0, 1, 2), Verdict::Pass, "no socket for queue 1: XDP_PASS from the flags");
        assert_eq!(to(0, 1, 1), Verdict::Drop);
        assert_eq!(to(7, 0, 0), Verdict::Aborted, "no map 7, and flags 0 is XDP_ABORTED");
    }

    #[test]
    fn programs_that_loop_or_do_not_assemble_are_refused_saying_where() {
        let looped = source("top:\nmov64 r0, 2\nja top\nexit").unwrap_err();
        assert!(looped.contains("line 3") && looped.contains("backwards"), "{looped}");
        assert!(source("mov64 r0, 2\nja nowhere\nexit").unwrap_err().contains("no label \"nowhere\""));
        assert!(source("frobnicate r0\nexit").is_err());
        assert!(source("mov64 r0, 2").is_err(), "rbpf's verifier wants an exit last");
        let keys = |program: Option<&str>, port| XdpKeys { program: program.map(String::from), port, ..XdpKeys::default() };
        assert!(Xdp::try_from(keys(Some("port-filter"), None)).unwrap_err().contains("give `port`"));
        assert!(Xdp::try_from(keys(Some("drop"), Some(9))).unwrap_err().contains("takes no port"));
        assert!(Xdp::try_from(keys(Some("nope"), None)).unwrap_err().contains("one of drop, mac-swap, port-filter, to-socket"));
        assert!(Xdp::try_from(keys(None, None)).is_err());
    }
}
