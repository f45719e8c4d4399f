//! A server-wide count taken a share at a time by each thread, so that
//! the requests a thread serves write no count every thread writes.
//!
//! A thread takes a share of the count (see [`Shares`]) and counts its
//! requests against it on that thread alone; what it keeps unused past
//! two shares goes back, and all of it when the thread ends. The shares
//! count as taken, so a bound on the count holds exactly; what threads
//! keep unused (two shares each at most) only makes it refuse earlier.
//! The HTTP/2 heads' bound (`serve/heads.rs`) and the server's allowance
//! for request bodies (`handler/allowance.rs`) are counted so.

use std::{
    cell::{Cell, RefCell},
    sync::{Arc, Weak},
};

/// A count shared by every thread, which shares are taken from.
pub(crate) trait Pool: Send + Sync + 'static {
    /// Takes `amount` off the count, if it allows as much.
    fn take(&self, amount: usize) -> bool;

    /// Gives `amount` back to the count.
    fn give(&self, amount: usize);
}

/// A [`Pool`], taken by each thread `share` at a time; 0 for no shares.
#[derive(Debug)]
pub(crate) struct Shares<P> {
    pool: Arc<P>,
    share: usize,
}

impl<P> Clone for Shares<P> {
    fn clone(&self) -> Self {
        Self {
            pool: Arc::clone(&self.pool),
            share: self.share,
        }
    }
}

impl<P: Pool> Shares<P> {
    pub(crate) fn new(pool: P, share: usize) -> Self {
        Self {
            pool: Arc::new(pool),
            share,
        }
    }

    /// The count.
    pub(crate) fn pool(&self) -> &Arc<P> {
        &self.pool
    }

    /// The size of a share; 0 for none.
    pub(crate) fn share(&self) -> usize {
        self.share
    }

    /// Takes `amount` from this thread's share, taking another share when
    /// what is left is too little: `false` when `amount` is larger than a
    /// share, or no share fits. The caller then takes it from the pool.
    pub(crate) fn take(&self, amount: usize) -> bool {
        if self.share == 0 || amount > self.share {
            return false;
        }
        let taken = KEPT.try_with(|kept| {
            let mut kept = kept.borrow_mut();
            let unused = kept.unused(&self.pool);
            if *unused < amount {
                if !self.pool.take(self.share) {
                    return false;
                }
                *unused += self.share;
            }
            *unused -= amount;
            true
        });
        taken == Ok(true)
    }

    /// Gives back `amount`: to this thread's share, and to the pool what
    /// the thread keeps past two shares. More than two shares at once (or
    /// on a thread that is ending) goes straight to the pool.
    pub(crate) fn give(&self, amount: usize) {
        if self.share > 0 && amount <= 2 * self.share {
            let kept = KEPT.try_with(|kept| {
                let mut kept = kept.borrow_mut();
                let unused = kept.unused(&self.pool);
                *unused += amount;
                if *unused > 2 * self.share {
                    let excess = *unused - self.share;
                    *unused = self.share;
                    self.pool.give(excess);
                }
            });
            if kept.is_ok() {
                return;
            }
        }
        self.pool.give(amount);
    }
}

thread_local! {
    /// What this thread keeps unused of its share of each pool.
    static KEPT: RefCell<Kept> = const { RefCell::new(Kept(Vec::new())) };
}

/// A thread's shares: of each pool its requests took one of, what is
/// left unused. Given back when the thread ends.
struct Kept(Vec<(Weak<dyn Pool>, usize)>);

impl Kept {
    /// The unused part of this thread's share of `pool` (0 when it holds
    /// none yet).
    fn unused<P: Pool>(&mut self, pool: &Arc<P>) -> &mut usize {
        let of_pool = |of: &Weak<dyn Pool>| std::ptr::addr_eq(of.as_ptr(), Arc::as_ptr(pool));
        let at = match self.0.iter().position(|(of, _)| of_pool(of)) {
            Some(at) => at,
            None => {
                // Forgets the pools of servers that are gone.
                self.0.retain(|(of, _)| of.strong_count() > 0);
                let pool: Weak<dyn Pool> = Arc::downgrade(pool) as Weak<dyn Pool>;
                self.0.push((pool, 0));
                self.0.len() - 1
            }
        };
        &mut self.0[at].1
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        for (pool, unused) in self.0.drain(..) {
            if let Some(pool) = pool.upgrade() {
                pool.give(unused);
            }
        }
    }
}

thread_local! {
    /// Whether the requests this thread suspends share a hold on the
    /// router's tables: set on a server's worker, whose connections never
    /// leave it.
    static SHARED_TABLES: Cell<bool> = const { Cell::new(false) };
}

/// Makes the requests this thread suspends share a hold on their router's
/// tables (the router keeps the holds; the server says where).
pub(crate) fn share_tables_on_this_thread() {
    SHARED_TABLES.with(|shared| shared.set(true));
}

/// Whether [`share_tables_on_this_thread`] was called on this thread.
#[inline]
pub(crate) fn tables_shared_on_this_thread() -> bool {
    SHARED_TABLES.try_with(Cell::get).unwrap_or(false)
}
