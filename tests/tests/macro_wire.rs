//! What `#[rpc]` and `#[derive(RpcError)]` put on the wire for shapes that
//! used to go wrong silently, and the call builder every client method
//! returns.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use jsonrpc_runtime::policy::{CancellationPolicy, ProgressPolicy};
use jsonrpc_runtime::{
    context::TypedContext, peer::SendError, rpc, CallError, Config, Context, ErrorObject, Peer,
    Router, RpcError, Transport,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tests::RawClient;

#[derive(Debug, PartialEq, Serialize, Deserialize, RpcError)]
enum WireError {
    #[rpc(error(code = -32010, message = "Division by zero"))]
    DivisionByZero,
    /// Fields named like the expansion's locals.
    #[rpc(error(code = -32011))]
    Shadowing {
        data: Vec<u8>,
        value: String,
        error: i32,
    },
    #[rpc(error(code = -32012))]
    Raw { r#type: String },
}

/// A `Result` under another name.
type CalcResult<T> = Result<T, WireError>;

#[rpc]
trait Wire {
    #[rpc(request = "divide")]
    async fn divide(&self, a: i64, b: i64) -> CalcResult<i64>;

    #[rpc(request = "plain")]
    async fn plain(&self) -> Vec<u8>;

    #[rpc(request = "shadow")]
    async fn shadow(&self) -> Result<(), WireError>;

    #[rpc(request)]
    async fn r#move(&self, r#type: String) -> String;

    #[rpc(request = "slow")]
    async fn slow(&self, ctx: Context, ms: u64) -> u64;

    #[rpc(request = "extras")]
    async fn extras(&self, ctx: Context) -> serde_json::Value;

    #[rpc(request = "count", progress = u32)]
    async fn count(&self, ctx: TypedContext<u32>, to: u32) -> u32;

    /// A default body in the trait.
    #[rpc(request = "greet")]
    async fn greet(&self, name: String) -> String {
        format!("hello {name}")
    }
}

#[derive(Default)]
struct WireImpl {
    slow_finished: AtomicBool,
}

impl Wire for WireImpl {
    async fn divide(&self, a: i64, b: i64) -> CalcResult<i64> {
        a.checked_div(b).ok_or(WireError::DivisionByZero)
    }
    async fn plain(&self) -> Vec<u8> {
        vec![1, 2]
    }
    async fn shadow(&self) -> Result<(), WireError> {
        Err(WireError::Shadowing {
            data: vec![7, 8],
            value: "v".into(),
            error: 3,
        })
    }
    async fn r#move(&self, r#type: String) -> String {
        r#type
    }
    async fn slow(&self, ctx: Context, ms: u64) -> u64 {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(ms)) => {
                self.slow_finished.store(true, Ordering::SeqCst);
                ms
            }
            _ = ctx.cancellation().cancelled() => 0,
        }
    }
    async fn extras(&self, ctx: Context) -> serde_json::Value {
        json!(ctx.extras().and_then(|e| e.get("session")))
    }
    async fn count(&self, ctx: TypedContext<u32>, to: u32) -> u32 {
        for n in 1..=to {
            ctx.progress(n).unwrap();
        }
        to
    }
}

fn serve(config: Config) -> (WireClient, Peer, Arc<WireImpl>) {
    let service = Arc::new(WireImpl::default());
    let (a, b) = Transport::pair(64);
    let server = Peer::builder()
        .config(config.clone())
        .router(Shared(service.clone()).into_router())
        .spawn(b);
    (
        WireClient::new(Peer::builder().config(config).spawn(a)),
        server,
        service,
    )
}

/// The service behind an `Arc`, so a test can look at its state.
struct Shared(Arc<WireImpl>);

