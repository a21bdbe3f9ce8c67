//! The adapter. So far the "dumb" bus-mastering kind (descriptor rings as the Intel 8254x manual describes them): a
//! receive FIFO that starts its DMA at a threshold and drops on overrun, a
//! transmit FIFO, DMA engines, descriptor rings in host memory fetched and written
//! back in groups, and an interrupt cause register with moderation. Each part is a
//! state machine over the host bus calendar, driven by its owner with the time.

mod config;
pub mod firmware;
mod irq;
mod processor;
mod queues;
mod ring;
pub mod rss;
mod rx;
pub mod settings;
pub mod smart;
mod tx;

pub use config::{Moderation, NicConfig, Transfer, TxDone, DESCRIPTOR_BYTES, DMA_PROGRAM_WRITES, ITR_UNIT, RDTR_UNIT};
pub use irq::{Alarm, Irq};
pub use processor::{FrameProcessor, ProcessorConfig};
pub use queues::MultiQueue;
pub use ring::RingAdapter;
pub use rx::Rx;
pub use tx::Tx;
