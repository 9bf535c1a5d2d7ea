//! Every client method returns a call to configure, await or start.
#![deny(warnings)]

use std::time::Duration;

use jsonrpc_runtime::{rpc, CallError, Peer, peer::SendError};

#[rpc]
trait Calculator {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> i64;
}

async fn steer(peer: Peer) -> Result<i64, CallError> {
    let calc = CalculatorClient::new(peer);
    let sum = calc.add(1, 2).timeout(Duration::from_secs(1)).await?;
    let call = calc.add(sum, 1).start();
    let _id = call.id().clone();
    let _: Result<(), SendError> = call.cancel();
    call.await
}

fn main() {
    let _ = steer;
}