impl Wire for Shared {
    async fn divide(&self, a: i64, b: i64) -> CalcResult<i64> {
        self.0.divide(a, b).await
    }
    async fn plain(&self) -> Vec<u8> {
        self.0.plain().await
    }
    async fn shadow(&self) -> Result<(), WireError> {
        self.0.shadow().await
    }
    async fn r#move(&self, r#type: String) -> String {
        self.0.r#move(r#type).await
    }
    async fn slow(&self, ctx: Context, ms: u64) -> u64 {
        self.0.slow(ctx, ms).await
    }
    async fn extras(&self, ctx: Context) -> serde_json::Value {
        self.0.extras(ctx).await
    }
    async fn count(&self, ctx: TypedContext<u32>, to: u32) -> u32 {
        self.0.count(ctx, to).await
    }
}

#[tokio::test]
async fn a_result_alias_goes_out_as_an_error_and_comes_back_typed() {
    let mut raw = RawClient::start(WireImpl::default().into_router(), Config::default());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"divide","params":[1,0]}"#)
        .await;
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32010,"message":"Division by zero"}})
    );
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"divide","params":[6,3]}"#)
        .await;
    assert_eq!(raw.recv().await["result"], 2);

    let (client, _server, _) = serve(Config::default());
    let err = client.divide(1, 0).await.unwrap_err();
    assert!(
        matches!(err, CallError::Domain(WireError::DivisionByZero)),
        "{err:?}"
    );
    let ok: i64 = client.divide(6, 3).await.unwrap();
    assert_eq!(ok, 2);
    let plain: Vec<u8> = client.plain().await.unwrap();
    assert_eq!(plain, [1, 2]);
}

#[tokio::test]
async fn error_fields_named_like_generated_locals_travel_both_ways() {
    let mut raw = RawClient::start(WireImpl::default().into_router(), Config::default());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"shadow"}"#)
        .await;
    assert_eq!(
        raw.recv().await["error"],
        json!({"code":-32011,"message":"Shadowing","data":{"data":[7,8],"value":"v","error":3}})
    );
    let (client, _server, _) = serve(Config::default());
    let err = client.shadow().await.unwrap_err();
    assert!(
        matches!(
            err,
            CallError::Domain(WireError::Shadowing { ref data, ref value, error: 3 })
                if data == &[7, 8] && value == "v"
        ),
        "{err:?}"
    );
    let wire = WireError::Raw { r#type: "t".into() }.into_error_object();
    assert_eq!(
        wire.data_as::<serde_json::Value>().unwrap(),
        Some(json!({"type": "t"}))
    );
    assert_eq!(
        WireError::from_error_object(&wire),
        Some(WireError::Raw { r#type: "t".into() })
    );
}

#[tokio::test]
async fn raw_identifiers_are_unrawed_on_the_wire() {
    let router = WireImpl::default().into_router();
    assert!(router.contains("move"), "{router:?}");
    assert!(!router.contains("r#move"));
    let mut raw = RawClient::start(router, Config::default());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"move","params":{"type":"x"}}"#)
        .await;
    assert_eq!(raw.recv().await["result"], "x");
    let (client, _server, _) = serve(Config::default());
    assert_eq!(client.r#move("y".into()).await.unwrap(), "y");
}

#[tokio::test]
async fn default_method_bodies_are_served() {
    let (client, _server, _) = serve(Config::default());
    assert_eq!(client.greet("you".into()).await.unwrap(), "hello you");
}

#[tokio::test]
async fn typed_progress_reaches_the_client_typed() {
    let config = Config::default().progress(ProgressPolicy::lsp());
    let (client, _server, _) = serve(config);
    let mut call = client.count_with_progress(3).unwrap();
    let mut seen = Vec::new();
    while let Some(n) = call.next_progress().await {
        seen.push(n.unwrap());
    }
    assert_eq!(seen, [1, 2, 3]);
    assert_eq!(call.result().await.unwrap(), 3);
}

#[tokio::test]
async fn a_client_call_times_out_when_asked_to() {
    let (client, _server, service) = serve(Config::default());
    let err = client
        .slow(2_000)
        .timeout(Duration::from_millis(20))
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::TimedOut), "{err:?}");
    assert!(!service.slow_finished.load(Ordering::SeqCst));
    // Without a timeout, the same call is answered.
    assert_eq!(client.slow(1).await.unwrap(), 1);
}

