//! Private and internal addresses: RFC 1918, loopback, link-local and CGNAT
//! IPv4; IPv6 loopback, ULA, link-local and IPv4-mapped; internal hostname
//! suffixes; `localhost`; single-label hosts in URLs.
//!
//! Candidates are found by literal anchors and cheap byte scans, then
//! *parsed* with `std::net` and classified, so `10.0.0.256`, `1.10.0.0.1`
//! (a version string) and `std::net` (a Rust path) are left alone.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::Category;
use crate::candidate::{Cand, KIND_HOST, KIND_IP, cand};

/// The hosts a builder allow-listed, lowercased: `.example.corp` allows
/// every host under `example.corp`.
pub(crate) struct AllowedHosts(Vec<String>);

impl AllowedHosts {
    /// The allow-list of `hosts`, as the builder recorded them.
    pub(crate) fn new(hosts: &[String]) -> AllowedHosts {
        AllowedHosts(hosts.iter().map(|h| h.to_ascii_lowercase()).collect())
    }

    /// Whether `host` (no port) is allow-listed.
    pub(crate) fn contains(&self, host: &str) -> bool {
        if self.0.is_empty() {
            return false;
        }
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let lower = host.to_ascii_lowercase();
        self.0.iter().any(|a| {
            if let Some(suffix) = a.strip_prefix('.') {
                lower == suffix || lower.ends_with(a.as_str())
            } else {
                lower == *a
            }
        })
    }
}

/// Literal starts of internal IPv4 addresses.
pub(crate) const IPV4_ANCHORS: &[&str] = &["10.", "127.", "172.1", "172.2", "172.3", "192.168.", "169.254.", "100."];

/// Literals inside internal IPv6 addresses (compressed form, ULA and
/// link-local prefixes).
pub(crate) const IPV6_ANCHORS: &[&str] = &["::", "fc", "fd", "fe8", "fe9", "fea", "feb", "fec"];

/// Hostname suffixes that only resolve inside a private network.
pub(crate) const HOST_SUFFIXES: &[&str] = &[
    ".local",
    ".internal",
    ".intranet",
    ".corp",
    ".lan",
    ".home.arpa",
    ".localhost",
    ".localdomain",
    ".svc",
    ".consul",
    ".private",
];

fn is_host_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.'
}

/// An optional `:port` after `end`; returns the new end.
fn port_end(bytes: &[u8], end: usize) -> usize {
    if end < bytes.len() && bytes[end] == b':' {
        let mut i = end + 1;
        while i < bytes.len() && i - end <= 5 && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let digits = i - end - 1;
        if (1..=5).contains(&digits) && (i >= bytes.len() || !bytes[i].is_ascii_alphanumeric()) {
            return i;
        }
    }
    end
}

/// Whether an IPv4 address is private, loopback, link-local or CGNAT.
pub(crate) fn internal_v4(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    ip.is_private() || ip.is_loopback() || ip.is_link_local() || (o[0] == 100 && (64..=127).contains(&o[1]))
}

/// Whether an IPv6 address is loopback, unique-local (fc00::/7),
/// link-local (fe80::/10), deprecated site-local (fec0::/10), or an
/// IPv4-mapped internal IPv4 address.
pub(crate) fn internal_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return internal_v4(v4);
    }
    let s0 = ip.segments()[0];
    ip.is_loopback() || (s0 & 0xfe00) == 0xfc00 || (s0 & 0xffc0) == 0xfe80 || (s0 & 0xffc0) == 0xfec0
}

/// An IPv4 candidate starting at `start`.
pub(crate) fn ipv4_at(allowed: &AllowedHosts, text: &str, start: usize, cands: &mut Vec<Cand>) {
    let bytes = text.as_bytes();
    if start > 0 {
        let p = bytes[start - 1];
        if p.is_ascii_alphanumeric() || p == b'.' || p == b'_' || p == b'-' {
            return;
        }
    }
    let mut i = start;
    while i < bytes.len() && i - start < 16 && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
        i += 1;
    }
    let mut end = i;
    if end > start && bytes[end - 1] == b'.' {
        // A sentence ending after the address.
        end -= 1;
        if i < bytes.len() && bytes[i].is_ascii_digit() {
            return;
        }
    } else if i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
        return;
    }
    if i < bytes.len() && (bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') {
        return;
    }
    let Ok(ip) = text[start..end].parse::<Ipv4Addr>() else {
        return;
    };
    if !internal_v4(ip) || allowed.contains(&text[start..end]) {
        return;
    }
    let end = port_end(bytes, end);
    cands.push(cand(start..end, KIND_IP, Category::InternalAddress));
}

fn is_v6_byte(b: u8) -> bool {
    b.is_ascii_hexdigit() || b == b':' || b == b'.'
}

