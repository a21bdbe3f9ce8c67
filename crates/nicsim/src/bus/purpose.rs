//! What each bus transaction is for, with the name it has in reports and traces.

/// What a transaction is for, for the occupancy breakdown and the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    RxData,
    /// The part of a received frame after its last whole cache line (PCI with MWI).
    RxRemainder,
    RxStatus,
    RxDescFetch,
    TxDescFetch,
    TxData,
    TxStatus,
    Register,
    /// The host memory behind the bus is held (the driver allocating buffers).
    MemoryStall,
}

pub(super) const PURPOSES: [(Purpose, &str); 9] = [
    (Purpose::RxData, "rx_data"),
    (Purpose::RxRemainder, "rx_remainder"),
    (Purpose::RxStatus, "rx_status"),
    (Purpose::RxDescFetch, "rx_desc_fetch"),
    (Purpose::TxDescFetch, "tx_desc_fetch"),
    (Purpose::TxData, "tx_data"),
    (Purpose::TxStatus, "tx_status"),
    (Purpose::Register, "register"),
    (Purpose::MemoryStall, "memory_stall"),
];

pub(super) fn label(p: Purpose) -> &'static str {
    PURPOSES[p as usize].1
}
