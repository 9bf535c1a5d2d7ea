//! `#[rpc]` traits and `#[derive(RpcError)]` enums, end to end.

use std::sync::atomic::{AtomicI64, Ordering};

use jsonrpc_runtime::{
    context::TypedContext, rpc, CallError, Context, ErrorObject, Peer, RpcError, Transport,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tests::RawClient;

#[derive(Debug, PartialEq, Serialize, Deserialize, RpcError)]
enum CalcError {
    #[rpc(error(code = -32010, message = "Division by zero"))]
    DivisionByZero,
    #[rpc(error(code = -32011))]
    Overflow { a: i64, b: i64 },
    #[rpc(error(code = 7, message = "Bad input"))]
    BadInput(String),
    #[rpc(error(code = 8))]
    Pair(u8, u8),
}

/// A calculator.
#[rpc(rename_all = "camelCase")]
trait Calculator {
    /// Adds two numbers.
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> Result<i64, CalcError>;

    #[rpc(request = "divide")]
    async fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, CalcError>;

    #[rpc(request = "scale")]
    async fn scale(&self, value: i64, scale_factor: Option<i64>) -> i64;

    #[rpc(request = "whoami")]
    async fn whoami(&self, ctx: Context) -> String;

    #[rpc(request = "total")]
    async fn total(&self) -> i64;

    #[rpc(notification = "log")]
    async fn log(&self, message: String);

    #[rpc(request = "echo")]
    async fn echo(&self, #[rpc(params)] value: Vec<String>) -> Vec<String>;

    #[rpc(request = "renamed")]
    async fn renamed(&self, #[rpc(rename = "x_value")] x: i64) -> i64;
}

#[derive(Default)]
struct Calc {
    logged: AtomicI64,
}

impl Calculator for Calc {
    async fn add(&self, a: i64, b: i64) -> Result<i64, CalcError> {
        a.checked_add(b).ok_or(CalcError::Overflow { a, b })
    }
    async fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, CalcError> {
        if divisor == 0 {
            return Err(CalcError::DivisionByZero);
        }
        if dividend < 0 {
            return Err(CalcError::BadInput(format!("{dividend} is negative")));
        }
        if dividend == 1 {
            return Err(CalcError::Pair(1, 2));
        }
        Ok(dividend / divisor)
    }
    async fn scale(&self, value: i64, scale_factor: Option<i64>) -> i64 {
        value * scale_factor.unwrap_or(1)
    }
    async fn whoami(&self, ctx: Context) -> String {
        format!(
            "{} #{}",
            ctx.method(),
            ctx.id().map(|id| id.to_string()).unwrap_or_default()
        )
    }
    async fn total(&self) -> i64 {
        self.logged.load(Ordering::SeqCst)
    }
    async fn log(&self, message: String) {
        self.logged
            .fetch_add(message.len() as i64, Ordering::SeqCst);
    }
    async fn echo(&self, value: Vec<String>) -> Vec<String> {
        value
    }
    async fn renamed(&self, x: i64) -> i64 {
        x
    }
}

fn serve() -> (CalculatorClient, Peer) {
    let (a, b) = Transport::pair(64);
    let server = Peer::builder()
        .router(Calc::default().into_router())
        .spawn(b);
    (CalculatorClient::new(Peer::spawn(a)), server)
}

#[tokio::test]
async fn typed_calls_and_typed_errors_round_trip() {
    let (client, _server) = serve();
    assert_eq!(client.add(2, 3).await.unwrap(), 5);
    let err = client.divide(1, 0).await.unwrap_err();
    assert!(
        matches!(err, CallError::Domain(CalcError::DivisionByZero)),
        "{err:?}"
    );
    let err = client.add(i64::MAX, 1).await.unwrap_err();
    assert!(
        matches!(
            err,
            CallError::Domain(CalcError::Overflow { a: i64::MAX, b: 1 })
        ),
        "{err:?}"
    );
    let err = client.divide(-4, 2).await.unwrap_err();
    assert!(
        matches!(err, CallError::Domain(CalcError::BadInput(ref s)) if s == "-4 is negative"),
        "{err:?}"
    );
    let err = client.divide(1, 2).await.unwrap_err();
    assert!(
        matches!(err, CallError::Domain(CalcError::Pair(1, 2))),
        "{err:?}"
    );
}

#[tokio::test]
async fn optional_arguments_context_and_no_params() {
    let (client, _server) = serve();
    assert_eq!(client.scale(3, None).await.unwrap(), 3);
    assert_eq!(client.scale(3, Some(4)).await.unwrap(), 12);
    assert_eq!(client.whoami().await.unwrap(), "whoami #3");
    client.log("hello".into()).await.unwrap();
    assert_eq!(client.total().await.unwrap(), 5);
    assert_eq!(client.echo(vec!["a".into()]).await.unwrap(), ["a"]);
    assert_eq!(client.renamed(9).await.unwrap(), 9);
}

#[tokio::test]
async fn params_by_name_by_position_and_renamed() {
    let mut raw = RawClient::start(Calc::default().into_router(), Default::default());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"add","params":{"a":1,"b":2}}"#)
        .await;
    assert_eq!(raw.recv().await["result"], 3);
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"add","params":[4,5]}"#)
        .await;
    assert_eq!(raw.recv().await["result"], 9);
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"scale","params":{"value":2,"scaleFactor":5}}"#)
        .await;
    assert_eq!(raw.recv().await["result"], 10);
    raw.send(r#"{"jsonrpc":"2.0","id":4,"method":"scale","params":[2]}"#)
        .await;
    assert_eq!(raw.recv().await["result"], 2);
    raw.send(r#"{"jsonrpc":"2.0","id":5,"method":"renamed","params":{"x_value":7}}"#)
        .await;
    assert_eq!(raw.recv().await["result"], 7);
    for params in [
        "",
        r#","params":null"#,
        r#","params":{}"#,
        r#","params":[]"#,
    ] {
        raw.send(&format!(
            r#"{{"jsonrpc":"2.0","id":6,"method":"total"{params}}}"#
        ))
        .await;
        assert_eq!(raw.recv().await["result"], 0, "{params}");
    }
    raw.send(r#"{"jsonrpc":"2.0","id":7,"method":"add","params":{"a":1}}"#)
        .await;
    let answer = raw.recv().await;
    assert_eq!(answer["error"]["code"], -32602);
    raw.send(r#"{"jsonrpc":"2.0","id":8,"method":"divide","params":[1,0]}"#)
        .await;
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc":"2.0","id":8,"error":{"code":-32010,"message":"Division by zero"}})
    );
    raw.send(r#"{"jsonrpc":"2.0","id":9,"method":"add","params":[9223372036854775807,1]}"#)
        .await;
    assert_eq!(
        raw.recv().await["error"],
        json!({"code":-32011,"message":"Overflow","data":{"a":9223372036854775807i64,"b":1}})
    );
}

#[test]
fn error_enum_maps_codes_both_ways() {
    let wire = CalcError::Overflow { a: 1, b: 2 }.into_error_object();
    assert_eq!(wire.code.0, -32011);
    assert_eq!(
        CalcError::from_error_object(&wire),
        Some(CalcError::Overflow { a: 1, b: 2 })
    );
    assert_eq!(
        CalcError::from_error_object(&ErrorObject::new(-32010, "x")),
        Some(CalcError::DivisionByZero)
    );
    assert_eq!(
        CalcError::from_error_object(&ErrorObject::new(-1, "x")),
        None
    );
    // A known code whose data does not decode stays raw.
    assert_eq!(
        CalcError::from_error_object(&ErrorObject::new(-32011, "x")),
        None
    );
}

/// A store generic over its key and value types.
#[rpc]
trait Store<K, V> {
    #[rpc(request = "get")]
    async fn get(&self, key: K) -> Option<V>;
    #[rpc(request = "put")]
    async fn put(&self, key: K, value: V) -> Result<(), ErrorObject>;
}

#[derive(Default)]
struct MemStore(std::sync::Mutex<std::collections::HashMap<String, u32>>);

impl Store<String, u32> for MemStore {
    async fn get(&self, key: String) -> Option<u32> {
        self.0.lock().unwrap().get(&key).copied()
    }
    async fn put(&self, key: String, value: u32) -> Result<(), ErrorObject> {
        if key.is_empty() {
            return Err(ErrorObject::new(-32050, "empty key"));
        }
        self.0.lock().unwrap().insert(key, value);
        Ok(())
    }
}

#[tokio::test]
async fn generic_traits_serve_and_call() {
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder()
        .router(MemStore::default().into_router())
        .spawn(b);
    let client: StoreClient<String, u32> = StoreClient::new(Peer::spawn(a));
    client.put("a".into(), 1).await.unwrap();
    assert_eq!(client.get("a".into()).await.unwrap(), Some(1));
    assert_eq!(client.get("b".into()).await.unwrap(), None);
    let err = client.put(String::new(), 1).await.unwrap_err();
    assert!(
        matches!(err, CallError::Domain(ref e) if e.code.0 == -32050),
        "{err:?}"
    );
}

/// The client side of a bidirectional protocol.
#[rpc]
trait Editor {
    #[rpc(request = "workspace/configuration")]
    async fn configuration(&self, section: String) -> String;
}

/// The server side, which asks the editor while serving a request.
#[rpc]
trait Language {
    #[rpc(request = "hover")]
    async fn hover(&self, ctx: Context, word: String) -> Result<String, ErrorObject>;
}

struct EditorImpl;
impl Editor for EditorImpl {
    async fn configuration(&self, section: String) -> String {
        format!("{section}=on")
    }
}

struct LanguageImpl;
impl Language for LanguageImpl {
    async fn hover(&self, ctx: Context, word: String) -> Result<String, ErrorObject> {
        let editor = EditorClient::new(ctx.peer().clone());
        let setting = editor.configuration("hover".into()).await?;
        Ok(format!("{word} ({setting})"))
    }
}

#[tokio::test]
async fn bidirectional_typed_calls_from_inside_a_handler() {
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder().router(LanguageImpl.into_router()).spawn(b);
    let editor_side = Peer::builder().router(EditorImpl.into_router()).spawn(a);
    let language = LanguageClient::new(editor_side);
    assert_eq!(
        language.hover("word".into()).await.unwrap(),
        "word (hover=on)"
    );
}

#[test]
fn generated_router_lists_its_methods() {
    let router = Calc::default().into_router();
    let mut methods: Vec<_> = router.methods().collect();
    methods.sort_unstable();
    assert_eq!(
        methods,
        ["add", "divide", "echo", "log", "renamed", "scale", "total", "whoami"]
    );
}

/// Long work that reports progress and streams partial results.
#[rpc]
trait Indexer {
    #[rpc(request = "index", progress = u32)]
    async fn index(&self, ctx: TypedContext<u32>, files: u32) -> u32;

    #[rpc(request = "symbols", partial = Vec<String>)]
    async fn symbols(&self, ctx: Context, #[rpc(params)] query: SymbolQuery) -> Vec<String>;
}

/// An LSP-style params struct: the partial-result token travels in it.
#[derive(Serialize, Deserialize)]
struct SymbolQuery {
    prefix: String,
}

struct IndexerImpl;

impl Indexer for IndexerImpl {
    async fn index(&self, ctx: TypedContext<u32>, files: u32) -> u32 {
        for done in 1..=files {
            ctx.progress(done).unwrap();
        }
        files
    }
    async fn symbols(&self, ctx: Context, query: SymbolQuery) -> Vec<String> {
        for chunk in [["a1", "a2"], ["a3", "a4"]] {
            let matching: Vec<_> = chunk
                .iter()
                .filter(|s| s.starts_with(&query.prefix))
                .collect();
            ctx.partial_result(matching).unwrap();
        }
        Vec::new()
    }
}

#[tokio::test]
async fn generated_progress_and_partial_variants_are_typed() {
    let config =
        jsonrpc_runtime::Config::default().progress(jsonrpc_runtime::policy::ProgressPolicy::lsp());
    let (a, b) = Transport::pair(64);
    let _server = Peer::builder()
        .config(config.clone())
        .router(IndexerImpl.into_router())
        .spawn(b);
    let client = IndexerClient::new(Peer::builder().config(config).spawn(a));

    let mut call = client.index_with_progress(3).unwrap();
    let mut steps = Vec::new();
    while let Some(step) = call.next_progress().await {
        steps.push(step.unwrap());
    }
    assert_eq!(steps, [1, 2, 3]);
    assert_eq!(call.result().await.unwrap(), 3);

    let mut call = client
        .symbols_partial(SymbolQuery { prefix: "a".into() })
        .unwrap();
    let mut found = Vec::new();
    while let Some(chunk) = call.next_progress().await {
        found.extend(chunk.unwrap());
    }
    assert_eq!(found, ["a1", "a2", "a3", "a4"]);
    assert!(call.result().await.unwrap().is_empty());
    // The plain method still exists.
    assert_eq!(client.index(2).await.unwrap(), 2);
}

/// A base protocol every server speaks.
#[rpc]
trait Base {
    #[rpc(request = "ping")]
    async fn ping(&self) -> String;
}

/// A protocol extending it.
#[rpc]
trait Full: Base + Send + Sync + 'static {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> i64;
}

struct FullImpl;
impl Base for FullImpl {
    async fn ping(&self) -> String {
        "pong".into()
    }
}
impl Full for FullImpl {
    async fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

#[tokio::test]
async fn a_trait_is_served_with_its_supertraits() {
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder().router(Full::into_router(FullImpl)).spawn(b);
    let peer = Peer::spawn(a);
    assert_eq!(FullClient::new(peer.clone()).add(2, 3).await.unwrap(), 5);
    assert_eq!(BaseClient::new(peer).ping().await.unwrap(), "pong");
    // The supertrait alone serves only its own methods.
    let mut methods: Vec<_> = Base::into_router(FullImpl)
        .methods()
        .map(str::to_owned)
        .collect();
    methods.sort_unstable();
    assert_eq!(methods, ["ping"]);
}

/// Two extensions of `Base`, and a trait extending both: `Base` is reached
/// twice.
#[rpc]
trait Left: Base {
    #[rpc(request = "left")]
    async fn left(&self) -> String;
}

#[rpc]
trait Right: Base {
    #[rpc(request = "right")]
    async fn right(&self) -> String;
}

#[rpc]
trait Both: Left + Right {
    #[rpc(request = "both")]
    async fn both(&self) -> String;
}

struct Diamond;
impl Base for Diamond {
    async fn ping(&self) -> String {
        "diamond".into()
    }
}
impl Left for Diamond {
    async fn left(&self) -> String {
        "l".into()
    }
}
impl Right for Diamond {
    async fn right(&self) -> String {
        "r".into()
    }
}
impl Both for Diamond {
    async fn both(&self) -> String {
        "lr".into()
    }
}

#[tokio::test]
async fn a_supertrait_reached_twice_is_served_once() {
    let router = Both::into_router(Diamond);
    let mut methods: Vec<_> = router.methods().map(str::to_owned).collect();
    methods.sort_unstable();
    assert_eq!(methods, ["both", "left", "ping", "right"]);
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder().router(router).spawn(b);
    let peer = Peer::spawn(a);
    assert_eq!(BothClient::new(peer.clone()).both().await.unwrap(), "lr");
    assert_eq!(LeftClient::new(peer.clone()).left().await.unwrap(), "l");
    assert_eq!(RightClient::new(peer.clone()).right().await.unwrap(), "r");
    assert_eq!(BaseClient::new(peer).ping().await.unwrap(), "diamond");
    let described: Vec<_> = <Diamond as Both>::openrpc_methods()
        .iter()
        .map(|m| m.name().to_owned())
        .collect();
    assert_eq!(described, ["both", "left", "ping", "right"]);
}

mod api {
    use jsonrpc_runtime::rpc;

    #[rpc]
    pub(crate) trait Greeter {
        #[rpc(request = "greet")]
        async fn greet(&self, name: String) -> String;
    }
}

use api::Greeter as G;

/// A supertrait imported under another name, written in the `where` clause.
#[rpc]
trait Polite
where
    Self: G,
{
    #[rpc(request = "thank")]
    async fn thank(&self, name: String) -> String;
}

struct Host;
impl G for Host {
    async fn greet(&self, name: String) -> String {
        format!("hello {name}")
    }
}
impl Polite for Host {
    async fn thank(&self, name: String) -> String {
        format!("thanks {name}")
    }
}

#[tokio::test]
async fn a_supertrait_imported_under_another_name_is_served() {
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder().router(Polite::into_router(Host)).spawn(b);
    let peer = Peer::spawn(a);
    assert_eq!(
        PoliteClient::new(peer.clone())
            .thank("ann".into())
            .await
            .unwrap(),
        "thanks ann"
    );
    assert_eq!(
        api::GreeterClient::new(peer)
            .greet("bob".into())
            .await
            .unwrap(),
        "hello bob"
    );
}

#[test]
#[should_panic(expected = "the method `ping` is served by both `Clash` and `Base`")]
fn a_method_of_a_trait_and_its_supertrait_with_one_wire_name_is_refused() {
    #[rpc]
    trait Clash: Base {
        #[rpc(request = "ping")]
        async fn ping_again(&self) -> String;
    }
    impl Clash for FullImpl {
        async fn ping_again(&self) -> String {
            "again".into()
        }
    }
    let _ = Clash::into_router(FullImpl);
}
