//! The runtime's timers: `_sysy_starttime(line)` / `_sysy_stoptime(line)` pairs sum
//! the time between them, and at exit one `Timer@LLLL-LLLL: H-M-S-us` line per pair
//! (at most 1024) and a `TOTAL: H-M-S-us` line go to stderr, in the format of the
//! project's `runtime/sylib.c`. Time is wall-clock, or zero when deterministic
//! output is wanted.

use std::time::Instant;

const MAX_SHOWN: usize = 1024;

/// Timer state of one run.
pub(crate) struct Timers {
    wall_clock: bool,
    running: Option<(i32, Option<Instant>)>,
    pairs: Vec<(i32, i32, u64)>,
    total_us: u64,
}

impl Timers {
    pub fn new(wall_clock: bool) -> Self {
        Timers {
            wall_clock,
            running: None,
            pairs: Vec::new(),
            total_us: 0,
        }
    }

    pub fn start(&mut self, line: i32) {
        let now = self.wall_clock.then(Instant::now);
        self.running = Some((line, now));
    }

    pub fn stop(&mut self, line: i32) {
        let Some((start_line, start)) = self.running.take() else {
            return;
        };
        let us = start.map_or(0, |t| t.elapsed().as_micros() as u64);
        if self.pairs.len() < MAX_SHOWN {
            self.pairs.push((start_line, line, us));
        }
        self.total_us += us;
    }

    /// The report printed at exit.
    pub fn report(&self) -> String {
        let mut s = String::new();
        for &(l1, l2, us) in &self.pairs {
            s.push_str(&format!("Timer@{l1:04}-{l2:04}: {}\n", duration(us)));
        }
        s.push_str(&format!("TOTAL: {}\n", duration(self.total_us)));
        s
    }
}

fn duration(us: u64) -> String {
    let h = us / 3_600_000_000;
    let m = us % 3_600_000_000 / 60_000_000;
    let s = us % 60_000_000 / 1_000_000;
    format!("{h}H-{m}M-{s}S-{}us", us % 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_format() {
        let mut t = Timers::new(false);
        t.stop(3); // unmatched stop: ignored
        t.start(12);
        t.stop(40);
        assert_eq!(
            t.report(),
            "Timer@0012-0040: 0H-0M-0S-0us\nTOTAL: 0H-0M-0S-0us\n"
        );
        assert_eq!(duration(3_723_000_004), "1H-2M-3S-4us");
    }
}
