//! A link whose delivered frames go to a capture file (`observe::CaptureFile`) as
//! well as to the far end.

use std::cell::RefCell;
use std::rc::Rc;

use crate::engine::{Component, Ctx, Msg, PortId};
use crate::observe::{CaptureFile, Report};
use crate::time::Time;

/// A link whose delivered frames are captured, as interface `interface` of the file.
pub struct Captured {
    inner: Box<dyn Component>,
    file: Rc<RefCell<CaptureFile>>,
    interface: u32,
}

impl Captured {
    pub fn new(inner: Box<dyn Component>, file: Rc<RefCell<CaptureFile>>, interface: u32) -> Self {
        Captured { inner, file, interface }
    }
}

impl Component for Captured {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    fn start(&mut self, ctx: &mut Ctx) {
        self.inner.start(ctx)
    }
    fn handle(&mut self, port: PortId, msg: Msg, ctx: &mut Ctx) {
        let mark = ctx.sent().len();
        self.inner.handle(port, msg, ctx);
        let mut file = self.file.borrow_mut();
        for out in &ctx.sent()[mark..] {
            if let (Msg::Frame(frame), Some(port)) = (&out.msg, out.port) {
                // A link delivers to end b on its port 1.
                file.record(out.at, self.interface, port == 1, frame.bytes.clone());
            }
        }
        file.flush_until(ctx.now());
    }
    fn finish(&mut self, end: Time) -> Result<(), String> {
        self.inner.finish(end)?;
        let report = self.inner.report(end);
        let lost = ["a_to_b_drops", "b_to_a_drops", "impaired_dropped"].iter().filter_map(|k| report.get(k)).sum::<f64>();
        self.file.borrow_mut().lost(self.interface, lost as u64);
        Ok(())
    }
    fn report(&self, end: Time) -> Report {
        self.inner.report(end)
    }
}
