//! What a scenario sets on an adapter, with the defaults of docs/model.md.

use crate::nic::processor::ProcessorConfig;
use crate::time::Duration;

/// A descriptor in host memory (Intel 8254x/82599 legacy and advanced formats).
pub const DESCRIPTOR_BYTES: u64 = 16;

/// When the adapter raises its interrupt after completing frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moderation {
    /// At once, for every completion.
    PerFrame,
    /// No sooner than this after the previous interrupt (Intel ITR, 256 ns units).
    MinInterval(Duration),
    /// After `frames` completions or `time` after the first, whichever comes first.
    Coalesce { frames: u32, time: Duration },
    /// Polling with interrupt backup: the adapter times each received frame and
    /// interrupts when the host has not polled within `timeout`, or at once when
    /// no more than `low_buffers` receive buffers are left to it.
    Backup { timeout: Duration, low_buffers: u32 },
}

/// Intel's interrupt throttle register counts in 256 ns units.
pub const ITR_UNIT: Duration = Duration::from_ns(256);
/// Intel's receive delay timers count in 1.024 us units.
pub const RDTR_UNIT: Duration = Duration::from_ns(1024);

/// Who moves a frame between the adapter and host memory (the Novell AppNote's
/// designs, Figures 1 to 5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Transfer {
    /// The adapter, as a bus master, by DMA through descriptor rings.
    BusMaster,
    /// The host processor, through an I/O port (IN and OUT), a word at a time.
    Pio,
    /// The host processor, through a window on the adapter's memory (MOV).
    SharedMemory,
    /// The system's DMA controller, which the driver programs for each frame
    /// and which holds the bus (and the processor off it) while it moves the
    /// frame at its own rate, in bits a second.
    SystemDma { rate_bps: u64 },
}

/// When an adapter writes a sent frame's status back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxDone {
    /// Once it has read the frame into its FIFO (the 8254x's descriptor done).
    Read,
    /// Once the frame's last bit is on the wire: the status reports how the
    /// transmission went (collisions, underrun), as a command block's does.
    Sent,
}

/// I/O writes that program an 8237 DMA channel for one transfer: clear the
/// byte flip-flop, mode, address low and high, page, count low and high, unmask.
pub const DMA_PROGRAM_WRITES: u64 = 8;

#[derive(Clone, Debug, PartialEq)]
pub struct NicConfig {
    pub link_rate_bps: u64,
    /// Receive and transmit packet buffer, bytes.
    pub rx_fifo: u64,
    pub tx_fifo: u64,
    /// Bytes of a frame in the receive FIFO before its DMA may start.
    pub rx_dma_threshold: u64,
    pub rx_ring: u32,
    pub tx_ring: u32,
    /// Receive descriptors the adapter holds on chip.
    pub rx_desc_cache: u32,
    /// Descriptors fetched in one read.
    pub rx_desc_fetch: u32,
    pub tx_desc_fetch: u32,
    /// Descriptors written back in one write.
    pub rx_writeback: u32,
    pub tx_writeback: u32,
    /// Bytes of one receive completion written back: the descriptor itself
    /// (16, the 8254x's) or a completion queue entry (64, mlx5's).
    pub rx_completion_bytes: u64,
    /// Completions written back together are compressed: the first whole,
    /// the others as 8-byte mini completions, eight to each 64-byte entry
    /// (mlx5's compressed completion sessions).
    pub cqe_compression: bool,
    /// Frames one posted receive buffer takes (multi-packet receive buffers,
    /// mlx5's striding receive queue): one descriptor fetched for that many.
    pub rx_buffer_frames: u32,
    /// Target wait states on each descriptor write-back (PCI).
    pub status_wait_clocks: u64,
    /// Whether the FCS is stripped before DMA (else its 4 bytes cross the bus).
    pub strip_crc: bool,
    pub moderation: Moderation,
    /// A partial group of receive write-backs waits this long for more frames
    /// (`None`: it is written as soon as no frame is waiting in the FIFO, or
    /// none of those waiting has a descriptor to go to).
    pub rx_writeback_delay: Option<Duration>,
    /// Only in-order TCP data segments of one connection wait for a write-back
    /// group; any other frame is written back at once (a fast path that hands
    /// bulk data up in batches and everything else alone).
    pub rx_writeback_data_only: bool,
    /// Each frame sent raises the interrupt when it is done (its transmit
    /// completion), as each frame received does.
    pub tx_interrupt: bool,
    /// Frames its driver keeps handed to it at once, sent or not yet
    /// reclaimed (`None`: as many as the transmit ring holds).
    pub tx_in_flight: Option<u32>,
    /// When it writes a sent frame's status back.
    pub tx_done: TxDone,
    /// The processor of an intelligent adapter (`None`: a dumb bus master).
    pub processor: Option<ProcessorConfig>,
    /// Segmentation offload: the adapter cuts a send's data into segments, so
    /// the host's transmit work is once per send, not per segment.
    pub tso: bool,
    /// Who moves frames to and from host memory; with anything but a bus
    /// master, frames wait in the adapter's packet memory (`rx_fifo`,
    /// `tx_fifo`) until the host moves them.
    pub transfer: Transfer,
}