#[tokio::test]
async fn a_started_call_has_an_id_and_can_be_cancelled() {
    let config = Config::default().cancellation(CancellationPolicy::mcp());
    let (client, _server, service) = serve(config);
    let call = client.slow(5_000).start();
    let first = call.id().clone();
    call.cancel().unwrap();
    let err = call.await.unwrap_err();
    assert!(matches!(err, CallError::Cancelled), "{err:?}");
    assert!(!service.slow_finished.load(Ordering::SeqCst));

    // Every method can be started, not only those with progress.
    let call = client.divide(8, 2).start();
    assert_ne!(call.id(), &first);
    assert_eq!(call.await.unwrap(), 4);
}

#[tokio::test]
async fn cancelling_without_a_policy_says_so_and_the_call_goes_on() {
    let (client, _server, _) = serve(Config::default());
    let call = client.slow(10).start();
    assert!(matches!(
        call.cancel(),
        Err(SendError::NoCancellationPolicy)
    ));
    assert_eq!(call.await.unwrap(), 10);
}

#[tokio::test]
async fn extras_set_on_one_call_reach_the_handler() {
    let (client, _server, _) = serve(Config::default());
    let mut extras = jsonrpc_runtime::message::Extras::new();
    extras.insert("session".into(), json!("abc"));
    assert_eq!(client.extras().extras(extras).await.unwrap(), "abc");
    assert_eq!(client.extras().await.unwrap(), json!(null));
}

#[tokio::test]
async fn peer_call_is_a_builder_too() {
    let (client, _server, _) = serve(Config::default());
    let peer = client.peer();
    let err = peer
        .call::<i64>("divide", [1, 0])
        .errors::<WireError>()
        .timeout(Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::Domain(WireError::DivisionByZero)),
        "{err:?}"
    );
    let call = peer.call::<i64>("divide", [9, 3]).start();
    assert_eq!(call.await.unwrap(), 3);
}

#[test]
fn merging_routers_that_share_a_method_is_an_error_with_try_merge() {
    let ping = || {
        Router::new().request("divide", |(): (), _: Context| async {
            Ok::<_, ErrorObject>(0)
        })
    };
    let err = WireImpl::default()
        .into_router()
        .try_merge(ping())
        .unwrap_err();
    assert_eq!(err.method(), "divide");
    let merged = Router::new()
        .request("other", |(): (), _: Context| async {
            Ok::<_, ErrorObject>(0)
        })
        .try_merge(WireImpl::default().into_router())
        .unwrap();
    assert!(merged.contains("other") && merged.contains("divide"));
}

#[test]
#[should_panic(expected = "the method `divide` is registered twice")]
fn merge_still_panics_on_a_shared_method() {
    let _ = WireImpl::default()
        .into_router()
        .merge(WireImpl::default().into_router());
}

/// A generic trait with an optional argument whose type has no `Default`.
#[rpc]
trait Lookup<T> {
    #[rpc(request = "find")]
    async fn find(&self, key: String, fallback: Option<T>) -> Option<T>;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct NoDefault(u8);

struct Table;

impl Lookup<NoDefault> for Table {
    async fn find(&self, key: String, fallback: Option<NoDefault>) -> Option<NoDefault> {
        if key == "one" {
            Some(NoDefault(1))
        } else {
            fallback
        }
    }
}

#[tokio::test]
async fn optional_generic_arguments_need_no_default() {
    let mut raw = RawClient::start(Table.into_router(), Config::default());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"find","params":["two"]}"#)
        .await;
    assert_eq!(raw.recv().await["result"], json!(null));
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"find","params":{"key":"two","fallback":5}}"#)
        .await;
    assert_eq!(raw.recv().await["result"], 5);
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder().router(Table.into_router()).spawn(b);
    let client: LookupClient<NoDefault> = LookupClient::new(Peer::spawn(a));
    assert_eq!(client.find("two".into(), None).await.unwrap(), None);
    assert_eq!(
        client.find("one".into(), None).await.unwrap(),
        Some(NoDefault(1))
    );
}

