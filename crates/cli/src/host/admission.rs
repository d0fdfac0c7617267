//! Admission: a host-wide session cap and a per-tenant quota. A request
//! past either is answered at once (`refused` with `retryAfterMs`): there
//! is no queue, so no client ever waits unboundedly. A slot is a guard:
//! dropping it (the session's end, whatever the path) frees it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::config::Admission;
use super::events::Refusal;

#[derive(Debug, Default)]
struct Counts {
    total: u64,
    per_tenant: HashMap<String, u64>,
}

#[derive(Debug, Clone)]
pub struct Admissions {
    limits: Admission,
    counts: Arc<Mutex<Counts>>,
}

/// One admitted session; freed on drop.
#[derive(Debug)]
pub struct Slot {
    tenant: String,
    counts: Arc<Mutex<Counts>>,
}

impl Admissions {
    pub fn new(limits: Admission) -> Admissions {
        Admissions {
            limits,
            counts: Arc::default(),
        }
    }

    pub fn active(&self) -> u64 {
        self.counts.lock().map(|c| c.total).unwrap_or(0)
    }

    pub fn admit(&self, tenant: &str) -> Result<Slot, Refusal> {
        let mut counts = self.counts.lock().map_err(|_| Refusal::Capacity)?;
        if counts.total >= self.limits.max_sessions {
            return Err(Refusal::Capacity);
        }
        let mine = counts.per_tenant.get(tenant).copied().unwrap_or(0);
        if self.limits.per_tenant.is_some_and(|quota| mine >= quota) {
            return Err(Refusal::TenantQuota);
        }
        counts.total += 1;
        counts.per_tenant.insert(tenant.to_string(), mine + 1);
        Ok(Slot {
            tenant: tenant.to_string(),
            counts: Arc::clone(&self.counts),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut counts) = self.counts.lock() {
            counts.total = counts.total.saturating_sub(1);
            if let Some(n) = counts.per_tenant.get_mut(&self.tenant) {
                *n -= 1;
                if *n == 0 {
                    counts.per_tenant.remove(&self.tenant);
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_and_the_tenant_quota_refuse_and_a_dropped_slot_frees_its_place() {
        let admissions = Admissions::new(Admission {
            max_sessions: 2,
            per_tenant: Some(1),
            retry_after_ms: 1,
        });
        let a = admissions.admit("a").unwrap();
        assert_eq!(admissions.admit("a").unwrap_err(), Refusal::TenantQuota);
        let _b = admissions.admit("b").unwrap();
        assert_eq!(admissions.admit("c").unwrap_err(), Refusal::Capacity);
        drop(a);
        assert!(admissions.admit("a").is_ok());
    }
}
