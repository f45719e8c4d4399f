//! axum's `todos` example, ported: a RESTful server managing some todos,
//! with its middleware where axum puts it (`Router::layer`: a timeout
//! whose error becomes 408, and tower-http's `TraceLayer`).
//!
//! The port changes the imports, `with_state` to `state`, and `compile` the
//! router before serving it; the ids are numbers where axum's use the
//! `uuid` crate.
//!
//! - `GET /todos`: a JSON list of todos (`?offset=&limit=`).
//! - `POST /todos`: create a todo.
//! - `PATCH /todos/{id}`: update a todo.
//! - `DELETE /todos/{id}`: delete a todo.
//!
//! ```text
//! cargo run --example todos
//! curl -i -X POST -H 'content-type: application/json' -d '{"text":"write docs"}' http://127.0.0.1:3005/todos
//! curl -i http://127.0.0.1:3005/todos
//! ```

use std::{
    collections::HashMap,
    sync::{
        Arc, RwLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use http::StatusCode;
use pronghorn::{
    BoxError, CompiledRouter, HandleErrorLayer, IntoResponse, Router,
    handler::{Json, Path, Query, State},
    router::{get, patch},
};
use serde::{Deserialize, Serialize};
use tower::ServiceBuilder;
use tower_http::trace::TraceLayer;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt().init();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3005").await?;
    tracing::info!("listening on {}", listener.local_addr()?);
    pronghorn::serve(listener, app()).await
}

/// The application: its routes and, around every one of them, the
/// middleware.
pub fn app() -> CompiledRouter {
    let db = Db::default();

    // Compose the routes
    Router::new()
        .route("/todos", get(todos_index).post(todos_create))
        .route("/todos/{id}", patch(todos_update).delete(todos_delete))
        // Add middleware to all routes
        .layer(
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(|error: BoxError| async move {
                    if error.is::<tower::timeout::error::Elapsed>() {
                        Ok(StatusCode::REQUEST_TIMEOUT)
                    } else {
                        Err((
                            StatusCode::INTERNAL_SERVER_ERROR,
                            format!("Unhandled internal error: {error}"),
                        ))
                    }
                }))
                .timeout(Duration::from_secs(10))
                .layer(TraceLayer::new_for_http())
                .into_inner(),
        )
        .state(db)
        .compile()
        .expect("the routes are valid")
}

// The query parameters for todos index
#[derive(Debug, Deserialize, Default)]
pub struct Pagination {
    pub offset: Option<usize>,
    pub limit: Option<usize>,
}

async fn todos_index(pagination: Query<Pagination>, State(db): State<Db>) -> impl IntoResponse {
    let todos = db.read().unwrap();

    let todos = todos
        .values()
        .skip(pagination.offset.unwrap_or(0))
        .take(pagination.limit.unwrap_or(usize::MAX))
        .cloned()
        .collect::<Vec<_>>();

    Json(todos)
}

#[derive(Debug, Deserialize)]
struct CreateTodo {
    text: String,
}

async fn todos_create(State(db): State<Db>, Json(input): Json<CreateTodo>) -> impl IntoResponse {
    let todo = Todo {
        id: next_id(),
        text: input.text,
        completed: false,
    };

    db.write().unwrap().insert(todo.id, todo.clone());

    (StatusCode::CREATED, Json(todo))
}

#[derive(Debug, Deserialize)]
struct UpdateTodo {
    text: Option<String>,
    completed: Option<bool>,
}

async fn todos_update(
    Path(id): Path<u64>,
    State(db): State<Db>,
    Json(input): Json<UpdateTodo>,
) -> Result<impl IntoResponse, StatusCode> {
    let mut todo = db
        .read()
        .unwrap()
        .get(&id)
        .cloned()
        .ok_or(StatusCode::NOT_FOUND)?;

    if let Some(text) = input.text {
        todo.text = text;
    }

    if let Some(completed) = input.completed {
        todo.completed = completed;
    }

    db.write().unwrap().insert(todo.id, todo.clone());

    Ok(Json(todo))
}

async fn todos_delete(Path(id): Path<u64>, State(db): State<Db>) -> impl IntoResponse {
    if db.write().unwrap().remove(&id).is_some() {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::NOT_FOUND
    }
}

type Db = Arc<RwLock<HashMap<u64, Todo>>>;

/// The next todo's id (axum's example draws a random `Uuid`).
fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[derive(Debug, Serialize, Clone)]
struct Todo {
    id: u64,
    text: String,
    completed: bool,
}