/// An IPv6 candidate around an anchor at `at`; returns how far the text
/// has been examined, so hits inside the same run are skipped.
pub(crate) fn ipv6_at(allowed: &AllowedHosts, text: &str, at: usize, cands: &mut Vec<Cand>) -> usize {
    let bytes = text.as_bytes();
    let mut s = at;
    while s > 0 && at - s < 64 && is_v6_byte(bytes[s - 1]) {
        s -= 1;
    }
    let mut e = at;
    while e < bytes.len() && e - at < 64 && is_v6_byte(bytes[e]) {
        e += 1;
    }
    let examined = e;
    if (s > 0 && is_v6_byte(bytes[s - 1])) || (e < bytes.len() && is_v6_byte(bytes[e])) {
        return examined;
    }
    // Trailing sentence punctuation is not part of the address.
    let mut addr_end = e;
    while addr_end > s && bytes[addr_end - 1] == b'.' {
        addr_end -= 1;
    }
    let candidate = &text[s..addr_end];
    if candidate.bytes().filter(|&b| b == b':').count() < 2 {
        return examined;
    }
    let Ok(ip) = candidate.parse::<Ipv6Addr>() else {
        return examined;
    };
    // A zone id (`%eth0`) belongs to the address.
    let mut end = addr_end;
    if addr_end == e && end < bytes.len() && bytes[end] == b'%' {
        let mut z = end + 1;
        while z < bytes.len() && z - end <= 16 && (bytes[z].is_ascii_alphanumeric() || bytes[z] == b'_') {
            z += 1;
        }
        if z > end + 1 {
            end = z;
        }
    }
    let mut start = s;
    if start > 0 && (is_host_byte(bytes[start - 1]) && bytes[start - 1] != b'.') {
        return examined;
    }
    if end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
        return examined;
    }
    if !internal_v6(ip) || allowed.contains(candidate) {
        return examined;
    }
    if start > 0 && bytes[start - 1] == b'[' && end < bytes.len() && bytes[end] == b']' {
        start -= 1;
        end = port_end(bytes, end + 1);
    }
    cands.push(cand(start..end, KIND_IP, Category::InternalAddress));
    examined.max(end)
}

/// A hostname ending in an internal suffix found at `dot..suffix_end`;
/// `floor` is where the previous hostname ended, so backward scans never
/// overlap. Returns the end of an accepted hostname.
pub(crate) fn host_suffix_at(
    allowed: &AllowedHosts,
    text: &str,
    dot: usize,
    suffix_end: usize,
    floor: usize,
    cands: &mut Vec<Cand>,
) -> Option<usize> {
    let bytes = text.as_bytes();
    if suffix_end < bytes.len() {
        let n = bytes[suffix_end];
        if n.is_ascii_alphanumeric() || n == b'-' || n == b'_' {
            return None;
        }
        if n == b'.'
            && suffix_end + 1 < bytes.len()
            && (bytes[suffix_end + 1].is_ascii_alphanumeric() || bytes[suffix_end + 1] == b'-')
        {
            return None;
        }
    }
    let mut s = dot;
    while s > floor && dot - s < 253 && is_host_byte(bytes[s - 1]) {
        s -= 1;
    }
    while s < dot && matches!(bytes[s], b'.' | b'-' | b'_') {
        s += 1;
    }
    if s == dot || (s > 0 && is_host_byte(bytes[s - 1]) && bytes[s - 1] != b'.') {
        return None;
    }
    if allowed.contains(&text[s..suffix_end]) {
        return None;
    }
    let end = port_end(bytes, suffix_end);
    cands.push(cand(s..end, KIND_HOST, Category::InternalAddress));
    Some(end)
}

/// The literal `localhost` as a whole host name.
pub(crate) fn localhost_at(allowed: &AllowedHosts, text: &str, start: usize, end: usize, cands: &mut Vec<Cand>) {
    let bytes = text.as_bytes();
    if start > 0 && is_host_byte(bytes[start - 1]) {
        return;
    }
    if end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'-' || bytes[end] == b'_') {
        return;
    }
    if allowed.contains(&text[start..end]) {
        return;
    }
    let end = port_end(bytes, end);
    cands.push(cand(start..end, KIND_HOST, Category::InternalAddress));
}

/// The host of a URL whose `://` ends at `after`, when it is a single
/// label (`http://db:5432/`, `redis://cache/`): such a name only resolves
/// through a private resolver. Dotted hosts and IPs are left to the other
/// detectors.
pub(crate) fn url_host_at(allowed: &AllowedHosts, text: &str, after: usize, cands: &mut Vec<Cand>) {
    let bytes = text.as_bytes();
    let lim = (after + 512).min(bytes.len());
    let mut auth_end = after;
    while auth_end < lim
        && !matches!(bytes[auth_end], b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'`')
        && !bytes[auth_end].is_ascii_whitespace()
    {
        auth_end += 1;
    }
    let host_start = match bytes[after..auth_end].iter().rposition(|&b| b == b'@') {
        Some(i) => after + i + 1,
        None => after,
    };
    let mut host_end = host_start;
    while host_end < auth_end && (bytes[host_end].is_ascii_alphanumeric() || matches!(bytes[host_end], b'-' | b'_')) {
        host_end += 1;
    }
    if host_end == host_start {
        return;
    }
    // Followed by a port, the end of the authority, or nothing else.
    if host_end < auth_end && bytes[host_end] != b':' {
        return;
    }
    let host = &text[host_start..host_end];
    if host.bytes().all(|b| b.is_ascii_digit())
        || host.eq_ignore_ascii_case("localhost")
        || allowed.contains(host)
        || host.parse::<IpAddr>().is_ok()
    {
        return;
    }
    let end = port_end(bytes, host_end);
    cands.push(cand(host_start..end, KIND_HOST, Category::InternalAddress));
}
