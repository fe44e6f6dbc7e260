//! The egress policy: whether a model server's address may be called. Checked before a byte
//! is sent: the host is resolved, and every address it resolves to must be allowed (a name
//! that resolves to a public address is refused under `local_only` even if it also has a
//! loopback one).

use protocol::api::EgressPolicy;
use std::net::{IpAddr, ToSocketAddrs};

/// Where an address lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Reach {
    Loopback,
    Private,
    Public,
}

fn reach(ip: IpAddr) -> Reach {
    match ip {
        IpAddr::V4(v4) if v4.is_loopback() => Reach::Loopback,
        IpAddr::V4(v4) if v4.is_private() || v4.is_link_local() => Reach::Private,
        IpAddr::V6(v6) if v6.is_loopback() => Reach::Loopback,
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()) => Reach::Loopback,
        // fc00::/7 (unique local) and fe80::/10 (link local).
        IpAddr::V6(v6) if (v6.segments()[0] & 0xfe00) == 0xfc00 || (v6.segments()[0] & 0xffc0) == 0xfe80 => {
            Reach::Private
        }
        _ => Reach::Public,
    }
}

fn allows(policy: EgressPolicy, reach: Reach) -> bool {
    match policy {
        EgressPolicy::LocalOnly => reach == Reach::Loopback,
        EgressPolicy::Lan => reach <= Reach::Private,
        EgressPolicy::Remote => true,
    }
}

/// The host and port of an `http(s)://` URL.
fn host_port(url: &str) -> Result<(String, u16), String> {
    let uri: ureq::http::Uri = url.parse().map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    let default_port = match uri.scheme_str() {
        Some("http") => 80,
        Some("https") => 443,
        _ => return Err(format!("{url:?} is not an http or https URL")),
    };
    let host = uri.host().ok_or_else(|| format!("{url:?} names no host"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
    Ok((host, uri.port_u16().unwrap_or(default_port)))
}

/// `Ok` when `policy` allows calling `url`; else why not.
pub fn check(policy: EgressPolicy, url: &str) -> Result<(), String> {
    let (host, port) = host_port(url)?;
    let addrs: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {host}: {e}"))?
            .map(|a| a.ip())
            .collect(),
    };
    if addrs.is_empty() {
        return Err(format!("{host} resolves to no address"));
    }
    match addrs.iter().find(|ip| !allows(policy, reach(**ip))) {
        None => Ok(()),
        Some(ip) => Err(format!(
            "the egress policy {} does not allow {url} ({ip}); set egressPolicy in index.yml to allow it",
            policy.as_str()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_only_allows_loopback_alone() {
        for url in ["http://127.0.0.1:8080/v1", "http://localhost:1/v1", "http://[::1]:9/v1", "http://127.2.3.4/v1"] {
            assert_eq!(check(EgressPolicy::LocalOnly, url), Ok(()), "{url}");
        }
        for url in ["http://10.1.2.3/v1", "http://192.168.1.9:11434/v1", "http://8.8.8.8/v1", "http://[fd00::1]/v1"] {
            let err = check(EgressPolicy::LocalOnly, url).unwrap_err();
            assert!(err.contains("local_only"), "{err}");
        }
    }

    #[test]
    fn lan_adds_private_ranges_and_remote_allows_any() {
        assert_eq!(check(EgressPolicy::Lan, "http://192.168.1.9:11434/v1"), Ok(()));
        assert_eq!(check(EgressPolicy::Lan, "http://[fe80::1]/v1"), Ok(()));
        assert!(check(EgressPolicy::Lan, "https://8.8.8.8/v1").is_err());
        assert_eq!(check(EgressPolicy::Remote, "https://8.8.8.8/v1"), Ok(()));
    }

    #[test]
    fn a_url_that_is_not_http_is_refused() {
        for url in ["ftp://127.0.0.1/x", "not a url", "file:///etc/passwd"] {
            assert!(check(EgressPolicy::Remote, url).is_err(), "{url}");
        }
    }
}