/// Methods under `#[cfg]` and `#[deprecated]`.
#[rpc]
trait Versions {
    #[rpc(request = "current")]
    async fn current(&self) -> u32;

    #[cfg(any())]
    #[rpc(request = "never")]
    async fn never(&self, gone: NotAType) -> u32;

    #[deprecated = "use `current`"]
    #[rpc(request = "old")]
    async fn old(&self) -> u32;
}

struct V;

#[allow(deprecated)]
impl Versions for V {
    async fn current(&self) -> u32 {
        2
    }
    async fn old(&self) -> u32 {
        1
    }
}

#[tokio::test]
async fn cfg_and_deprecated_methods_are_carried_to_routes_and_client() {
    let router = V.into_router();
    let mut methods: Vec<_> = router.methods().collect();
    methods.sort_unstable();
    assert_eq!(methods, ["current", "old"]);
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder().router(router).spawn(b);
    let client = VersionsClient::new(Peer::spawn(a));
    assert_eq!(client.current().await.unwrap(), 2);
    #[allow(deprecated)]
    let old = client.old().await.unwrap();
    assert_eq!(old, 1);
}

#[test]
fn call_futures_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let (a, _b) = Transport::pair(8);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = WireClient::new(Peer::spawn(a));
        let future = std::future::IntoFuture::into_future(client.divide(1, 2));
        assert_send(&future);
        let started = client.divide(1, 2).start();
        assert_send(&started);
    });
}

/// A progress report both the MCP and the LSP policies carry.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Step {
    progress: u32,
}

/// A method without arguments that reports progress.
#[rpc]
trait Indexer {
    #[rpc(request = "reindex", progress = Step)]
    async fn reindex(&self, ctx: TypedContext<Step>) -> u32;

    #[rpc(notification = "touched")]
    async fn touched(&self);
}

struct Idx;

impl Indexer for Idx {
    async fn reindex(&self, ctx: TypedContext<Step>) -> u32 {
        ctx.progress(Step { progress: 1 }).unwrap();
        7
    }
    async fn touched(&self) {}
}

#[tokio::test]
async fn a_method_without_arguments_takes_the_progress_token_its_client_sends() {
    for policy in [ProgressPolicy::mcp(), ProgressPolicy::lsp()] {
        let config = Config::default().progress(policy);
        let (a, b) = Transport::pair(8);
        let _server = Peer::builder()
            .config(config.clone())
            .router(Idx.into_router())
            .spawn(b);
        let client = IndexerClient::new(Peer::builder().config(config).spawn(a));
        let mut call = client.reindex_with_progress().unwrap();
        let mut seen = Vec::new();
        while let Some(n) = call.next_progress().await {
            seen.push(n.unwrap());
        }
        assert_eq!(seen, [Step { progress: 1 }]);
        assert_eq!(call.result().await.unwrap(), 7);
        assert_eq!(client.reindex().await.unwrap(), 7);
    }
}

#[tokio::test]
async fn a_method_without_arguments_accepts_every_empty_params_and_meta() {
    let mut raw = RawClient::start(Idx.into_router(), Config::default());
    let params = [
        "",
        r#","params":null"#,
        r#","params":{}"#,
        r#","params":[]"#,
        r#","params":{"_meta":{"progressToken":"t"}}"#,
    ];
    for (id, params) in params.iter().enumerate() {
        raw.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"reindex"{params}}}"#
        ))
        .await;
        let answer = raw.recv().await;
        assert_eq!(answer["result"], 7, "params {params}: {answer}");
    }
    // By position, a method without arguments takes none.
    raw.send(r#"{"jsonrpc":"2.0","id":9,"method":"reindex","params":[1]}"#)
        .await;
    assert_eq!(raw.recv().await["error"]["code"], -32602);
}
