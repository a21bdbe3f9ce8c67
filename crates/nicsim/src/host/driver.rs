//! The driver's notification policy (`[host.driver]`): what its interrupt does,
//! whether a poll loop takes the frames, what an empty poll counts as. The host
//! asks these questions of the policy; only this file answers them by mode.

use crate::host::config::{DriverConfig, DriverMode, Handler};
use crate::nic::Moderation;
use crate::processor::Activity;

/// What the interrupt of a ring adapter starts on entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnInterrupt {
    /// The handler takes the frames itself, inside the interrupt.
    Handle,
    /// A NAPI poll of up to `budget` frames, as deferred work.
    Poll(u32),
    /// The handler's frame loop, as a deferred procedure call (NDIS).
    Dpc,
}

impl DriverConfig {
    /// A poll loop takes the frames: a dedicated poller (`poll`) or the
    /// operating system's polling process (`os-poll`).
    pub fn polls(&self) -> bool {
        matches!(self.mode, DriverMode::Poll | DriverMode::OsPoll)
    }

    /// The adapter's interrupt is masked from the start: a dedicated poller
    /// takes no interrupts, the OS's polling process only a backup interrupt.
    pub fn starts_masked(&self, moderation: Moderation) -> bool {
        match self.mode {
            DriverMode::Poll => true,
            DriverMode::OsPoll => !matches!(moderation, Moderation::Backup { .. }),
            DriverMode::Handler | DriverMode::Napi => false,
        }
    }

    /// What an empty poll counts as: busy time for a dedicated poller, idle
    /// time for the OS's polling process (it runs when nothing else is ready).
    pub fn empty_poll(&self) -> Activity {
        if self.mode == DriverMode::OsPoll {
            Activity::IdlePoll
        } else {
            Activity::Poll
        }
    }

    /// What a ring adapter's interrupt starts.
    pub fn on_interrupt(&self) -> OnInterrupt {
        match (self.mode, self.handler) {
            (DriverMode::Napi, _) => OnInterrupt::Poll(self.budget),
            (_, Handler::Dpc) => OnInterrupt::Dpc,
            _ => OnInterrupt::Handle,
        }
    }

    /// The interrupt's exit cost when the handler's frame loop ends: none for a
    /// loop run as a deferred call, which left the interrupt on entry.
    pub fn loop_exit_cycles(&self, interrupt_exit: u64) -> u64 {
        if self.handler == Handler::Dpc {
            0
        } else {
            interrupt_exit
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    fn driver(mode: DriverMode, handler: Handler) -> DriverConfig {
        DriverConfig { mode, handler, budget: 64, ..DriverConfig::default() }
    }

    const BACKUP: Moderation = Moderation::Backup { timeout: Duration::from_ms(1), low_buffers: 4 };

    #[test]
    fn each_mode_answers_who_takes_the_frames() {
        let cases = [
            (DriverMode::Handler, false, false, false, OnInterrupt::Handle),
            (DriverMode::Napi, false, false, false, OnInterrupt::Poll(64)),
            (DriverMode::Poll, true, true, true, OnInterrupt::Handle),
            (DriverMode::OsPoll, true, true, false, OnInterrupt::Handle),
        ];
        for (mode, polls, masked, masked_with_backup, on_interrupt) in cases {
            let d = driver(mode, Handler::Interrupt);
            assert_eq!(d.polls(), polls, "{mode:?}");
            assert_eq!(d.starts_masked(Moderation::PerFrame), masked, "{mode:?}");
            assert_eq!(d.starts_masked(BACKUP), masked_with_backup, "{mode:?}: a backup interrupt stays on for the OS's polling");
            assert_eq!(d.on_interrupt(), on_interrupt, "{mode:?}");
        }
    }

    #[test]
    fn an_empty_poll_is_idle_time_only_for_the_operating_systems_poller() {
        assert_eq!(driver(DriverMode::OsPoll, Handler::Interrupt).empty_poll(), Activity::IdlePoll);
        assert_eq!(driver(DriverMode::Poll, Handler::Interrupt).empty_poll(), Activity::Poll);
    }

    #[test]
    fn a_dpc_runs_the_frame_loop_outside_the_interrupt() {
        let d = driver(DriverMode::Handler, Handler::Dpc);
        assert_eq!(d.on_interrupt(), OnInterrupt::Dpc);
        assert_eq!(d.loop_exit_cycles(400), 0, "the interrupt was left on entry");
        assert_eq!(driver(DriverMode::Handler, Handler::Interrupt).loop_exit_cycles(400), 400);
        assert_eq!(
            driver(DriverMode::Napi, Handler::Dpc).on_interrupt(),
            OnInterrupt::Poll(64),
            "NAPI polls whatever the handler key says"
        );
    }
}