impl NicConfig {
    /// The Intel 8254x manual's defaults: 48 KB receive / 16 KB transmit buffer, 64
    /// cached receive descriptors; interrupts per frame.
    pub fn gigabit() -> Self {
        NicConfig {
            link_rate_bps: 1_000_000_000,
            rx_fifo: 48 * 1024,
            tx_fifo: 16 * 1024,
            rx_dma_threshold: 0,
            rx_ring: 256,
            tx_ring: 256,
            rx_desc_cache: 64,
            rx_desc_fetch: 16,
            tx_desc_fetch: 16,
            rx_writeback: 1,
            tx_writeback: 1,
            rx_completion_bytes: DESCRIPTOR_BYTES,
            cqe_compression: false,
            rx_buffer_frames: 1,
            status_wait_clocks: 0,
            strip_crc: false,
            moderation: Moderation::PerFrame,
            rx_writeback_delay: None,
            rx_writeback_data_only: false,
            tx_interrupt: false,
            tx_in_flight: None,
            tx_done: TxDone::Read,
            processor: None,
            tso: false,
            transfer: Transfer::BusMaster,
        }
    }

    /// Whether the host moves frames (programmed I/O, shared memory, system DMA).
    pub fn host_moves(&self) -> bool {
        self.transfer != Transfer::BusMaster
    }

    /// Check what the hardware allows; errors name the field.
    pub fn check(&self) -> Result<(), String> {
        for (name, ring) in [("rx_ring", self.rx_ring), ("tx_ring", self.tx_ring)] {
            if ring < 8 || ring % 8 != 0 {
                return Err(format!("{name}: must be a multiple of 8 descriptors, at least 8, got {ring}"));
            }
        }
        let groups = [
            ("rx_desc_fetch", self.rx_desc_fetch),
            ("tx_desc_fetch", self.tx_desc_fetch),
            ("rx_writeback", self.rx_writeback),
            ("tx_writeback", self.tx_writeback),
            ("rx_desc_cache", self.rx_desc_cache),
            ("rx_buffer_frames", self.rx_buffer_frames),
        ];
        for (name, n) in groups {
            if n == 0 {
                return Err(format!("{name}: must be at least 1"));
            }
        }
        if self.rx_desc_fetch > self.rx_desc_cache {
            return Err(format!(
                "rx_desc_fetch: {} is more than the {} descriptors the cache holds",
                self.rx_desc_fetch, self.rx_desc_cache
            ));
        }
        for (name, fifo) in [("rx_fifo", self.rx_fifo), ("tx_fifo", self.tx_fifo)] {
            if fifo < 2048 {
                return Err(format!("{name}: must hold at least one full frame (2 KB), got {fifo} bytes"));
            }
        }
        if !(8..=256).contains(&self.rx_completion_bytes) || !self.rx_completion_bytes.is_multiple_of(8) {
            return Err(format!("rx_completion_bytes: a multiple of 8 from 8 to 256, got {}", self.rx_completion_bytes));
        }
        if self.rx_buffer_frames > 512 {
            return Err(format!("rx_buffer_frames: at most 512 frames a buffer, got {}", self.rx_buffer_frames));
        }
        if self.tx_in_flight.is_some_and(|n| n == 0 || n >= self.tx_ring) {
            return Err(format!(
                "tx_in_flight: 1 to {} frames (below the transmit ring), got {}",
                self.tx_ring - 1,
                self.tx_in_flight.unwrap_or(0)
            ));
        }
        if self.rx_dma_threshold > self.rx_fifo {
            return Err(format!("rx_dma_threshold: {} bytes is more than the receive FIFO", self.rx_dma_threshold));
        }
        Ok(())
    }
}
