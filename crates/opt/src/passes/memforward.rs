//! stub
use crate::pipeline::Pass;
use ir::Module;
pub struct MemForward;
impl Pass for MemForward {
    fn name(&self) -> &'static str {
        "memforward"
    }
    fn description(&self) -> &'static str {
        ""
    }
    fn run(&self, _m: &mut Module) -> bool {
        false
    }
}
