use crate::time::Instant;

use super::RttEstimator;

pub(super) mod no_control;

#[cfg(feature = "socket-tcp-cubic")]
pub(super) mod cubic;

#[cfg(feature = "socket-tcp-reno")]
pub(super) mod reno;

#[allow(unused_variables)]
pub(super) trait Controller {
    /// Returns the number of bytes that can be sent.
    fn window(&self) -> usize;

    /// Set the remote window size.
    fn set_remote_window(&mut self, remote_window: usize) {}

    fn on_ack(&mut self, now: Instant, len: usize, in_flight: usize, rtt: &RttEstimator) {}

    /// Fired on each duplicate ack received, after `on_loss` has been called.
    fn on_dup_ack(&mut self, now: Instant, len: usize, in_flight: usize) {}

    /// Fired on a retransmission timeout.
    fn on_rto(&mut self, now: Instant, in_flight: usize) {}

    /// Fired after an inferred loss via three duplicate acks.
    fn on_loss(&mut self, now: Instant, in_flight: usize) {}

    /// Fired on an ACK of new data that does not end fast recovery (NewReno's
    /// partial ACK, RFC 6582): `len` bytes were acknowledged.
    fn on_partial_ack(&mut self, now: Instant, len: usize) {}

    fn pre_transmit(&mut self, now: Instant) {}

    fn post_transmit(&mut self, now: Instant, len: usize) {}

    /// Set the maximum segment size.
    fn set_mss(&mut self, mss: usize) {}

    /// nicsim: grow the window by the bytes each ACK acknowledges (RFC 3465
    /// byte counting, without its limit: Linux since 4.0 counts every segment
    /// a stretch ACK covers) instead of by at most one segment an ACK.
    fn set_byte_counting(&mut self, on: bool) {}
}

#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(super) enum AnyController {
    None(no_control::NoControl),

    #[cfg(feature = "socket-tcp-reno")]
    Reno(reno::Reno),

    #[cfg(feature = "socket-tcp-cubic")]
    Cubic(cubic::Cubic),
}

impl AnyController {
    /// Create a new congestion controller.
    /// `AnyController::new()` selects the best congestion controller based on the features.
    ///
    /// - If `socket-tcp-cubic` feature is enabled, it will use `Cubic`.
    /// - If `socket-tcp-reno` feature is enabled, it will use `Reno`.
    /// - If both `socket-tcp-cubic` and `socket-tcp-reno` features are enabled, it will use `Cubic`.
    ///    - `Cubic` is more efficient regarding throughput.
    ///    - `Reno` is more conservative and is suitable for low-power devices.
    /// - If no congestion controller is available, it will use `NoControl`.
    ///
    /// Users can also select a congestion controller manually by [`super::Socket::set_congestion_control()`]
    /// method at run-time.
    #[allow(unreachable_code)]
    #[inline]
    pub fn new() -> Self {
        #[cfg(feature = "socket-tcp-cubic")]
        {
            return AnyController::Cubic(cubic::Cubic::new());
        }

        #[cfg(feature = "socket-tcp-reno")]
        {
            return AnyController::Reno(reno::Reno::new());
        }

        AnyController::None(no_control::NoControl)
    }

    /// nicsim: the controller itself, whose calls go to its kind by a match
    /// the compiler inlines, not through a trait object (a call each, several
    /// a segment, for what is mostly a field read).
    #[inline]
    pub fn inner_mut(&mut self) -> &mut Self {
        self
    }

    #[inline]
    pub fn inner(&self) -> &Self {
        self
    }
}

/// Runs `$e` with `$c` bound to the controller of whichever kind `$self` holds.
macro_rules! each {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            AnyController::None($c) => $e,
            #[cfg(feature = "socket-tcp-reno")]
            AnyController::Reno($c) => $e,
            #[cfg(feature = "socket-tcp-cubic")]
            AnyController::Cubic($c) => $e,
        }
    };
}

impl Controller for AnyController {
    #[inline]
    fn window(&self) -> usize {
        each!(self, c => c.window())
    }
    #[inline]
    fn set_remote_window(&mut self, remote_window: usize) {
        each!(self, c => c.set_remote_window(remote_window))
    }
    #[inline]
    fn on_ack(&mut self, now: Instant, len: usize, in_flight: usize, rtt: &RttEstimator) {
        each!(self, c => c.on_ack(now, len, in_flight, rtt))
    }
    #[inline]
    fn on_dup_ack(&mut self, now: Instant, len: usize, in_flight: usize) {
        each!(self, c => c.on_dup_ack(now, len, in_flight))
    }
    #[inline]
    fn on_rto(&mut self, now: Instant, in_flight: usize) {
        each!(self, c => c.on_rto(now, in_flight))
    }
    #[inline]
    fn on_loss(&mut self, now: Instant, in_flight: usize) {
        each!(self, c => c.on_loss(now, in_flight))
    }
    #[inline]
    fn on_partial_ack(&mut self, now: Instant, len: usize) {
        each!(self, c => c.on_partial_ack(now, len))
    }
    #[inline]
    fn pre_transmit(&mut self, now: Instant) {
        each!(self, c => c.pre_transmit(now))
    }
    #[inline]
    fn post_transmit(&mut self, now: Instant, len: usize) {
        each!(self, c => c.post_transmit(now, len))
    }
    #[inline]
    fn set_mss(&mut self, mss: usize) {
        each!(self, c => c.set_mss(mss))
    }
    #[inline]
    fn set_byte_counting(&mut self, on: bool) {
        each!(self, c => c.set_byte_counting(on))
    }
}
