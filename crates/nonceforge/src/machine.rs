//! Machine ids: which of the 512 members of a cluster this generator is.
//!
//! A nonce is unique across a cluster only while no two live generators share a
//! machine id. This module covers the local strategies: a static value, the number
//! at the end of an environment variable (a Kubernetes StatefulSet pod is named
//! `web-0`, `web-1`, …), or this host's position in a list of hosts. Leases for
//! autoscaled fleets live in the `nonceforge-lease` crate.

use crate::error::{Error, Result};
use std::fmt;

/// A machine id: a number in 0..=511 (9 bits of every nonce), or in 0..=65535
/// for a generator of the wide layout ([`MachineId::new_in`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MachineId(u16);

impl MachineId {
    /// The largest machine id, 511.
    pub const MAX: u16 = 511;

    /// A machine id from a number; fails unless it is in 0..=511.
    ///
    /// ```
    /// use nonceforge::MachineId;
    /// assert_eq!(MachineId::new(7).unwrap().get(), 7);
    /// assert!(MachineId::new(512).is_err());
    /// ```
    pub fn new(value: u64) -> Result<Self> {
        if value > Self::MAX as u64 {
            return Err(Error::MachineIdOutOfRange { value });
        }
        Ok(MachineId(value as u16))
    }

    /// The largest machine id of the wide layout, 65535.
    pub const MAX_WIDE: u16 = u16::MAX;

    /// A machine id of `layout`: 0..=511 (standard, as [`new`](Self::new)) or
    /// 0..=65535 (wide).
    ///
    /// ```
    /// use nonceforge::{MachineId, layout::Layout};
    /// assert_eq!(MachineId::new_in(Layout::Wide, 40_000).unwrap().get(), 40_000);
    /// assert!(MachineId::new_in(Layout::Wide, 65_536).is_err());
    /// assert!(MachineId::new_in(Layout::Standard, 512).is_err());
    /// ```
    pub fn new_in(layout: crate::layout::Layout, value: u64) -> Result<Self> {
        match layout {
            crate::layout::Layout::Standard => Self::new(value),
            crate::layout::Layout::Wide if value > Self::MAX_WIDE as u64 => {
                Err(Error::MachineIdOutOfWideRange { value })
            }
            crate::layout::Layout::Wide => Ok(MachineId(value as u16)),
        }
    }

    /// The number.
    pub fn get(self) -> u16 {
        self.0
    }

    /// The machine id carried by the number at the end of environment variable
    /// `name` (e.g. `POD_NAME=nonces-12` gives 12).
    pub fn from_env(name: &str) -> Result<Self> {
        Self::from_env_in(crate::layout::Layout::Standard, name)
    }

    /// [`from_env`](Self::from_env) for a machine id of `layout` (0..=65535
    /// in the wide one).
    pub fn from_env_in(layout: crate::layout::Layout, name: &str) -> Result<Self> {
        let value = std::env::var(name).map_err(|_| Error::MachineIdEnvMissing {
            name: name.to_owned(),
        })?;
        Self::from_trailing_number_in(layout, name, &value)
    }

    /// The machine id carried by the number at the end of `value`; `name` only
    /// labels errors. Exposed so callers can parse values from other sources.
    ///
    /// ```
    /// use nonceforge::MachineId;
    /// assert_eq!(MachineId::from_trailing_number("POD", "web-42").unwrap().get(), 42);
    /// assert!(MachineId::from_trailing_number("POD", "web").is_err());
    /// assert!(MachineId::from_trailing_number("POD", "web-512").is_err());
    /// ```
    pub fn from_trailing_number(name: &str, value: &str) -> Result<Self> {
        Self::from_trailing_number_in(crate::layout::Layout::Standard, name, value)
    }

    /// [`from_trailing_number`](Self::from_trailing_number) for a machine id
    /// of `layout`.
    ///
    /// ```
    /// use nonceforge::{MachineId, layout::Layout};
    /// let id = MachineId::from_trailing_number_in(Layout::Wide, "POD", "web-40000");
    /// assert_eq!(id.unwrap().get(), 40_000);
    /// assert!(MachineId::from_trailing_number_in(Layout::Wide, "POD", "web-65536").is_err());
    /// ```
    pub fn from_trailing_number_in(
        layout: crate::layout::Layout,
        name: &str,
        value: &str,
    ) -> Result<Self> {
        let digits = value
            .bytes()
            .rev()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let no_number = || Error::MachineIdEnvNoNumber {
            name: name.to_owned(),
            value: value.to_owned(),
        };
        if digits == 0 {
            return Err(no_number());
        }
        let tail = &value[value.len() - digits..];
        // More than 20 digits cannot fit a u64 and is out of range anyway.
        let n: u64 = tail.parse().unwrap_or(u64::MAX);
        Self::new_in(layout, n)
    }

