//! The flags that label what a tool's results hold: `private` and
//! `untrusted` on a read of the user's inbox, `trusted` on an `external`
//! read whose results are not third-party text.
use toolgate::{tool, toolbox};

/// Read the user's inbox: their private mail, written by others.
#[tool(read_only, private, untrusted)]
fn read_inbox(folder: String) -> String {
    folder
}

/// Look up an exchange rate from a rates service.
#[tool(read_only, external, trusted)]
fn exchange_rate(currency: String) -> String {
    currency
}

/// Fetch a web page: an external read, untrusted without `trusted`.
#[tool(read_only, external)]
fn fetch_page(url: String) -> String {
    url
}

fn main() {
    let tools = toolbox![read_inbox, exchange_rate, fetch_page];
    let inbox = tools.get("read_inbox").unwrap().spec().effects();
    assert!(inbox.is_read_only() && inbox.is_private() && inbox.is_untrusted() && !inbox.is_external());
    assert_eq!(inbox.names(), ["read_only", "private", "untrusted"]);
    let rates = tools.get("exchange_rate").unwrap().spec().effects();
    assert!(rates.is_read_only() && rates.is_external() && !rates.is_untrusted() && !rates.is_private());
    assert_eq!(rates.names(), ["read_only", "external", "trusted"]);
    let page = tools.get("fetch_page").unwrap().spec().effects();
    assert!(page.is_untrusted() && !page.is_private());
}
