//! Running a child process with a timeout, capturing its output, exit status,
//! wall time and peak resident memory (`ru_maxrss` from `wait4`).
//!
//! The child is waited for with `waitid(WNOWAIT)` (which does not reap it), so a
//! watchdog thread can kill it on timeout without ever signalling a recycled pid;
//! the zombie is then reaped with `wait4` to collect its resource usage. Core dumps
//! are disabled in the child (qemu would otherwise write `qemu_*.core` files).

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// What a finished (or killed) child did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Everything written to stdout.
    pub stdout: Vec<u8>,
    /// Everything written to stderr.
    pub stderr: Vec<u8>,
    /// Exit status when the child exited normally.
    pub exit_code: Option<i32>,
    /// Terminating signal when the child was killed by one.
    pub signal: Option<i32>,
    /// True when the timeout expired and the child was killed.
    pub timed_out: bool,
    /// Wall time from spawn to exit.
    pub duration: Duration,
    /// Peak resident set size of the child, in KiB.
    pub max_rss_kb: u64,
    /// CPU time of the child (user plus system), from `wait4`: unlike the wall
    /// time, it does not grow when other processes compete for the cores.
    pub cpu_time: Duration,
}

impl Outcome {
    /// True when the child exited normally with status 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }

    /// One-line description of how the child ended, e.g. `exit 3`, `signal 11`.
    pub fn describe(&self) -> String {
        if self.timed_out {
            format!("timed out after {:.1}s", self.duration.as_secs_f64())
        } else if let Some(sig) = self.signal {
            format!("killed by signal {sig}")
        } else {
            format!("exit {}", self.exit_code.unwrap_or(-1))
        }
    }
}

/// Runs `cmd` with stdin from `stdin` (or empty), killing it after `timeout`.
pub fn run_command(
    cmd: &mut Command,
    stdin: Option<&Path>,
    timeout: Option<Duration>,
) -> io::Result<Outcome> {
    let input = match stdin {
        Some(p) => Stdio::from(File::open(p)?),
        None => Stdio::null(),
    };
    cmd.stdin(input)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child.
    unsafe {
        cmd.pre_exec(|| {
            let zero = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &zero);
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    let out_reader = reader(child.stdout.take());
    let err_reader = reader(child.stderr.take());

    let state = Arc::new((Mutex::new(WatchState::default()), Condvar::new()));
    let watchdog = timeout.map(|limit| {
        let state = Arc::clone(&state);
        thread::spawn(move || watch(pid, limit, &state))
    });

    let waited = wait_no_reap(pid);
    {
        let (lock, cvar) = &*state;
        lock.lock().unwrap_or_else(|e| e.into_inner()).done = true;
        cvar.notify_all();
    }
    let timed_out = match watchdog {
        Some(h) => h.join().unwrap_or(false),
        None => false,
    };
    let (status, rusage) = reap(pid)?;
    waited?;
    let duration = start.elapsed();

    let mut outcome = Outcome {
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
        timed_out,
        duration,
        max_rss_kb: rusage.ru_maxrss.max(0) as u64,
        cpu_time: timeval(rusage.ru_utime) + timeval(rusage.ru_stime),
        ..Outcome::default()
    };
    if libc::WIFEXITED(status) {
        outcome.exit_code = Some(libc::WEXITSTATUS(status));
    } else if libc::WIFSIGNALED(status) {
        outcome.signal = Some(libc::WTERMSIG(status));
    }
    Ok(outcome)
}

#[derive(Default)]
struct WatchState {
    done: bool,
}

/// Watchdog: waits until the child is done or `limit` passes; kills it then.
fn watch(pid: libc::pid_t, limit: Duration, state: &(Mutex<WatchState>, Condvar)) -> bool {
    let (lock, cvar) = state;
    let deadline = Instant::now() + limit;
    let mut guard = lock.lock().unwrap_or_else(|e| e.into_inner());
    while !guard.done {
        let now = Instant::now();
        if now >= deadline {
            // The child is at worst a zombie (not reaped yet): the pid is still ours.
            // SAFETY: plain syscall on our own unreaped child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            return true;
        }
        guard = cvar
            .wait_timeout(guard, deadline - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    false
}

/// Blocks until `pid` has exited, leaving it as a zombie.
fn wait_no_reap(pid: libc::pid_t) -> io::Result<()> {
    loop {
        // SAFETY: siginfo_t is plain data; waitid fills it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

fn timeval(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
}

/// Reaps `pid`, returning its wait status and resource usage.
fn reap(pid: libc::pid_t) -> io::Result<(libc::c_int, libc::rusage)> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: rusage is plain data; wait4 fills it.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            return Ok((status, usage));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

fn reader<R: Read + Send + 'static>(pipe: Option<R>) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_status() {
        let o = run_command(
            Command::new("sh").args(["-c", "echo hi; echo err >&2; exit 3"]),
            None,
            Some(Duration::from_secs(10)),
        )
        .unwrap();
        assert_eq!(o.stdout, b"hi\n");
        assert_eq!(o.stderr, b"err\n");
        assert_eq!(o.exit_code, Some(3));
        assert!(!o.timed_out);
        assert!(o.max_rss_kb > 0);
    }

    #[test]
    fn kills_on_timeout() {
        let o = run_command(
            Command::new("sleep").arg("10"),
            None,
            Some(Duration::from_millis(200)),
        )
        .unwrap();
        assert!(o.timed_out);
        assert_eq!(o.signal, Some(libc::SIGKILL));
        assert!(o.duration < Duration::from_secs(5));
    }

    /// A child that sleeps uses wall time but almost no CPU time; one that
    /// spins uses CPU time.
    #[test]
    fn measures_cpu_time_apart_from_wall_time() {
        let idle = run_command(Command::new("sleep").arg("0.3"), None, None).unwrap();
        assert!(idle.duration >= Duration::from_millis(300));
        assert!(idle.cpu_time < Duration::from_millis(200));
        let busy = run_command(
            Command::new("sh").args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"]),
            None,
            None,
        )
        .unwrap();
        assert!(
            busy.cpu_time > Duration::from_millis(10),
            "{:?}",
            busy.cpu_time
        );
    }
}