    /// The machine id of `host`: its position (from 0) in `hosts`.
    ///
    /// The list is used in the order given, never sorted, so appending a host
    /// keeps every existing host's id. Removing one renumbers those after it:
    /// replace a retired host with a placeholder instead.
    ///
    /// ```
    /// use nonceforge::MachineId;
    /// let hosts = ["db-b", "db-a"];
    /// assert_eq!(MachineId::from_host_list(&hosts, "db-a").unwrap().get(), 1);
    /// ```
    pub fn from_host_list<S: AsRef<str>>(hosts: &[S], host: &str) -> Result<Self> {
        let mut found = None;
        for (i, h) in hosts.iter().enumerate() {
            let h = h.as_ref().trim();
            if h.is_empty() {
                return Err(Error::HostListEmptyEntry { position: i });
            }
            if let Some(j) = hosts[..i].iter().position(|p| p.as_ref().trim() == h) {
                return Err(Error::HostListedTwice {
                    host: h.to_owned(),
                    first: j,
                    second: i,
                });
            }
            if h == host && found.is_none() {
                found = Some(i);
            }
        }
        match found {
            Some(i) => Self::new(i as u64),
            None => Err(Error::HostNotListed {
                host: host.to_owned(),
                count: hosts.len(),
            }),
        }
    }

    /// This host's name as the OS reports it (`/proc/sys/kernel/hostname`, or
    /// `$HOSTNAME`).
    pub fn this_host() -> Option<String> {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .or_else(|| std::env::var("HOSTNAME").ok())
    }
}

impl fmt::Display for MachineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl TryFrom<u64> for MachineId {
    type Error = Error;
    fn try_from(v: u64) -> Result<Self> {
        Self::new(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_is_nine_bits() {
        assert_eq!(MachineId::new(0).unwrap().get(), 0);
        assert_eq!(MachineId::new(511).unwrap().get(), 511);
        assert_eq!(
            MachineId::new(512),
            Err(Error::MachineIdOutOfRange { value: 512 })
        );
        let msg = MachineId::new(9999).unwrap_err().to_string();
        assert!(msg.contains("9999") && msg.contains("0..=511"), "{msg}");
    }

    #[test]
    fn trailing_number() {
        assert_eq!(MachineId::from_trailing_number("P", "3").unwrap().get(), 3);
        assert_eq!(
            MachineId::from_trailing_number("P", "a-b-007")
                .unwrap()
                .get(),
            7
        );
        assert_eq!(
            MachineId::from_trailing_number("P", "x9y10").unwrap().get(),
            10
        );
        for bad in ["", "web", "web-", "7-web"] {
            let e = MachineId::from_trailing_number("POD_NAME", bad).unwrap_err();
            assert!(
                matches!(e, Error::MachineIdEnvNoNumber { .. }),
                "{bad}: {e}"
            );
            assert!(e.to_string().contains("POD_NAME"));
        }
        assert!(matches!(
            MachineId::from_trailing_number("P", "n-99999999999999999999999"),
            Err(Error::MachineIdOutOfRange { .. })
        ));
    }

    #[test]
    fn env_var() {
        // SAFETY: test-local variable names, no other thread reads them.
        unsafe { std::env::set_var("NONCEFORGE_TEST_POD", "nonces-17") };
        assert_eq!(
            MachineId::from_env("NONCEFORGE_TEST_POD").unwrap().get(),
            17
        );
        assert!(matches!(
            MachineId::from_env("NONCEFORGE_TEST_UNSET_VARIABLE"),
            Err(Error::MachineIdEnvMissing { .. })
        ));
    }

    #[test]
    fn host_list_appending_keeps_ids() {
        let hosts = vec!["zeta", "alpha", "mid"];
        let before: Vec<u16> = hosts
            .iter()
            .map(|h| MachineId::from_host_list(&hosts, h).unwrap().get())
            .collect();
        let mut grown = hosts.clone();
        grown.push("aardvark"); // sorts first: a sorted list would renumber everyone
        let after: Vec<u16> = hosts
            .iter()
            .map(|h| MachineId::from_host_list(&grown, h).unwrap().get())
            .collect();
        assert_eq!(before, after);
        assert_eq!(before, vec![0, 1, 2]);
        assert_eq!(
            MachineId::from_host_list(&grown, "aardvark").unwrap().get(),
            3
        );
    }

    #[test]
    fn host_list_errors() {
        assert!(matches!(
            MachineId::from_host_list(&["a", "b"], "c"),
            Err(Error::HostNotListed { count: 2, .. })
        ));
        assert_eq!(
            MachineId::from_host_list(&["a", "b", "a"], "b"),
            Err(Error::HostListedTwice {
                host: "a".into(),
                first: 0,
                second: 2
            })
        );
        assert_eq!(
            MachineId::from_host_list(&["a", " ", "b"], "a"),
            Err(Error::HostListEmptyEntry { position: 1 })
        );
        let many: Vec<String> = (0..513).map(|i| format!("h{i}")).collect();
        assert!(matches!(
            MachineId::from_host_list(&many, "h512"),
            Err(Error::MachineIdOutOfRange { value: 512 })
        ));
    }
}
