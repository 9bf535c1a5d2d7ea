//! Run with: cargo run --example openrpc
//!
//! An OpenRPC document from `#[rpc]` traits: each method's name, params and
//! result with JSON Schemas (schemars) of their types, served as
//! `rpc.discover`. The example asks for the document over a connection,
//! prints it, and checks it names every method.

use jsonrpc_runtime::openrpc::Document;
use jsonrpc_runtime::{rpc, ErrorObject, Peer, Transport};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[path = "support/logging.rs"]
mod logging;

/// A point on the plane.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Point {
    x: f64,
    y: f64,
}

/// Geometry on the plane.
#[rpc]
trait Geometry {
    /// The distance between two points.
    #[rpc(request = "distance")]
    async fn distance(&self, from: Point, to: Point) -> Result<f64, ErrorObject>;

    /// The point halfway between two points.
    #[rpc(request = "midpoint")]
    async fn midpoint(&self, a: Point, b: Point) -> Point;

    /// Something to write in the server's log.
    #[rpc(notification = "note")]
    async fn note(&self, text: String);
}

struct Plane;

impl Geometry for Plane {
    async fn distance(&self, from: Point, to: Point) -> Result<f64, ErrorObject> {
        Ok((to.x - from.x).hypot(to.y - from.y))
    }
    async fn midpoint(&self, a: Point, b: Point) -> Point {
        Point {
            x: (a.x + b.x) / 2.0,
            y: (a.y + b.y) / 2.0,
        }
    }
    async fn note(&self, text: String) {
        println!("note: {text}");
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    logging::init();
    let document = Document::new("geometry", "1.0.0").methods(Plane::openrpc_methods());
    let router = Plane.into_router().discover(&document);

    let (client_side, server_side) = Transport::pair(64);
    let _server = Peer::builder().router(router).spawn(server_side);
    let client = Peer::spawn(client_side);

    let discovered: serde_json::Value = client.call("rpc.discover", ()).await?;
    println!("{}", serde_json::to_string_pretty(&discovered)?);
    let names: Vec<&str> = discovered["methods"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["name"].as_str())
        .collect();
    if names != ["distance", "midpoint", "note"] {
        return Err(format!("the document lists {names:?}").into());
    }
    Ok(())
}
